"""DVC stage `sweep@<dataset>`: the knowledge sweep (paper Table 4) on one problem of a dataset.

    python stages/sweep.py synthetic-java

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
"""

import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from kaser import InputError
from kaser.config import load_section, read_params
from kaser.data.contracts import read_dataset, read_folds
from kaser.predictor.base_model import ModelParams, load_tokenizer
from kaser.predictor.sampling import GenerateParams, resolve_budget
from kaser.simulate import knowledge_sweep, model_folders, sweep_problem

PARAMS = "params.yaml"


@dataclass(frozen=True)
class SweepConfig:
    problem_id: str | None = None   # null = the test-fold problem with the most candidate errors
    k: int = 3                      # samples per profile


def main(dataset: str) -> None:
    folder = Path("data") / dataset
    cfg = load_section(PARAMS, "sweep", SweepConfig)
    model = load_section(PARAMS, "model", ModelParams)
    params = resolve_budget(dataclasses.replace(load_section(PARAMS, "generate", GenerateParams), k=cfg.k),
                            load_tokenizer("models/base"), read_dataset(folder)[1])
    judge = (read_params(PARAMS).get("evaluate") or {}).get("judge", "static")   # the evaluation judge
    base, adapter = model_folders(dataset, model)
    if not (folder / "problem_errors.json").is_file():
        raise InputError("not found; run the cluster stage first", file=folder / "problem_errors.json")
    problem_id = cfg.problem_id or sweep_problem(
        read_folds(folder / "folds.json"), json.loads((folder / "problem_errors.json").read_text()),
        model.first_run[1])
    markdown = knowledge_sweep(folder, problem_id, base, adapter, params, model.dtype, PARAMS,
                               judge_backend=judge)
    out = Path("reports") / dataset / "knowledge_sweep.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown)
    print(f"knowledge sweep of {problem_id} -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])
