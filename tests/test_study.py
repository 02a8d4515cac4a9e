"""The CPU study (docs/experiments-and-studies.md, `make study`): its settings (configs/study.yaml) meet
the study's minimum sizes and load into every stage's params, running it leaves params.yaml as it
was, and its chain of stages (student split, Student SFT and KASER
only) runs end to end on a tiny model and writes what the study commits: evaluation.json with
intervals, Holm-corrected tests and detectable effects, pair_scores.csv / problem_scores.csv from
which every test is recomputed, and the "CPU study" part of the report. No result is claimed."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml
from scipy.stats import ttest_rel

from stage_runs import ABLATE_PARAMS, cpu_study, full_params, set_values, stage, study_set

REPO = Path(__file__).resolve().parents[1]


def study_settings() -> dict[str, object]:
    """The `-S key=value` settings of configs/study.yaml, parsed back as YAML values."""
    return {key: yaml.safe_load(value) for key, value in (s.split("=", 1) for s in study_set())}


def apply(params: dict, settings: dict[str, object]) -> dict:
    """params with each dotted key set, as `dvc exp run -S` does."""
    for key, value in settings.items():
        *path, last = key.split(".")
        node = params
        for part in path:
            node = node[part]
        assert last in node, f"{key} is not a params.yaml key"
        node[last] = value
    return params


def test_study_settings_meet_the_issue_and_load():
    from kaser.config import settings
    from kaser.evaluation.scoring import EvaluateParams
    from kaser.predictor.base_model import ModelParams
    from kaser.predictor.grpo import GrpoParams
    from kaser.predictor.history_prompts import BaselineParams
    from kaser.predictor.sampling import GenerateParams
    from kaser.predictor.sft import SftParams

    params = apply(yaml.safe_load((REPO / "params.yaml").read_text()), study_settings())
    sft, grpo = settings(SftParams, "sft", params), settings(GrpoParams, "grpo", params)
    generate, model = settings(GenerateParams, "generate", params), settings(ModelParams, "model", params)
    evaluate, baselines = settings(EvaluateParams, "evaluate", params), settings(BaselineParams, "baselines", params)
    assert sft.max_pairs >= 1000                                       # Student SFT on >= 1,000 pairs
    batches = grpo.max_pairs * grpo.epochs / grpo.prompts_per_step
    assert batches >= 30 and batches * grpo.num_iterations >= 50       # >= 50 GRPO optimizer steps
    assert generate.max_pairs >= 300                                   # >= 300 test pairs
    assert tuple(model.splits) == ("student",) and len(model.folds) == 1       # one run, on unseen students
    assert set(evaluate.methods) == {"kaser", "student_sft"} and tuple(baselines.methods) == ("student_sft",)
    # 40 test students (200 / 5 folds) on all 30 problems: the 300-pair draw leaves ~10 real first
    # submissions per problem, the least Table 3 needs, so its per-problem metrics stay rough
    assert params["datasets"]["synthetic-python"]["students"] // params["splits"]["folds"] >= 40


STUDY_TINY = ABLATE_PARAMS | {
    "model": ABLATE_PARAMS["model"] | {"splits": ["student"]},
    "baselines": ABLATE_PARAMS["baselines"] | {"methods": ["student_sft"]},
    "ablations": {"rewards": []},
    "evaluate": {"methods": ["kaser", "student_sft"], "k_values": [1, 2],
                 "embedding_model": "all-MiniLM-L6-v2", "max_codes_per_problem": 10},
    "report": {"tsne_split": "problem", "tsne_max_points": 20, "seed": 0},
    "datasets": {"toy": {"source": "synthetic", "language": "python"}},
}


def give_kaser_one_real_code(data: Path) -> None:
    """KASER's samples of its first pair become that pair's real code (finished, not cut off).

    One GRPO step on the tiny model has no reward spread, so it leaves the SFT adapter as it was
    and both methods sample the same codes; with one pair changed the two differ, and the paired
    t test has a p to check."""
    path = data / "predictions" / "kaser.parquet"
    predictions = pl.read_parquet(path)
    first = predictions.row(0, named=True)
    pair = (pl.col("student_id") == first["student_id"]) & (pl.col("problem_id") == first["problem_id"])
    real = pl.read_parquet(data / "submissions.parquet").filter(pair)["code"][0]
    predictions.with_columns(pl.when(pair).then(pl.lit(real)).otherwise("code").alias("code"),
                             pl.when(pair).then(False).otherwise("truncated").alias("truncated")
                             ).write_parquet(path)


@pytest.mark.slow
def test_the_study_chain_runs_on_a_tiny_model(grpo_workspace):
    (grpo_workspace / "params.yaml").write_text(yaml.safe_dump(full_params(STUDY_TINY)))
    for name, args in (("sft", ()), ("grpo", ()), ("parastudent", ()),
                       ("generate", ("kaser",)), ("generate", ("student_sft",)),
                       ("generate", ("icl",)), ("generate", ("persona",)), ("generate", ("parastudent",))):
        stage(name).main("toy", *args)
    give_kaser_one_real_code(grpo_workspace / "data/toy")
    for name in ("evaluate", "report"):
        stage(name).main("toy")
    # baselines left out of baselines.methods sample nothing, and ParaStudent trains nothing
    assert pl.read_parquet(grpo_workspace / "data/toy/predictions/icl.parquet").height == 0
    assert list((grpo_workspace / "models/toy/parastudent").iterdir()) == []
    assert json.loads((grpo_workspace / "reports/toy/parastudent_log.json").read_text()) == {}
    reports = grpo_workspace / "reports/toy"
    evaluation = json.loads((reports / "evaluation.json").read_text())
    assert set(evaluation["methods"]) == {"kaser", "student_sft"}
    assert evaluation["methods"]["kaser"]["per_pair_split"] == "student"
    pairs = pl.read_csv(reports / "pair_scores.csv")
    problems = pl.read_csv(reports / "problem_scores.csv")
    assert pairs.group_by("method").len()["len"].to_list() == [evaluation["methods"]["kaser"]["n_pairs"]] * 2
    assert problems.height == 2 * evaluation["methods"]["kaser"]["n_problems"] > 0
    # the KASER vs Student SFT test has a p, and it is recomputed from the CSV alone
    test = evaluation["t_tests"]["student_sft"]["codebleu@2"]
    assert test["p_value"] is not None and 0.0 <= test["p_value"] <= 1.0, test
    wide = pairs.pivot("method", index=["fold", "student_id", "problem_id"], values="codebleu@2")
    assert ttest_rel(wide["kaser"], wide["student_sft"]).pvalue == pytest.approx(test["p_value"])
    assert test["p_value"] <= test["p_holm"] <= 1.0 and test["mde"] is not None
    assert evaluation["correction"]["method"] == "holm"
    section = (grpo_workspace / "reports/sections/toy.md").read_text()
    assert "### CPU study" in section and "p (Holm)" in section
    # the reward curve has every GRPO step
    steps = pl.read_csv(reports / "grpo_rewards.csv")["step"].to_list()
    assert steps == list(range(1, len(steps) + 1)) and steps


def test_the_study_target_runs_python_stages_only():
    """`make study` targets report@synthetic-python: everything it reruns is upstream of that
    stage, and none of it is a Java stage (the 3-hour budget has no room for them)."""
    import networkx as nx
    from dvc.repo import Repo

    target = dry_run_settings("study")[0][-1]
    repo = Repo(str(REPO))
    try:
        graph = repo.index.graph
        stage = next(s for s in graph if s.addressing == target)
        upstream = {s.addressing for s in nx.descendants(graph, stage)} | {target}
    finally:
        repo.close()
    assert {"sft@synthetic-python", "grpo@synthetic-python", "generate@synthetic-python",
            "baseline_student_sft@synthetic-python", "evaluate@synthetic-python"} <= upstream
    assert not any("synthetic-java" in name for name in upstream)


def dry_run_settings(target: str) -> tuple[list[str], list[str]]:
    """The words of the `dvc exp run` command that `make -n target` would run (through
    studies/cpu_study.py --dry-run), and its `-S` values."""
    dry = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin"}).stdout
    line = next(line for line in dry.replace("\\\n", " ").splitlines() if "studies/cpu_study.py" in line)
    words = shlex.split(line)
    arguments = words[words.index("studies/cpu_study.py") + 1:]
    printed = subprocess.run([sys.executable, "studies/cpu_study.py", *arguments, "--dry-run"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    words = shlex.split(printed.splitlines()[-1])
    assert words[:3] == ["dvc", "exp", "run"], printed
    return words, set_values(words)


def test_the_study_and_its_seed_rerun_differ_only_in_grpos_seed():
    """`make study` is configs/study.yaml; `make study-seed` is the same with another GRPO seed,
    under an experiment name of its own."""
    study_words, study = dry_run_settings("study")
    words, settings = dry_run_settings("study-seed")
    assert study == study_set() and len(settings) == len(study)
    differ = [(a, b) for a, b in zip(study, settings) if a != b]
    assert len(differ) == 1, differ
    (key, study_seed), (other_key, seed) = differ[0][0].split("="), differ[0][1].split("=")
    assert key == other_key == "grpo.seed" and int(seed) != int(study_seed)
    assert study_words[study_words.index("-n") + 1] == "study-student-python"
    assert words[words.index("-n") + 1] != "study-student-python"
    assert study_words[-1] == words[-1] == "report@synthetic-python"


def test_the_study_puts_params_yaml_back_even_when_the_run_fails(tmp_path):
    """`dvc exp run` leaves its -S values in params.yaml; the study's runner writes the file's
    bytes back whether the run succeeds or fails."""
    study = cpu_study()
    params = tmp_path / "params.yaml"
    original = "grpo:\n  seed: 0   # a comment dvc would drop\n"
    params.write_text(original)
    rewrite = f"open({str(params)!r}, 'w').write('grpo:\\n  seed: 4\\n')"
    for status in (0, 3):
        command = [sys.executable, "-c", f"{rewrite}; raise SystemExit({status})"]
        assert study.run_keeping_params(command, params) == status
        assert params.read_text() == original


def test_an_override_replaces_the_configs_value_in_place():
    study = cpu_study()
    config = {"experiment": "e", "target": "t", "set": {"grpo.seed": 4, "model.folds": [0]}}
    assert study.settings(config, ["grpo.seed=1", "sft.max_pairs=null"]) == [
        "grpo.seed=1", "model.folds=[0]", "sft.max_pairs=null"]
    assert study.exp_run_command(config)[-1] == "t"
