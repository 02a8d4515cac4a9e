"""The whole pipeline on real Python code: a slice of the ITAP sample (ProgSnap2, no statements,
no KCs, no tests) through prepare -> annotate -> cluster -> knowledge -> sft -> grpo -> generate
-> evaluate, each stage script's main() in a small repository root with the tiny model."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from stage_runs import REPO, STAGE_PARAMS, full_params, stage
from tiny_lm import tiny_model_folder

ITAP = REPO.parent / "shared" / "data" / "itap_python_sample"
STUDENTS = 12      # the slice: the first 12 students of the sample, all their events

SMALL = {
    "splits": {"folds": 2, "seed": 0},
    "knowledge": {"max_epochs": 3, "patience": 2, "hidden_size": 16, "projection": 8},
    "grpo": {"num_generations": 2, "prompts_per_step": 1, "max_completion_length": 8,
             "max_pairs": 1},
    "evaluate": {"methods": ["kaser"], "k_values": [1, 2], "max_codes_per_problem": 20},
}


def slice_of_itap(target: Path) -> Path:
    """MainTable.csv with the first STUDENTS students' events, CodeState.csv with their codes."""
    main = pl.read_csv(ITAP / "MainTable.csv", infer_schema=False)
    students = sorted(main["SubjectID"].unique())[:STUDENTS]
    main = main.filter(pl.col("SubjectID").is_in(students))
    target.mkdir(parents=True)
    main.write_csv(target / "MainTable.csv")
    keep = set(main["CodeStateID"].to_list())
    with open(ITAP / "CodeState.csv", newline="", encoding="utf8") as source, \
            open(target / "CodeState.csv", "w", newline="", encoding="utf8") as sink:
        reader, writer = csv.reader(source), csv.writer(sink)
        writer.writerow(next(reader))
        writer.writerows(row for row in reader if row[0] in keep)
    return target


def params_for(raw: Path) -> dict:
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params.update({k: v for k, v in STAGE_PARAMS.items() if k != "llm"})
    for section, values in SMALL.items():
        params[section] = {**params[section], **values}
    params["datasets"] = {"itap": {"source": "progsnap2", "raw": str(raw)}}
    return params


@pytest.mark.slow
@pytest.mark.skipif(not ITAP.is_dir(), reason=f"the ITAP sample is not at {ITAP} (a copy of shared/ "
                    "beside the clone, as in CI)")
def test_prepare_to_evaluate_on_a_slice_of_itap(tmp_path, monkeypatch):
    raw = slice_of_itap(tmp_path / "raw")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(full_params(params_for(raw))))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "base").symlink_to(tiny_model_folder())
    monkeypatch.chdir(tmp_path)
    data, reports = tmp_path / "data" / "itap", tmp_path / "reports" / "itap"

    # stages/prepare.py defines its config dataclasses itself, so it runs as a script
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, str(REPO / "stages" / "prepare.py"), "itap"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    problems = pl.read_parquet(data / "problems.parquet")
    assert problems["statement"].str.starts_with("Write the Python function").all()
    assert json.loads((data / "metadata.json").read_text())["kc_backend"] == "derived"

    stage("annotate").main("itap")
    annotations = pl.read_parquet(data / "annotations.parquet")
    submissions = pl.read_parquet(data / "submissions.parquet")
    wrong = annotations.join(submissions, on=["student_id", "problem_id"]).filter(~pl.col("correct"))
    assert (wrong["errors"].list.len() > 0).mean() >= 0.8   # real errors found without tests

    stage("cluster").main("itap")
    assert json.loads((data / "problem_errors.json").read_text())
    stage("knowledge").main("itap")
    assert pl.read_parquet(data / "mastery.parquet").height == submissions.height
    stage("sft").main("itap")
    stage("grpo").main("itap")
    assert (tmp_path / "models" / "itap" / "grpo" / "student-0" / "adapter_config.json").is_file()
    stage("generate").main("itap", "kaser")
    predictions = pl.read_parquet(data / "predictions" / "kaser.parquet")
    assert predictions.height > 0
    stage("evaluate").main("itap")
    metrics = json.loads((reports / "metrics.json").read_text())
    assert "kaser" in metrics
