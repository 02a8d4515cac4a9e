"""Tokens per second of student-code sampling: batched (left padding, KV cache) vs one prompt at a time.

Uses the materialised default base model (models/base/, from `dvc repro base_model`) when it is
there, else a tiny random model (so the benchmark always runs; its speedup says less). Builds the
student prompts of 8 synthetic Java problems (kaser.data.synth.bank), samples K=2 completions of
48 new tokens per prompt with the paper's decoding (temperature 0.7, top_k 40, repetition
penalty 1.1) once with all 8 prompts in one batch and once with batch size 1, counts the
generated tokens (re-tokenised completions) and prints tokens/s of each and, as its last line,
`batched_speedup: X` (batched tokens/s / one-by-one tokens/s).

Run: python benchmarks/generate_speed.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from kaser.predictor.base_model import load_model
from kaser.predictor.sampling import GenerateParams, generate_batched
from kaser.predictor.prompt import build_prompt_text
from kaser.data.synth.bank import load_bank

DEFAULT_FOLDER = Path("models/base")
N_PROMPTS, K, NEW_TOKENS = 8, 2, 48


def model_folder() -> tuple[Path, str]:
    if (DEFAULT_FOLDER / "config.json").exists():
        return DEFAULT_FOLDER, "default base model (models/base)"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_lm import tiny_model_folder
    return tiny_model_folder(), "tiny random model (models/base not materialised)"


def tokens_per_second(model, tokenizer, prompts: list[str], batch_size: int) -> float:
    params = GenerateParams(k=K, max_new_tokens=NEW_TOKENS, batch_size=batch_size, seed=0)
    start = time.perf_counter()
    completions = generate_batched(model, tokenizer, prompts, params, desc=f"batch {batch_size}")
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(text, add_special_tokens=False)["input_ids"])
                 for texts in completions for text in texts)
    return tokens / seconds


def main() -> None:
    folder, what = model_folder()
    model, tokenizer = load_model(folder)
    rng = random.Random(0)
    prompts = [build_prompt_text(tokenizer, p.statement, list(p.kcs),
                                 [rng.random() for _ in p.kcs], "java")
               for p in load_bank("java")[:N_PROMPTS]]
    generate_batched(model, tokenizer, prompts[:1], GenerateParams(k=1, max_new_tokens=4),
                     desc="warm-up")
    batched = tokens_per_second(model, tokenizer, prompts, batch_size=N_PROMPTS)
    single = tokens_per_second(model, tokenizer, prompts, batch_size=1)
    print(f"model: {what}, dtype {next(model.parameters()).dtype}")
    print(f"{N_PROMPTS} prompts x {K} samples x up to {NEW_TOKENS} new tokens")
    print(f"batched (batch {N_PROMPTS}): {batched:.1f} tokens/s")
    print(f"one by one: {single:.1f} tokens/s")
    print(f"batched_speedup: {batched / single:.2f}")


if __name__ == "__main__":
    main()
