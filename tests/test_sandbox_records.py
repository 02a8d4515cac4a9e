"""What a program's result records may hold: the supervisor keeps its own verdict whatever comes back.

Each hostile program runs between a right and a wrong answer in one worker (tests/test_sandbox.py's
`run_beside`), so a crash of the batch or a neighbour's changed verdict fails the test. A program
writes its own records through fd 3 (no escape from the audit hook is needed: os.write is not
audited), which the Python worker passes on for the program's own steps only; a record that fails
the schema becomes the program's "invalid" verdict, and its text fields are cut at
Limits.output_chars and made encodable.
"""

import shutil

import pytest

from kaser.code.sandbox import Limits, run_tests
from test_sandbox import FAST, TESTS, run_beside, statuses

needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
ONE_WORKER = Limits(case_timeout_s=1.0, workers=1)


def own_records(fields: str) -> str:
    """A Python program that writes `fields` (a Python dict literal) as its record for cases 0 and 1."""
    return ("import os, json\ndef add(a, b):\n"
            f"    for c in (0, 1):\n        os.write(3, (json.dumps({{'c': c, **{fields}}}) + '\\n').encode())\n"
            "    return a + b\n")


def encodable(result) -> bool:
    """Every text of every case can be written as UTF-8 (a parquet table needs that)."""
    texts = [t for c in result.cases for t in (c.actual, c.exception, c.detail, c.output) if t is not None]
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_python_deeply_nested_return_value_is_invalid_not_a_crash():
    code = ("import sys\nsys.setrecursionlimit(20000)\ndef add(a, b):\n    v = a + b\n"
            "    for _ in range(5000):\n        v = [v]\n    return v\n")
    result = run_beside("python", code, limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["invalid"] * 2
    assert "nested" in result.cases[0].detail and result.cases[0].actual is None


@pytest.mark.java
@needs_jdk
def test_java_deeply_nested_return_value_is_invalid_not_a_crash():
    code = ("public Object add(int a, int b) {\n    Object v = a + b;\n"
            "    for (int i = 0; i < 3000; i++) v = java.util.List.of(v);\n    return v;\n}")
    right, wrong = ("public Object add(int a, int b) {\n    return a + b;\n}",
                    "public Object add(int a, int b) {\n    return a - b;\n}")
    first, result, last = run_tests("java", "add", [right, code, wrong], TESTS, ONE_WORKER)
    assert [c.status for c in first.cases] == ["pass"] * 2 and [c.status for c in last.cases] == ["fail"] * 2
    assert [c.status for c in result.cases] == ["invalid"] * 2


def test_lone_surrogate_in_an_exception_message_is_kept_encodable():
    result = run_beside("python", "def add(a, b):\n    raise ValueError('bad \\ud800 end')\n", limits=ONE_WORKER)
    assert statuses(result) == [("exception", "ValueError")] * 2
    assert encodable(result) and "bad" in result.cases[0].detail and "end" in result.cases[0].detail


def test_lone_surrogate_in_an_own_returned_json_text_is_judged_and_kept_encodable():
    # the JSON text of "actual" holds a raw lone surrogate once the record is decoded
    fields = "{'status': 'returned', 'actual': json.dumps('x\\ud800', ensure_ascii=False)}"
    result = run_beside("python", own_records(fields), limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["fail"] * 2 and encodable(result)
    assert result.cases[0].actual == '"x\\ud800"'   # the same JSON value, its surrogate escaped


@pytest.mark.parametrize("fields, why", [
    ("{'status': 'exception', 'exception': 5, 'detail': 'x'}", "exception"),    # not a type name
    ("{'status': 'exception', 'exception': 'E' * 5000}", "exception"),          # not a type name either
    ("{'status': ['returned'], 'actual': '3'}", "status"),                      # status not a string
    ("{'status': 'pwned', 'actual': '3'}", "status"),                           # unknown status
    ("{'status': 'returned', 'actual': 3}", "actual"),                          # actual not JSON text
    ("{'status': 'returned', 'actual': '3', 'output': {'a': 1}}", "output"),    # output not text
    ("{'status': 'returned', 'actual': '3', 'detail': 7}", "detail"),           # detail not text
    ("{'status': 'returned', 'actual': '[' * 3000 + ']' * 3000}", "nested"),    # too deep to judge
    ("{'status': 'returned', 'actual': '1' * 300000}", "large"),                # over 100 x output_chars
])
def test_own_record_that_fails_the_schema_is_that_programs_invalid_verdict(fields, why):
    result = run_beside("python", own_records(fields), limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["invalid"] * 2, result.cases
    assert why in result.cases[0].detail and len(result.cases[0].detail) <= ONE_WORKER.output_chars


def test_own_record_nested_deeper_than_a_parser_goes_is_invalid():
    # the record itself (not a JSON text inside it) is 5,000 levels deep
    code = ("import os\ndef add(a, b):\n    for c in (0, 1):\n"
            "        os.write(3, ('{\"c\": %d, \"status\": \"exception\", \"detail\": ' % c + '[' * 5000 + ']' * 5000"
            " + '}\\n').encode())\n    return a + b\n")
    result = run_beside("python", code, limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["invalid"] * 2, result.cases


def test_own_record_output_and_detail_are_cut_at_the_output_cap():
    fields = "{'status': 'exception', 'exception': 'ValueError', 'output': 'o' * (3 << 20), 'detail': 'd' * (600 << 10)}"
    result = run_beside("python", own_records(fields), limits=ONE_WORKER)
    assert statuses(result) == [("exception", "ValueError")] * 2
    for case in result.cases:
        assert 0 < len(case.output) <= FAST.output_chars and 0 < len(case.detail) <= FAST.output_chars


def test_invalid_own_load_record_blames_every_case():
    code = ("import os, json\nos.write(3, (json.dumps({'loaded': False, 'status': 'exception', 'exception': 5})"
            " + '\\n').encode())\ndef add(a, b):\n    return a + b\n")
    result = run_beside("python", code, limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["invalid"] * 2, result.cases


@pytest.mark.java
@needs_jdk
def test_java_exception_of_an_anonymous_class_is_an_exception_not_invalid():
    # getSimpleName() of an anonymous class is "": no type name, but a real exception
    code = "public int add(int a, int b) {\n    throw new RuntimeException(\"boom\") { };\n}"
    result = run_beside("java", code, limits=ONE_WORKER)
    assert [(c.status, c.exception) for c in result.cases] == [("exception", None)] * 2


@pytest.mark.parametrize("returned", ["10 ** 400", "-(10 ** 400)"])
def test_an_integer_beyond_float_range_is_a_wrong_answer_not_a_crash(returned):
    # comparing 10**400 with an expected int as floats overflows
    code = f"def add(a, b):\n    return {returned}\n"
    result = run_beside("python", code, limits=ONE_WORKER)
    assert [c.status for c in result.cases] == ["fail"] * 2
