"""DVC stage `grpo@<dataset>`: KASER GRPO, continuing the Student SFT adapter (paper §3.3-3.4).

    python stages/grpo.py synthetic-java
    dvc exp run -S 'grpo.reward_weights=[0,1,1]'      # an ablation reruns only grpo and later

Reads models/base/, models/<ds>/sft/, data/<ds>/ (problems, submissions, folds.json,
mastery.parquet, and from the cluster stage submission_errors.parquet + problem_errors.json);
trains on the students outside test fold `model.fold` with params.yaml `grpo` and the judge of
params.yaml `judge`; writes the adapter to models/<ds>/grpo/ and the per-step log (loss and each
reward's mean/std) to reports/<ds>/grpo_log.json.
"""

import json
import sys
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.config import load_section
from kaser.grpo import GrpoParams, train_grpo, with_errors
from kaser.judge import reward_judge
from kaser.model import ModelParams
from kaser.student_prompt import read_pairs

PARAMS = "params.yaml"


def main(dataset: str) -> None:
    folder = Path("data") / dataset
    model = load_section(PARAMS, "model", ModelParams)
    params = load_section(PARAMS, "grpo", GrpoParams)
    for name in ("submission_errors.parquet", "problem_errors.json"):
        if not (folder / name).is_file():
            raise InputError("not found; run the cluster stage first", file=folder / name)
    pairs = with_errors(read_pairs(folder, model.fold, "train"),
                        pl.read_parquet(folder / "submission_errors.parquet"),
                        json.loads((folder / "problem_errors.json").read_text()))
    with reward_judge(folder, PARAMS) as judge:
        log = train_grpo("models/base", Path("models") / dataset / "sft", pairs, params,
                         Path("models") / dataset / "grpo", judge, model.dtype)
    report = Path("reports") / dataset / "grpo_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(log, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
