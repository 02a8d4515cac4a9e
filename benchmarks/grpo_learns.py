"""Does KASER's GRPO learn on this machine? Train from the Student SFT adapter on a fixed pool of
training pairs and measure the reward, both during training and on held-out pairs.

    python benchmarks/grpo_learns.py      # after `make study`: its 1,000-pair Student SFT adapter (37 min)
    python benchmarks/grpo_learns.py      # after `dvc repro sft@synthetic-python cluster@synthetic-python`: 192 pairs
    python benchmarks/grpo_learns.py -S grpo.learning_rate=1e-4 -S grpo.num_iterations=2
    python benchmarks/grpo_learns.py --own-sft 200     # first a Student SFT adapter of its own (needs cluster@ only)
    python benchmarks/grpo_learns.py --smoke              # seconds: tiny random model, toy judge

What it does, on the first run of params.yaml `model` (first split, first fold) of `--dataset`,
from that run's Student SFT adapter, or with `--own-sft PAIRS` from one it trains first on that
many training pairs (params.yaml `sft`, each `-S sft.key=value` laid over it; the default run's
adapter has seen 192 pairs, few for a 135M model to write a clean program often, so its error
reward varies little within a group):
1. draws a fixed pool of `--pool` training pairs and a probe set of `--probe` test pairs (unseen
   students' pairs with the student split; half of them, as far as there are, with a wrong real
   code), both seeded;
2. samples `--probe-k` completions per probe pair from the SFT adapter and scores each with the
   hybrid reward as GRPO does (similarity, error match, diversity within the pair's samples, the
   params.yaml weights and outcome_share; a completion cut off by the budget gets 0), and with
   the paper's label match (outcome_share 0) beside it;
3. trains each of `--arms` from that adapter on the pool: `grpo`, GRPO with params.yaml `grpo`
   (each `-S grpo.key=value` laid over it) for `--generations` generated batches (epochs =
   generations x prompts_per_step / pool; with num_iterations > 1 each batch gives several
   updates); `no-error`, the same with the error reward's weight at 0; `sft`, continued SFT on
   the pool's real codes with as many updates of as many pairs at GRPO's learning rate (these
   three by default); `paper`, GRPO with the paper's error reward (outcome_share 0);
4. samples and scores the probe set again from each trained adapter, with the same prompts and
   the same seed, so each before/after difference is paired per probe pair.

Per GRPO arm it prints the slope of the mean total reward per generated batch with its 95% t
interval, and the slope within a pair (each pair's reward against its own earlier visits, so the
spread between pairs drops out: kaser.evaluation.report.reward_trend), and the share of groups
whose error reward had no spread. Per arm: the probe's mean of each reward part after, and the
mean paired gain with its 95% t interval and n of the total reward (all pairs), of the error
reward and of the label match on wrong pairs, and of the error reward on correct pairs. Last
`wrong_pair_error_gain: X`: the `grpo` arm's error-reward gain on wrong probe pairs. The two
controls say what of it GRPO's error reward causes: `no-error` trains on the same samples without
it, `sft` without any reward. The gains say whether a trained adapter earns more reward on pairs
it never saw; they cannot say whether its codes are more like the students' in other respects
(the evaluation does), and one seed says nothing of the spread between runs.
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

from kaser import config  # noqa: E402
from kaser.config import load_settings  # noqa: E402

from _overrides import overrides  # noqa: E402  (benchmarks/, the script's own folder)


def log(line: str) -> None:
    print(line, flush=True)


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

ARMS = ("grpo", "paper", "no-error", "sft")   # GRPO as params.yaml has it; at outcome_share 0; its error weight 0; continued SFT


def probe_pairs(test: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """`n` held-out pairs, half of them (as far as there are) with a wrong real code, drawn with
    `seed`: the error reward's gain on wrong pairs is the figure, and a plain draw gives it fewer."""
    from kaser.predictor.sft import sample_pairs

    wrong, right = test.filter(~pl.col("correct")), test.filter(pl.col("correct"))
    take_wrong = min(wrong.height, max(n - right.height, n // 2))
    return pl.concat([sample_pairs(wrong, take_wrong, seed), sample_pairs(right, n - take_wrong, seed)])


def probe_rewards(base, adapter, probe: pl.DataFrame, params, k: int, judge, dtype: str
                  ) -> tuple[list[dict], dict[str, float]]:
    """Per probe pair, the mean over `k` samples of the hybrid reward (`total`), of its error
    reward (`error`, with params' outcome_share) and of the paper's label match (`labels`,
    outcome_share 0), with the pair's `correct`; each scored by GRPO's own reward functions
    (kaser.predictor.grpo.kaser_rewards; the samples say themselves which the budget cut off).
    Second: the mean of each part over all samples, with the share cut off."""
    from kaser.predictor.base_model import load_tokenizer
    from kaser.predictor.grpo import REWARD_NAMES, kaser_rewards
    from kaser.predictor.prompt import pair_messages
    from kaser.predictor.rewards import make_error_reward
    from kaser.predictor.sampling import GenerateParams, sample_completions

    tokenizer = load_tokenizer(base)
    prompts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
               for chat in pair_messages(probe)]
    sampling = config.settings(GenerateParams, "generate", backend="torch", k=k, temperature=params.temperature,
                              top_k=params.top_k, top_p=params.top_p,
                              repetition_penalty=params.repetition_penalty,
                              max_new_tokens=params.max_completion_length, batch_size=8,
                              seed=params.seed)
    samples = sample_completions(base, adapter, prompts, sampling, dtype)
    rewards = kaser_rewards(judge, outcome_share=params.outcome_share)
    label_match = make_error_reward(judge)
    error_part = REWARD_NAMES.index("error_reward")
    pairs, part_sums = [], [0.0] * len(rewards)
    for row, own in zip(probe.iter_rows(named=True), samples):
        n = len(own)
        columns = {"code": [row["code"]] * n, "language": [row["language"]] * n,
                   "problem_id": [row["problem_id"]] * n, "errors": [list(row["errors"])] * n,
                   "candidate_errors": [list(row["candidate_errors"])] * n,
                   "correct": [row["correct"]] * n, "group_id": [0] * n}
        parts = [reward(own, **columns) for reward in rewards]
        totals = [sum(w * part[i] for w, part in zip(params.reward_weights, parts)) for i in range(n)]
        pairs.append({"correct": bool(row["correct"]), "total": sum(totals) / n,
                      "error": sum(parts[error_part]) / n,
                      "labels": sum(label_match(own, **columns)) / n})
        part_sums = [total + sum(part) for total, part in zip(part_sums, parts)]
    count = sum(len(own) for own in samples)
    parts = {name: total / count for name, total in zip(REWARD_NAMES, part_sums)}
    parts["cut_off"] = sum(bool(text.truncated) for own in samples for text in own) / count
    return pairs, parts


def parts_line(parts: dict[str, float]) -> str:
    return ", ".join(f"{name.removesuffix('_reward')} {value:.3f}" for name, value in parts.items())


def paired_gains(before: list[dict], after: list[dict]) -> dict[str, dict]:
    """The mean paired gain (after − before, per probe pair) of the total reward over all pairs
    and of the error reward and the label match on wrong and on correct pairs, each with its
    95% t interval and n."""
    from kaser.evaluation.summary import t_interval

    found = {}
    for name, key, which in (("total", "total", None), ("error, wrong pairs", "error", False),
                             ("label match, wrong pairs", "labels", False),
                             ("error, correct pairs", "error", True)):
        gains = [a[key] - b[key] for a, b in zip(after, before, strict=True)
                 if which is None or b["correct"] is which]
        found[name] = {"gain": sum(gains) / len(gains) if gains else None,
                       "interval": t_interval(gains), "n": len(gains)}
    return found


def gain_text(figure: dict) -> str:
    if figure["gain"] is None:
        return "no pairs"
    interval = figure["interval"]
    spread = f" [{interval[0]:+.4f}, {interval[1]:+.4f}]" if interval else ""
    return f"{figure['gain']:+.4f}{spread} (n {figure['n']})"


def sft_control(sft, grpo, steps: int, pool: pl.DataFrame):
    """Continued SFT with as many optimizer updates as GRPO makes, each on as many pool pairs as
    a GRPO batch holds, at GRPO's learning rate: the gain more training on the pool gives
    without a reward."""
    return dataclasses.replace(sft, learning_rate=grpo.learning_rate, batch_size=grpo.prompts_per_step,
                               gradient_accumulation_steps=1, max_pairs=None, seed=grpo.seed,
                               epochs=steps * grpo.prompts_per_step / pool.height)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="synthetic-python")
    parser.add_argument("--pool", type=int, default=16, help="training pairs GRPO revisits")
    parser.add_argument("--probe", type=int, default=40,
                        help="held-out pairs scored before and after (half with a wrong real code)")
    parser.add_argument("--probe-k", type=int, default=4, help="samples per probe pair")
    parser.add_argument("--generations", type=int, default=20, help="generated batches GRPO trains on")
    parser.add_argument("--arms", default="grpo,no-error,sft",
                        help="what trains from the adapter, comma-separated: grpo (params.yaml grpo), "
                             "paper (its outcome_share 0), no-error (its error weight 0), "
                             "sft (continued SFT, as many updates)")
    parser.add_argument("-S", dest="settings", action="append", default=[],
                        help="grpo.<key>=<value> or sft.<key>=<value> over params.yaml (repeatable)")
    parser.add_argument("--own-sft", type=int, default=None, metavar="PAIRS",
                        help="first train a Student SFT adapter on this many training pairs (params.yaml "
                             "sft with the -S sft settings) instead of continuing the pipeline's")
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny random model, toy data and judge, 2 generated batches (seconds)")
    args = parser.parse_args(argv)
    arms = [arm.strip() for arm in args.arms.split(",") if arm.strip()]
    if not arms or set(arms) - set(ARMS):
        raise SystemExit(f"grpo_learns.py: --arms {args.arms!r}: choose from {', '.join(ARMS)}")

    from kaser.errors.annotate import AnnotateParams
    from kaser.errors.judge import JudgeParams, reward_judge
    from kaser.evaluation.figures import group_rows, reward_rows
    from kaser.evaluation.report import reward_trend
    from kaser.evaluation.summary import slope_interval
    from kaser.predictor.grpo import GrpoParams, ablated, resolve_completion_length, train_grpo
    from kaser.predictor.sft import SftParams, continue_sft, sample_pairs, train_sft

    params = load_settings((ROOT / "params.yaml").read_text())
    changes = overrides("grpo_learns.py", args.settings, ("grpo", "sft"))
    grpo = section_params(params, "grpo", GrpoParams, changes["grpo"])
    sft = section_params(params, "sft", SftParams, changes["sft"])
    if changes["sft"] and args.own_sft is None:
        raise SystemExit("grpo_learns.py: -S sft.<key> needs --own-sft (the pipeline's adapter is trained already)")
    work = Path(tempfile.mkdtemp(prefix="grpo-learns-"))   # the trained adapters; removed at exit
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
        judging = reward_judge(folder, config.settings(JudgeParams, "judge", params),
                                     config.settings(AnnotateParams, "annotate", params).static_params())
    pool = sample_pairs(train, args.pool, grpo.seed)
    probe = probe_pairs(test, args.probe, grpo.seed + 1)
    grpo = dataclasses.replace(grpo, max_pairs=None,
                               epochs=args.generations * grpo.prompts_per_step / pool.height)
    steps = args.generations * grpo.num_iterations * (grpo.steps_per_generation or 1)
    changed = {f"grpo.{key}": getattr(grpo, key) for key in changes["grpo"]}
    if args.own_sft is not None:
        sft = dataclasses.replace(sft, max_pairs=args.own_sft)
        changed |= {f"sft.{key}": getattr(sft, key) for key in changes["sft"]} | {"own SFT pairs": args.own_sft}
    wrong = int((~probe["correct"]).sum())
    log(f"dataset {'toy' if args.smoke else args.dataset}: pool {pool.height} training pairs, probe "
        f"{probe.height} test pairs ({wrong} with a wrong real code) x {args.probe_k} samples, "
        f"{args.generations} generated batches of {grpo.prompts_per_step} x {grpo.num_generations}, "
        f"{steps} updates, budget {grpo.max_completion_length} tokens; arms {', '.join(arms)}; "
        f"grpo over params.yaml: {changed or 'none'}")

    if args.own_sft is not None:
        adapter = work / "sft"
        train_sft(base, train, sft, adapter, dtype)   # its own seeded draw of the training pairs
        log(f"own Student SFT adapter: {sft.max_pairs} pairs ({time.perf_counter() - start:.0f} s)")
    results: dict[str, dict] = {}
    with judging as judge:
        before, parts_before = probe_rewards(base, adapter, probe, grpo, args.probe_k, judge, dtype)
        log(f"probe before: mean reward {sum(p['total'] for p in before) / len(before):.4f} "
            f"({parts_line(parts_before)}; {time.perf_counter() - start:.0f} s)")
        for arm in arms:
            out = work / arm
            if arm == "sft":
                history = continue_sft(base, adapter, pool, sft_control(sft, grpo, steps, pool), out, dtype)
            else:
                trained = {"no-error": ablated(grpo, "error"),
                           "paper": dataclasses.replace(grpo, outcome_share=0.0)}.get(arm, grpo)
                history = train_grpo(base, adapter, pool, trained, out, judge, dtype)
            after, parts_after = probe_rewards(base, out, probe, grpo, args.probe_k, judge, dtype)
            results[arm] = {"history": history, "after": after, "parts_after": parts_after,
                            "gains": paired_gains(before, after)}
            log(f"{arm}: trained and probed ({time.perf_counter() - start:.0f} s); probe after: "
                f"{parts_line(parts_after)}")

    for arm, result in results.items():
        history = result["history"]
        if arm != "sft":
            for sentence in reward_trend(reward_rows(history), group_rows(history)):
                log(f"{arm} training reward. {sentence}")
            spread = [entry["error_zero_spread_share"] for entry in history if "error_zero_spread_share" in entry]
            if spread:
                log(f"{arm}: groups with no error-reward spread: {sum(spread) / len(spread):.2f} of a step on average")
        for name, figure in result["gains"].items():
            log(f"{arm}: paired gain on the probe set, {name}: {gain_text(figure)}")
    headline_arm = "grpo" if "grpo" in results else arms[0]
    headline = results[headline_arm]["gains"]["error, wrong pairs"]
    interval = headline["interval"]
    if interval:
        log(f"{headline_arm}: error reward rises on wrong probe pairs: "
            f"{'yes' if interval[0] > 0 else 'not shown'} (95% CI lower end {interval[0]:+.4f})")
    seconds = time.perf_counter() - start
    log(f"{seconds / 60:.1f} min in all")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "settings": changed, "pool": pool.height, "probe": probe.height, "probe_wrong": wrong,
            "probe_k": args.probe_k, "generations": args.generations, "updates": steps,
            "budget": grpo.max_completion_length, "outcome_share": grpo.outcome_share,
            "before": before, "parts_before": parts_before, "seconds": seconds, "smoke": args.smoke,
            "arms": {arm: {"rewards": [e["reward"] for e in r["history"] if "reward" in e],
                           "slope": slope_interval([e["reward"] for e in r["history"] if "reward" in e]),
                           "after": r["after"], "parts_after": r["parts_after"], "gains": r["gains"]}
                     for arm, r in results.items()}}, indent=1) + "\n")
    gain = headline["gain"]
    log(f"wrong_pair_error_gain: {gain if gain is not None else float('nan'):.4f}")


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":
        # the static judge iterates over sets, as the stages do (they run with PYTHONHASHSEED=0):
        # without a fixed hash seed two runs judge the same code differently
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    main()
