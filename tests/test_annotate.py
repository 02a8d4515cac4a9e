"""`kaser annotate DIR` end to end on a tiny synthetic folder, and the quality arithmetic."""

from __future__ import annotations

import json
import sqlite3

import polars as pl
import pytest
from test_llm import KEY_ENV, SECRET, server  # noqa: F401  (the fake OpenAI server fixture)

from kaser import InputError
from kaser.errors.annotate import AnnotateConfig, annotation_counts, annotation_quality
from kaser.cli import main
from kaser.errors.llm_tasks import ANNOTATION_SCHEMA
from kaser.data.contracts import write_dataset
from kaser.data.synth import generate

PARAMS = """annotate:
  backend: static
  case_timeout_s: 0.2
  repair_rounds: 3
  max_repairs: 40
  generated_inputs: 20
  max_references: 3
  seed: 0
llm:
  model: o4-mini
  base_url: {url}
  api_key_env: {key}
  max_retries: 1
  backoff_s: 0.001
  cache_file: llm_cache.sqlite
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("synthetic-python")
    write_dataset(path, *generate("python", students=12, problems=3, seed=4))
    return path


def params(tmp_path, url="http://127.0.0.1:9/v1"):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS.format(url=url, key=KEY_ENV))
    return path


def test_static_backend_end_to_end(folder, tmp_path, capsys):
    main(["annotate", str(folder), "--params", str(params(tmp_path))])
    out = capsys.readouterr().out
    submissions = pl.read_parquet(folder / "submissions.parquet")
    annotations = pl.read_parquet(folder / "annotations.parquet")
    assert annotations.schema == pl.Schema(ANNOTATION_SCHEMA)
    assert annotations.select("student_id", "problem_id").equals(submissions.select("student_id", "problem_id"))
    wrong = int((~submissions["correct"]).sum())
    counts = annotation_counts(annotations, submissions)
    # the printed line holds the counts, split by correct / incorrect
    assert f"{counts['incorrect_with_errors']} of {wrong} incorrect" in out
    assert f"{counts['correct_with_errors']} of {submissions.height - wrong} correct" in out
    assert counts["incorrect_with_errors"] == wrong and counts["correct_with_errors"] == 0
    quality = json.loads((folder / "annotation_quality.json").read_text())
    assert {"overall", "Syntax", "Runtime", "Logical", "per_label", "counts"} <= set(quality)
    assert quality["overall"]["f1"] >= 0.75
    assert "overall F1" in out
    # the LLM cache exists (empty) even with the static backend: the stage declares it
    with sqlite3.connect(folder / "llm_cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_openai_backend_end_to_end(folder, tmp_path, server, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv(KEY_ENV, SECRET)
    copy = tmp_path / "data"
    copy.mkdir()
    for name in ("problems.parquet", "submissions.parquet"):
        (copy / name).write_bytes((folder / name).read_bytes())
    main(["annotate", str(copy), "--backend", "openai", "--params", str(params(tmp_path, server.url))])
    annotations = pl.read_parquet(copy / "annotations.parquet")
    submissions = pl.read_parquet(copy / "submissions.parquet")
    wrong = int((~submissions["correct"]).sum())
    # the fake model labels every incorrect submission "Off-by-one error"; correct ones are skipped
    assert annotations["status"].to_list() == ["skipped-correct" if c else "ok" for c in submissions["correct"]]
    assert len(server.prompts()) == wrong
    assert "openai" in capsys.readouterr().out
    main(["annotate", str(copy), "--backend", "openai", "--params", str(params(tmp_path, server.url))])
    assert len(server.prompts()) == wrong            # second run: every answer from the cache


@pytest.mark.parametrize("predicted, truth, overall", [
    ([["Off-by-one error"]], [["Off-by-one error"]], (1.0, 1.0)),           # exact
    ([["Off-by-one error", "Missing semicolon"]], [["Off-by-one error"]], (0.5, 1.0)),   # one extra label
    ([[]], [["Off-by-one error"]], (0.0, 0.0)),                              # missed
    ([["Wrong return value"]], [[]], (0.0, 0.0)),                           # error on correct code
    ([["Off-by-one error"], []], [["Off-by-one error"], []], (1.0, 1.0)),   # correct code, nothing said
])
def test_quality_is_micro_over_label_sets(predicted, truth, overall):
    category = {"Off-by-one error": "Logical", "Missing semicolon": "Syntax", "Wrong return value": "Logical"}
    annotations = pl.DataFrame({"errors": [[{"category": category[l], "label": l, "evidence": ""} for l in labels]
                                           for labels in predicted]},
                               schema={"errors": ANNOTATION_SCHEMA["errors"]})
    quality = annotation_quality(annotations, pl.DataFrame({"true_errors": truth},
                                                           schema={"true_errors": pl.List(pl.String)}), "java")
    assert (quality["overall"]["precision"], quality["overall"]["recall"]) == overall


def test_per_category_keeps_that_categorys_labels():
    annotations = pl.DataFrame({"errors": [[{"category": "Syntax", "label": "Missing semicolon", "evidence": ""}]]})
    truth = pl.DataFrame({"true_errors": [["Missing semicolon", "Off-by-one error"]]})
    quality = annotation_quality(annotations, truth, "java")
    assert quality["Syntax"]["f1"] == 1.0 and quality["Logical"]["recall"] == 0.0
    assert quality["per_label"]["Off-by-one error"]["fn"] == 1


def test_quality_needs_true_errors():
    with pytest.raises(InputError, match="true_errors"):
        annotation_quality(pl.DataFrame({"errors": [[]]}), pl.DataFrame({"score": [1.0]}), "java")


def test_unknown_backend_in_params_is_an_error():
    with pytest.raises(InputError, match="backend must be one of"):
        AnnotateConfig(backend="magic")
