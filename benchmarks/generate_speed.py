"""Tokens per second of the pipeline's own sampling, each CPU engine side by side in one run.

The work is the pipeline's mix: as many KASER prompts (`pair_messages`: statement, signature,
mastery profile) as in-context history prompts (`icl_messages`: the student's 5 earlier
submissions, as the ICL baseline asks; ParaStudent's prompt is the same), drawn with a fixed seed
from the default dataset's pairs (`data/synthetic-python`, built by `dvc repro
prepare@synthetic-python`; its true mastery stands in for the knowledge stage's). Each prompt gets
K = 5 samples at params.yaml's decoding (temperature 0.7, top-k 40, top-p 1, repetition penalty
1.1) and the data's token budget (`generate.max_new_tokens: auto`, `resolve_budget`).

Engines, each in a process of its own after a one-prompt warm-up, through
`kaser.predictor.sampling.sample_completions`: transformers' `generate` at each of --batch-sizes
(prompts per call), ctranslate2 (its time includes merging and converting the model; prompts of
one token count share a call), ctranslate2 with every prompt a call of its own, torch (our
decoding loop, each prompt read once for its K samples) at params.yaml's batch size, and, where
llama-cpp-python is installed (`make install-llama`), llama.cpp at params.yaml's batch size (its
time includes writing the GGUF file); `--engines` leaves out the others (transformers is always
timed). For each it prints the generated tokens (the completions re-tokenised), tokens/s, and
the share of the machine's compute ceiling: cores x float32 lanes (16 with AVX-512, 8 with
AVX2) x 2 FMA units x 2 FLOP x the clock /proc/cpuinfo reports, over 2 FLOP per parameter per
generated token (prefill and attention not counted, so the share is an upper bound on how well
the engine uses the machine). The last line is `speedup: X`: params.yaml's `generate.backend`
over transformers at its best batch size.

It needs the real base model (models/base, `dvc repro base_model`): a random model's speed says
nothing about the pipeline's. `--tiny` takes the tests' tiny random model (and a small population
generated here when the dataset folder is absent), and says so in its output. `--avx2` holds both
engines to AVX2 (ATEN_CPU_CAPABILITY=avx2, MKL_ENABLE_INSTRUCTIONS=AVX2, ONEDNN_MAX_CPU_ISA=AVX2,
CT2_FORCE_CPU_ISA=AVX2), since our machines differ.

    .venv/bin/python benchmarks/generate_speed.py                # 8 + 8 prompts, real model
    .venv/bin/python benchmarks/generate_speed.py --avx2 --prompts 4
    .venv/bin/python benchmarks/generate_speed.py --per-problem 4   # KASER prompts 4 per problem
    .venv/bin/python benchmarks/generate_speed.py --smoke        # tiny model, 1 + 1 prompts x 2 x 16 tokens
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

if "--avx2" in sys.argv:   # read by torch and ctranslate2 when they load, so before any import
    os.environ["ATEN_CPU_CAPABILITY"] = "avx2"
    os.environ["CT2_FORCE_CPU_ISA"] = "AVX2"
    os.environ["MKL_ENABLE_INSTRUCTIONS"] = "AVX2"    # torch's float32 matrix products
    os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from kaser.config import from_dict, load_settings  # noqa: E402
from kaser.predictor.sampling import GenerateParams, resolve_budget, sample_completions  # noqa: E402

MODEL = Path("models/base")
DATA = Path("data/synthetic-python")
HISTORY = 5          # earlier submissions in a history prompt (params.yaml baselines.history)
SMOKE = dict(k=2, max_new_tokens=16)


def fail(message: str) -> None:
    print(f"generate_speed: {message}", file=sys.stderr)
    raise SystemExit(2)


def settings() -> tuple[GenerateParams, dict]:
    params = load_settings((ROOT / "params.yaml").read_text())
    return (from_dict(GenerateParams, params["generate"], where="params.yaml:generate"),
            params["baselines"])


def model_folder(model: Path, tiny: bool) -> tuple[Path, str]:
    if tiny:
        sys.path.insert(0, str(ROOT / "tests"))
        from tiny_lm import tiny_model_folder
        return tiny_model_folder(), "TINY RANDOM MODEL (--tiny): the speeds say nothing about the real one"
    if not (model / "config.json").exists():
        fail(f"{model} is not there: run `dvc repro base_model` first "
             "(or pass --tiny for the tests' random model, whose speed means nothing)")
    return model, f"base model {model}"


def population(data: Path, tiny: bool) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    from kaser.data.contracts import read_dataset
    if (data / "submissions.parquet").exists():
        problems, submissions = read_dataset(data)
        return problems, submissions, str(data)
    if not tiny:
        fail(f"{data} is not there: run `dvc repro prepare@synthetic-python` first")
    from kaser.data.synth import generate
    problems, submissions = generate("python", students=8, problems=6, seed=0)
    return problems, submissions, "a small synthetic Python population generated here (--tiny)"


def prompt_mix(tokenizer, problems, submissions, baselines: dict, per_kind: int, seed: int,
               per_problem: int = 1) -> list[str]:
    """`per_kind` KASER prompts then `per_kind` history prompts, chat template applied. The KASER
    pairs are a seeded draw of all pairs, or with `per_problem` > 1 that many students' pairs on
    each of per_kind / per_problem drawn problems, as a generate stage sees a problem's test
    pairs together (10 per problem in the CPU study)."""
    from kaser.predictor.history_prompts import icl_messages, with_history
    from kaser.predictor.prompt import pair_messages, student_pairs
    from kaser.predictor.sft import sample_pairs

    mastery = submissions.select("student_id", "problem_id", pl.col("true_mastery").alias("mastery"))
    pairs = student_pairs(problems, submissions, mastery)
    if per_problem > 1:
        chosen = (pairs.group_by("problem_id").len().filter(pl.col("len") >= per_problem)
                  .sort("problem_id").sample(max(1, per_kind // per_problem), seed=seed)["problem_id"])
        kaser = pl.concat([sample_pairs(pairs.filter(pl.col("problem_id") == problem), per_problem, seed)
                           for problem in chosen.sort()])
    else:
        kaser = sample_pairs(pairs, per_kind, seed)
    deep = pairs.filter(pl.col("step") >= HISTORY)   # pairs with a full history
    history = with_history(sample_pairs(deep if deep.height else pairs, per_kind, seed + 1), problems,
                           submissions, HISTORY, baselines.get("max_code_chars"))
    chats = pair_messages(kaser) + icl_messages(history)
    return [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            for chat in chats]


def cpu_ceiling() -> tuple[float, str]:
    """(peak float32 GFLOP/s, how it was estimated)."""
    flags, mhz, name = set(), 0.0, platform.processor() or "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "flags" and not flags:
            flags = set(value.split())
        elif key == "cpu MHz" and not mhz:
            mhz = float(value)
        elif key == "model name":
            name = value.strip()
    cores = len(os.sched_getaffinity(0))
    isa = os.environ.get("ATEN_CPU_CAPABILITY")
    lanes = 16 if "avx512f" in flags and isa != "avx2" else 8 if "avx2" in flags else 4
    peak = cores * lanes * 2 * 2 * mhz / 1000
    return peak, (f"{name}, {cores} cores x {lanes} float32 lanes x 2 FMA units x 2 FLOP x "
                  f"{mhz / 1000:.2f} GHz = {peak:.0f} GFLOP/s")


def tokens_per_second(folder, prompts: list[str], params: GenerateParams) -> tuple[float, int, float]:
    """The engine's speed, timed in a process of its own: two engines in one process slow each
    other down (CTranslate2's threads cost the torch loop that ran after it in the same process
    a third of its speed)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_timed, folder, prompts, params).result()


