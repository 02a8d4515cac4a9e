"""How much faster is a GRPO update with each group's prompt through the model once?

    python benchmarks/grpo_update_speed.py            # the 135M base (`dvc repro base_model` first), ~5 min
    python benchmarks/grpo_update_speed.py --smoke    # seconds: tiny random model

KASER's GRPO scores each completion's tokens with the policy twice a generated batch or more: once
without gradients for the old log-probabilities (num_iterations > 1) and once per update with
them. TRL runs every completion's whole sequence, its group's prompt included;
kaser.predictor.shared_prompt runs the prompt once per group. This times both ways side by side in
one process, on the same inputs, alternating which goes first:

- inputs: a synthetic Python population built in memory (kaser.data.synth, as the default
  dataset), `--groups` problems, each one pair's prompt (the student prompt with its knowledge
  profile and signature) and, as its `num_generations` completions, other students' first
  submissions to that problem, cut at the data's token budget (params.yaml
  `grpo.max_completion_length: auto`): real lengths without sampling;
- policy: the base model with a fresh LoRA of params.yaml `sft` (rank, alpha, modules), in the
  dtype training uses (`model.dtype`), inside a real GRPOTrainer (its fused LM head);
- timed per group and way: the forward with gradients plus its backward (an update), and the
  forward without (the old log-probabilities), `--repeats` times.

It prints the CPU, each way's median seconds per group, the largest log-probability difference
between the ways, and last `update_speedup: X`: TRL's total update time over the shared one's.
It times the policy's forward and backward only; sampling, the rewards and the optimizer step
are the same either way (grpo_log.json's `step_time` gives whole steps).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaser import config  # noqa: E402
from kaser.config import load_settings  # noqa: E402


def log(line: str) -> None:
    print(line, flush=True)


def cpu_line() -> str:
    """The CPU's model name and its vector extensions that matter here."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown CPU"
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), "unknown CPU")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines()
                  if line.startswith("flags")), [])
    wanted = [flag for flag in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if flag in flags]
    return f"{name} ({', '.join(wanted) or 'no AVX2'})"


