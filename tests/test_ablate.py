"""Reward ablations (paper Table 1, "KASER w/o R_x"): kaser.predictor.grpo.ablated, where the evaluation
finds their predictions, and stages/ablate.py on a tiny model end to end."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml

from kaser import InputError, config
from kaser.evaluation.scoring import prediction_path, read_predictions
from kaser.predictor.grpo import GrpoParams, ablated
from stage_runs import ABLATE_PARAMS, full_params, stage


@pytest.mark.parametrize("reward, weights", [("similarity", (0.0, 2.0, 3.0)),
                                             ("error", (1.0, 0.0, 3.0)),
                                             ("diversity", (1.0, 2.0, 0.0))])
def test_an_ablation_zeroes_one_weight_and_keeps_the_rest(reward, weights):
    params = ablated(config.settings(GrpoParams, "grpo", reward_weights=(1.0, 2.0, 3.0), learning_rate=0.5), reward)
    assert params.reward_weights == weights
    assert params.learning_rate == 0.5


def test_an_unknown_reward_names_the_params_key():
    with pytest.raises(InputError, match=r"ablations\.rewards.*similarity, error, diversity"):
        ablated(config.settings(GrpoParams, "grpo"), "style")


def test_ablation_predictions_live_beside_the_stage_that_writes_them(tmp_path):
    assert prediction_path(tmp_path, "kaser_no_err") == tmp_path / "ablations" / "kaser_no_err.parquet"
    assert prediction_path(tmp_path, "icl") == tmp_path / "predictions" / "icl.parquet"
    with pytest.raises(InputError, match=r"ablate stage.*ablations\.rewards"):
        read_predictions(tmp_path, "kaser_no_div")


@pytest.mark.slow
def test_the_stage_trains_without_the_reward_and_samples_the_test_pairs(grpo_workspace):
    from kaser.predictor.sampling import GenerateParams, held_out_pairs

    stage("sft").main("toy")
    stage("ablate").main("toy")
    assert (grpo_workspace / "models/toy/ablations/kaser_no_err/student-0/adapter_model.safetensors").is_file()
    logs = json.loads((grpo_workspace / "reports/toy/ablations_log.json").read_text())
    steps = [entry for entry in logs["kaser_no_err"]["student-0"] if "reward" in entry]
    assert steps
    for step in steps:   # the total leaves the error reward out: its weight is 0
        assert step["reward"] == pytest.approx(step["rewards/similarity_reward/mean"]
                                               + step["rewards/diversity_reward/mean"], abs=1e-5)
    table = read_predictions(grpo_workspace / "data/toy", "kaser_no_err")
    assert set(table["method"]) == {"kaser_no_err"}
    assert set(table.select("split", "fold").rows()) == {("student", 0)}
    expected = held_out_pairs(grpo_workspace / "data/toy", "student", 0,
                              config.settings(GenerateParams, "generate", **ABLATE_PARAMS["generate"]))
    assert (table.filter(pl.col("sample") == 0).select("student_id", "problem_id").sort(pl.all())
            .equals(expected.select("student_id", "problem_id").sort(pl.all())))


def test_with_no_ablation_the_stage_only_leaves_its_empty_outputs(grpo_workspace):
    (grpo_workspace / "params.yaml").write_text(yaml.safe_dump(full_params(ABLATE_PARAMS | {"ablations": {"rewards": []}})))
    stage("ablate").main("toy")
    assert list((grpo_workspace / "data/toy/ablations").iterdir()) == []
    assert list((grpo_workspace / "models/toy/ablations").iterdir()) == []
    assert json.loads((grpo_workspace / "reports/toy/ablations_log.json").read_text()) == {}
