"""Can a policy that writes no code earn the GRPO error reward? Fixed answers scored on real pairs.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/error_reward_gaming.py synthetic-python
    PYTHONPATH=$PWD .venv/bin/python benchmarks/error_reward_gaming.py --smoke   # seconds, no pipeline run

Needs a dataset through the cluster stage (data/<ds>/ submissions, problems, error_labels.parquet,
submission_errors.parquet, problem_errors.json). With --smoke it writes that folder itself: a small
synthetic Python population whose true errors stand in for the cluster stage's outputs (no
renaming). Draws up to --pairs first-submission pairs (seeded), answers every pair with one fixed
policy (a sentence of prose, the problem statement restated, a `pass` stub of the problem's
function (Python), or the student's true code) and scores each answer with the static judge under
two rules:
- IoU: IoU(candidate errors found, true errors), with IoU(∅, ∅) = 1, so any answer in which
  the judge finds no candidate error (prose) earns 1 on every correct student;
- the reward: kaser.predictor.rewards.make_error_reward (kaser.metrics.sets.error_match: a correct
  student is matched only by a code the judge finds free of every error).
Prints the mean error reward per policy over pairs whose real code is correct, incorrect, and all;
the last line is `no_code_error_reward: X`, the best mean reward of a policy that writes no code
(prose, restated problem, pass stub) under the reward rule: near 0 when the reward cannot be gamed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import polars as pl

from kaser import config
from kaser.data.contracts import read_dataset, write_dataset
from kaser.errors.cluster import join_submission_errors
from kaser.errors.judge import JudgeParams, reward_judge
from kaser.errors.static_annotator import StaticParams
from kaser.metrics.sets import iou
from kaser.predictor.rewards import make_error_reward

N_PAIRS, SEED = 200, 0
SMOKE_STUDENTS, SMOKE_PROBLEMS = 4, 2
PROSE = "This function checks the input and returns the answer the problem asks for."
NO_CODE = ("prose", "restated problem", "pass stub")


def stub(reference: str, language: str) -> str | None:
    """The reference's first line (its signature) with a `pass` body (Python only)."""
    if language != "python":
        return None
    header = next(line for line in reference.splitlines() if line.startswith("def "))
    return header + "\n    pass"


def first_submissions(submissions: pl.DataFrame) -> pl.DataFrame:
    return (submissions.sort("student_id", "problem_id", "step")
            .unique(["student_id", "problem_id"], keep="first", maintain_order=True))


def write_true_error_dataset(folder: Path, students: int, problems: int) -> None:
    """A synthetic Python population in `folder` with the files the cluster stage writes, made
    from its true errors: submission_errors.parquet (first submissions' true errors),
    error_labels.parquet (empty: standard labels, no renaming), problem_errors.json (every true
    error seen on the problem)."""
    from kaser.data.synth import generate

    problems_df, submissions = generate("python", students, problems, SEED)
    write_dataset(folder, problems_df, submissions)
    firsts = first_submissions(submissions).select("student_id", "problem_id",
                                                   pl.col("true_errors").alias("errors"))
    firsts.write_parquet(folder / "submission_errors.parquet")
    pl.DataFrame(schema={"category": pl.String, "label": pl.String, "cluster_label": pl.String}) \
        .write_parquet(folder / "error_labels.parquet")
    candidates = {pid: sorted({e for errors in group["errors"].to_list() for e in errors})
                  for (pid,), group in firsts.group_by("problem_id")}
    (folder / "problem_errors.json").write_text(json.dumps(candidates, indent=1) + "\n")


def policy_rewards(folder: Path, pairs: int) -> tuple[str, dict[str, dict[str, tuple[float, float, float]]]]:
    """(a line on the pairs, {policy: {rule: (mean over correct pairs, incorrect pairs, all)}})."""
    problems, submissions = read_dataset(folder)
    drawn = join_submission_errors(first_submissions(submissions),
                                   pl.read_parquet(folder / "submission_errors.parquet"))
    drawn = drawn.sample(min(pairs, drawn.height), seed=SEED).join(
        problems.select("problem_id", "language", "statement", "reference"), on="problem_id")
    candidates = json.loads((folder / "problem_errors.json").read_text())
    policies = {"prose": lambda row: PROSE, "restated problem": lambda row: row["statement"],
                "pass stub": lambda row: stub(row["reference"], row["language"]),
                "true code": lambda row: row["code"]}
    rows = drawn.to_dicts()
    lists = [candidates.get(r["problem_id"], []) for r in rows]
    means = {}
    with reward_judge(folder, JudgeParams("static"),
                      config.settings(StaticParams, "annotate", part=True)) as judge:
        reward = make_error_reward(judge)
        for name, policy in policies.items():
            answers = [policy(row) for row in rows]
            if any(a is None for a in answers):
                continue
            new = reward(answers, problem_id=[r["problem_id"] for r in rows],
                         errors=[r["errors"] for r in rows], candidate_errors=lists,
                         correct=[r["correct"] for r in rows])
            old = [iou(judge(r["problem_id"], a, c), r["errors"]) for r, a, c in zip(rows, answers, lists)]
            means[name] = {rule: _means(values, rows) for rule, values in
                           (("IoU (IoU(∅, ∅) = 1)", old), ("reward (error_match)", new))}
    return f"{len(rows)} pairs, {sum(r['correct'] for r in rows)} with correct real code", means


def _means(values: list[float], rows: list[dict]) -> tuple[float, float, float]:
    right = [v for v, r in zip(values, rows) if r["correct"]]
    wrong = [v for v, r in zip(values, rows) if not r["correct"]]
    return sum(right) / max(len(right), 1), sum(wrong) / max(len(wrong), 1), sum(values) / len(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", help="a dataset under data/ through the cluster stage")
    parser.add_argument("--pairs", type=int, default=N_PAIRS)
    parser.add_argument("--smoke", action="store_true",
                        help=f"a synthetic Python population of {SMOKE_STUDENTS} students x "
                             f"{SMOKE_PROBLEMS} problems with its true errors, written to a temporary folder")
    args = parser.parse_args()
    if args.smoke == bool(args.dataset):
        parser.error("name a dataset or pass --smoke")
    with tempfile.TemporaryDirectory() as scratch:
        if args.smoke:
            folder = Path(scratch)
            write_true_error_dataset(folder, SMOKE_STUDENTS, SMOKE_PROBLEMS)
            name = f"smoke (synthetic Python, {SMOKE_STUDENTS} students x {SMOKE_PROBLEMS} problems, true errors)"
        else:
            folder, name = Path("data") / args.dataset, args.dataset
        pairs, means = policy_rewards(folder, args.pairs)
    print(f"{name}: {pairs}")
    print("| policy | rule | correct pairs | incorrect pairs | all |\n|---|---|---|---|---|")
    for policy, rules in means.items():
        for rule, (right, wrong, every) in rules.items():
            print(f"| {policy} | {rule} | {right:.3f} | {wrong:.3f} | {every:.3f} |")
    best = max(rules["reward (error_match)"][2] for policy, rules in means.items() if policy in NO_CODE)
    print(f"no_code_error_reward: {best:.3f}")


if __name__ == "__main__":
    main()
