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

Run: python benchmarks/generate_speed.py [number of prompts, default 16]
"""

from __future__ import annotations

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


def model_folder() -> tuple[Path, str]:
    if (DEFAULT_FOLDER / "config.json").exists():
        return DEFAULT_FOLDER, "default base model (models/base)"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_lm import tiny_model_folder
    return tiny_model_folder(), "tiny random model (models/base not materialised)"


def tokens_per_second(folder, tokenizer, prompts: list[str], backend: str) -> tuple[float, int, float]:
    params = replace(PARAMS, backend=backend)
    sample_completions(folder, None, prompts[:1], replace(params, k=1, max_new_tokens=4), dtype="float32")
    start = time.perf_counter()
    completions = sample_completions(folder, None, prompts, params, dtype="float32")
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(text, add_special_tokens=False)["input_ids"])
                 for texts in completions for text in texts)
    return tokens / seconds, tokens, seconds


def main() -> None:
    folder, what = model_folder()
    tokenizer = load_tokenizer(folder)
    rng = random.Random(0)
    prompts = [build_prompt_text(tokenizer, p.statement, list(p.kcs),
                                 [rng.random() for _ in p.kcs], "java", signature=p.signature)
               for p in load_bank("java")[:int(sys.argv[1]) if len(sys.argv) > 1 else N_PROMPTS]]
    print(f"model: {what}, float32")
    print(f"{len(prompts)} prompts x {PARAMS.k} samples x up to {PARAMS.max_new_tokens} new tokens, "
          f"temperature {PARAMS.temperature}, top_k {PARAMS.top_k}, top_p {PARAMS.top_p}, "
          f"repetition penalty {PARAMS.repetition_penalty}, batches of {PARAMS.batch_size} prompts")
    speed = {}
    for backend in ("transformers", "ctranslate2"):
        speed[backend], tokens, seconds = tokens_per_second(folder, tokenizer, prompts, backend)
        print(f"{backend}: {tokens} tokens in {seconds:.1f} s = {speed[backend]:.1f} tokens/s")
    print(f"speedup: {speed['ctranslate2'] / speed['transformers']:.2f}")


if __name__ == "__main__":
    main()
