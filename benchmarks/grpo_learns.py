"""Does KASER's GRPO learn on this machine? Train from the Student SFT adapter on a fixed pool of
training pairs and measure the reward, both during training and on held-out pairs.

    python benchmarks/grpo_learns.py      # after `make study`: its 1,000-pair Student SFT adapter (37 min)
    python benchmarks/grpo_learns.py      # after `dvc repro sft@synthetic-python cluster@synthetic-python`: 48 pairs
    python benchmarks/grpo_learns.py -S grpo.learning_rate=1e-4 -S grpo.num_iterations=2
    python benchmarks/grpo_learns.py --own-sft 200     # first a Student SFT adapter of its own (needs cluster@ only)
    python benchmarks/grpo_learns.py --smoke              # seconds: tiny random model, toy judge

What it does, on the first run of params.yaml `model` (first split, first fold) of `--dataset`,
from that run's Student SFT adapter, or with `--own-sft PAIRS` from one it trains first on that
many training pairs (params.yaml `sft`, each `-S sft.key=value` laid over it; the default run's
adapter has seen 48 pairs, too few to write a clean program often, so its error reward rarely
varies within a group):
1. draws a fixed pool of `--pool` training pairs and a probe set of `--probe` test pairs (unseen
   students' pairs with the student split), both seeded;
2. samples `--probe-k` completions per probe pair from the SFT adapter and scores each with the
   hybrid reward as GRPO does (similarity, error match, diversity within the pair's samples, the
   params.yaml weights; a completion cut off by the budget gets 0);
3. trains GRPO with params.yaml `grpo` (each `-S grpo.key=value` laid over it) for
   `--generations` generated batches over the pool (epochs = generations x prompts_per_step /
   pool; with num_iterations > 1 each batch gives several optimizer steps);
4. samples and scores the probe set again from the trained adapter, with the same prompts and
   the same seed, so the before/after difference is paired per probe pair.

It prints the slope of the mean total reward per generated batch with its 95% t interval, and
the slope within a pair (each pair's reward against its own earlier visits, so the spread between
pairs drops out: kaser.evaluation.report.reward_trend); the share of groups whose error reward
had no spread; the probe set's mean reward before and after (with each part's mean and the share
cut off); and last `reward_gain: X`: the mean paired gain per probe pair, with its 95% t interval
printed above it. The gain says whether the trained adapter earns more reward on pairs it never
saw; it cannot say whether its codes are more like the students' in other respects (the
evaluation does).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaser.config import load_settings  # noqa: E402


def log(line: str) -> None:
    print(line, flush=True)


def overrides(settings: list[str]) -> dict[str, dict[str, object]]:
    """`-S grpo.key=value` / `-S sft.key=value` settings as {section: {key: YAML value}}."""
    found: dict[str, dict[str, object]] = {"grpo": {}, "sft": {}}
    for setting in settings:
        key, sep, value = setting.partition("=")
        section, dot, name = key.partition(".")
        if not sep or not dot or section not in found:
            raise SystemExit(f"grpo_learns.py: -S {setting!r}: give grpo.<key>=<value> or sft.<key>=<value>")
        found[section][name] = load_settings(value)   # as DVC reads it: 1e-4 is a number
    return found


def section_params(params: dict, name: str, cls, changes: dict[str, object]):
    """params.yaml section `name` with `changes` laid over it, as settings class `cls`."""
    section = dict(params[name])
    unknown = set(changes) - set(section)
    if unknown:
        raise SystemExit(f"grpo_learns.py: not params.yaml {name} keys: {', '.join(sorted(unknown))}")
    section.update(changes)
    section = {key: tuple(value) if isinstance(value, list) and key == "reward_weights" else value
               for key, value in section.items()}
    return cls(**section)


# ------------------------------------------------------------------------------- the real setup

def pipeline_inputs(dataset: str, params: dict, own_sft: bool):
    """(base model folder, SFT adapter folder, dataset folder, split, fold) of the first run; with
    `own_sft` no adapter is needed (the benchmark trains one)."""
    split, fold = params["model"]["splits"][0], params["model"]["folds"][0]
    base, folder = ROOT / "models" / "base", ROOT / "data" / dataset
    adapter = ROOT / "models" / dataset / "sft" / f"{split}-{fold}"
    needed = [base / "config.json", folder / "submission_errors.parquet", folder / "mastery.parquet"]
    needed += [] if own_sft else [adapter / "adapter_config.json"]
    missing = [str(path.relative_to(ROOT)) for path in needed if not path.exists()]
    if missing:
        stages = f"cluster@{dataset}" if own_sft else f"sft@{dataset} cluster@{dataset}"
        raise SystemExit(f"grpo_learns.py: {', '.join(missing)} not found; run "
                         f"`dvc repro {stages}` first (or --smoke: a tiny random model)")
    return base, adapter, folder, split, fold


def labelled_pairs(folder: Path, split: str, fold: int, part: str) -> pl.DataFrame:
    from kaser.data.contracts import read_dataset
    from kaser.predictor.grpo import read_error_truth, with_correctness, with_errors
    from kaser.predictor.prompt import read_pairs

    submission_errors, problem_errors = read_error_truth(folder)
    _, submissions = read_dataset(folder)
    return with_errors(with_correctness(read_pairs(folder, split, fold, part), submissions),
                       submission_errors, problem_errors)


# ------------------------------------------------------------------------------- the smoke setup

def smoke_inputs(work: Path):
    """A tiny random model with a LoRA adapter as its "SFT adapter", and labelled toy pairs of a
    small synthetic Python population (errors: the generator's true errors)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_lm import tiny_model_with_adapter

    from kaser.data.synth import generate
    from kaser.predictor.grpo import with_errors
    from kaser.predictor.prompt import student_pairs

    base = tiny_model_with_adapter(work / "sft")
    problems, submissions = generate("python", students=6, problems=3, seed=0)
    mastery = submissions.select("student_id", "problem_id", pl.col("true_mastery").alias("mastery"))
    errors = submissions.select("student_id", "problem_id", pl.col("true_errors").alias("errors"))
    candidates = {p: sorted({e for labels in g["errors"] for e in labels})
                  for (p,), g in errors.group_by("problem_id")}
    pairs = with_errors(student_pairs(problems, submissions, mastery), errors, candidates)
    pairs = pairs.join(submissions.select("student_id", "problem_id", "correct"),
                       on=["student_id", "problem_id"])
    students = sorted(pairs["student_id"].unique())
    return (base, work / "sft", pairs.filter(pl.col("student_id").is_in(students[:4])),
            pairs.filter(pl.col("student_id").is_in(students[4:])))


def smoke_judge(problem_id, code, candidates):
    """The smoke run's judge: every code clean (the wiring is under test, not the judge)."""
    from kaser.errors.judge import Verdict
    return Verdict(frozenset(), True, True, frozenset())


# ------------------------------------------------------------------------------- measuring

def probe_rewards(base, adapter, probe: pl.DataFrame, params, k: int, judge, dtype: str
                  ) -> tuple[list[float], dict[str, float]]:
    """Mean hybrid reward of `k` samples per probe pair, scored by GRPO's own reward functions
    (kaser.predictor.grpo.kaser_rewards; the samples say themselves which the budget cut off),
    and the mean of each part over all samples, with the share cut off."""
    from kaser.predictor.base_model import load_tokenizer
    from kaser.predictor.grpo import REWARD_NAMES, kaser_rewards
    from kaser.predictor.prompt import pair_messages
    from kaser.predictor.sampling import GenerateParams, sample_completions

    tokenizer = load_tokenizer(base)
    prompts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
               for chat in pair_messages(probe)]
    sampling = GenerateParams(backend="transformers", k=k, temperature=params.temperature,
                              top_k=params.top_k, top_p=params.top_p,
                              repetition_penalty=params.repetition_penalty,
                              max_new_tokens=params.max_completion_length, batch_size=4,
                              seed=params.seed)
    samples = sample_completions(base, adapter, prompts, sampling, dtype)
    rewards = kaser_rewards(judge)
    means, part_sums = [], [0.0] * len(rewards)
    for row, own in zip(probe.iter_rows(named=True), samples):
        n = len(own)
        columns = {"code": [row["code"]] * n, "language": [row["language"]] * n,
                   "problem_id": [row["problem_id"]] * n, "errors": [list(row["errors"])] * n,
                   "candidate_errors": [list(row["candidate_errors"])] * n,
                   "correct": [row.get("correct")] * n, "group_id": [0] * n}
        parts = [reward(own, **columns) for reward in rewards]
        totals = [sum(w * part[i] for w, part in zip(params.reward_weights, parts)) for i in range(n)]
        means.append(sum(totals) / n)
        part_sums = [total + sum(part) for total, part in zip(part_sums, parts)]
    count = sum(len(own) for own in samples)
    parts = {name: total / count for name, total in zip(REWARD_NAMES, part_sums)}
    parts["cut_off"] = sum(bool(text.truncated) for own in samples for text in own) / count
    return means, parts