def _timed(folder, prompts: list[str], params: GenerateParams) -> tuple[float, int, float]:
    from kaser.predictor.base_model import load_tokenizer

    tokenizer = load_tokenizer(folder)
    sample_completions(folder, None, prompts[:1], replace(params, k=1, max_new_tokens=4), dtype="float32")
    start = time.perf_counter()
    completions = sample_completions(folder, None, prompts, params, dtype="float32")
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(text, add_special_tokens=False)["input_ids"])
                 for own in completions for text in own)
    return tokens / seconds, tokens, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=8, help="prompts of each kind (KASER, history)")
    parser.add_argument("--per-problem", type=int, default=1,
                        help="KASER prompts drawn as this many students per problem (1: a plain draw)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 8, 16],
                        help="transformers: prompts per generate call, each tried")
    parser.add_argument("--model", type=Path, default=MODEL, help="base-model folder")
    parser.add_argument("--data", type=Path, default=DATA, help="dataset folder (problems, submissions)")
    parser.add_argument("--tiny", action="store_true", help="the tests' tiny random model (speeds mean nothing)")
    parser.add_argument("--avx2", action="store_true", help="hold both engines to AVX2")
    parser.add_argument("--engines", nargs="+", help="time only the engines whose names start so "
                        "(e.g. torch ctranslate2); transformers at --batch-sizes is always timed")
    parser.add_argument("--smoke", action="store_true",
                        help="--tiny, 1 + 1 prompts x 2 samples x 16 tokens, batch size 1: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.tiny, args.prompts, args.batch_sizes = True, 1, [1]
    from kaser.predictor.base_model import load_tokenizer

    params, baselines = settings()
    folder, what = model_folder(args.model, args.tiny)
    tokenizer = load_tokenizer(folder)
    problems, submissions, data = population(args.data, args.tiny)
    params = resolve_budget(params, tokenizer, submissions)
    if args.smoke:
        params = replace(params, **SMOKE)
    prompts = prompt_mix(tokenizer, problems, submissions, baselines, args.prompts, params.seed,
                         args.per_problem)
    prompt_tokens = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    from kaser.predictor.base_model import load_model
    parameters = sum(p.numel() for p in load_model(folder, dtype="float32")[0].parameters())
    peak, how = cpu_ceiling()
    ceiling = peak * 1e9 / (2 * parameters)
    print(f"model: {what}, float32, {parameters / 1e6:.0f} M parameters")
    kaser_count = len(prompts) - args.prompts
    print(f"data: {data}; {len(prompts)} prompts ({kaser_count} KASER"
          f"{f', {args.per_problem} per problem' if args.per_problem > 1 else ''} + {args.prompts} history), "
          f"{min(prompt_tokens)}-{max(prompt_tokens)} prompt tokens, "
          f"{len(set(prompt_tokens))} distinct lengths")
    print(f"sampling: K {params.k}, up to {params.max_new_tokens} new tokens, temperature "
          f"{params.temperature}, top_k {params.top_k}, top_p {params.top_p}, repetition penalty "
          f"{params.repetition_penalty}")
    print(f"CPU: {how}; at 2 FLOP per parameter a token, at most {ceiling:.0f} tokens/s")
    print(f"instruction set: {'held to AVX2 (--avx2)' if args.avx2 else 'as detected'}")
    runs = [(f"transformers batch {b}", replace(params, backend="transformers", batch_size=b))
            for b in args.batch_sizes]
    runs.append(("ctranslate2", replace(params, backend="ctranslate2")))
    if params.batch_size > 1:    # side by side: every prompt a call of its own
        runs.append(("ctranslate2 one prompt a call", replace(params, backend="ctranslate2", batch_size=1)))
    runs.append((f"torch batch {params.batch_size}", replace(params, backend="torch")))
    if importlib.util.find_spec("llama_cpp"):   # optional: make install-llama
        runs.append((f"llama_cpp batch {params.batch_size}", replace(params, backend="llama_cpp")))
    else:
        print("llama_cpp: not installed (make install-llama), not timed")
    if args.engines:
        runs = [run for run in runs if run[0].startswith(("transformers", *args.engines))]
    speed = {}
    for name, run_params in runs:
        speed[name], tokens, seconds = tokens_per_second(folder, prompts, run_params)
        print(f"{name}: {tokens} tokens in {seconds:.1f} s = {speed[name]:.1f} tokens/s "
              f"({speed[name] / ceiling:.1%} of the ceiling)")
    best = max((n for n in speed if n.startswith("transformers")), key=speed.get)
    batched = ("transformers", "llama_cpp", "torch")
    chosen = (f"{params.backend} batch {params.batch_size}" if params.backend in batched
              else params.backend)
    if chosen not in speed:
        speed[chosen], _, _ = tokens_per_second(folder, prompts, params)
    print(f"chosen engine (params.yaml generate.backend): {chosen}; transformers at its best: {best}")
    print(f"speedup: {speed[chosen] / speed[best]:.2f}")


if __name__ == "__main__":
    main()
