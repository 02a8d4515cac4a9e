"""DVC stage `ablate@<dataset>`: the reward ablations of paper Table 1 ("KASER w/o R_Sim / R_Error
/ R_Div"), each a GRPO run with one reward weight set to 0, sampled on KASER's test pairs.

    python stages/ablate.py synthetic-python
    dvc exp run -S 'ablations.rewards=[similarity,error,diversity]' \
        -S 'evaluate.methods=[kaser,student_sft,icl,persona,parastudent,kaser_no_sim,kaser_no_err,kaser_no_div]'

params.yaml `ablations.rewards` lists the rewards to drop (default none: the stage then only
leaves its empty output folders, so the CPU default pays nothing). For each, and each run
(split, fold) of `model.splits` x `model.folds`, it continues that run's SFT adapter with
params.yaml `grpo` (that one weight at 0) and the judge of `judge`, writes the adapter to
models/<ds>/ablations/<method>/<split>-<fold>/, samples the run's test pairs with params.yaml
`generate` (the same draw as every other method) and writes data/<ds>/ablations/<method>.parquet
(method kaser_no_sim, kaser_no_err or kaser_no_div), which the evaluate stage scores beside KASER
(paired t-tests included) when evaluate.methods names it. Per-step logs: reports/<ds>/ablations_log.json.
The judge's LLM answers (judge.backend openai) are cached in the stage's own
data/<ds>/ablate_llm_cache.sqlite, a persistent output (empty with the static judge).

A single ablation as its own experiment, compared with `dvc exp show`, needs no stage:
`dvc exp run -S 'grpo.reward_weights=[0,1,1]'`.
"""

import dataclasses
import json

from _judge import keep_cache, open_judge
from _runner import Stage, run
from kaser.predictor.grpo import ABLATION_METHODS, GrpoParams, ablated, train_runs
from kaser.data.contracts import read_dataset
from kaser.predictor.base_model import ModelParams, load_tokenizer, run_name
from kaser.predictor.sampling import GenerateParams, predict, predict_runs, resolve_budget

PARAMS = ("model", "grpo", "judge", "generate", "ablations", "annotate", "llm")


@dataclasses.dataclass(frozen=True)
class AblationParams:
    """params.yaml `ablations`."""
    rewards: tuple[str, ...]


def run_ablation(stage: Stage, method: str, params: GrpoParams, model: ModelParams,
                 sampling: GenerateParams, judge) -> dict:
    """Train one ablation's runs, sample their test pairs into data/<ds>/ablations/<method>.parquet;
    returns the runs' GRPO logs."""
    def adapter(kind: str):
        return lambda split, fold: stage.adapter(kind, run_name(split, fold))

    logs = train_runs(stage.data, model, params, judge, stage.base_model, adapter("sft"),
                      adapter(f"ablations/{method}"), model.dtype)
    predictions = predict_runs(
        stage.data, model.runs(), sampling,
        lambda split, fold, pairs: predict(stage.base_model, adapter(f"ablations/{method}")(split, fold),
                                           pairs, sampling, method, model.dtype))
    path = stage.data / "ablations" / f"{method}.parquet"
    predictions.write_parquet(path)
    print(f"{method}: reward_weights {list(params.reward_weights)}, {len(model.runs())} run(s) "
          f"-> {path}")
    return logs


def main(dataset: str) -> None:
    stage = Stage("ablate", dataset, PARAMS)
    model = stage.section("model", ModelParams)
    grpo = stage.section("grpo", GrpoParams)
    sampling = resolve_budget(stage.section("generate", GenerateParams),
                              load_tokenizer(stage.base_model), read_dataset(stage.data)[1])
    rewards = stage.section("ablations", AblationParams).rewards
    variants = {ABLATION_METHODS.get(reward, reward): ablated(grpo, reward) for reward in rewards}
    out, models = stage.data / "ablations", stage.models / "ablations"
    for path in (out, models):
        path.mkdir(parents=True, exist_ok=True)   # DVC outputs, empty when nothing is ablated
    logs = {}
    if variants:
        with open_judge(stage) as judge:
            for method, params in variants.items():
                logs[method] = run_ablation(stage, method, params, model, sampling, judge)
    else:
        keep_cache(stage)
    report = stage.reports / "ablations_log.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(logs, indent=1) + "\n")
    if not variants:
        print("ablate: params.yaml ablations.rewards is empty; nothing to train")


if __name__ == "__main__":
    run(main)
