"""DVC stage `sft@<dataset>`: Student SFT, a LoRA adapter on the base model (paper §3.2).

    python stages/sft.py synthetic-java

Reads models/base/ and data/<ds>/ (problems, submissions, folds.json, mastery.parquet); trains on
the submissions of the students outside test fold `model.fold`, with params.yaml `sft`; writes
the adapter to models/<ds>/sft/ and the per-step training log to reports/<ds>/sft_log.json.
"""

import json
import sys
from pathlib import Path

from kaser.config import load_section
from kaser.model import ModelParams
from kaser.sft import SftParams, train_sft
from kaser.student_prompt import read_pairs

PARAMS = "params.yaml"


def main(dataset: str) -> None:
    model = load_section(PARAMS, "model", ModelParams)
    params = load_section(PARAMS, "sft", SftParams)
    pairs = read_pairs(Path("data") / dataset, model.fold, "train")
    log = train_sft("models/base", pairs, params, Path("models") / dataset / "sft", model.dtype)
    report = Path("reports") / dataset / "sft_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(log, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
