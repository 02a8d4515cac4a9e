"""The intervention study's parts (kaser.evaluation.intervention) on hand-made pairs, and its
script at smoke size (studies/intervention.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from kaser.data.synth import generate
from kaser.evaluation.intervention import (choose_targets, effects, generator_response,
                                           mechanism_holds, sample_outcomes, set_level)

ROOT = Path(__file__).resolve().parents[1]


def test_targets_are_a_seeded_draw_of_pairs_with_a_tied_candidate_error():
    pairs = pl.DataFrame({"student_id": list("abcd"), "problem_id": ["p", "p", "q", "r"],
                          "kcs": [["loops", "math"]] * 2 + [["math"], ["strings"]],
                          "mastery": [[0.1, 0.2], [0.3, 0.4], [0.5], [0.6]]})
    candidates = {"p": ["OBO", "Typo"], "q": ["Typo"], "r": ["Slice"]}
    error_kcs = {"p": {"OBO": ["loops"], "Typo": ["syntax"]}, "q": {"Typo": ["syntax"]},
                 "r": {"Slice": ["strings"], "OBO": ["loops"]}}
    targets = choose_targets(pairs, candidates, error_kcs, n=10, seed=3)
    # q has no tied candidate; r's Slice is tied to strings; p's only tied KC is loops
    assert targets.select("student_id", "target_kc").rows() == [("a", "loops"), ("b", "loops"), ("d", "strings")]
    assert choose_targets(pairs, candidates, error_kcs, n=2, seed=3).height == 2
    assert choose_targets(pairs, candidates, error_kcs, n=2, seed=3).equals(
        choose_targets(pairs, candidates, error_kcs, n=2, seed=3))
    low = set_level(targets, 0.1)
    assert low["mastery"].to_list() == [[0.1, 0.2], [0.1, 0.4], [0.1]]   # only the target moves
    assert set_level(targets, None).equals(targets)


def test_the_generator_errs_more_on_a_weak_kc_and_passes_less():
    problems, submissions = generate("python", students=8, problems=4, seed=0)
    pairs = submissions.select("student_id", "problem_id").join(
        problems.select("problem_id", pl.col("kcs")), on="problem_id").head(12)
    targets = pairs.with_columns(pl.col("kcs").list.first().alias("target_kc"))
    chances = generator_response(targets, problems, submissions, {"0.1": 0.1, "0.9": 0.9, "own": None})
    wide = chances.pivot("condition", index=["student_id", "problem_id"], values="tied_chance")
    assert (wide["0.1"] >= wide["0.9"]).all() and (wide["0.1"] > wide["0.9"]).any()
    passing = chances.pivot("condition", index=["student_id", "problem_id"], values="pass_chance")
    assert (passing["0.9"] >= passing["0.1"]).all()
    with pytest.raises(ValueError, match="synthetic data"):
        generator_response(targets, problems, submissions.drop("true_mastery"), {"0.1": 0.1})


def _outcomes(tied_low, tied_high, pass_low, pass_high, method, problems=("p", "q", "r")):
    rows = []
    for i, problem in enumerate(problems):
        for condition, tied, passed in (("0.1", tied_low, pass_low), ("0.9", tied_high, pass_high)):
            rows += [{"method": method, "student_id": f"s{i}", "problem_id": problem,
                      "condition": condition, "sample": k, "tied": t, "pass": p}
                     for k, (t, p) in enumerate(zip(tied, passed))]
    return pl.DataFrame(rows)


def _generator(tied_low, tied_high, pass_low, pass_high, problems=("p", "q", "r")):
    return pl.DataFrame([{"student_id": f"s{i}", "problem_id": p, "condition": c, "tied_chance": t,
                          "pass_chance": q}
                         for i, p in enumerate(problems)
                         for c, t, q in (("0.1", tied_low, pass_low), ("0.9", tied_high, pass_high))])


def test_a_method_that_responds_as_the_generator_does_passes_and_a_deaf_one_does_not():
    responsive = _outcomes([True, True], [False, False], [False, False], [True, True], "kaser")
    deaf = _outcomes([True, False], [True, False], [True, False], [True, False], "student_sft")
    backwards = _outcomes([False, False], [True, True], [True, True], [False, False], "kaser_no_err")
    result = effects(pl.concat([responsive, deaf, backwards]), _generator(0.6, 0.1, 0.3, 0.8), "0.1", "0.9")
    assert result["kaser"]["tied_effect"]["value"] == 1.0 and result["kaser"]["pass_effect"]["value"] == 1.0
    assert result["student_sft"]["tied_effect"]["value"] == 0.0
    assert result["generator"]["tied_effect"]["value"] == pytest.approx(0.5)
    assert result["kaser"]["tied_minus_generator"]["value"] == pytest.approx(0.5)
    assert result["kaser"]["tied_minus_student_sft"]["value"] == 1.0
    assert mechanism_holds(result, "kaser") == {"tied": True, "pass": True}
    assert mechanism_holds(result, "kaser_no_err") == {"tied": False, "pass": False}


def test_a_cut_off_code_neither_passes_nor_errs():
    targets = pl.DataFrame({"student_id": ["s"], "problem_id": ["p"], "target_kc": ["loops"]})
    judged = pl.DataFrame({"student_id": ["s"] * 3, "problem_id": ["p"] * 3, "sample": [0, 1, 2],
                           "errors": [["OBO"], ["OBO"], []], "clean": [False, False, True],
                           "truncated": [False, True, None]})
    outcomes = sample_outcomes(judged, targets, {"p": {"OBO": ["loops"]}})
    assert outcomes["tied"].to_list() == [True, False, False]
    assert outcomes["pass"].to_list() == [False, False, True]


@pytest.mark.slow
def test_the_study_script_runs_at_smoke_size_and_writes_its_files(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "studies" / "intervention.py"), "--smoke",
                          "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1].startswith("kaser_tied_effect: ")
    samples = pl.read_csv(tmp_path / "out" / "samples.csv")
    assert set(samples["condition"]) == {"0.1", "0.9", "own"}
    assert set(samples["method"]) == {"kaser", "student_sft", "kaser_no_err"}
    effects_json = json.loads((tmp_path / "out" / "effects.json").read_text())
    assert effects_json["effects"]["generator"]["tied_effect"]["value"] > 0
    assert "The protocol's verdict" in (tmp_path / "out" / "README.md").read_text()
