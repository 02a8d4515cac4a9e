"""DVC stage `evaluate@<dataset>`: the paper's Tables 1-3 for every method's predictions.

    python stages/evaluate.py synthetic-python

Reads params.yaml `evaluate` (methods, K values, embedding model, the evaluation judge
`evaluate.judge`, which may differ from the GRPO reward's `judge.backend`, as the authors trained
with one model and evaluated with another), `judge` and `annotate` (the static judge's settings)
and `llm`, the settings that shape an answer (the openai judge);
data/<ds>/problems.parquet, submissions.parquet, error_labels.parquet, submission_errors.parquet,
problem_errors.json, mastery.parquet (the knowledge stage's estimates, for the student-following
scores) and data/<ds>/predictions/<method>.parquet for each listed method.
Writes reports/<ds>/metrics.json (DVC metrics: method -> metric -> mean over folds),
reports/<ds>/evaluation.json (std, CIs, per-fold values, t-tests, directions),
reports/<ds>/pair_scores.csv and problem_scores.csv (one row per method and test pair / problem:
every interval and test can be recomputed from them without rerunning) and two caches that a
rerun reuses: data/<ds>/judged_predictions.parquet (the judge's answer per problem and code,
keyed by kaser.errors.judge.judge_name: every setting, source file and dataset file that decides
a judgement)
and data/<ds>/prediction_embeddings.npz (code embeddings); the openai judge's LLM answers go to
data/<ds>/evaluate_llm_cache.sqlite. See kaser.evaluation.scoring.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from _judge import judge_name, open_judge
from _runner import Stage, run
from kaser import InputError
from kaser.data.contracts import read_dataset, read_table
from kaser.embeddings import EmbeddingCache
from kaser.evaluation.scoring import EvaluateParams, evaluate_dataset, read_predictions, read_truth, write_json
from kaser.evaluation.summary import unit_scores

PARAMS = ("evaluate", "judge", "annotate", "llm")


@contextmanager
def _judge_codes(stage: Stage, candidates: dict[str, list[str]], backend: str):
    """judge(problem_id, codes) -> verdicts, over the evaluation judge (params.yaml evaluate.judge)."""
    with open_judge(stage, backend) as judge:
        yield lambda problem, codes: judge.verdicts(problem, codes, candidates.get(problem, []))


def _read_cluster_outputs(folder: Path):
    paths = [folder / n for n in ("error_labels.parquet", "submission_errors.parquet", "problem_errors.json")]
    for path in paths:
        if not path.is_file():
            raise InputError("not found; run the cluster stage first", file=path)
    return pl.read_parquet(paths[0]), pl.read_parquet(paths[1]), json.loads(paths[2].read_text())


def main(dataset: str) -> None:
    stage = Stage("evaluate", dataset, PARAMS)
    folder, reports = stage.data, stage.reports
    params = stage.section("evaluate", EvaluateParams)
    predictions = {method: read_predictions(folder, method) for method in params.methods}
    problems, submissions = read_dataset(folder)
    error_labels, submission_errors, candidates = _read_cluster_outputs(folder)
    mastery = read_table(folder / "mastery.parquet", {"student_id", "problem_id", "mastery"},
                         "run the knowledge stage first")
    truth = read_truth(problems, submissions, submission_errors, error_labels, mastery)
    judged_path, embeddings_path = folder / "judged_predictions.parquet", folder / "prediction_embeddings.npz"
    cache = pl.read_parquet(judged_path) if judged_path.is_file() else None
    embeddings = EmbeddingCache.read(embeddings_path, params.embedding_model)
    tables = {}
    with _judge_codes(stage, candidates, params.judge) as judge:
        metrics, evaluation, cache = evaluate_dataset(
            truth, predictions, candidates, judge, judge_name(stage, params.judge), params,
            lambda codes: embeddings.embed(codes, params.embedding_batch_size), cache, tables)
    cache.write_parquet(judged_path)
    embeddings.write(embeddings_path, keep=[c for frame in predictions.values() for c in frame["code"]])
    write_json(reports / "metrics.json", metrics)
    write_json(reports / "evaluation.json", evaluation)
    pair_scores, problem_scores = unit_scores(tables)
    pair_scores.write_csv(reports / "pair_scores.csv")
    problem_scores.write_csv(reports / "problem_scores.csv")
    print(f"evaluate: {', '.join(params.methods)} -> {reports}/metrics.json, evaluation.json, "
          "pair_scores.csv, problem_scores.csv")


if __name__ == "__main__":
    run(main)
