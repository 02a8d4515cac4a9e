"""DVC stage `parastudent@<dataset>`: the ParaStudent baseline's LoRA adapter (in-context tuning,
paper §4.2): Student SFT's trainer on prompts that hold the student's k earlier submissions.

    python stages/parastudent.py synthetic-python

Reads models/base/ and data/<ds>/ (problems, submissions, folds.json, mastery.parquet); trains
one adapter per run (split, test fold) of params.yaml `model.splits` x `model.folds` on that
run's training pairs with params.yaml `sft` (LoRA, learning rate, epochs) and `baselines`
(history size, code budget, parastudent_max_pairs / _max_length); writes each adapter to
models/<ds>/parastudent/<split>-<fold>/ and the per-step logs to reports/<ds>/parastudent_log.json
({"<split>-<fold>": log of that run}). When `baselines.methods` leaves ParaStudent out (the CPU
study), nothing is trained: the folder stays empty and the log is {}, as nothing samples it.
"""

import dataclasses
import json

from _runner import Stage, run
from kaser.predictor.history_prompts import parastudent_examples, with_history
from kaser.data.contracts import read_dataset
from kaser.predictor.base_model import ModelParams, run_name
from kaser.predictor.sft import SftParams, train_examples
from kaser.predictor.prompt import read_pairs

PARAMS = ("model", "sft", "baselines.methods", "baselines.history",
          "baselines.max_code_chars", "baselines.parastudent_max_pairs",
          "baselines.parastudent_max_length")


@dataclasses.dataclass(frozen=True)
class ParaStudentParams:
    """The params.yaml `baselines` keys ParaStudent's training reads (the rest are sampling's)."""
    methods: tuple[str, ...]
    history: int
    max_code_chars: int | None
    parastudent_max_pairs: int | None
    parastudent_max_length: int


def main(dataset: str) -> None:
    stage = Stage("parastudent", dataset, PARAMS)
    folder = stage.data
    model = stage.section("model", ModelParams)
    baselines = stage.section("baselines", ParaStudentParams, part=True)
    sft = stage.section("sft", SftParams)
    params = dataclasses.replace(sft, max_pairs=baselines.parastudent_max_pairs,
                                 max_length=baselines.parastudent_max_length)
    logs = {}
    report = stage.reports / "parastudent_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    if "parastudent" not in baselines.methods:
        (stage.models / "parastudent").mkdir(parents=True, exist_ok=True)
        report.write_text("{}\n")
        print("parastudent: not in params.yaml baselines.methods; nothing trained")
        return
    problems, submissions = read_dataset(folder)
    for split, fold in model.runs():
        pairs = with_history(read_pairs(folder, split, fold, "train"), problems, submissions,
                             baselines.history, baselines.max_code_chars)
        examples = parastudent_examples(pairs, params.max_pairs, params.seed)
        run = run_name(split, fold)
        logs[run] = train_examples(stage.base_model, examples, params,
                                   stage.adapter("parastudent", run), model.dtype)
    report.write_text(json.dumps(logs, indent=1) + "\n")


if __name__ == "__main__":
    run(main)