def groups_of(tokenizer, groups: int, generations: int, budget: int | None):
    """[(input_ids, attention_mask, completion length)] per group, padded as TRL pads a batch:
    the prompt on the left, the completions on the right, each ending with the end token."""
    import torch

    from kaser.data.synth import generate
    from kaser.predictor.prompt import pair_messages, student_pairs
    from kaser.predictor.sampling import completion_budget, first_submission_codes

    problems, submissions = generate("python", students=4 * (generations + 1), problems=groups, seed=0)
    mastery = submissions.select("student_id", "problem_id", pl.col("true_mastery").alias("mastery"))
    pairs = student_pairs(problems, submissions, mastery)
    if budget is None:
        codes = first_submission_codes(submissions)
        budget = completion_budget([len(ids) for ids in tokenizer(codes, add_special_tokens=False)
                                    ["input_ids"]], 99, 1024)
    pad = tokenizer.pad_token_id
    built = []
    for (_,), group in sorted(pairs.group_by("problem_id"), key=lambda item: item[0]):
        if group.height <= generations:
            continue
        prompt = tokenizer.apply_chat_template(pair_messages(group.head(1))[0], tokenize=True,
                                               add_generation_prompt=True, return_dict=False)
        completions = [(tokenizer(code, add_special_tokens=False)["input_ids"] +
                        [tokenizer.eos_token_id])[:budget]
                       for code in group["code"].to_list()[1:generations + 1]]
        length = max(map(len, completions))
        ids = [prompt + own + [pad] * (length - len(own)) for own in completions]
        mask = [[1] * len(prompt) + [1] * len(own) + [0] * (length - len(own)) for own in completions]
        built.append((torch.tensor(ids), torch.tensor(mask), length))
    return built, budget


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=4, help="problems, one group of completions each")
    parser.add_argument("--repeats", type=int, default=3, help="timings per group and way")
    parser.add_argument("--smoke", action="store_true", help="tiny random model, 2 groups, 1 repeat")
    args = parser.parse_args(argv)

    import torch
    from peft import LoraConfig, get_peft_model

    from kaser.predictor.base_model import load_model, load_tokenizer
    from kaser.predictor.grpo import GrpoParams, grpo_trainer

    params = load_settings((ROOT / "params.yaml").read_text())
    if args.smoke:
        sys.path.insert(0, str(ROOT / "tests"))
        from tiny_lm import tiny_model_folder
        base, dtype, args.groups, args.repeats, budget = tiny_model_folder(), "float32", 2, 1, 24
        log("smoke run: tiny random model; the figures mean nothing")
    else:
        base, dtype, budget = ROOT / "models" / "base", params["model"]["dtype"], None
        if not (base / "config.json").exists():
            raise SystemExit("grpo_update_speed.py: models/base not found; run `dvc repro base_model` "
                             "first (or --smoke: a tiny random model)")
    sft = params["sft"]
    grpo = params["grpo"]
    tokenizer = load_tokenizer(base)
    groups, budget = groups_of(tokenizer, args.groups, grpo["num_generations"], budget)
    with tempfile.TemporaryDirectory(prefix="kaser-grpo-speed-") as work:
        model, _ = load_model(base, dtype=dtype, trainable=True)
        get_peft_model(model, LoraConfig(r=sft["lora_r"], lora_alpha=sft["lora_alpha"],
                                         target_modules=list(sft["target_modules"]),
                                         init_lora_weights=False, task_type="CAUSAL_LM")
                       ).save_pretrained(Path(work) / "adapter")
        settings = config.settings(GrpoParams, "grpo", num_generations=grpo["num_generations"], prompts_per_step=1,
                              temperature=grpo["temperature"], max_completion_length=budget)
        toy = pl.DataFrame({"student_id": ["s"], "problem_id": ["p"], "step": [0],
                            "language": ["python"], "statement": ["-"], "signature": [None],
                            "kcs": [["k"]], "mastery": [[0.5]], "code": ["pass"],
                            "errors": [[]], "candidate_errors": [[]]})
        trainer = grpo_trainer(base, Path(work) / "adapter", toy, settings, Path(work) / "grpo",
                               judge=lambda *a: None, dtype=dtype)
    policy = trainer.model
    torch_threads = torch.get_num_threads()
    log(f"CPU: {cpu_line()}; torch threads {torch_threads}; dtype {next(policy.parameters()).dtype}")
    log(f"{len(groups)} groups of {grpo['num_generations']} completions; prompt tokens "
        f"{[ids.size(1) - length for ids, _, length in groups]}, completion tokens (padded) "
        f"{[length for _, _, length in groups]}, budget {budget}")

    def timed(share: bool, ids, mask, length, grad: bool):
        trainer.share_prompts = share
        policy.zero_grad(set_to_none=True)
        start = time.perf_counter()
        with torch.set_grad_enabled(grad):
            logps, _, _ = trainer._get_per_token_logps_and_entropies(policy, ids, mask, length,
                                                                     compute_entropy=grad)
            if grad:
                (logps * mask[:, -length:]).sum().backward()
        return time.perf_counter() - start, logps.detach()

    for share in (False, True):            # warm-up: first calls allocate and pick kernels
        timed(share, *groups[0], grad=True)
    seconds = {(share, grad): [] for share in (False, True) for grad in (True, False)}
    largest_gap = 0.0
    for repeat in range(args.repeats):
        for index, (ids, mask, length) in enumerate(groups):
            order = (False, True) if (repeat + index) % 2 == 0 else (True, False)
            for grad in (True, False):
                found = {}
                for share in order:
                    took, found[share] = timed(share, ids, mask, length, grad)
                    seconds[(share, grad)].append(took)
                gap = (found[True] - found[False]).abs() * mask[:, -length:]
                largest_gap = max(largest_gap, float(gap.max()))
    for grad, what in ((True, "update (forward + backward)"), (False, "old log-probs (forward)")):
        trl, shared = statistics.median(seconds[(False, grad)]), statistics.median(seconds[(True, grad)])
        log(f"{what}: TRL {trl:.2f} s, shared prompt {shared:.2f} s per group (medians of "
            f"{len(seconds[(False, grad)])}); ratio {trl / shared:.2f}")
    log(f"largest log-probability difference between the ways: {largest_gap:.2e}")
    log(f"update_speedup: {sum(seconds[(False, True)]) / sum(seconds[(True, True)]):.2f}")


if __name__ == "__main__":
    main()
