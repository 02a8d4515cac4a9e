"""Tests of the synthetic benchmark: error operators, student styles and models, generated datasets.

    .venv/bin/python -m pytest tests/test_synth.py
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from collections import defaultdict

import numpy as np
import polars as pl
import pytest

from kaser import InputError

from kaser.code import sandbox
from kaser.data.contracts import kc_vocabulary, validate_problems, validate_submissions, write_dataset
from kaser.data.synth import generate, synth_command
from kaser.data.synth.bank import KC_VOCABULARY, load_bank as bank
from kaser.data.synth.execution import run_problems, shows
from kaser.data.synth.mutations import CATALOGUE
from kaser.data.synth.students import NAMINGS, Style, draw_students, error_chance, practise, style_code
from kaser.code.syntax import parse
from kaser.taxonomy import CATEGORIES, STANDARD_ERRORS

needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")
LANGUAGES = ("java", "python")
OPERATORS = [(label, language) for label, error in CATALOGUE.items() for language in error.languages]


def _mutants(label: str, language: str, seeds: int = 2) -> list[tuple[object, str, str]]:
    """(problem, reference, mutated program) for every bank reference the operator applies to."""
    found = []
    for problem in bank(language):
        for reference in problem.references:
            for seed in range(seeds):
                mutated = CATALOGUE[label].apply(reference, language, random.Random(seed))
                if mutated is not None:
                    found.append((problem, reference, mutated))
    return found


def _spread(mutants: list, count: int) -> list:
    """Up to `count` mutants on different problems, in bank order (a deterministic sample)."""
    seen, picked = set(), []
    for problem, reference, mutated in mutants:
        if problem.problem_id not in seen and len(picked) < count:
            seen.add(problem.problem_id)
            picked.append((problem, reference, mutated))
    return picked


# --- the catalogue ------------------------------------------------------------------------------------

def test_catalogue_covers_both_languages_and_all_categories():
    assert len(CATALOGUE) >= 15
    for label, error in CATALOGUE.items():
        assert label == error.label and label in STANDARD_ERRORS
        assert error.kcs and set(error.kcs) <= set(KC_VOCABULARY), label
        assert set(error.languages) <= set(STANDARD_ERRORS[label]), label
    for language in LANGUAGES:
        mine = [e for e in CATALOGUE.values() if language in e.languages]
        assert len(mine) >= 12, language
        assert {e.category(language) for e in mine} == set(CATEGORIES), language


@pytest.mark.parametrize("label,language", OPERATORS)
def test_operator_edits_code_and_keeps_non_syntax_errors_parseable(label, language):
    mutants = _mutants(label, language)
    assert mutants, f"{label} applies to no {language} bank problem"
    for _, reference, mutated in mutants:
        assert mutated != reference
        if CATALOGUE[label].category(language) != "Syntax":
            assert not parse(mutated, language).has_error, mutated


def test_operator_returns_none_where_the_error_has_no_site():
    # no loop, no string, no division: nothing for these operators to break
    code = "def add(a, b):\n    return a + b\n"
    for label in ("Infinite loop", "Off-by-one error", "Wrong string method", "Division by zero",
                  "Index out of bounds", "Wrong boolean operator"):
        assert CATALOGUE[label].apply(code, "python", random.Random(0)) is None, label


def test_operators_survive_code_that_is_already_broken():
    """A second error is applied to code a syntax error already broke; no operator may crash."""
    applied = 0
    for language in LANGUAGES:
        syntax = [e for e in CATALOGUE.values() if language in e.languages and e.category(language) == "Syntax"]
        for problem in bank(language)[::4]:
            broken = [e.apply(problem.references[0], language, random.Random(1)) for e in syntax]
            for code in filter(None, broken):
                for error in CATALOGUE.values():
                    mutated = error.apply(code, language, random.Random(0))
                    # no site for the error: None; else a program that is not the one it was given
                    assert mutated is None or (isinstance(mutated, str) and mutated != code), error.label
                    applied += mutated is not None
    assert applied > 100, applied   # the second errors were really applied, not all skipped


@pytest.mark.parametrize("language", [pytest.param("java", marks=[pytest.mark.java, needs_jdk]), "python"])
def test_syntax_errors_do_not_compile(language):
    programs = [mutated for label, lang in OPERATORS if lang == language
                and CATALOGUE[label].category(language) == "Syntax"
                for _, _, mutated in _spread(_mutants(label, language, seeds=1), 3)]
    diagnostics = sandbox.compile_diagnostics(language, programs)
    compiled = [p for p, d in zip(programs, diagnostics) if not d]
    assert not compiled, f"{len(compiled)} syntax mutants compile, e.g.:\n{compiled[0]}"


def _covering_problems(labels: list[str], language: str, per_label: int = 3) -> dict[str, list]:
    """label -> mutants on a few bank problems, chosen so that few problems cover every label:
    a problem joins (in bank order) while it has a site for a label seen on fewer than
    `per_label` problems; a label with sites on at most 8 problems gets all of them."""
    mutants = {label: _mutants(label, language, seeds=1) for label in labels}
    problems_of = {label: {p.problem_id for p, _, _ in found} for label, found in mutants.items()}
    chosen: set[str] = set()
    for problem in bank(language):
        if any(problem.problem_id in problems_of[label]
               and (len(problems_of[label]) <= 8 or len(problems_of[label] & chosen) < per_label)
               for label in labels):
            chosen.add(problem.problem_id)
    return {label: [m for m in found if m[0].problem_id in chosen] for label, found in mutants.items()}


@pytest.mark.parametrize("language", [pytest.param("java", marks=[pytest.mark.java, needs_jdk, pytest.mark.slow]),
                                      "python"])
def test_runtime_and_logical_errors_fail_a_test(language):
    """Each behavioural operator shows (raises / answers wrong as its category says) somewhere."""
    labels = [label for label, lang in OPERATORS if lang == language and CATALOGUE[label].category(lang) != "Syntax"]
    chosen = _covering_problems(labels, language)
    by_problem = defaultdict(list)
    for mutants in chosen.values():
        for problem, _, mutated in mutants:
            by_problem[problem.problem_id].append((problem, mutated))
    ids = sorted(by_problem)
    jobs = [(by_problem[i][0][0].entry, [m for _, m in by_problem[i]],
             [(list(args), expected) for args, expected in by_problem[i][0][0].tests]) for i in ids]
    results = dict(zip(ids, run_problems(language, jobs)))
    for label, mutants in chosen.items():
        outcomes = [results[p.problem_id][m] for p, _, m in mutants]
        showing = [r for r in outcomes if shows(CATALOGUE[label].category(language), label, r)]
        assert showing, f"{label} ({language}) never shows on {len(mutants)} mutants"
        for result in showing:
            assert any(case.status != "pass" for case in result.cases)


# --- students -------------------------------------------------------------------------------------

STYLES = [Style(0.0, naming, braces, indent) for naming in NAMINGS
          for braces, indent in (("same-line", 4), ("next-line", 2))]


@pytest.mark.parametrize("language", [pytest.param("java", marks=[pytest.mark.java, needs_jdk]), "python"])
def test_styles_keep_behaviour(language):
    problems = bank(language)[::6] if language == "java" else bank(language)
    jobs = [(p.entry, [style_code(r, language, s) for r in p.references for s in STYLES],
             [(list(a), e) for a, e in p.tests]) for p in problems]
    for problem, results in zip(problems, run_problems(language, jobs)):
        for code, result in results.items():
            assert result.compiled and all(c.status == "pass" for c in result.cases), (problem.problem_id, code)


def test_styles_change_the_code_as_described():
    reference = bank("java")[0].references[0]
    allman = style_code(reference, "java", Style(0.0, "as-is", "next-line", 4))
    assert ")\n{" in allman and ") {" not in allman
    short = style_code(reference, "java", Style(0.0, "short", "same-line", 2))
    assert short != reference and "\n  " in short and "\n    " not in short.split("\n")[1]


def test_students_are_deterministic_and_mastery_grows():
    vocabulary = ["conditionals", "for loops", "variables"]
    first = draw_students(30, vocabulary, 10, np.random.default_rng(7))
    assert first == draw_students(30, vocabulary, 10, np.random.default_rng(7))
    assert first != draw_students(30, vocabulary, 10, np.random.default_rng(8))
    for student in first:
        assert all(0.0 < m < 1.0 for m in student.mastery)
        assert len(set(student.order)) == len(student.order) and set(student.order) <= set(range(10))
        assert len(student.order) >= 2
    mastery = np.array([0.2, 0.5, 0.9])
    after = practise(mastery, [0, 2], 0.5)
    assert after.tolist() == pytest.approx([0.6, 0.5, 0.95])
    assert error_chance("Logical", 1.0, 0.2) > error_chance("Logical", 1.0, 0.8) > 0.0


# --- generated datasets -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def python_data():
    return generate("python", 12, 6, seed=5)


PROBLEM_SCHEMA = {"problem_id": pl.String, "language": pl.String, "statement": pl.String,
                  "kcs": pl.List(pl.String), "tests": pl.List(pl.Struct({"input": pl.String, "expected": pl.String})),
                  "reference": pl.String, "signature": pl.String}
SUBMISSION_SCHEMA = {"student_id": pl.String, "problem_id": pl.String, "step": pl.Int64, "code": pl.String,
                     "score": pl.Float64, "correct": pl.Boolean, "true_errors": pl.List(pl.String),
                     "true_mastery": pl.List(pl.Float64)}


def _check_contract(problems: pl.DataFrame, submissions: pl.DataFrame, language: str) -> None:
    validate_submissions(submissions, validate_problems(problems))     # the project's own checks
    assert dict(problems.schema) == PROBLEM_SCHEMA
    assert dict(submissions.schema) == SUBMISSION_SCHEMA
    assert problems["problem_id"].to_list() == sorted(problems["problem_id"])
    assert set(problems["language"]) == {language}
    for tests in problems["tests"]:
        assert len(tests) >= 8
        for case in tests:
            assert isinstance(json.loads(case["input"]), list)
            json.loads(case["expected"])
    vocabulary = kc_vocabulary(problems)
    assert submissions.select("student_id", "step").rows() == sorted(submissions.select("student_id", "step").rows())
    assert set(submissions["problem_id"]) <= set(problems["problem_id"])
    assert (submissions["correct"] == (submissions["score"] == 1.0)).all()
    assert submissions["score"].is_between(0.0, 1.0).all()
    allowed = {label for label, e in CATALOGUE.items() if language in e.languages}
    for student, rows in submissions.group_by("student_id", maintain_order=True):
        assert rows["step"].to_list() == list(range(len(rows)))
        mastery = np.array(rows["true_mastery"].to_list())
        assert mastery.shape == (len(rows), len(vocabulary))
        assert ((mastery >= 0) & (mastery <= 1)).all()
        assert (np.diff(mastery, axis=0) >= 0).all(), f"mastery of {student} falls"
    for correct, errors in submissions.select("correct", "true_errors").rows():
        assert set(errors) <= allowed
        assert correct == (not errors)       # every failure is explained, every explanation fails


def test_python_dataset_follows_the_contract(python_data):
    problems, submissions = python_data
    _check_contract(problems, submissions, "python")
    assert len(problems) == 6 and submissions["student_id"].n_unique() == 12
    assert 0.2 < submissions["correct"].mean() < 0.9


@pytest.mark.java
@pytest.mark.slow
@needs_jdk
def test_java_dataset_follows_the_contract():
    problems, submissions = generate("java", 6, 4, seed=3)
    _check_contract(problems, submissions, "java")


def test_same_seed_gives_identical_files_and_another_seed_other_data(python_data, tmp_path):
    write_dataset(tmp_path / "a", *python_data)
    write_dataset(tmp_path / "b", *generate("python", 12, 6, seed=5))
    write_dataset(tmp_path / "c", *generate("python", 12, 6, seed=6))
    for name in ("problems.parquet", "submissions.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "submissions.parquet").read_bytes() != (tmp_path / "c" / "submissions.parquet").read_bytes()


def test_students_with_more_mastery_make_fewer_errors():
    problems, submissions = generate("python", 60, 10, seed=11)
    vocabulary = sorted({kc for kcs in problems["kcs"] for kc in kcs})
    kcs = dict(zip(problems["problem_id"], problems["kcs"]))
    mean_mastery = [np.mean([m[vocabulary.index(kc)] for kc in kcs[p]])
                    for p, m in submissions.select("problem_id", "true_mastery").rows()]
    errors = submissions["true_errors"].list.len().to_numpy()
    low, high = np.quantile(mean_mastery, [0.25, 0.75])
    weakest = errors[np.array(mean_mastery) <= low].mean()
    strongest = errors[np.array(mean_mastery) >= high].mean()
    assert weakest > 2 * strongest


def test_synth_command_writes_both_files_and_counts(tmp_path, capsys):
    out = tmp_path / "synthetic"
    synth_command(argparse.Namespace(language="python", students=3, problems=2, seed=0, out=str(out)))
    printed = capsys.readouterr().out
    assert "students 3, problems 2" in printed and "share correct" in printed
    assert len(pl.read_parquet(out / "problems.parquet")) == 2


@pytest.mark.parametrize("students,problems", [(3, 10_000), (3, 0), (0, 2)])
def test_sizes_out_of_range_are_input_errors(students, problems):
    with pytest.raises(InputError):
        generate("python", students, problems, seed=0)


def test_kaser_synth_takes_what_it_is_not_given_from_the_params_files_synthetic_dataset(tmp_path):
    from kaser.cli import main
    params = tmp_path / "params.yaml"
    params.write_text("datasets:\n  mine:\n    source: synthetic\n    raw: kaser/data/synth\n"
                      "    language: python\n    students: 3\n    problems: 2\n    seed: 5\n")
    main(["synth", "--language", "python", "--params", str(params), "--out", str(tmp_path / "a")])
    main(["synth", "--language", "python", "--students", "3", "--problems", "2", "--seed", "5",
          "--params", str(tmp_path / "none.yaml"), "--out", str(tmp_path / "b")])   # all given: no file read
    for name in ("problems.parquet", "submissions.parquet"):
        assert pl.read_parquet(tmp_path / "a" / name).equals(pl.read_parquet(tmp_path / "b" / name))
    with pytest.raises(SystemExit) as stop:     # no synthetic Java entry, and no --seed
        main(["synth", "--language", "java", "--students", "3", "--problems", "2",
              "--params", str(params), "--out", str(tmp_path / "c")])
    assert stop.value.code == 2
