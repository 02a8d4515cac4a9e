"""The intervention study: does setting one KC of a student's profile low or high move the
simulator's errors the way the data generator's move? The protocol, fixed before the first run,
is docs/experiments-and-studies.md "The intervention study"; this script carries it out.

    make study-intervention                       # after make repro: the pipeline's own adapters
    python studies/intervention.py --pairs 300    # the same, by hand (PYTHONHASHSEED=0)
    python studies/intervention.py --smoke        # seconds: tiny random model, toy judge

On the first run of params.yaml `model` (first split, first fold) of synthetic data:
1. draws `--pairs` test pairs (seeded) whose problem has a KC that a candidate error is tied to,
   and one such KC per pair (kaser.evaluation.intervention.choose_targets);
2. samples K = params.yaml generate.k codes per pair from each method's adapter (KASER: the grpo
   stage's; Student SFT: the sft stage's; KASER without the error reward: GRPO trained here from
   the same SFT adapter with params.yaml grpo and the error weight at 0, into --work) under three
   profiles: the target KC's level at 0.1, at 0.9 (the primary contrast), and the student's own;
   every condition samples the same pairs in the same batches with the same seed;
3. judges every sample with params.yaml `judge` (the static judge by default) and writes, to
   --out: samples.csv (one row per sample: method, condition, pair, target KC, pass, tied,
   valid, truncated, errors), generator.csv (the synthetic generator's chances per pair and
   condition), effects.json and README.md.
Each (method, condition)'s samples are kept in --work as they finish, so a stopped run goes on
where it stopped. The last line is `kaser_tied_effect: X`, KASER's mean change in the rate of
errors tied to the KC from 0.9 to 0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaser.config import load_settings, settings  # noqa: E402

LEVELS = {"0.1": 0.1, "0.9": 0.9, "own": None}   # condition -> the target KC's prompt level
LOW, HIGH = "0.1", "0.9"
METHODS = ("kaser", "student_sft", "kaser_no_err")


def log(line: str) -> None:
    print(line, flush=True)


def pipeline_inputs(dataset: str, params: dict, work: Path):
    """(base, {method: adapter or None to train}, folder, split, fold) of the first run."""
    from kaser.predictor.base_model import run_name
    split, fold = params["model"]["splits"][0], params["model"]["folds"][0]
    run = run_name(split, fold)
    base, folder = ROOT / "models" / "base", ROOT / "data" / dataset
    adapters = {"kaser": ROOT / "models" / dataset / "grpo" / run,
                "student_sft": ROOT / "models" / dataset / "sft" / run,
                "kaser_no_err": work / "kaser_no_err" / run}
    needed = [base / "config.json", folder / "problem_errors.json", folder / "mastery.parquet",
              adapters["kaser"] / "adapter_config.json", adapters["student_sft"] / "adapter_config.json"]
    missing = [str(path.relative_to(ROOT)) for path in needed if not path.exists()]
    if missing:
        raise SystemExit(f"intervention.py: {', '.join(missing)} not found; run `make repro` first")
    return base, adapters, folder, split, fold


def smoke_inputs(work: Path):
    """A tiny random model whose LoRA adapter stands in for every method, and a small synthetic
    Python population (true mastery as the profile, true errors as the candidates)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_lm import tiny_model_with_adapter

    from kaser.data.synth import generate
    from kaser.predictor.prompt import student_pairs

    base = tiny_model_with_adapter(work / "adapter")
    problems, submissions = generate("python", students=6, problems=3, seed=0)
    mastery = submissions.select("student_id", "problem_id", pl.col("true_mastery").alias("mastery"))
    pairs = student_pairs(problems, submissions, mastery)
    candidates = {p: sorted({e for labels in g["true_errors"] for e in labels})
                  for (p,), g in submissions.group_by("problem_id")}
    labels = sorted({e for found in candidates.values() for e in found})
    error_labels = pl.DataFrame({"category": ["Logical"] * len(labels), "label": labels,
                                 "cluster_label": labels})
    return base, {m: work / "adapter" for m in METHODS}, problems, submissions, pairs, candidates, error_labels


def smoke_judge(problem_id, codes):
    """The smoke run's judge: every code clean (the wiring is under test, not the judge)."""
    from kaser.errors.judge import Verdict
    return [Verdict(frozenset(), True, True, frozenset()) for _ in codes]


def train_no_error_reward(base, sft_adapter: Path, out: Path, folder: Path, params: dict,
                          split: str, fold: int, judge, dtype: str) -> None:
    """GRPO from the SFT adapter with params.yaml grpo and the error reward's weight at 0."""
    from kaser.predictor.base_model import ModelParams
    from kaser.predictor.grpo import GrpoParams, ablated, train_runs
    grpo = settings(GrpoParams, "grpo", params)
    model = settings(ModelParams, "model", params, splits=(split,), folds=(fold,))
    train_runs(folder, model, ablated(grpo, "error"), judge, base, lambda s, f: sft_adapter,
               lambda s, f: out, dtype)