def parts_line(parts: dict[str, float]) -> str:
    return ", ".join(f"{name.removesuffix('_reward')} {value:.3f}" for name, value in parts.items())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="synthetic-python")
    parser.add_argument("--pool", type=int, default=16, help="training pairs GRPO revisits")
    parser.add_argument("--probe", type=int, default=40, help="held-out pairs scored before and after")
    parser.add_argument("--probe-k", type=int, default=4, help="samples per probe pair")
    parser.add_argument("--generations", type=int, default=20, help="generated batches GRPO trains on")
    parser.add_argument("-S", dest="settings", action="append", default=[],
                        help="grpo.<key>=<value> or sft.<key>=<value> over params.yaml (repeatable)")
    parser.add_argument("--own-sft", type=int, default=None, metavar="PAIRS",
                        help="first train a Student SFT adapter on this many training pairs (params.yaml "
                             "sft with the -S sft settings) instead of continuing the pipeline's")
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny random model, toy data and judge, 2 generated batches (seconds)")
    args = parser.parse_args(argv)

    from kaser.errors.annotate import AnnotateParams
    from kaser.errors.judge import JudgeParams, reward_judge
    from kaser.evaluation.figures import group_rows, reward_rows
    from kaser.evaluation.report import reward_trend
    from kaser.evaluation.summary import slope_interval, t_interval
    from kaser.predictor.grpo import GrpoParams, resolve_completion_length, train_grpo
    from kaser.predictor.sft import SftParams, sample_pairs, train_sft

    params = load_settings((ROOT / "params.yaml").read_text())
    changes = overrides(args.settings)
    grpo = section_params(params, "grpo", GrpoParams, changes["grpo"])
    sft = section_params(params, "sft", SftParams, changes["sft"])
    if changes["sft"] and args.own_sft is None:
        raise SystemExit("grpo_learns.py: -S sft.<key> needs --own-sft (the pipeline's adapter is trained already)")
    work = Path(tempfile.mkdtemp(prefix="grpo-learns-"))   # the trained adapter; removed at exit
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    start = time.perf_counter()
    if args.smoke:
        args.pool, args.probe, args.probe_k, args.generations = 4, 2, 2, 2
        grpo = dataclasses.replace(grpo, max_completion_length=8, num_generations=2)
        base, adapter, train, test = smoke_inputs(work)
        dtype, judging = "float32", contextlib.nullcontext(smoke_judge)
        log("smoke run: tiny random model, every code judged clean; the figures mean nothing")
    else:
        base, adapter, folder, split, fold = pipeline_inputs(args.dataset, params, args.own_sft is not None)
        train, test = (labelled_pairs(folder, split, fold, part) for part in ("train", "test"))
        dtype = params["model"]["dtype"]
        from kaser.data.contracts import read_dataset
        grpo = resolve_completion_length(grpo, base, read_dataset(folder)[1])
        judging = reward_judge(folder, JudgeParams(**params["judge"]),
                                     AnnotateParams(**params["annotate"]).static_params())
    pool = sample_pairs(train, args.pool, grpo.seed)
    probe = sample_pairs(test, args.probe, grpo.seed + 1)
    grpo = dataclasses.replace(grpo, max_pairs=None,
                               epochs=args.generations * grpo.prompts_per_step / pool.height)
    changed = {f"grpo.{key}": getattr(grpo, key) for key in changes["grpo"]}
    if args.own_sft is not None:
        sft = dataclasses.replace(sft, max_pairs=args.own_sft)
        changed |= {f"sft.{key}": getattr(sft, key) for key in changes["sft"]} | {"own SFT pairs": args.own_sft}
    log(f"dataset {'toy' if args.smoke else args.dataset}: pool {pool.height} training pairs, probe "
        f"{probe.height} test pairs x {args.probe_k} samples, {args.generations} generated batches "
        f"of {grpo.prompts_per_step} x {grpo.num_generations}, budget {grpo.max_completion_length} "
        f"tokens; grpo over params.yaml: {changed or 'none'}")

    if args.own_sft is not None:
        adapter = work / "sft"
        train_sft(base, train, sft, adapter, dtype)   # its own seeded draw of the training pairs
        log(f"own Student SFT adapter: {sft.max_pairs} pairs ({time.perf_counter() - start:.0f} s)")
    with judging as judge:
        before, parts_before = probe_rewards(base, adapter, probe, grpo, args.probe_k, judge, dtype)
        log(f"probe before: mean reward {sum(before) / len(before):.4f} ({parts_line(parts_before)}; "
            f"{time.perf_counter() - start:.0f} s)")
        history = train_grpo(base, adapter, pool, grpo, work / "grpo", judge, dtype)
        log(f"trained ({time.perf_counter() - start:.0f} s)")
        after, parts_after = probe_rewards(base, work / "grpo", probe, grpo, args.probe_k, judge, dtype)

    steps = [entry for entry in history if "reward" in entry]
    rewards = [entry["reward"] for entry in steps]
    spread = [entry["error_zero_spread_share"] for entry in history if "error_zero_spread_share" in entry]
    slope = slope_interval(rewards)
    gains = [a - b for a, b in zip(after, before)]
    gain = sum(gains) / len(gains)
    interval = t_interval(gains)
    seconds = time.perf_counter() - start
    groups = group_rows(history)
    for sentence in reward_trend(reward_rows(history), groups):
        log(f"training reward. {sentence}")
    if spread:
        log(f"groups with no error-reward spread: {sum(spread) / len(spread):.2f} of a step on average")
    log(f"probe after: mean reward {sum(after) / len(after):.4f} ({parts_line(parts_after)})")
    if interval:
        log(f"paired gain on the probe set: {gain:+.4f}, 95% CI [{interval[0]:+.4f}, {interval[1]:+.4f}], "
            f"n {len(gains)} pairs; learns: {'yes' if interval[0] > 0 else 'not shown'}")
    log(f"{seconds / 60:.1f} min in all")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "settings": changed, "pool": pool.height, "probe": probe.height, "probe_k": args.probe_k,
            "generations": args.generations, "budget": grpo.max_completion_length,
            "rewards": rewards, "groups": groups, "zero_spread": spread, "slope": slope,
            "before": before,
            "after": after, "parts_before": parts_before, "parts_after": parts_after, "gain": gain, "gain_interval": interval, "seconds": seconds,
            "smoke": args.smoke}, indent=1) + "\n")
    log(f"reward_gain: {gain:.4f}")


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":
        # the static judge iterates over sets, as the stages do (they run with PYTHONHASHSEED=0):
        # without a fixed hash seed two runs judge the same code differently
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    main()
