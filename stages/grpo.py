"""DVC stage `grpo@<dataset>`: KASER GRPO, continuing the Student SFT adapter (paper §3.3-3.4).

    python stages/grpo.py synthetic-python
    dvc exp run -S 'grpo.reward_weights=[0,1,1]'      # an ablation reruns only grpo and later

Reads models/base/, models/<ds>/sft/, data/<ds>/ (problems, submissions, folds.json,
mastery.parquet, and from the cluster stage submission_errors.parquet + problem_errors.json);
trains one adapter per run (split, test fold) of params.yaml `model.splits` x `model.folds`,
continuing that run's SFT adapter models/<ds>/sft/<split>-<fold>/ on the run's training pairs,
with params.yaml `grpo` and the judge of params.yaml `judge`; writes each adapter to
models/<ds>/grpo/<split>-<fold>/ and the per-step logs (loss and each reward's mean/std) to
reports/<ds>/grpo_log.json ({"<split>-<fold>": log of that run}; the report draws the first
run's reward curves). The judge's LLM answers (judge.backend openai) are cached in the stage's own
data/<ds>/grpo_llm_cache.sqlite, a persistent output (empty with the static judge).
"""

import json

from _judge import open_judge
from _runner import Stage, run
from kaser.predictor.grpo import GrpoParams, train_runs
from kaser.predictor.base_model import ModelParams, run_name

PARAMS = ("model", "grpo", "judge", "annotate", "llm")


def main(dataset: str) -> None:
    stage = Stage("grpo", dataset, PARAMS)
    model = stage.section("model", ModelParams)
    params = stage.section("grpo", GrpoParams)
    with open_judge(stage) as judge:
        logs = train_runs(stage.data, model, params, judge, stage.base_model,
                          lambda split, fold: stage.adapter("sft", run_name(split, fold)),
                          lambda split, fold: stage.adapter("grpo", run_name(split, fold)), model.dtype)
    report = stage.reports / "grpo_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(logs, indent=1) + "\n")


if __name__ == "__main__":
    run(main)
