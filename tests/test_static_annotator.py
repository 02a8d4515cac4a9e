"""The static annotator on hand-written buggy programs for bank problems (kaser.errors.static_annotator).

Each table row is a student program and the labels it must get; the programs of a language run
in one annotator call (one sandbox batch per round), as the stage runs them.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace

import pytest

from kaser import config
from kaser.errors.compile_errors import bracket_balance, java_compile_errors, python_syntax_pass
from kaser.errors.generated_tests import entry_signature, generate_inputs, python_kinds
from kaser.code.sandbox import Diagnostic
from kaser.errors.static_annotator import (StaticParams, annotate_programs, annotate_static, exception_label,
                                    problem_specs)
from kaser.data.synth.bank import load_bank

JAVA_BANK, PYTHON_BANK = load_bank("java"), load_bank("python")
ANNOTATOR = config.settings(StaticParams, "annotate", part=True)   # the pipeline's settings

needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")


def row(problem, language: str, tests: bool = True, reference: bool = True) -> dict:
    """A problems.parquet row of a bank problem."""
    return {"problem_id": problem.problem_id, "language": language, "statement": problem.statement,
            "kcs": list(problem.kcs), "reference": problem.references[0] if reference else None,
            "tests": [{"input": json.dumps(list(a)), "expected": json.dumps(e)} for a, e in problem.tests]
            if tests else None}


def bank(problems, problem_id):
    return next(p for p in problems if p.problem_id == problem_id)


# ---------------------------------------------------------------- Python

PY_EVENS = bank(PYTHON_BANK, "python_count_evens")
PY_HIKE = bank(PYTHON_BANK, "python_can_hike")
EVENS = PY_EVENS.references[0]
HIKE = PY_HIKE.references[0]

PYTHON_CASES = [
    (PY_EVENS, EVENS, set()),                                                          # correct
    (PY_EVENS, EVENS.replace("range(len(nums))", "range(len(nums) + 1)"), {"Index out of bounds"}),
    (PY_EVENS, EVENS.replace("range(len(nums))", "range(1, len(nums))"), {"Off-by-one error"}),
    (PY_EVENS, EVENS.replace("count = 0", "count = 1"), {"Incorrect initialization"}),
    (PY_EVENS, EVENS.replace("% 2 == 0", "% 2 != 0"), {"Wrong comparison operator"}),
    (PY_EVENS, EVENS.replace("range(len(nums)):", "range(len(nums))"), {"Missing colon"}),
    # a syntax error hides the off-by-one: the repaired program still shows it
    (PY_EVENS, EVENS.replace("range(len(nums)):", "range(1, len(nums))"), {"Missing colon", "Off-by-one error"}),
    (PY_EVENS, EVENS.replace("    count = 0\n", ""), {"Uninitialized variable"}),      # UnboundLocalError
    (PY_EVENS, EVENS.replace("count += 1", "Count += 1"), {"Undefined variable"}),     # NameError
    (PY_EVENS, EVENS.replace("    return count\n", ""), {"Missing return statement"}),  # returns None
    (PY_EVENS, EVENS.replace("    return count", "      return count"), {"Indentation error"}),
    (PY_HIKE, HIKE.replace("temp >= 20 and temp <= 25", "temp >= 20 or temp <= 25"), {"Wrong boolean operator"}),
    (PY_HIKE, HIKE.replace("if raining:", "if raining = True:"), {"Confusing assignment with equality"}),
    # the function the tests call (called_function): a correct code under another name has the
    # wrong name as its only error, and a renamed code's bug is still found
    (PY_HIKE, HIKE.replace("def can_hike", "def go_hiking"), {"Wrong function name"}),
    (PY_HIKE, HIKE.replace("def can_hike", "def go_hiking").replace("temp >= 20 and temp <= 25", "temp >= 20 or temp <= 25"),
     {"Wrong function name", "Wrong boolean operator"}),
    # a helper the renamed function calls is not what the tests mean: the renamed one runs
    (PY_HIKE, "def in_range(t, low, high):\n    return t >= low and t <= high\n\n\ndef go_hiking(temp, raining):\n"
              "    if raining:\n        return in_range(temp, 20, 25)\n    return temp >= 10 or temp <= 30\n",
     {"Wrong function name", "Wrong boolean operator"}),
    # two functions the tests could mean: neither is run, so the bug in both stays unknown
    (PY_HIKE, HIKE.replace("def can_hike", "def go_hiking").replace("temp >= 20 and temp <= 25", "temp >= 20 or temp <= 25")
     + "\n\ndef other(a, b):\n    return a or b\n", {"Wrong function name"}),
    # one function, but not taking the tests' two arguments: not run (no Type mismatch)
    (PY_HIKE, "def go_hiking(temp):\n    return temp > 10\n", {"Wrong function name"}),
]


@pytest.fixture(scope="module")
def python_found():
    problems = [PY_EVENS, PY_HIKE]
    programs = [[code for p, code, _ in PYTHON_CASES if p is problem] for problem in problems]
    specs = problem_specs([row(p, "python") for p in problems], programs, [[p.references[0]] for p in problems],
                          ANNOTATOR)
    found = annotate_programs(specs, programs, ANNOTATOR)
    return {code: {e.label for e in errors} for codes, per in zip(programs, found) for code, errors in zip(codes, per)}


@pytest.mark.parametrize("problem, code, expected", PYTHON_CASES,
                         ids=[f"py{i}-{sorted(e)}" for i, (_, _, e) in enumerate(PYTHON_CASES)])
def test_python_labels(python_found, problem, code, expected):
    assert python_found[code] == expected


def test_a_wrong_name_is_a_runtime_error_with_its_evidence():
    # not Syntax: the code parses, so it stays valid (kaser.errors.judge); the evidence says
    # which function the tests ran against
    [errors] = annotate_static(row(PY_HIKE, "python"), [HIKE.replace("def can_hike", "def go_hiking")],
                               settings=ANNOTATOR)
    assert [(e.category, e.label) for e in errors] == [("Runtime", "Wrong function name")]
    assert errors[0].evidence == "defines go_hiking where the tests call can_hike; the tests ran against go_hiking"
    # with no function the tests could mean, every test fails to find the entry: the same label
    [errors] = annotate_static(row(PY_HIKE, "python"), ["x = 1\n"], settings=ANNOTATOR)
    assert [(e.category, e.label) for e in errors] == [("Runtime", "Wrong function name")]


def test_the_signature_names_the_entry():
    # a problem's starter signature decides which function the tests call, not its references
    problem = row(PY_HIKE, "python") | {"signature": "def go_hiking(temp, raining):"}
    [spec] = problem_specs([problem], [[]], [[]], ANNOTATOR)
    assert spec.entry == "go_hiking"
    [errors] = annotate_static(problem, [HIKE], settings=ANNOTATOR)       # the reference's name is now the wrong one
    assert [e.label for e in errors] == ["Wrong function name"]


def test_errors_carry_category_and_evidence():
    code = EVENS.replace("range(len(nums))", "range(1, len(nums))")
    [[error]] = annotate_static(row(PY_EVENS, "python"), [code], settings=ANNOTATOR)
    assert (error.category, error.label) == ("Logical", "Off-by-one error")
    assert error.evidence.startswith("line 3: `1` -> `0`") and "wrong answers right" in error.evidence


def test_problem_without_tests_is_tested_against_a_correct_submission():
    # real CodeWorkout: no tests and no reference; a score-1 submission answers generated inputs
    problem = row(PY_EVENS, "python", tests=False, reference=False)
    correct = PY_EVENS.references[1]
    buggy = EVENS.replace("range(len(nums))", "range(1, len(nums))")
    found = annotate_static(problem, [EVENS, buggy, correct], correct_programs=[correct],
                            settings=ANNOTATOR)
    assert [{e.label for e in errors} for errors in found] == [set(), {"Off-by-one error"}, set()]
    assert "on input" in found[1][0].evidence or "wrong answers right" in found[1][0].evidence


def test_an_answer_that_cannot_be_judged_is_wrong():
    # a 5,000-deep returned list, or a forged record, is the case's "invalid" verdict: no right answer
    deep = ("def count_evens(nums):\n    import sys\n    sys.setrecursionlimit(20000)\n    value = None\n"
            "    for _ in range(5000):\n        value = [value]\n    return value\n")
    forged = ("def count_evens(nums):\n    import os, json\n    for c in range(50):\n"
              "        os.write(3, (json.dumps({'c': c, 'status': 'returned', 'actual': 5}) + '\\n').encode())\n"
              "    return 0\n")
    found = annotate_static(row(PY_EVENS, "python"), [deep, forged], settings=ANNOTATOR)
    for errors in found:   # the label is the nearest fit for a wrong answer; what counts is that there is one
        assert [e.category for e in errors] == ["Logical"], errors
        assert "invalid output" in errors[0].evidence, errors


def test_infinite_loop_is_labelled_without_hanging():
    hostile = "def count_evens(nums):\n    while True:\n        pass\n"
    start = time.perf_counter()
    [errors] = annotate_static(row(PY_EVENS, "python"), [hostile], settings=replace(ANNOTATOR, case_timeout_s=0.3))
    assert {e.label for e in errors} == {"Infinite loop"}
    assert time.perf_counter() - start < 30


# ---------------------------------------------------------------- Java

J_EVENS = bank(JAVA_BANK, "java_count_evens")
J_HALF = bank(JAVA_BANK, "java_first_half")
J_LOGIN = bank(JAVA_BANK, "java_login_allowed")
JEVENS = J_EVENS.references[0]

JAVA_CASES = [
    (J_EVENS, JEVENS, set()),                                                           # correct
    (J_EVENS, JEVENS.replace("count++;", "count++"), {"Missing semicolon"}),
    (J_EVENS, JEVENS.replace("i < nums.length", "i <= nums.length"), {"Index out of bounds"}),
    (J_EVENS, JEVENS.replace("int i = 0", "int i = 1"), {"Off-by-one error"}),
    (J_EVENS, JEVENS.replace("count++;", "Count++;"), {"Undefined variable"}),
    (J_EVENS, JEVENS.replace("int count = 0;", "int count;"), {"Uninitialized variable"}),
    (J_EVENS, JEVENS.replace("count++;\n        }", "count++;\n"), {"Unbalanced braces"}),
    (J_EVENS, JEVENS.replace("% 2 == 0", "% 2 = 0"), {"Confusing assignment with equality"}),
    (J_EVENS, JEVENS.replace("    return count;\n", ""), {"Missing return statement"}),
    (J_EVENS, JEVENS.replace("int count = 0;", "String count = 0;"), {"Type mismatch"}),
    # the missing ';' hides the off-by-one until it is put back
    (J_EVENS, JEVENS.replace("count++;", "count++").replace("int i = 0", "int i = 1"),
     {"Missing semicolon", "Off-by-one error"}),
    (J_EVENS, JEVENS.replace("return count;", "return count;\n    System.out.println(count);"),
     {"Unreachable code"}),
    (J_HALF, J_HALF.references[0].replace("substring(0, half)", "substring(0)"), {"Wrong string method"}),
    (J_LOGIN, J_LOGIN.references[0].replace('user.equals("admin")', 'user == "admin"'),
     {"String comparison with =="}),
    (J_EVENS, "public int countEvens(int[] nums) {\n    int count = 0;\n    int i = 0;\n    while (i < nums.length) {\n"
              "        if (nums[i] % 2 == 0) { count++; }\n    }\n    return count;\n}\n", {"Infinite loop"}),
    # another name: the wrong name is one error, the behaviour is still judged (called_function)
    (J_EVENS, JEVENS.replace("countEvens", "countEven"), {"Wrong function name"}),
    # ... even beside a main method, which no test means
    (J_EVENS, JEVENS.replace("countEvens", "evens").replace("int i = 0", "int i = 1")
     + "\npublic static void main(String[] args) {\n}\n", {"Wrong function name", "Off-by-one error"}),
]


@pytest.fixture(scope="module")
def java_found():
    problems = [J_EVENS, J_HALF, J_LOGIN]
    programs = [[code for p, code, _ in JAVA_CASES if p is problem] for problem in problems]
    specs = problem_specs([row(p, "java") for p in problems], programs, [[p.references[0]] for p in problems],
                          ANNOTATOR)
    found = annotate_programs(specs, programs, replace(ANNOTATOR, case_timeout_s=0.3))
    return {code: {e.label for e in errors} for codes, per in zip(programs, found) for code, errors in zip(codes, per)}


@pytest.mark.java
@needs_jdk
@pytest.mark.parametrize("problem, code, expected", JAVA_CASES,
                         ids=[f"java{i}-{sorted(e)}" for i, (_, _, e) in enumerate(JAVA_CASES)])
def test_java_labels(java_found, problem, code, expected):
    assert java_found[code] == expected


# ---------------------------------------------------------------- rules without running anything

@pytest.mark.parametrize("message, detail, code, expected", [
    ("';' expected", "", "int f() { return 1 }", "Missing semicolon"),
    ("reached end of file while parsing", "", "int f() { if (a) { return 1; }", "Unbalanced braces"),
    ("')' expected", "", "int f() { return (1; }", "Unbalanced parentheses"),
    ("cannot find symbol", "symbol:   variable Count", "int f() { return Count; }", "Undefined variable"),
    ("cannot find symbol", "symbol:   method lenght()", "int f(String s) { return s.lenght(); }", "Undefined method"),
    ("incompatible types: int cannot be converted to boolean", "", "boolean f(int x) {\n if (x = 5) return true; }",
     "Type mismatch"),   # the `=` is on line 2, the message names line 1
    ("variable n might not have been initialized", "", "int f() { int n; return n; }", "Uninitialized variable"),
    ("unreachable statement", "", "int f() { return 1; f(); }", "Unreachable code"),
    ("missing return statement", "", "int f() { }", "Missing return statement"),
    ("not a statement", "", "int f() { 1 + 1; return 0; }", "Syntax error"),      # no rule: generic
])
def test_javac_message_rules(message, detail, code, expected):
    labels = [label for label, _ in java_compile_errors(code, [Diagnostic(1, message, detail)])]
    assert labels[0] == expected


def test_assignment_in_condition_wins_over_type_mismatch():
    code = "boolean f(int x) { if (x = 5) return true; return false; }"
    diagnostics = [Diagnostic(1, "incompatible types: int cannot be converted to boolean")]
    assert java_compile_errors(code, diagnostics)[0][0] == "Confusing assignment with equality"


@pytest.mark.parametrize("code, labels, parses", [
    ("def f(a):\n    if a > 1\n        return 1\n    return 0\n", ["Missing colon"], True),
    ("def f(a):\n    x = max(a, 2\n    return x\n", ["Unbalanced parentheses"], True),
    ("def f(a):\n    if a:\n    return 1\n    return 0\n", ["Indentation error"], True),
    ("def f(a):\n    if a = 1:\n        return 1\n    return 0\n", ["Confusing assignment with equality"], True),
    # two errors, one at a time, as Python reports them
    ("def f(a)\n    if a > 1\n        return 1\n    return 0\n", ["Missing colon", "Missing colon"], True),
    ("def f(a):\n    return a\n", [], True),
])
def test_python_syntax_pass(code, labels, parses):
    found, programs = python_syntax_pass(code)
    assert [label for label, _ in found] == labels
    assert bool(programs) == parses


@pytest.mark.parametrize("exception, detail, language, label", [
    ("ArrayIndexOutOfBoundsException", "Index 5 out of bounds", "java", "Index out of bounds"),
    ("ArithmeticException", "/ by zero", "java", "Division by zero"),
    ("ZeroDivisionError", "division by zero", "python", "Division by zero"),
    ("NameError", "name 'Count' is not defined", "python", "Undefined variable"),
    ("UnboundLocalError", "cannot access local variable 'total'", "python", "Uninitialized variable"),
    ("TypeError", "list indices must be integers", "python", "Type mismatch"),
    ("RecursionError", "maximum recursion depth", "python", "Infinite loop"),
    ("IllegalStateException", "", "java", "Uncaught IllegalStateException"),          # no rule: generic
])
def test_exception_labels(exception, detail, language, label):
    assert exception_label(exception, detail, language) == label


def test_bracket_balance_ignores_strings_and_comments():
    assert bracket_balance('s = "((" // )\nint f() { return (1); }', "java") == {"()": 0, "{}": 0, "[]": 0}


def test_generated_inputs_cover_boundaries_and_reference_literals():
    signature = entry_signature(JEVENS, "java")
    assert signature == ("countEvens", ["int[]"])
    inputs = generate_inputs(["int[]"], JEVENS, 30, seed=1)
    assert [] in [a[0] for a in inputs] and len(inputs) == 30
    assert generate_inputs(["int[]"], JEVENS, 30, seed=1) == inputs          # deterministic
    numbers = generate_inputs(["int"], "if (n == 13) return 0;", 40, seed=0)
    assert {12, 13, 14} <= {a[0] for a in numbers}                           # around the literal
    assert python_kinds("def f(nums, word):\n    return len(nums) + word.upper()", ["nums", "word"])[1][0] == "str"


@pytest.mark.parametrize("language, problem, broken", [
    ("python", PY_EVENS, EVENS.replace("range(len(nums)):", "range(len(nums))")),
    pytest.param("java", J_EVENS, JEVENS.replace("count++;", "count++"), marks=[pytest.mark.java, needs_jdk]),
])
def test_without_tests_or_references_syntax_is_still_checked(language, problem, broken):
    # nothing to run the code against: compile only
    label = {"python": "Missing colon", "java": "Missing semicolon"}[language]
    found = annotate_static(row(problem, language, tests=False, reference=False), [broken, problem.references[0]],
                            settings=ANNOTATOR)
    assert [{e.label for e in errors} for errors in found] == [{label}, set()]
