"""DVC stage `annotate@<dataset>`: the errors in every submission of one dataset.

    python stages/annotate.py synthetic-python

Reads params.yaml `annotate` (backend static|openai, static-annotator limits) and, for the openai
backend, `llm` (the cache key's settings) and `llm_client` (read by every stage that asks the
LLM and declared by none: stages/_runner.py);
data/<ds>/problems.parquet and submissions.parquet. Writes
data/<ds>/annotations.parquet, data/<ds>/llm_cache.sqlite (empty with the static backend; a
persistent output either way) and reports/<ds>/annotation_quality.json (precision / recall / F1
against the true errors on synthetic data; counts only on real data). See kaser.errors.annotate.
Bad input, or an LLM run where every prompt failed: one line, exit 2; Ctrl-C: one line, exit 130
(answers received so far stay in the cache, so a rerun resumes).
"""

import json

from _runner import Stage, run
from kaser.errors.annotate import AnnotateParams, annotate_folder, counts_line, quality_line
from kaser.llm import LLMClientParams, LLMParams

PARAMS = ("annotate", "llm")


def main(dataset: str) -> None:
    stage = Stage("annotate", dataset, PARAMS)
    folder = stage.data
    cfg = stage.section("annotate", AnnotateParams)
    llm, client = None, None
    if cfg.backend == "openai":
        llm, client = stage.section("llm", LLMParams), stage.section("llm_client", LLMClientParams)
    annotations, quality, counts = annotate_folder(folder, cfg, stage.llm_cache, llm, client)
    annotations.write_parquet(folder / "annotations.parquet")
    print(counts_line(counts))
    if quality is not None:
        print(quality_line(quality))
    report = stage.reports / "annotation_quality.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(quality if quality is not None else {"counts": counts}, indent=1) + "\n")


if __name__ == "__main__":
    run(main)
