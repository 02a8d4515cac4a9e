"""DVC stage `generate@<dataset>`: K predicted codes per test pair, for one method.

    python stages/generate.py synthetic-java student_sft
    python stages/generate.py synthetic-java kaser

The method names its adapter: `student_sft` models/<ds>/sft/, `kaser` models/<ds>/grpo/. Test
pairs are the submissions of the students in test fold `model.fold`; params.yaml `generate` sets
K, the decoding and the backend. Writes data/<ds>/predictions/<method>.parquet, one row per
sample (student_id, problem_id, sample, code, method).
"""

import sys
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.config import load_section
from kaser.model import ModelParams
from kaser.sampling import GenerateParams, predict
from kaser.sft import sample_pairs
from kaser.student_prompt import read_pairs

PARAMS = "params.yaml"
ADAPTERS = {"student_sft": "sft", "kaser": "grpo"}


def main(dataset: str, method: str) -> None:
    if method not in ADAPTERS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(ADAPTERS)}")
    model = load_section(PARAMS, "model", ModelParams)
    params = load_section(PARAMS, "generate", GenerateParams)
    pairs = sample_pairs(read_pairs(Path("data") / dataset, model.fold, "test"),
                         params.max_pairs, params.seed)
    adapter = Path("models") / dataset / ADAPTERS[method]
    predictions = predict("models/base", adapter, pairs, params, method, model.dtype)
    # the evaluation's contract: which split and test fold these samples belong to
    predictions = predictions.with_columns(split=pl.lit("student"),
                                           fold=pl.lit(model.fold, dtype=pl.Int64))
    out = Path("data") / dataset / "predictions" / f"{method}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    predictions.write_parquet(out)
    print(f"{pairs.height} pairs x {params.k} samples -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
