"""ProgSnap2 ingestion of any dialect (kaser.data.progsnap2): the ITAP sample and hand-made
dialects, problem tables, and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kaser import InputError
from kaser.cli import main as cli_main
from kaser.data.contracts import read_dataset
from kaser.data.progsnap2 import ingest_progsnap2, signature, statement_from_code
from csv_files import write_csv

ITAP = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "itap_python_sample"

ADD = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return a - b\n"
ADD_JAVA = "int add(int a, int b) {\n    return a + b;\n}"
ADD_JAVA_WRONG = "int add(int a, int b) {\n    return a - b;\n}"


def quiet(_line):
    pass


def ingest(root, **kwargs):
    return ingest_progsnap2(root, report=quiet, **kwargs)


def as_rows(submissions: pl.DataFrame):
    return sorted(submissions.select("student_id", "problem_id", "step", "score", "correct").rows())


# ---------------------------------------------------------------- the ITAP sample

@pytest.mark.skipif(not ITAP.is_dir(), reason=f"the ITAP sample is not at {ITAP} (a copy of shared/ "
                    "beside the clone, as in CI)")
def test_itap_sample_submit_events_correct_flags_and_signatures(tmp_path, capsys):
    cli_main(["ingest", "progsnap2", str(ITAP), "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    # every choice made from the data is printed once
    assert "submissions are Submit events" in printed and "Correct flags" in printed
    assert "14 such events without a value left out" in printed
    problems, submissions = read_dataset(tmp_path / "out")
    raw = pl.read_csv(ITAP / "MainTable.csv", infer_schema=False)
    submits = raw.filter((pl.col("EventType") == "Submit") & (pl.col("Correct") != "NA"))
    # one row per (student, problem) that has a scored Submit, never a hint request
    assert submissions.height == submits.select("SubjectID", "ProblemID").unique().height
    assert set(submissions["problem_id"]) <= set(submits["ProblemID"])
    assert problems["language"].unique().to_list() == ["python"]
    one_to_n = problems.filter(pl.col("problem_id") == "oneToN").row(0, named=True)
    assert one_to_n["statement"].startswith("Write the Python function oneToN(n).")
    assert all(problems["kcs"].list.len() > 0)
    metadata = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert metadata["kc_backend"] == "derived" and metadata["source"] == "progsnap2"


# ---------------------------------------------------------------- hand-made dialects

def score_dialect(root: Path) -> Path:
    """CodeWorkout-like: Data/ folder, Run.Program with Score, Submit without, Java tool."""
    header = ["EventType", "EventID", "Order", "SubjectID", "ToolInstances", "CodeStateID",
              "ProblemID", "Score"]
    rows = [["Run.Program", "e1", 3, "s1", "Java 8; CodeWorkout", "c2", "1", "1"],
            ["Run.Program", "e2", 1, "s1", "Java 8; CodeWorkout", "c1", "1", "0.5"],
            ["Submit", "e3", 2, "s1", "Java 8; CodeWorkout", "c1", "1", ""],
            ["Run.Program", "e4", 4, "s2", "Java 8; CodeWorkout", "c2", "1", "0.9"],
            ["Compile.Error", "e5", 0, "s2", "Java 8; CodeWorkout", "c1", "1", ""]]
    write_csv(root / "Data" / "MainTable.csv", header, rows)
    write_csv(root / "Data" / "CodeStates" / "CodeStates.csv", ["CodeStateID", "Code"],
              [["c1", ADD_JAVA_WRONG], ["c2", ADD_JAVA]])
    return root


def test_score_dialect_with_run_program(tmp_path):
    problems, submissions, choices = ingest(score_dialect(tmp_path))
    assert choices["events"] == ["Run.Program"]      # Submit has no score here
    # s1's first Run.Program is Order 1 (score 0.5); s2's 0.9 stays a partial score
    assert as_rows(submissions) == [("s1", "1", 0, 0.5, False), ("s2", "1", 0, 0.9, False)]
    assert problems.row(0, named=True)["language"] == "java"
    assert problems.row(0, named=True)["statement"].startswith("Write the Java method int add(int a, int b).")
    # a threshold makes 0.9 correct, stored as score 1
    _, submissions, _ = ingest(tmp_path, score_threshold=0.8)
    assert as_rows(submissions) == [("s1", "1", 0, 0.5, False), ("s2", "1", 0, 1.0, True)]


def assignment_dialect(root: Path) -> Path:
    """AssignmentID present; problem 'p' is in two assignments; ServerTimestamp only."""
    header = ["EventType", "SubjectID", "AssignmentID", "ProblemID", "CodeStateID",
              "ServerTimestamp", "ToolInstances", "Score"]
    rows = [["Submit", "s1", "A1", "p", "1", "2024-01-02T10:00:00", "Python 3", "1.0"],
            ["Submit", "s1", "A2", "p", "2", "2024-01-01T10:00:00", "Python 3", "0.0"],
            ["Submit", "s1", "A1", "q", "1", "2024-01-03T10:00:00", "Python 3", "1.0"],
            ["Submit", "s2", "A1", "p", "2", "2024-01-01T09:00:00", "Python 3", "0"]]
    write_csv(root / "MainTable.csv", header, rows)
    write_csv(root / "CodeStates" / "CodeStates.csv", ["CodeStateID", "Code"],
              [["1", ADD], ["2", ADD_WRONG]])
    return root


def test_assignment_dialect_keys_problems_by_assignment(tmp_path):
    _, submissions, choices = ingest(assignment_dialect(tmp_path))
    assert choices["problem_key"].startswith("AssignmentID/ProblemID")
    # s1: A2/p on Jan 1 (step 0), A1/p on Jan 2, A1/q on Jan 3
    assert as_rows(submissions) == [("s1", "A1/p", 1, 1.0, True), ("s1", "A1/q", 2, 1.0, True),
                                    ("s1", "A2/p", 0, 0.0, False), ("s2", "A1/p", 0, 0.0, False)]


def test_assignment_dialect_one_assignment_per_problem_keeps_problem_ids(tmp_path):
    root = assignment_dialect(tmp_path)
    table = pl.read_csv(root / "MainTable.csv", infer_schema=False)
    table.with_columns(pl.lit("A1").alias("AssignmentID")).write_csv(root / "MainTable.csv")
    _, submissions, choices = ingest(root)
    assert choices["problem_key"] == "ProblemID (each in one assignment)"
    assert sorted(submissions["problem_id"].unique()) == ["p", "q"]


def zero_one_dialect(root: Path) -> Path:
    """Correct as 0/1 (and NA), no ToolInstances: the language comes from a flag."""
    header = ["EventType", "Order", "SubjectID", "ProblemID", "CodeStateID", "Correct"]
    rows = [["Submit", 1, "s1", "add", "1", "NA"], ["Submit", 2, "s1", "add", "2", "0"],
            ["Submit", 3, "s1", "add", "1", "1"], ["Submit", 1, "s2", "add", "1", "1"],
            ["X-HintRequest", 0, "s3", "add", "2", "0"]]
    write_csv(root / "MainTable.csv", header, rows)
    write_csv(root / "CodeState.csv", ["CodeStateID", "Code"], [["1", ADD], ["2", ADD_WRONG]])
    return root


def test_correct_as_zero_one_with_language_flag(tmp_path):
    root = zero_one_dialect(tmp_path)
    with pytest.raises(InputError, match=r"MainTable.csv: column ToolInstances: .*--language"):
        ingest(root)
    problems, submissions, choices = ingest(root, language="python")
    assert choices["left_out_unscored"] == 1 and choices["events"] == ["Submit"]
    # the NA row is left out, so s1's first is the 0; s3 only asked for a hint
    assert as_rows(submissions) == [("s1", "add", 0, 0.0, False), ("s2", "add", 0, 1.0, True)]
    assert problems["kcs"].to_list() == [["arithmetic"]]   # from the correct code only


def test_problem_table_gives_statements_and_kcs(tmp_path):
    root = zero_one_dialect(tmp_path)
    write_csv(tmp_path / "problems.csv", ["id", "statement", "kcs"],
              [["add", "Return a plus b.", "arithmetic; functions"], ["sub", "Nobody tried.", ""]])
    problems, _, choices = ingest(root, problems_file=tmp_path / "problems.csv", language="python")
    assert problems.select("statement", "kcs").row(0) == ("Return a plus b.", ["arithmetic", "functions"])
    assert choices["kc_backend"] == "problem table"
    assert choices["table_rows_without_submissions"] == ["sub"]   # reported, not an error
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["ProblemID", "Requirement"])
    book.active.append(["add", "Add two numbers."])
    book.save(tmp_path / "problems.xlsx")
    problems, _, _ = ingest(root, problems_file=tmp_path / "problems.xlsx", language="python")
    # statement from the workbook, KCs still derived
    assert problems.select("statement", "kcs").row(0) == ("Add two numbers.", ["arithmetic"])


def test_starter_signature_from_the_problem_table_else_the_correct_first_submissions(tmp_path):
    root = zero_one_dialect(tmp_path)
    problems, _, choices = ingest(root, language="python")
    assert problems["signature"].to_list() == ["def add(a, b):"]
    assert choices["problems_with_table_signature"] == 0 and choices["problems_without_signature"] == 0
    # a table's signature wins (whitespace collapsed), and is what the problem keeps
    write_csv(tmp_path / "problems.csv", ["id", "signature"], [["add", "def add(x,\n        y):"]])
    problems, _, choices = ingest(root, problems_file=tmp_path / "problems.csv", language="python")
    assert problems["signature"].to_list() == ["def add(x, y):"]
    assert choices["problems_with_table_signature"] == 1


def test_signature_and_statement_from_code():
    assert signature("def f(x):\n    return g(x)\ndef g(y):\n    return y", "python") == "f(x)"
    assert signature("x = 1", "python") is None
    text = statement_from_code("p", ["def a(n):\n    pass", "def b(m):\n    pass", "def b(m): return 1"], "python")
    assert text.startswith("Write the Python function b(m).")


# ---------------------------------------------------------------- refusals: one line, exit 2

def _rewrite(path: Path, column: str, row: int, value: str) -> None:
    table = pl.read_csv(path, infer_schema=False)
    table = table.with_columns(pl.when(pl.int_range(pl.len()) == row - 1).then(pl.lit(value))
                               .otherwise(pl.col(column)).alias(column))
    table.write_csv(path)


@pytest.mark.parametrize("dialect, edit, pattern", [
    # a word that is not a truth value
    (zero_one_dialect, lambda r: _rewrite(r / "MainTable.csv", "Correct", 2, "maybe"),
     "MainTable.csv: column Correct, row 2: Correct must be"),
    # a score outside [0, 1]
    (assignment_dialect, lambda r: _rewrite(r / "MainTable.csv", "Score", 3, "5"),
     "MainTable.csv: column Score, row 3: score 5.0 is outside"),
    # a code state that is not in the code table
    (assignment_dialect, lambda r: _rewrite(r / "MainTable.csv", "CodeStateID", 4, "77"),
     "MainTable.csv: column CodeStateID, row 4: '77' has no code"),
    # a second language in one table
    (score_dialect, lambda r: _rewrite(r / "Data" / "MainTable.csv", "ToolInstances", 4, "Python 3"),
     "MainTable.csv: column ToolInstances, row 4: a second language"),
    # an empty student id
    (assignment_dialect, lambda r: _rewrite(r / "MainTable.csv", "SubjectID", 2, ""),
     "MainTable.csv: column SubjectID, row 2: empty SubjectID"),
    # an Order that cannot place an attempt: NaN, infinite, empty, or twice for one student and problem
    (score_dialect, lambda r: _rewrite(r / "Data" / "MainTable.csv", "Order", 1, "NaN"),
     "MainTable.csv: column Order, row 1: Order is empty, NaN or infinite"),
    (score_dialect, lambda r: _rewrite(r / "Data" / "MainTable.csv", "Order", 2, "inf"),
     "MainTable.csv: column Order, row 2: Order is empty, NaN or infinite"),
    (score_dialect, lambda r: _rewrite(r / "Data" / "MainTable.csv", "Order", 4, ""),
     "MainTable.csv: column Order, row 4: Order is empty, NaN or infinite"),
    (score_dialect, lambda r: _rewrite(r / "Data" / "MainTable.csv", "Order", 1, "1"),
     "MainTable.csv: column Order, row 2: Order 1 again for student 's1' on problem '1' (first at row 1)"),
    # no code table at all
    (assignment_dialect, lambda r: (r / "CodeStates" / "CodeStates.csv").unlink(),
     "no code-state table beside MainTable.csv"),
])
def test_malformed_dialects_exit_2_with_one_line(tmp_path, capsys, dialect, edit, pattern):
    root = dialect(tmp_path / "raw")
    edit(root)
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["ingest", "progsnap2", str(root), "--out", str(tmp_path / "out"), "--language", "python"]
                 if dialect is zero_one_dialect else
                 ["ingest", "progsnap2", str(root), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    assert pattern in error


def test_unknown_event_type_is_refused(tmp_path):
    with pytest.raises(InputError, match="event type 'Run.Program' not in the table; present: Submit"):
        ingest(assignment_dialect(tmp_path), events=["Run.Program"])


def test_prepare_stage_on_a_progsnap2_folder(tmp_path):
    import subprocess
    import sys
    repo = Path(__file__).resolve().parents[1]
    zero_one_dialect(tmp_path / "raw")
    write_csv(tmp_path / "raw" / "MainTable.csv", ["EventType", "Order", "SubjectID", "ProblemID",
                                                    "CodeStateID", "Correct"],
              [["Submit", i, f"s{i}", "add", "1" if i % 2 else "2", str(i % 2)] for i in range(1, 7)])
    (tmp_path / "params.yaml").write_text(
        "datasets:\n  ps:\n    source: progsnap2\n    raw: raw\n    language: python\n"
        "    events: [Submit]\nsplits:\n  folds: 1\n  seed: 0\n")
    done = subprocess.run([sys.executable, str(repo / "stages" / "prepare.py"), "ps"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    problems, submissions = read_dataset(tmp_path / "data" / "ps")
    assert submissions.height == 6 and submissions["correct"].sum() == 3
    metadata = json.loads((tmp_path / "data" / "ps" / "metadata.json").read_text())
    assert metadata["events"] == ["Submit"] and metadata["kc_backend"] == "derived"


def test_openai_kc_backend_asks_once_and_caches(tmp_path, monkeypatch):
    from fake_openai import KEY_ENV, SECRET, FakeOpenAI
    from kaser.llm import ChatClient
    from llm_settings import llm_settings

    fake = FakeOpenAI()
    fake.thread.start()
    monkeypatch.setenv(KEY_ENV, SECRET)
    root = zero_one_dialect(tmp_path / "raw")
    cfg = llm_settings(base_url=fake.url, api_key_env=KEY_ENV, backoff_s=0.001, max_retries=1)
    try:
        for _ in range(2):   # the second run is answered from the cache
            with ChatClient(*cfg, tmp_path / "cache.sqlite", progress=False) as client:
                problems, _, choices = ingest(root, language="python", kcs="openai", llm=client)
            assert problems["kcs"].to_list() == [["for loops", "string indexing"]]
            assert choices["kc_backend"] == "openai"
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
    assert len(fake.requests) == 1
    assert "def add(a, b)" in fake.requests[0]["prompt"]   # the correct code is shown


@pytest.mark.parametrize("code, language, expected", [
    # nested loops over a list, an accumulator
    ("def f(xs):\n    n = 0\n    for a in xs:\n        for b in xs:\n            n += a * b\n    return n",
     "python", {"For", "NestedFor", "Math+-*/", "Variables"}),
    # string indexing and a character comparison; a text-like parameter name
    ("def f(word):\n    return word[0] == 'a' and len(word) > 2", "python",
     {"StringIndex", "CharEqual", "StringLen", "LogicAndNotOr", "LogicCompareNum"}),
    # recursion with a conditional
    ("def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)", "python",
     {"If/Else", "LogicCompareNum", "Math+-*/", "Recursion"}),
    # Java: a while loop with modulo, an early return, a boolean flag
    ("boolean f(int n) {\n  boolean seen = false;\n  while (n > 0) {\n    if (n % 10 == 7) return true;\n"
     "    n = n / 10;\n  }\n  return seen;\n}", "java",
     {"While", "If/Else", "Math%", "Math+-*/", "LogicCompareNum", "LogicBoolean", "Return", "Variables"}),
    # Java: String equality and concatenation, an array index
    ("String f(String[] words, String w) {\n  if (words[0].equals(w)) return w + \"!\";\n  return \"\";\n}",
     "java", {"If/Else", "ArrayIndex", "StringEqual", "StringConcat"}),
])
def test_constructs_from_syntax_trees(code, language, expected):
    from kaser.data.derived_kcs import constructs
    assert constructs(code, language) == expected


def test_derived_kcs_need_a_share_of_the_correct_codes_and_rank_by_idf():
    from kaser.data.derived_kcs import derive_problem_kcs
    loop = "def f(n):\n    t = 0\n    for i in range(n):\n        t += i % 3\n    return t"
    plain = "def g(n):\n    return n % 2 == 0"
    kcs = derive_problem_kcs([("loop", [loop, loop, plain]), ("plain", [plain]), ("p3", [plain])],
                             "python", share=0.5, max_kcs=2)
    # modulo is in every problem, so it ranks below the loop problem's own constructs (for,
    # arithmetic, a variable: equal scores, ties by construct name)
    assert kcs["loop"] == ["arithmetic", "for loops"]
    assert kcs["plain"] == ["modulo", "numeric comparison"]


def test_reference_from_later_attempts_and_stray_backslash_removed(tmp_path):
    root = zero_one_dialect(tmp_path)
    # s3 gets it wrong first, then right with a code ending in the export's stray backslash
    write_csv(root / "MainTable.csv", ["EventType", "Order", "SubjectID", "ProblemID", "CodeStateID", "Correct"],
              [["Submit", 1, "s3", "add", "2", "FALSE"], ["Submit", 2, "s3", "add", "3", "TRUE"]])
    write_csv(root / "CodeState.csv", ["CodeStateID", "Code"],
              [["2", ADD_WRONG + "\\"], ["3", ADD.strip() + "\\"]])
    problems, submissions, choices = ingest(root, language="python")
    assert submissions["code"].to_list() == [ADD_WRONG]       # the stray backslash is gone
    assert choices["stray_backslashes_removed"] == 1
    # nobody's first submission is correct, yet the later correct attempt is the reference
    assert problems["reference"].to_list() == [ADD.strip()]


@pytest.mark.parametrize("header, rows, pattern", [
    # no id column at all
    (["name", "statement"], [["add", "x"]], r"problems.csv: column problem_id: no id column"),
    # an id given twice
    (["id", "statement"], [["add", "x"], ["add", "y"]], r"problems.csv: column id, row 2: duplicate id"),
    # neither statements nor KCs
    (["id", "notes"], [["add", "x"]], r"problems.csv: column statement: none of a statement"),
])
def test_malformed_problem_table(tmp_path, header, rows, pattern):
    root = zero_one_dialect(tmp_path / "raw")
    write_csv(tmp_path / "problems.csv", header, rows)
    with pytest.raises(InputError, match=pattern):
        ingest(root, problems_file=tmp_path / "problems.csv", language="python")
