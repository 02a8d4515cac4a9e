"""DVC stage `knowledge`: knowledge tracing, 5 folds by student, and mastery profiles of one dataset.

    python stages/knowledge.py synthetic-python

Reads params.yaml `knowledge` and data/<name>/problems.parquet, submissions.parquet, folds.json.
Writes data/<name>/code_embeddings.npz (cache of code embeddings, reused on a rerun),
data/<name>/mastery.parquet (every student's profile before every attempt, from the fold model
that never saw the student), data/<name>/knowledge/ (model.pt + config.json, trained on all
students), reports/<name>/knowledge.json (AUC, accuracy, log-loss of the LSTM and the baselines;
mastery Spearman on synthetic data) and reports/<name>/mastery.png. See kaser.knowledge.tracing.
"""

from __future__ import annotations

from _runner import Stage, run
from kaser.knowledge.tracing import KnowledgeParams, run_folder

PARAMS = ("knowledge",)


def main(dataset: str) -> None:
    stage = Stage("knowledge", dataset, PARAMS)
    run_folder(stage.data, stage.reports, stage.section("knowledge", KnowledgeParams))


if __name__ == "__main__":
    run(main)
