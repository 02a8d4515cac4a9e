"""DVC stage `sft@<dataset>`: Student SFT, a LoRA adapter on the base model (paper §3.2).

    python stages/sft.py synthetic-python

Reads models/base/ and data/<ds>/ (problems, submissions, folds.json, mastery.parquet); trains
one adapter per run (split, test fold) of params.yaml `model.splits` x `model.folds` on that run's
training pairs (kaser.predictor.prompt.read_pairs), with params.yaml `sft`; writes each adapter to
models/<ds>/sft/<split>-<fold>/ and the per-step training logs to reports/<ds>/sft_log.json
({"<split>-<fold>": log of that run}).
"""

import json

from _runner import Stage, run
from kaser.predictor.base_model import ModelParams, run_name
from kaser.predictor.sft import SftParams, train_sft
from kaser.predictor.prompt import read_pairs

PARAMS = ("model", "sft")


def main(dataset: str) -> None:
    stage = Stage("sft", dataset, PARAMS)
    model = stage.section("model", ModelParams)
    params = stage.section("sft", SftParams)
    logs = {}
    for split, fold in model.runs():
        pairs = read_pairs(stage.data, split, fold, "train")
        run = run_name(split, fold)
        logs[run] = train_sft(stage.base_model, pairs, params, stage.adapter("sft", run), model.dtype)
    report = stage.reports / "sft_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(logs, indent=1) + "\n")


if __name__ == "__main__":
    run(main)
