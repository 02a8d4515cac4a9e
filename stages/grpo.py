"""DVC stage `grpo@<dataset>`: KASER GRPO, continuing the Student SFT adapter (paper §3.3-3.4).

    python stages/grpo.py synthetic-java
    dvc exp run -S 'grpo.reward_weights=[0,1,1]'      # an ablation reruns only grpo and later

Reads models/base/, models/<ds>/sft/, data/<ds>/ (problems, submissions, folds.json,
mastery.parquet, and from the cluster stage submission_errors.parquet + problem_errors.json);
trains one adapter per run (split, test fold) of params.yaml `model.splits` x `model.folds`,
continuing that run's SFT adapter models/<ds>/sft/<split>-<fold>/ on the run's training pairs,
with params.yaml `grpo` and the judge of params.yaml `judge`; writes each adapter to
models/<ds>/grpo/<split>-<fold>/ and the per-step logs (loss and each reward's mean/std) to
reports/<ds>/grpo_log.json ({"<split>-<fold>": log of that run}; the report draws the first
run's reward curves).
"""

import json
import sys
from pathlib import Path

from kaser.config import load_section
from kaser.predictor.grpo import GrpoParams, train_runs
from kaser.errors.judge import reward_judge
from kaser.predictor.base_model import ModelParams, adapter_path

PARAMS = "params.yaml"


def main(dataset: str) -> None:
    model = load_section(PARAMS, "model", ModelParams)
    params = load_section(PARAMS, "grpo", GrpoParams)
    with reward_judge(Path("data") / dataset, PARAMS) as judge:
        logs = train_runs(dataset, model, params, judge,
                          lambda split, fold: adapter_path(dataset, "grpo", split, fold), model.dtype)
    report = Path("reports") / dataset / "grpo_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(logs, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
