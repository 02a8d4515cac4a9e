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
(student_id, problem_id, sample, code, method, truncated, split, fold). The params each method
reads are PARAMS[method]: the history baselines also `model.base` (the persona cache key),
`baselines` and the `llm` keys of their openai backend (model, endpoint, reasoning effort, token
cap; they send no JSON mode, no seed and their own temperature). A baseline left out of
params.yaml `baselines.methods` samples nothing: its file holds no rows (the CPU study,
docs/experiments-and-studies.md, samples Student SFT only). Each history baseline, sampled or
not, leaves the cache data/<ds>/<baselines.cache_file> in place (an empty one where none was), so
the baselines stage writes every output it declares whichever baselines it samples, and a later
ICL run uses the file.
"""

import polars as pl

from _runner import Stage, run
from kaser import InputError
from kaser.predictor.history_prompts import BaselineParams
from kaser.data.contracts import read_dataset
from kaser.llm import LLMParams, ResponseCache
from kaser.methods import METHODS
from kaser.predictor.base_model import ModelParams, run_name
from kaser.predictor.baselines import predict_baseline
from kaser.predictor.base_model import load_tokenizer
from kaser.predictor.sampling import PREDICTION_SCHEMA, GenerateParams, predict, predict_runs, resolve_budget

_SAMPLE = ("model", "generate")
# the history baselines read the whole `llm` section; kaser.predictor.baselines.openai_config then
# sets json_mode, seed and temperature its own way, so those three change no baseline answer
_HISTORY = ("model", "generate", "baselines", "llm.model", "llm.base_url", "llm.json_mode",
            "llm.temperature", "llm.reasoning_effort", "llm.max_completion_tokens", "llm.seed")
# what each method reads: the knowledge prompt's sampling, or the history baselines' settings
# too; a literal, so that tests/test_pipeline.py can check it against dvc.yaml (and that it names
# every sampled method of kaser.methods; the ablations are stages/ablate.py's)
PARAMS = {"kaser": _SAMPLE, "student_sft": _SAMPLE + ("baselines.methods",), "icl": _HISTORY,
          "persona": _HISTORY, "parastudent": _HISTORY}


def main(dataset: str, method: str) -> None:
    if method not in PARAMS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(PARAMS)}")
    stage = Stage("generate", dataset, PARAMS[method])
    folder = stage.data
    adapter = METHODS[method].adapter
    student_prompt = METHODS[method].prompt == "student"
    out = folder / "predictions" / f"{method}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    baselines = None if student_prompt else stage.section("baselines", BaselineParams)
    if baselines is not None:   # the baselines stage's cache, a DVC output, exists whoever is sampled
        ResponseCache(folder / baselines.cache_file).close()
    if METHODS[method].role == "baseline" and not _sampled_baseline(stage, method):
        pl.DataFrame(schema=PREDICTION_SCHEMA | {"split": pl.String, "fold": pl.Int64}).write_parquet(out)
        print(f"generate: {method} is not in params.yaml baselines.methods: nothing sampled -> {out} (no rows)")
        return
    model = stage.section("model", ModelParams)
    problems, submissions = read_dataset(folder)
    params = resolve_budget(stage.section("generate", GenerateParams),
                            load_tokenizer(stage.base_model), submissions)
    print(f"generate: max_new_tokens {params.max_new_tokens}")
    if student_prompt:
        def predict_run(split, fold, pairs):
            return predict(stage.base_model, stage.adapter(adapter, run_name(split, fold)),
                           pairs, params, method, model.dtype)
    else:
        llm = stage.section("llm", LLMParams)

        def predict_run(split, fold, pairs):
            return predict_baseline(method, pairs, problems, submissions, baselines, params, llm=llm,
                                    model_id=model.base, cache_path=folder / baselines.cache_file,
                                    adapter=stage.adapter(adapter, run_name(split, fold)) if adapter else None,
                                    dtype=model.dtype)
    predictions = predict_runs(folder, model.runs(), params, predict_run)
    predictions.write_parquet(out)
    print(f"{len(model.runs())} run(s) -> {out}")


def _sampled_baseline(stage: Stage, method: str) -> bool:
    """Whether params.yaml `baselines.methods` lists this baseline (unknown names fail)."""
    listed = stage.raw("baselines.methods") or ()
    unknown = set(listed) - {m.name for m in METHODS.values() if m.role == "baseline"}
    if unknown:
        raise InputError(f"unknown baseline(s) {', '.join(sorted(unknown))}",
                         file=stage.params_file, column="baselines.methods")
    return method in listed


if __name__ == "__main__":
    run(main)
