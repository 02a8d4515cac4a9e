"""Tokens per second of student-code sampling: the transformers backend vs the ctranslate2 backend.

Uses the materialised default base model (models/base/, from `dvc repro base_model`) when it is
there, else a tiny random model (so the benchmark always runs; its speedup says less). Builds the
student prompts of 16 synthetic Java problems (kaser.data.synth.bank) and samples K=5
completions of up to 128 new tokens per prompt (80 sequences) with params.yaml's decoding
(temperature 0.7, top_k 40, top_p 1, repetition penalty 1.1, batches of 8 prompts), once with each
backend through `sample_completions` (one run each, side by side, after a short warm-up of each;
ctranslate2's time includes merging and converting the model), counts the generated tokens
(re-tokenised completions) and prints tokens/s of each and, as its last line, `speedup: X`
(ctranslate2 tokens/s / transformers tokens/s).

    .venv/bin/python benchmarks/generate_speed.py [number of prompts, default 16]
    .venv/bin/python benchmarks/generate_speed.py --smoke   # tiny random model, 2 prompts x 2 x 16 tokens

--smoke always takes the tiny random model (and says so): seconds of work that run every path,
with a speedup that says nothing about the real model.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

from kaser.predictor.base_model import load_tokenizer
from kaser.predictor.sampling import GenerateParams, sample_completions
from kaser.predictor.prompt import build_prompt_text
from kaser.data.synth.bank import load_bank

DEFAULT_FOLDER = Path("models/base")
N_PROMPTS = 16
PARAMS = GenerateParams(k=5, temperature=0.7, top_k=40, top_p=1.0, repetition_penalty=1.1,
                        max_new_tokens=128, batch_size=8, seed=0)
SMOKE_PROMPTS = 2
SMOKE_PARAMS = replace(PARAMS, k=2, max_new_tokens=16, batch_size=2)


def model_folder(smoke: bool) -> tuple[Path, str]:
    if not smoke and (DEFAULT_FOLDER / "config.json").exists():
        return DEFAULT_FOLDER, "default base model (models/base)"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_lm import tiny_model_folder
    why = "smoke size" if smoke else "models/base not materialised"
    return tiny_model_folder(), f"tiny random model ({why})"


def tokens_per_second(folder, tokenizer, prompts: list[str], params: GenerateParams,
                      backend: str) -> tuple[float, int, float]:
    params = replace(params, backend=backend)
    sample_completions(folder, None, prompts[:1], replace(params, k=1, max_new_tokens=4), dtype="float32")
    start = time.perf_counter()
    completions = sample_completions(folder, None, prompts, params, dtype="float32")
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(text, add_special_tokens=False)["input_ids"])
                 for texts in completions for text in texts)
    return tokens / seconds, tokens, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prompts", nargs="?", type=int, default=N_PROMPTS, help="number of prompts")
    parser.add_argument("--smoke", action="store_true",
                        help=f"tiny random model, {SMOKE_PROMPTS} prompts x {SMOKE_PARAMS.k} samples x "
                             f"{SMOKE_PARAMS.max_new_tokens} tokens: seconds")
    args = parser.parse_args()
    params = SMOKE_PARAMS if args.smoke else PARAMS
    folder, what = model_folder(args.smoke)
    tokenizer = load_tokenizer(folder)
    rng = random.Random(0)
    prompts = [build_prompt_text(tokenizer, p.statement, list(p.kcs),
                                 [rng.random() for _ in p.kcs], "java", signature=p.signature)
               for p in load_bank("java")[:SMOKE_PROMPTS if args.smoke else args.prompts]]
    print(f"model: {what}, float32")
    print(f"{len(prompts)} prompts x {params.k} samples x up to {params.max_new_tokens} new tokens, "
          f"temperature {params.temperature}, top_k {params.top_k}, top_p {params.top_p}, "
          f"repetition penalty {params.repetition_penalty}, batches of {params.batch_size} prompts")
    speed = {}
    for backend in ("transformers", "ctranslate2"):
        speed[backend], tokens, seconds = tokens_per_second(folder, tokenizer, prompts, params, backend)
        print(f"{backend}: {tokens} tokens in {seconds:.1f} s = {speed[backend]:.1f} tokens/s")
    print(f"speedup: {speed['ctranslate2'] / speed['transformers']:.2f}")


if __name__ == "__main__":
    main()
