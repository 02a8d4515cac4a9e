"""`kaser simulate --reference/--tests`: predicted codes judged by differential testing against a
model solution find the logical errors the problem's own tests find."""

import json

import polars as pl
import pytest

from kaser import config
from kaser.errors.static_annotator import StaticParams
from kaser.simulate import judge_codes, read_tests
from simulate_cli import run

LOGIC = ("Logical", "Runtime")
ANNOTATOR = config.settings(StaticParams, "annotate", part=True)   # the pipeline's settings


def test_reference_finds_the_logical_errors_the_hidden_tests_find():
    """Stand-ins for predicted codes: the synthetic benchmark's wrong first submissions to five
    Python problems (what a simulator should predict). Judged once with the problem's tests and
    once with only its reference solution (tests hidden)."""
    from kaser.data.synth import generate
    problems, submissions = generate("python", 20, 5, 7)
    failing = found_all = detected = 0
    for row in problems.iter_rows(named=True):
        codes = (submissions.filter((pl.col("problem_id") == row["problem_id"]) & ~pl.col("correct"))
                 ["code"].unique(maintain_order=True).to_list())
        with_tests = judge_codes(row["statement"], "python", codes, tests=row["tests"],
                                 settings=ANNOTATOR)
        with_reference = judge_codes(row["statement"], "python", codes, reference=row["reference"],
                                     settings=ANNOTATOR)
        for code in codes:
            by_tests = {e["label"] for e in with_tests[code] if e["category"] in LOGIC}
            if not by_tests:      # passes the tests, or only a syntax error
                continue
            by_reference = {e["label"] for e in with_reference[code] if e["category"] in LOGIC}
            failing += 1
            found_all += by_tests <= by_reference
            detected += bool(by_reference)
    assert failing >= 20
    assert found_all / failing >= 0.8, (found_all, failing)   # the same labels, every one of them
    assert detected / failing >= 0.9, (detected, failing)     # a runtime / logical error at all


def test_without_reference_only_syntax_is_judged():
    wrong = "def add(a, b):\n    return a - b\n"
    assert judge_codes("Add a and b.", "python", [wrong], settings=ANNOTATOR) == {wrong: []}
    errors = judge_codes("Add a and b.", "python", [wrong],
                         reference="def add(a, b):\n    return a + b\n", settings=ANNOTATOR)
    assert {e["category"] for e in errors[wrong]} == {"Logical"}


def test_cli_reference_and_tests_are_used(simulate_workspace):
    (simulate_workspace / "solution.py").write_text("def total(xs):\n    return sum(xs)\n")
    (simulate_workspace / "tests.json").write_text(json.dumps([{"input": [[1, 2]], "expected": 3}]))
    run("--kcs", "loops", "--mastery", "loops=0.5", "-k", "2", "--reference", "solution.py",
        "--tests", "tests.json")
    simulation = json.loads((simulate_workspace / "sim" / "simulation.json").read_text())
    assert "reference solution and the given tests" in simulation["note"]
    assert len(simulation["profiles"][0]["samples"]) == 2
    # without --signature the prompt shows the reference solution's header
    assert simulation["problem"]["signature"] == "def total(xs):"


@pytest.mark.parametrize("content, message", [
    # not a list of cases
    ('{"input": [1]}', "expected a non-empty list"),
    # a case with the arguments not in a list
    ('[{"input": [1], "expected": 1}, {"input": 2, "expected": 2}]', "column input, row 2: input must be a list"),
    # a case with a key missing
    ('[{"input": [1]}]', "column input, row 1: each case is"),
])
def test_malformed_tests_file_names_the_row(tmp_path, content, message):
    from kaser import InputError
    (tmp_path / "t.json").write_text(content)
    with pytest.raises(InputError, match=message):
        read_tests(str(tmp_path / "t.json"))
