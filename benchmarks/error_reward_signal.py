"""Where does GRPO's error reward carry signal? Predicted codes scored by the reward GRPO uses,
apart for pairs whose real code is correct and incorrect.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/error_reward_signal.py synthetic-python \
        reports/study-student-python/predictions_kaser.parquet reports/study-student-python/predictions_student_sft.parquet
    PYTHONPATH=$PWD .venv/bin/python benchmarks/error_reward_signal.py --smoke   # seconds, no pipeline run

Needs the dataset through the cluster stage (data/<ds>/: submissions, error_labels.parquet,
submission_errors.parquet, problem_errors.json) and predictions of its pairs (the columns of
kaser.predictor.sampling.PREDICTION_SCHEMA; K samples per pair). With --smoke it writes a small
synthetic Python population whose true errors stand in for the cluster stage's outputs and uses
other students' first submissions to the problem as each pair's "predictions".

Each sample gets the error reward exactly as in GRPO (kaser.predictor.rewards.make_error_reward
with the judge of params.yaml `judge` and `annotate`, as the grpo stage builds it: a correct real code is matched only by a clean code, an incorrect one by
IoU with its labels, a cut-off code or one with the prompt's words 0). For correct and incorrect
pairs apart it prints, per predictions file:
- the mean reward, the share of samples paid anything, and what the judge saw: clean, a
  candidate error found, only errors outside the problem's candidate list (the "∅ rule": paid 0);
- per pair (a GRPO group is one pair's K samples): the share whose samples all earn the same
  reward, so GRPO's advantage is 0 and the error reward teaches nothing;
- on incorrect pairs, the real labels against the labels predicted: how often the pair's real
  label is among the problem's most common real labels (what a student-blind policy could learn),
  and the share of samples that write any label the pair's students wrote on that problem.
The last line is `incorrect_zero_spread_share: X` of the first file: the share of incorrect
pairs whose K samples give the error reward no spread. It cannot say whether a reward with more
spread would teach the right errors; benchmarks/grpo_learns.py trains and measures that.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from error_reward_gaming import first_submissions, write_true_error_dataset  # noqa: E402

from kaser.config import load_settings, settings  # noqa: E402
from kaser.data.contracts import read_dataset  # noqa: E402
from kaser.errors.annotate import AnnotateParams  # noqa: E402
from kaser.errors.cluster import join_submission_errors  # noqa: E402
from kaser.errors.judge import JudgeParams, reward_judge  # noqa: E402
from kaser.predictor.rewards import make_error_reward  # noqa: E402
from kaser.predictor.sampling import Completion  # noqa: E402

SMOKE_STUDENTS, SMOKE_PROBLEMS, SMOKE_K = 6, 2, 3


def real_pairs(folder: Path) -> pl.DataFrame:
    """student_id, problem_id, correct, errors (cluster labels) of every first submission."""
    _, submissions = read_dataset(folder)
    firsts = first_submissions(submissions).select("student_id", "problem_id", "code", "correct")
    return join_submission_errors(firsts, pl.read_parquet(folder / "submission_errors.parquet")).drop("code")


def smoke_predictions(folder: Path) -> pl.DataFrame:
    """Per pair, the first submissions of the next SMOKE_K students to the problem as its samples
    (a student-blind simulator drawing from the class)."""
    _, submissions = read_dataset(folder)
    firsts = first_submissions(submissions).sort("problem_id", "student_id")
    rows = []
    for (problem,), group in firsts.group_by("problem_id", maintain_order=True):
        students, codes = group["student_id"].to_list(), group["code"].to_list()
        for i, student in enumerate(students):
            others = [codes[(i + j) % len(codes)] for j in range(1, SMOKE_K + 1)]
            rows += [(student, problem, sample, code, False) for sample, code in enumerate(others)]
    return pl.DataFrame(rows, orient="row", schema={"student_id": pl.String, "problem_id": pl.String,
                                                    "sample": pl.Int64, "code": pl.String, "truncated": pl.Boolean})


def judged(folder: Path, predictions: pl.DataFrame, judge) -> pl.DataFrame:
    """The predictions of known pairs with the pair's truth, the verdict and the error reward."""
    candidates = json.loads((folder / "problem_errors.json").read_text())
    rows = predictions.select("student_id", "problem_id", "sample", "code", "truncated").join(
        real_pairs(folder), on=["student_id", "problem_id"], how="inner")
    reward = make_error_reward(judge)
    parts = []
    for (problem,), group in rows.group_by("problem_id", maintain_order=True):
        listed = candidates.get(problem, [])
        codes = group["code"].to_list()
        verdicts = judge.verdicts(problem, codes, listed)
        paid = reward([Completion(code, truncated=bool(cut)) for code, cut in zip(codes, group["truncated"])],
                      problem_id=[problem] * group.height, errors=group["errors"].to_list(),
                      candidate_errors=[listed] * group.height, correct=group["correct"].to_list())
        parts.append(group.with_columns(
            pl.Series("reward", paid, dtype=pl.Float64),
            pl.Series("clean", [v.clean for v in verdicts]),
            pl.Series("found", [sorted(v.errors) for v in verdicts], dtype=pl.List(pl.String))))
    return pl.concat(parts)


