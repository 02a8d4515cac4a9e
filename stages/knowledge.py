"""DVC stage `knowledge`: knowledge tracing, 5 folds by student, and mastery profiles of one dataset.

    python stages/knowledge.py synthetic-java

Reads params.yaml `knowledge` and data/<name>/problems.parquet, submissions.parquet, folds.json.
Writes data/<name>/code_embeddings.npz (cache of code embeddings, reused on a rerun),
data/<name>/mastery.parquet (every student's profile before every attempt, from the fold model
that never saw the student), data/<name>/knowledge/ (model.pt + config.json, trained on all
students), reports/<name>/knowledge.json (AUC, accuracy, log-loss of the LSTM and the baselines;
mastery Spearman on synthetic data) and reports/<name>/mastery.png. See kaser.knowledge.tracing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kaser import InputError
from kaser.config import load_section
from kaser.knowledge.tracing import KnowledgeConfig, run_folder

PARAMS = "params.yaml"


def main(name: str) -> None:
    cfg = load_section(PARAMS, "knowledge", KnowledgeConfig)
    run_folder(Path("data") / name, Path("reports") / name, cfg)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python stages/knowledge.py <dataset name from params.yaml>")
    try:
        main(sys.argv[1])
    except InputError as err:
        print(f"knowledge: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
