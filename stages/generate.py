"""DVC stages `generate@<dataset>` (KASER) and `baselines@<dataset>` (the others): K predicted
codes per test pair, for one method.

    python stages/generate.py synthetic-java kaser         # generate@<ds>
    python stages/generate.py synthetic-java student_sft   # baselines@<ds>, with the three below
    python stages/generate.py synthetic-java icl           # (kaser.predictor.baselines)
    python stages/generate.py synthetic-java persona
    python stages/generate.py synthetic-java parastudent

One pass per run (split, test fold) of params.yaml `model.splits` x `model.folds`, each on that
run's test pairs (kaser.predictor.prompt.read_pairs; the same seeded draw `sample_pairs` for every
method) with that run's adapter: `student_sft` samples the base model with
models/<ds>/sft/<split>-<fold>/, `kaser` with models/<ds>/grpo/<split>-<fold>/, from the student
prompt. The history baselines prompt with the student's earlier submissions: `icl` and `persona`
on the base model (or, with params.yaml `baselines.backend: openai`, an OpenAI-compatible
endpoint; answers and personas cached in data/<ds>/<baselines.cache_file>), `parastudent` with
models/<ds>/parastudent/<split>-<fold>/. params.yaml `generate` sets K, the decoding and the
backend; `max_new_tokens: auto` takes the budget from the dataset's first submissions (printed).
Writes data/<ds>/predictions/<method>.parquet, one row per sample of every run
(student_id, problem_id, sample, code, method, truncated, split, fold).
"""

import sys
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.predictor.history_prompts import BaselineParams
from kaser.config import load_section
from kaser.data.contracts import read_dataset
from kaser.llm import LLMConfig
from kaser.methods import METHODS
from kaser.predictor.base_model import ModelParams, adapter_path
from kaser.predictor.baselines import predict_baseline
from kaser.predictor.base_model import load_tokenizer
from kaser.predictor.sampling import GenerateParams, predict, predict_runs, resolve_budget

PARAMS = "params.yaml"


def main(dataset: str, method: str) -> None:
    sampled = [m.name for m in METHODS.values() if m.role != "ablation"]   # ablations: stages/ablate.py
    if method not in sampled:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(sampled)}")
    adapter = METHODS[method].adapter
    folder = Path("data") / dataset
    model = load_section(PARAMS, "model", ModelParams)
    params = resolve_budget(load_section(PARAMS, "generate", GenerateParams),
                            load_tokenizer("models/base"), read_dataset(folder)[1])
    print(f"generate: max_new_tokens {params.max_new_tokens}")
    if METHODS[method].prompt == "student":
        def predict_run(split, fold, pairs):
            return predict("models/base", adapter_path(dataset, adapter, split, fold),
                           pairs, params, method, model.dtype)
    else:
        baselines = load_section(PARAMS, "baselines", BaselineParams)
        llm = load_section(PARAMS, "llm", LLMConfig)
        problems, submissions = read_dataset(folder)

        def predict_run(split, fold, pairs):
            return predict_baseline(method, pairs, problems, submissions, baselines, params, llm=llm,
                                    model_id=model.base, cache_path=folder / baselines.cache_file,
                                    adapter=adapter_path(dataset, adapter, split, fold) if adapter else None,
                                    dtype=model.dtype)
    predictions = predict_runs(folder, model.runs(), params, predict_run)
    out = folder / "predictions" / f"{method}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    predictions.write_parquet(out)
    print(f"{len(model.runs())} run(s) -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
