"""DVC stage `sweep@<dataset>`: the knowledge sweep (paper Table 4) on one problem of a dataset.

    python stages/sweep.py synthetic-python

Reads models/base/, the KASER adapter of the first training run (the first (split, fold) of
params.yaml `model.splits` x `model.folds`: models/<ds>/grpo/<split>-<fold>/), data/<ds>/
(problems, submissions, folds.json, problem_errors.json, error_labels.parquet for the static
judge); samples params.yaml `sweep.k` codes for a low, a mixed and a high mastery profile on the
problem's KCs with the `generate` decoding, judges them with the evaluation judge (params.yaml
`evaluate.judge`: a code counts as correct only when the judge finds no error at all; a code cut
off by the token budget is marked, not judged), and writes
reports/<ds>/knowledge_sweep.md. `sweep.problem_id: null` takes the problem of the first run's
test fold by problem (folds.json by_problem) with the most candidate errors, the first in fold
order on a tie: with model.splits [problem, ...] a problem that run never trained on.
The judge's LLM answers (judge.backend openai) are cached in the stage's own
data/<ds>/sweep_llm_cache.sqlite, a persistent output (empty with the static judge).
"""

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from _judge import open_judge
from _runner import Stage, run
from kaser import InputError
from kaser.data.contracts import read_dataset, read_folds
from kaser.predictor.base_model import ModelParams, load_tokenizer, run_name
from kaser.predictor.sampling import GenerateParams, resolve_budget
from kaser.simulate import check_model_folders, knowledge_sweep, sweep_problem

# evaluate.judge: the sweep's codes are judged by the evaluation judge; judge, annotate and llm:
# that judge's settings (stages/_judge.py)
PARAMS = ("sweep", "model", "generate", "judge", "evaluate.judge", "annotate", "llm")


@dataclass(frozen=True)
class SweepParams:
    problem_id: str | None  # null = the test-fold problem with the most candidate errors
    k: int  # samples per profile


def main(dataset: str) -> None:
    stage = Stage("sweep", dataset, PARAMS)
    folder = stage.data
    cfg = stage.section("sweep", SweepParams)
    model = stage.section("model", ModelParams)
    params = resolve_budget(dataclasses.replace(stage.section("generate", GenerateParams), k=cfg.k),
                            load_tokenizer(stage.base_model), read_dataset(folder)[1])
    evaluation_judge = stage.raw("evaluate.judge") or "static"   # the evaluation's judge
    base, adapter = check_model_folders(stage.base_model,
                                        stage.adapter("grpo", run_name(*model.first_run)), dataset)
    if not (folder / "problem_errors.json").is_file():
        raise InputError("not found; run the cluster stage first", file=folder / "problem_errors.json")
    problem_id = cfg.problem_id or sweep_problem(
        read_folds(folder / "folds.json"), json.loads((folder / "problem_errors.json").read_text()),
        model.first_run[1])
    with open_judge(stage, evaluation_judge) as judge:
        markdown = knowledge_sweep(folder, problem_id, base, adapter, params, judge, model.dtype)
    out = stage.reports / "knowledge_sweep.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown)
    print(f"knowledge sweep of {problem_id} -> {out}")


if __name__ == "__main__":
    run(main)
