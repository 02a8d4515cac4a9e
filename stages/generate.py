"""DVC stages `generate@<dataset>` (KASER) and `baseline_<method>@<dataset>` (one per baseline):
K predicted codes per test pair, for one method.

    python stages/generate.py synthetic-python kaser         # generate@<ds>
    python stages/generate.py synthetic-python student_sft   # baseline_student_sft@<ds>
    python stages/generate.py synthetic-python icl           # baseline_icl@<ds> (kaser.predictor.baselines)
    python stages/generate.py synthetic-python persona       # baseline_persona@<ds>
    python stages/generate.py synthetic-python parastudent   # baseline_parastudent@<ds>

One pass per run (split, test fold) of params.yaml `model.splits` x `model.folds`, each on that
run's test pairs (kaser.predictor.prompt.read_pairs; the same seeded draw `sample_pairs` for every
method) with that run's adapter: `student_sft` samples the base model with
models/<ds>/sft/<split>-<fold>/, `kaser` with models/<ds>/grpo/<split>-<fold>/, from the student
prompt. The history baselines prompt with the student's earlier submissions: `icl` and `persona`
on the base model (or, with params.yaml `baselines.backend: openai`, an OpenAI-compatible
endpoint; answers and personas cached in data/<ds>/baseline_cache/<method>.sqlite), `parastudent`
with models/<ds>/parastudent/<split>-<fold>/. params.yaml `generate` sets K, the decoding and the
backend; `max_new_tokens: auto` takes the budget from the dataset's first submissions (printed).
Writes data/<ds>/predictions/<method>.parquet, one row per sample of every run
(student_id, problem_id, sample, code, method, truncated, split, fold).

The params each method reads are PARAMS[method], and its stage in dvc.yaml declares just those,
so a change to one baseline's setting reruns that baseline alone (and what follows): ICL and
ParaStudent read `baselines.history`, PersonaPrompt `baselines.persona_history` and its persona
length, and only ICL and PersonaPrompt, which can ask an endpoint, read the backend settings and
`llm` (the cache key's settings; they send no JSON mode, no seed and their own temperature).
ParaStudent's training settings reach its stage through the adapter it depends on. Every
baseline reads params.yaml `baselines.methods`: one left out samples nothing and its file holds no
rows (the CPU study, docs/experiments-and-studies.md, samples Student SFT only).
ICL and PersonaPrompt, sampled or not, leave their cache in place (an empty one where none was), so
each stage writes every output it declares, and a later run uses the file.
"""

from pathlib import Path

import polars as pl

from _runner import Stage, run
from kaser import InputError
from kaser.predictor.history_prompts import BaselineParams
from kaser.data.contracts import read_dataset
from kaser.llm import LLMClientParams, LLMParams, ResponseCache
from kaser.methods import METHODS
from kaser.predictor.base_model import ModelParams, run_name
from kaser.predictor.baselines import predict_baseline
from kaser.predictor.base_model import load_tokenizer
from kaser.predictor.sampling import PREDICTION_SCHEMA, GenerateParams, predict, predict_runs, resolve_budget

_SAMPLE = ("model", "generate")
# the backend settings of the two baselines that can ask an OpenAI-compatible endpoint, and `llm`
# (kaser.predictor.baselines.openai_config then sets json_mode, seed and temperature its own way)
_OPENAI = ("baselines.backend", "baselines.openai_model", "baselines.openai_base_url",
           "baselines.openai_temperature", "llm")
# what each method reads: the knowledge prompt's sampling, or a baseline's own settings too
# (kaser.predictor.baselines.predict_baseline); a literal, so that tests/test_pipeline.py can
# check it against dvc.yaml (and that it names every sampled method of kaser.methods; the
# ablations are stages/ablate.py's)
PARAMS = {"kaser": _SAMPLE,
          "student_sft": _SAMPLE + ("baselines.methods",),
          "icl": _SAMPLE + ("baselines.methods", "baselines.history", "baselines.max_code_chars") + _OPENAI,
          "persona": _SAMPLE + ("baselines.methods", "baselines.persona_history", "baselines.max_code_chars",
                                "baselines.persona_max_new_tokens") + _OPENAI,
          "parastudent": _SAMPLE + ("baselines.methods", "baselines.history", "baselines.max_code_chars")}
# the baselines with an answer cache (personas, an endpoint's answers), each its own DVC output
CACHED = ("icl", "persona")


def main(dataset: str, method: str) -> None:
    if method not in PARAMS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(PARAMS)}")
    stage = Stage("generate", dataset, PARAMS[method])
    folder = stage.data
    adapter = METHODS[method].adapter
    student_prompt = METHODS[method].prompt == "student"
    out = folder / "predictions" / f"{method}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    cache_path = cache_file(folder, method) if method in CACHED else None
    if cache_path is not None:   # the stage's DVC output exists whether the baseline is sampled
        ResponseCache(cache_path).close()
    if METHODS[method].role == "baseline":
        baselines = stage.section("baselines", BaselineParams, keys=baseline_keys(method))
        if not _sampled_baseline(baselines, method, stage.params_file):
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
        llm, client = None, None
        if method in CACHED:
            llm, client = stage.section("llm", LLMParams), stage.section("llm_client", LLMClientParams)

        def predict_run(split, fold, pairs):
            return predict_baseline(method, pairs, problems, submissions, baselines, params, llm=llm,
                                    llm_client=client, model_id=model.base, cache_path=cache_path,
                                    adapter=stage.adapter(adapter, run_name(split, fold)) if adapter else None,
                                    dtype=model.dtype)
    predictions = predict_runs(folder, model.runs(), params, predict_run)
    predictions.write_parquet(out)
    print(f"{len(model.runs())} run(s) -> {out}")


def baseline_keys(method: str) -> tuple[str, ...]:
    """The keys of params.yaml `baselines` that a baseline reads, from PARAMS.

    >>> baseline_keys("parastudent")
    ('methods', 'history', 'max_code_chars')
    """
    return tuple(key.split(".", 1)[1] for key in PARAMS[method] if key.startswith("baselines."))


def cache_file(folder, method: str) -> Path:
    """data/<ds>/baseline_cache/<method>.sqlite: one baseline's personas and endpoint answers."""
    return Path(folder) / "baseline_cache" / f"{method}.sqlite"


def _sampled_baseline(baselines: BaselineParams, method: str, params_file) -> bool:
    """Whether params.yaml `baselines.methods` lists this baseline (unknown names fail)."""
    unknown = set(baselines.methods) - {m.name for m in METHODS.values() if m.role == "baseline"}
    if unknown:
        raise InputError(f"unknown baseline(s) {', '.join(sorted(unknown))}",
                         file=params_file, column="baselines.methods")
    return method in baselines.methods


if __name__ == "__main__":
    run(main)