def cpu_name() -> str:
    """The CPU's model name and core count, as /proc/cpuinfo gives them."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "an unknown CPU"
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return f"{names[0] if names else 'an unknown CPU'} ({len(names) or os.cpu_count()} cores)"


def readme(result: dict, verdicts: dict, meta: dict) -> str:
    """reports/study-intervention/README.md from the effects."""
    def cell(entry):
        if not entry or entry.get("value") is None:
            return "–"
        ci = entry.get("ci95_problems")
        return f"{entry['value']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")

    names = {"generator": "data generator (synthetic truth)", "kaser": "KASER",
             "student_sft": "Student SFT", "kaser_no_err": "KASER without the error reward"}
    rows = ["| simulator | pairs | problems | tied errors: rate at 0.1 − at 0.9 | pass: rate at 0.9 − at 0.1 "
            "| tied: − generator | pass: − generator | tied: − Student SFT | pass: − Student SFT |",
            "|---|---|---|---|---|---|---|---|---|"]
    for method in ("generator", *METHODS):
        entry = result.get(method)
        if entry is None:
            continue
        rows.append(f"| {names[method]} | {entry['n_pairs']} | {entry['n_problems']} | "
                    f"{cell(entry.get('tied_effect'))} | {cell(entry.get('pass_effect'))} | "
                    f"{cell(entry.get('tied_minus_generator'))} | {cell(entry.get('pass_minus_generator'))} | "
                    f"{cell(entry.get('tied_minus_student_sft'))} | {cell(entry.get('pass_minus_student_sft'))} |")
    held = [f"- {names[m]}: tied errors {v['tied']}, pass {v['pass']}" for m, v in verdicts.items()]
    return "\n".join([
        "# The intervention study", "",
        "Protocol (fixed before the run): docs/experiments-and-studies.md, \"The intervention "
        f"study\". Run: `{meta['command']}` at {meta['commit']}, {meta['minutes']:.1f} min on "
        f"{meta['cpu']}. Dataset {meta['dataset']}, run {meta['run']}; {meta['pairs']} test pairs "
        f"of unseen students, K = {meta['k']} samples per pair and condition; conditions: the "
        "target KC's prompt level at 0.1, at 0.9, and the student's own profile "
        f"({', '.join(meta['conditions'])} ran).", "",
        "Per pair, the effect on errors tied to the KC is the share of samples with such an error "
        "at 0.1 minus that at 0.9; on passing, the share that passes at 0.9 minus that at 0.1. "
        "Both are positive when a weaker KC makes the simulator err more, as the generator does. "
        "Brackets: 95% percentile bootstrap over problems (2,000 resamples of the problems, each "
        "with all its pairs). The generator's values are its chances of drawing an error "
        "(kaser.evaluation.intervention), an upper bound on its visible rates.", "",
        *rows, "",
        "The protocol's verdict (the effect has the generator's sign with its interval clear of 0, "
        "and its margin over Student SFT has an interval above 0):", *held, "",
        "What it cannot show: the adapters are the CPU default's (params.yaml sft and grpo at their "
        "committed sizes), a 135M model on synthetic data; one training run, so no run-to-run "
        "spread; the prompt's level is a percentile and the generator's a true mastery.", "",
        "Files: samples.csv (one row per sample), generator.csv (the generator's chances per pair "
        "and condition), effects.json (everything above).", ""])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="synthetic-python")
    parser.add_argument("--pairs", type=int, default=300, help="test pairs drawn (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="the draw of pairs and KCs")
    parser.add_argument("--out", default=str(ROOT / "reports" / "study-intervention"))
    parser.add_argument("--work", default=str(ROOT / "scratch" / "intervention"),
                        help="the no-error-reward adapter and each condition's samples, kept between runs")
    parser.add_argument("--smoke", action="store_true", help="tiny random model and toy judge (seconds)")
    args = parser.parse_args(argv)

    from kaser.data.contracts import read_dataset
    from kaser.evaluation.intervention import (choose_targets, effects, generator_response,
                                               mechanism_holds, sample_outcomes, set_level)
    from kaser.evaluation.scoring import judge_predictions, problem_error_kcs
    from kaser.predictor.sampling import GenerateParams, predict, resolve_budget

    params = load_settings((ROOT / "params.yaml").read_text())
    sampling = settings(GenerateParams, "generate", params)
    work, out = Path(args.work), Path(args.out)
    start = time.perf_counter()
    if args.smoke:
        args.pairs = 4
        base, adapters, problems, submissions, pairs, candidates, error_labels = smoke_inputs(work)
        sampling = dataclasses.replace(sampling, k=2, max_new_tokens=8, batch_size=4)
        dtype, judging, split, fold = "float32", contextlib.nullcontext(None), "student", 0
    else:
        from kaser.errors.annotate import AnnotateParams
        from kaser.errors.judge import JudgeParams, reward_judge
        from kaser.predictor.prompt import read_pairs
        base, adapters, folder, split, fold = pipeline_inputs(args.dataset, params, work)
        problems, submissions = read_dataset(folder)
        pairs = read_pairs(folder, split, fold, "test")
        candidates = json.loads((folder / "problem_errors.json").read_text())
        error_labels = pl.read_parquet(folder / "error_labels.parquet")
        dtype = params["model"]["dtype"]
        from kaser.predictor.base_model import load_tokenizer
        sampling = resolve_budget(sampling, load_tokenizer(base), submissions)
        judging = reward_judge(folder, settings(JudgeParams, "judge", params),
                               settings(AnnotateParams, "annotate", params).static_params())
    error_kcs = problem_error_kcs(problems, error_labels)
    targets = choose_targets(pairs, candidates, error_kcs, args.pairs, args.seed)
    log(f"{targets.height} pairs of {targets['problem_id'].n_unique()} problems, K = {sampling.k}, "
        f"budget {sampling.max_new_tokens} tokens; conditions {', '.join(LEVELS)}")
    samples_dir = work / "samples"
    samples_dir.mkdir(parents=True, exist_ok=True)
    frames, ran = [], []
    with judging as judge:
        if not args.smoke and not (adapters["kaser_no_err"] / "adapter_config.json").exists():
            log("training GRPO without the error reward from the Student SFT adapter")
            train_no_error_reward(base, adapters["student_sft"], adapters["kaser_no_err"], folder, params,
                                  split, fold, judge, dtype)
        # the primary contrast first, for every method, then the own profiles
        for condition in (LOW, HIGH, "own"):
            for method in METHODS:
                path = samples_dir / f"{method}-{condition}.parquet"
                if not path.exists():
                    t0 = time.perf_counter()
                    rows = predict(base, adapters[method], set_level(targets, LEVELS[condition]),
                                   sampling, method, dtype)
                    rows.write_parquet(path)
                    log(f"{method} at {condition}: {rows.height} samples ({time.perf_counter() - t0:.0f} s)")
                frames.append(pl.read_parquet(path).with_columns(pl.lit(condition).alias("condition")))
            ran.append(condition)
        predictions = pl.concat(frames).with_columns(pl.lit("student").alias("split"),
                                                     pl.lit(fold).cast(pl.Int64).alias("fold"))
        if args.smoke:
            verdicts_of = smoke_judge
        else:
            verdicts_of = lambda problem, codes: judge.verdicts(problem, codes, candidates.get(problem, []))  # noqa: E731
        judged, _ = judge_predictions(predictions, candidates, verdicts_of, "intervention")
    outcomes = sample_outcomes(judged, targets, error_kcs)
    generator = (generator_response(targets, problems, submissions, LEVELS)
                 if "true_mastery" in submissions.columns else None)
    result = effects(outcomes, generator, LOW, HIGH)
    verdicts = {m: mechanism_holds(result, m) for m in METHODS if m != "student_sft" and m in result}

    out.mkdir(parents=True, exist_ok=True)
    kcs = targets.select("student_id", "problem_id", "target_kc")
    (outcomes.join(kcs, on=["student_id", "problem_id"])
     .select("method", "condition", "student_id", "problem_id", "target_kc", "sample", "pass", "tied",
             "valid", pl.col("truncated").fill_null(False),
             pl.col("errors").list.join("; ").alias("errors"))
     .sort("method", "condition", "student_id", "problem_id", "sample").write_csv(out / "samples.csv"))
    if generator is not None:
        generator.sort("student_id", "problem_id", "condition").write_csv(out / "generator.csv")
    import subprocess
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    meta = {"command": "make study-intervention" if not args.smoke else "--smoke", "commit": commit,
            "minutes": (time.perf_counter() - start) / 60, "cpu": cpu_name(),
            "dataset": args.dataset if not args.smoke else "toy", "run": f"{split}-{fold}",
            "pairs": targets.height, "k": sampling.k, "conditions": ran, "smoke": args.smoke}
    (out / "effects.json").write_text(json.dumps({"meta": meta, "effects": result, "verdicts": verdicts},
                                                 indent=1) + "\n")
    (out / "README.md").write_text(readme(result, verdicts, meta))
    for method, entry in result.items():
        log(f"{method}: tied effect {entry['tied_effect']['value']:+.3f} {entry['tied_effect']['ci95_problems']}, "
            f"pass effect {entry['pass_effect']['value']:+.3f} {entry['pass_effect']['ci95_problems']}")
    log(f"kaser_tied_effect: {result['kaser']['tied_effect']['value']:.4f}")


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":
        # the static judge iterates over sets, as the stages do: fix the hash seed, then run again
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    main()