def summary(scored: pl.DataFrame) -> dict[str, dict[str, float]]:
    """Per part (correct / incorrect pairs): the figures the module docstring lists."""
    result = {}
    for correct, name in ((True, "correct"), (False, "incorrect")):
        part = scored.filter(pl.col("correct") == correct)
        if part.is_empty():
            continue
        outside = (~pl.col("clean")) & (pl.col("found").list.len() == 0)
        groups = part.group_by("student_id", "problem_id").agg(
            pl.col("reward").n_unique().alias("distinct"), pl.col("errors").first(), pl.col("found"))
        figures = {"pairs": groups.height, "samples": part.height,
                   "mean_reward": part["reward"].mean(), "paid_share": (part["reward"] > 0).mean(),
                   "clean_share": part["clean"].mean(),
                   "candidate_found_share": (part["found"].list.len() > 0).mean(),
                   "outside_list_only_share": part.select(outside.mean()).item(),
                   "zero_spread_share": (groups["distinct"] == 1).mean()}
        if not correct:
            figures |= label_reach(part, groups)
        result[name] = figures
    return result


def label_reach(part: pl.DataFrame, groups: pl.DataFrame) -> dict[str, float]:
    """Incorrect pairs: how often the pair's real labels hold its problem's most common real label,
    and the share of samples writing a label some student of the problem wrote."""
    by_problem: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for problem, labels in part.unique(["student_id", "problem_id"]).select("problem_id", "errors").iter_rows():
        by_problem[problem].update(labels or ())
    modal = {problem: counts.most_common(1)[0][0] for problem, counts in by_problem.items() if counts}
    pairs = part.unique(["student_id", "problem_id"])
    hits = [modal.get(problem) in (labels or ()) for problem, labels in pairs.select("problem_id", "errors").iter_rows()]
    seen = [bool(set(found or ()) & set(by_problem[problem]))
            for problem, found in part.select("problem_id", "found").iter_rows()]
    return {"modal_label_share": statistics.fmean(hits), "students_label_share": statistics.fmean(seen)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", help="a dataset under data/ through the cluster stage")
    parser.add_argument("predictions", nargs="*", help="predictions parquet files of its pairs")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{SMOKE_STUDENTS} students x {SMOKE_PROBLEMS} problems, true errors, "
                             "other students' codes as samples, in a temporary folder")
    args = parser.parse_args()
    if args.smoke == bool(args.dataset) or (args.dataset and not args.predictions):
        parser.error("name a dataset and its predictions files, or pass --smoke")
    with tempfile.TemporaryDirectory() as scratch:
        if args.smoke:
            folder = Path(scratch)
            write_true_error_dataset(folder, SMOKE_STUDENTS, SMOKE_PROBLEMS)
            sources = {"smoke (other students' codes)": smoke_predictions(folder)}
        else:
            folder = ROOT / "data" / args.dataset
            sources = {Path(path).stem: pl.read_parquet(path) for path in args.predictions}
        params = load_settings((ROOT / "params.yaml").read_text())   # the judge GRPO's stage builds
        static = settings(AnnotateParams, "annotate", params).static_params()
        with reward_judge(folder, settings(JudgeParams, "judge", params), static) as judge:
            results = {name: summary(judged(folder, frame, judge)) for name, frame in sources.items()}
    columns = list(next(iter(next(iter(results.values())).values())))
    print("| predictions | pairs | " + " | ".join(columns[1:]) + " |")
    print("|---|---|" + "---|" * (len(columns) - 1))
    for name, parts in results.items():
        for part, figures in parts.items():
            cells = [f"{figures[c]:.3f}" if isinstance(figures[c], float) else str(figures[c]) for c in columns[1:]]
            print(f"| {name} | {part} {figures['pairs']} | " + " | ".join(cells) + " |")
        for part, figures in parts.items():
            extra = {k: v for k, v in figures.items() if k not in columns}
            if extra:
                print(f"{name}, {part} pairs: " + ", ".join(f"{k} {v:.3f}" for k, v in extra.items()))
    first = next(iter(results.values()))
    print(f"incorrect_zero_spread_share: {first.get('incorrect', {}).get('zero_spread_share', float('nan')):.3f}")


if __name__ == "__main__":
    main()
