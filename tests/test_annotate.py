"""`kaser annotate DIR` end to end on a tiny synthetic folder, and the quality arithmetic."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from kaser import InputError, config
from kaser.errors.annotate import AnnotateParams, annotation_counts, annotation_quality
from kaser.cli import main
from kaser.errors.llm_tasks import ANNOTATION_SCHEMA
from kaser.data.contracts import write_dataset
from kaser.data.synth import generate
from kaser.llm.client import INTERRUPT_GRACE_S
from fake_openai import KEY_ENV, SECRET

PARAMS = """annotate:
  backend: static
  case_timeout_s: 0.2
  repair_rounds: 3
  max_repairs: 40
  generated_inputs: 20
  max_references: 3
  seed: 0
  unsafe_no_isolation: false
llm:
  model: o4-mini
  json_mode: true
  temperature: null
  reasoning_effort: null
  max_completion_tokens: null
  seed: null
llm_client:
  base_url: {url}
  api_key_env: {key}
  max_concurrency: 8
  max_retries: 1
  malformed_retries: 2
  backoff_s: 0.001
  timeout_s: 300.0
  price_per_mtok_in: 1.1
  price_per_mtok_out: 4.4
  cache_file: llm_cache.sqlite
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("synthetic-python")
    write_dataset(path, *generate("python", students=12, problems=3, seed=4))
    return path


REPO = Path(__file__).resolve().parents[1]


def params(tmp_path, url="http://127.0.0.1:9/v1", extra_client=""):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS.format(url=url, key=KEY_ENV) + extra_client)
    return path


def copy_dataset(folder, target):
    target.mkdir(parents=True)
    for name in ("problems.parquet", "submissions.parquet"):
        (target / name).write_bytes((folder / name).read_bytes())
    return target


def incorrect(folder) -> int:
    return int((~pl.read_parquet(folder / "submissions.parquet")["correct"]).sum())


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


def test_openai_backend_end_to_end(folder, tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, SECRET)
    copy = copy_dataset(folder, tmp_path / "data")
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


def test_every_prompt_failed_exits_2_with_one_line(folder, tmp_path, server, monkeypatch,
                                                  capsys):
    monkeypatch.setenv(KEY_ENV, SECRET)
    copy = copy_dataset(folder, tmp_path / "data")
    server.answer_with = "BODY_HTML"     # every answer is a proxy's error page
    with pytest.raises(SystemExit) as exit_info:
        main(["annotate", str(copy), "--backend", "openai", "--params", str(params(tmp_path, server.url))])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(
        f"kaser annotate: error: all {incorrect(folder)} prompts failed (first: malformed answer 3 "
        "times; last: server answer is not JSON: '<html>")
    assert not (copy / "annotations.parquet").exists()
    assert len(server.requests) == 3 * incorrect(folder)      # each asked 1 + malformed_retries times


def test_annotate_stage_every_prompt_failed_exits_2_with_one_line(folder, tmp_path, server):  # noqa: F811
    copy_dataset(folder, tmp_path / "data" / "tiny")
    params(tmp_path, server.url).write_text(
        PARAMS.format(url=server.url, key=KEY_ENV).replace("backend: static", "backend: openai"))
    server.answer_with = "USAGE_STRING"
    done = subprocess.run([sys.executable, str(REPO / "stages" / "annotate.py"), "tiny"], cwd=tmp_path,
                          env={**os.environ, KEY_ENV: SECRET, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"annotate: error: all {incorrect(folder)} prompts failed (first: malformed answer 3 times; "
        "last: server answer: usage is a string, not token counts)")
    assert not (tmp_path / "data" / "tiny" / "annotations.parquet").exists()


def test_ctrl_c_stops_cleanly_and_the_rerun_pays_no_prompt_twice(folder, tmp_path, server,  # noqa: F811
                                                                 monkeypatch, capsys):
    copy = copy_dataset(folder, tmp_path / "data")
    settings = params(tmp_path, server.url, extra_client="  max_concurrency: 2\n")
    command = ["annotate", str(copy), "--backend", "openai", "--params", str(settings)]
    server.hold_after = 3   # 3 answers, then the next 2 requests (one per worker) wait in flight
    run = subprocess.Popen([sys.executable, "-m", "kaser.cli", *command], cwd=tmp_path,
                           env={**os.environ, KEY_ENV: SECRET, "PYTHONPATH": str(REPO)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while server.received < 5:
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        run.send_signal(signal.SIGINT)   # Ctrl-C while 2 requests are in flight
        # ... whose answers arrive after it, within the client's grace: an answer that lands by
        # then is cached; a later one is abandoned so that Ctrl-C exits within a second
        # (tests/test_llm.py)
        time.sleep(INTERRUPT_GRACE_S / 5)
        server.release.set()
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == ("kaser annotate: interrupted; run the same command again "
                                            "to resume (LLM answers received so far are cached)")
    assert not (copy / "annotations.parquet").exists()
    answered = server.prompts(status=200)
    # the run stopped early, and every answer paid for (the two in flight included) is in the cache
    assert server.received == 5 and len(answered) == 5 < incorrect(folder)
    with sqlite3.connect(copy / "llm_cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 5

    server.hold_after = None
    monkeypatch.setenv(KEY_ENV, SECRET)
    main(command)
    assert "interrupted" not in capsys.readouterr().err
    annotations = pl.read_parquet(copy / "annotations.parquet")
    assert annotations["status"].value_counts().sort("status").rows() == [
        ("ok", incorrect(folder)), ("skipped-correct", annotations.height - incorrect(folder))]
    # over both runs every prompt was paid for exactly once
    paid = Counter(server.prompts(status=200))
    assert len(paid) == incorrect(folder) and set(paid.values()) == {1}


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
        config.settings(AnnotateParams, "annotate", backend="magic")
