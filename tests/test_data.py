"""Datasets: contracts, CodeWorkout / FalconCode ingestion from fixture folders (tests/release_files.py),
folds, CLI, stage."""

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from kaser import InputError
from kaser.cli import main as cli_main
from kaser.data.contracts import (PROBLEM_SCHEMA, SUBMISSION_SCHEMA, kc_vocabulary, make_folds, read_dataset,
                        read_folds, validate_problems, validate_submissions, write_dataset,
                        write_folds)
from kaser.data.contracts import MAX_CELL_CHARS
from kaser.data.ingest import CODEWORKOUT_CONCEPTS, html_to_text, ingest_codeworkout, ingest_falconcode
from kaser.data.strict_csv import check_csv
from csv_files import write_csv
from release_files import (CODES, EVENTS, FALCON_PROBLEMS, FALCON_RUNS, MAIN_COLUMNS, SOURCES,
                           codeworkout, falconcode, main_rows, problem_rows)

REPO = Path(__file__).resolve().parents[1]

# (student, problem, step, code state, score) worked out by hand from EVENTS
EXPECTED_CW = [("101", "1", 1, "c4", 1.0), ("101", "2", 0, "c1", 0.5), ("101", "3", 2, "c8", 1.0),
               ("102", "1", 0, "c5", 0.0), ("102", "3", 1, "c7", 0.25)]


def as_rows(submissions):
    return sorted(submissions.select("student_id", "problem_id", "step", "code", "score")
                  .iter_rows())


def test_codeworkout_first_submissions_steps_and_kcs(tmp_path):
    problems, submissions = ingest_codeworkout(codeworkout(tmp_path))
    assert as_rows(submissions) == [(s, p, n, CODES[c], x) for s, p, n, c, x in EXPECTED_CW]
    assert submissions["correct"].to_list() == [x == 1.0 for x in submissions["score"]]
    # problem 4 has no submission and is dropped; KCs are the concept columns set to 1
    kcs = dict(problems.select("problem_id", "kcs").iter_rows())
    assert kcs == {"1": ["If/Else", "Math%"], "2": ["Math+-*/"], "3": []}
    assert problems.filter(pl.col("problem_id") == "1")["statement"][0] == "Return the value\nof a."
    assert problems["language"].unique().to_list() == ["java"]
    assert problems["tests"].null_count() == problems["reference"].null_count() == 3
    # the starter signature: the header of the correct first submissions (problem 1: student 101's
    # `int g` wins over 102's wrong `String g`), else of all first submissions (problem 2)
    signatures = dict(problems.select("problem_id", "signature").iter_rows())
    assert signatures == {"1": "public int g(int a)", "2": "public int f(int a)", "3": "public int h()"}


def test_codeworkout_windows_line_ends_and_byte_order_mark(tmp_path):
    root = codeworkout(tmp_path)
    for path in (root / "Data" / "MainTable.csv", root / "Data" / "CodeStates" / "CodeStates.csv",
                 root / "problems.csv"):
        text = path.read_text().replace("\r\n", "\n").replace("\n", "\r\n")
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    problems, submissions = ingest_codeworkout(root)
    assert as_rows(submissions) == [(s, p, n, CODES[c], x) for s, p, n, c, x in EXPECTED_CW]
    assert "Return the value\nof a." in problems["statement"].to_list()


def test_codeworkout_without_order_uses_timestamps(tmp_path):
    # drop Order: the timestamps put student 101's problem 2 run (10:00:05) first, as Order does
    rows = [[r[0], *r[1:]] for r in main_rows()]
    header = [c for c in MAIN_COLUMNS if c != "Order"]
    root = codeworkout(tmp_path)
    write_csv(root / "Data" / "MainTable.csv", header, [r[1:] for r in rows])
    _, submissions = ingest_codeworkout(root)
    assert as_rows(submissions) == [(s, p, n, CODES[c], x) for s, p, n, c, x in EXPECTED_CW]


def test_codeworkout_order_wins_over_timestamps(tmp_path):
    # Order says 101 did problem 3 first although its timestamp is the latest
    events = [list(e) for e in EVENTS]
    events[8][0] = 0
    root = codeworkout(tmp_path, events_rows=main_rows([tuple(e) for e in events]))
    _, submissions = ingest_codeworkout(root)
    steps = dict(((s, p), n) for s, p, n, *_ in as_rows(submissions))
    assert [steps["101", p] for p in "321"] == [0, 1, 2]


def test_codeworkout_xlsx_problem_table(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    root = codeworkout(tmp_path)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["AssignmentID", "ProblemID", "Requirement", *CODEWORKOUT_CONCEPTS])
    for row in problem_rows():   # numbers as numbers, as Excel stores them
        sheet.append([row[0], int(row[1]), row[2], *(int(v) if v else None for v in row[3:])])
    book.save(tmp_path / "table.xlsx")
    problems, submissions = ingest_codeworkout(root, problems_file=tmp_path / "table.xlsx")
    assert dict(problems.select("problem_id", "kcs").iter_rows())["1"] == ["If/Else", "Math%"]
    assert submissions.height == len(EXPECTED_CW)


def test_codeworkout_kc_file(tmp_path):
    root = codeworkout(tmp_path)
    kc = {"Return the value of  a.": [["Return a parameter", "Method Return Values"],
                                      ["Use a variable", "Variable Scope"]],
          "Add one to a.": [["Add integers", "Integer Operations"]],
          "  Return two.": [["Return a constant", "Method Return Values"]]}
    (tmp_path / "problem_kc.json").write_text(json.dumps(kc))
    problems, _ = ingest_codeworkout(root, kc_file=tmp_path / "problem_kc.json")
    kcs = dict(problems.select("problem_id", "kcs").iter_rows())
    assert kcs == {"1": ["Return a parameter", "Use a variable"], "2": ["Add integers"],
                   "3": ["Return a constant"]}
    problems, _ = ingest_codeworkout(root, kc_file=tmp_path / "problem_kc.json", kc_level="cluster")
    assert kc_vocabulary(problems) == ["Integer Operations", "Method Return Values",
                                       "Variable Scope"]
    del kc["Add one to a."]
    (tmp_path / "problem_kc.json").write_text(json.dumps(kc))
    with pytest.raises(InputError, match=r"problem_kc.json: no entry for problem 2 \(.*row 2\)"):
        ingest_codeworkout(root, kc_file=tmp_path / "problem_kc.json")


def edit_event(i, column, value):
    rows = main_rows()
    rows[i][MAIN_COLUMNS.index(column)] = value
    return rows


# (what is wrong, fixture change, expected message pattern); rows count data rows from 1
CODEWORKOUT_ERRORS = [
    ("no MainTable", lambda r: (r / "Data" / "MainTable.csv").unlink(), r"MainTable.csv: not found"),
    ("no Score column", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS[:-3],
                                            [row[:-3] for row in main_rows()]),
     r"MainTable.csv: column Score: missing column"),
    ("unknown problem (file row 3 is Order 6)", lambda r: write_csv(
        r / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(2, "ProblemID", "99")),
     r"MainTable.csv: column ProblemID, row 3: ProblemID '99' is not in .*problems.csv"),
    ("code state without code", lambda r: write_csv(
        r / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(4, "CodeStateID", "c404")),
     r"MainTable.csv: column CodeStateID, row 5: 'c404' has no code"),
    ("blank code (c7 is file row 5)", lambda r: write_csv(
        r / "Data" / "CodeStates" / "CodeStates.csv", ["CodeStateID", "Code"],
        dict(CODES, c7="  \n ").items()), r"MainTable.csv: column CodeStateID, row 5: 'c7' has no code"),
    ("one code state, two codes", lambda r: write_csv(
        r / "Data" / "CodeStates" / "CodeStates.csv", ["CodeStateID", "Code"],
        [*CODES.items(), ("c1", "other")]),
     r"CodeStates.csv: column CodeStateID, row 10: the same id appears with two different codes"),
    ("score above 1", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS,
                                          edit_event(0, "Score", "1.5")),
     r"MainTable.csv: column Score, row 1: score 1.5 is outside \[0, 1\]"),
    ("score not a number", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS,
                                               edit_event(3, "Score", "high")),
     r"MainTable.csv: column Score, row 4: not a number: 'high'"),
    ("no scored runs", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS,
                                           [row for row in main_rows() if row[11] == ""]),
     r"MainTable.csv: column EventType: no Run.Program events with a Score"),
    ("concept column missing", lambda r: write_csv(
        r / "problems.csv", ["AssignmentID", "ProblemID", "Requirement", *CODEWORKOUT_CONCEPTS[:2]],
        [row[:5] for row in problem_rows()]), r"problems.csv: column While: missing column"),
    ("concept flag 2", lambda r: write_csv(
        r / "problems.csv", ["AssignmentID", "ProblemID", "Requirement", *CODEWORKOUT_CONCEPTS],
        [row[:3] + ["2"] + row[4:] if row[1] == "3" else row for row in problem_rows()]),
     r"problems.csv: column If/Else, row 3: concept flag must be 0 or 1"),
    ("duplicate problem", lambda r: write_csv(
        r / "problems.csv", ["AssignmentID", "ProblemID", "Requirement", *CODEWORKOUT_CONCEPTS],
        problem_rows() + problem_rows()[:1]), r"problems.csv: column ProblemID, row 5: duplicate"),
    # an Order that cannot place an attempt: NaN, infinite, empty, or twice for one student and problem
    ("Order NaN", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(0, "Order", "nan")),
     r"MainTable.csv: column Order, row 1: Order is empty, NaN or infinite"),
    ("Order infinite", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS,
                                           edit_event(1, "Order", "-inf")),
     r"MainTable.csv: column Order, row 2: Order is empty, NaN or infinite"),
    ("Order empty", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(3, "Order", "")),
     r"MainTable.csv: column Order, row 4: Order is empty, NaN or infinite"),
    ("Order twice", lambda r: write_csv(r / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(1, "Order", "1")),
     r"MainTable.csv: column Order, row 4: Order 1 again for student '101' on problem '2' \(first at row 2\)"),
    ("no Order, no timestamp", lambda r: write_csv(
        r / "Data" / "MainTable.csv", MAIN_COLUMNS[1:3] + MAIN_COLUMNS[4:],
        [row[1:3] + row[4:] for row in main_rows()]),
     r"MainTable.csv: column Order: needs a column Order or ServerTimestamp"),
]


@pytest.mark.parametrize("change, pattern", [c[1:] for c in CODEWORKOUT_ERRORS],
                         ids=[c[0] for c in CODEWORKOUT_ERRORS])
def test_codeworkout_bad_input_names_file_column_row(tmp_path, change, pattern):
    root = codeworkout(tmp_path)
    change(root)
    with pytest.raises(InputError, match=pattern):
        ingest_codeworkout(root)


# ---------------------------------------------------------------------------- FalconCode

EXPECTED_FC = [("s1", "loop", 0, "h3", 1.0), ("s1", "sum_two@2", 1, "h1", 0.5),
               ("s2", "sum_two@3", 0, "h5", 0.0)]

def test_falconcode_first_runs_scores_kcs_and_prompts(tmp_path):
    problems, submissions = ingest_falconcode(falconcode(tmp_path))
    assert as_rows(submissions) == [(s, p, n, SOURCES[h], x) for s, p, n, h, x in EXPECTED_FC]
    by_id = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
    assert sorted(by_id) == ["loop", "sum_two@2", "sum_two@3"]   # "unused" had no runs
    assert by_id["sum_two@2"]["kcs"] == ["if_statement"] and by_id["loop"]["kcs"] == ["for_loop"]
    assert by_id["sum_two@2"]["statement"] == "Add a & b.\n\n- print it"
    assert by_id["loop"]["statement"] == "Loop\n\nfor i in range(3):\n    print(i)"
    assert set(problems["language"]) == {"python"}


def test_html_to_text_drops_tags_and_keeps_pre():
    assert html_to_text("<h1>T</h1><p>a<br>b</p>") == "T\n\na\nb"
    assert html_to_text("x &lt; y") == "x < y"


FALCON_ERRORS = [
    ("no runs file", lambda r: (r / "falconcode_v1_table_runs.csv").unlink(),
     r"falconcode_v1_table_runs.csv: not found"),
    ("text column in problems", lambda r: falconcode(r, extra_problem_column=("skeleton", "def f():")),
     r"problems.csv: column skeleton, row 1: unexpected column: not a 0/1 concept column"),
    ("unknown problem", lambda r: falconcode(r, runs=FALCON_RUNS + [("s3", "2", "nope", "h1", "1", "t")]),
     r"runs.csv: column problem_id, row 8: \(problem_id, course_id\) is not in"),
    ("hash without code", lambda r: falconcode(r, runs=FALCON_RUNS[:4] + [("s2", "3", "sum_two", "hx", "0", "2021-09-03 08:00:00")]),
     r"runs.csv: column code_hash, row 5: 'hx' has no code"),
    ("no graded run", lambda r: falconcode(r, runs=[FALCON_RUNS[1]]),
     r"runs.csv: column score: no scored runs"),
    ("score above max_score", lambda r: falconcode(r, runs=FALCON_RUNS[:2] + [("s2", "2", "loop", "h3", "3", "t")]),
     r"runs.csv: column score, row 3: score 3.0 is outside \[0, 1\]"),
    ("unreadable time", lambda r: falconcode(r, runs=FALCON_RUNS + [("s3", "2", "loop", "h3", "1", "yesterday")]),
     r"runs.csv: column timestamp, row 8: cannot order by this time: 'yesterday'"),
    ("missing max_score column", lambda r: write_csv(
        r / "falconcode_v1_table_problems.csv", ["id", "course_id", "prompt", "type"],
        [p[:4] for p in FALCON_PROBLEMS]), r"problems.csv: column max_score: missing column"),
]


@pytest.mark.parametrize("change, pattern", [c[1:] for c in FALCON_ERRORS],
                         ids=[c[0] for c in FALCON_ERRORS])
def test_falconcode_bad_input_names_file_column_row(tmp_path, change, pattern):
    root = falconcode(tmp_path)
    change(root)
    with pytest.raises(InputError, match=pattern):
        ingest_falconcode(root)


# ---------------------------------------------------------------------------- contracts

def valid_tables():
    problems = pl.DataFrame({
        "problem_id": ["p1", "p2"], "language": ["java", "java"], "statement": ["Add.", "Sub."],
        "kcs": [["arithmetic"], ["arithmetic", "conditionals"]],
        "tests": [[{"input": "[1, 2]", "expected": "3"}], None], "reference": [None, "int f(){}"],
        "signature": ["public int add(int a, int b)", None]}, schema=PROBLEM_SCHEMA)
    submissions = pl.DataFrame({
        "student_id": ["s1", "s1", "s2"], "problem_id": ["p1", "p2", "p2"], "step": [0, 1, 0],
        "code": ["a", "b", "c"], "score": [1.0, 0.5, 0.0], "correct": [True, False, False],
        "true_errors": [[], ["Off-by-one error"], ["Missing semicolon"]],
        "true_mastery": [[0.5, 0.2], [0.6, 0.3], [0.1, 0.9]]},
        schema={**SUBMISSION_SCHEMA, "true_errors": pl.List(pl.String),
                "true_mastery": pl.List(pl.Float64)})
    return problems, submissions


def test_a_problems_table_from_before_the_signature_column_reads_with_null_signatures(tmp_path):
    problems, submissions = valid_tables()
    problems.drop("signature").write_parquet(tmp_path / "problems.parquet")
    submissions.write_parquet(tmp_path / "submissions.parquet")
    read, _ = read_dataset(tmp_path)
    assert read.columns == list(PROBLEM_SCHEMA) and read["signature"].to_list() == [None, None]


def test_valid_tables_pass_and_vocabulary_is_sorted():
    problems, submissions = valid_tables()
    validate_submissions(submissions, validate_problems(problems))
    assert kc_vocabulary(problems) == ["arithmetic", "conditionals"]


# (what is wrong, change to the problems table, message pattern)
PROBLEM_ERRORS = [
    ("missing column", lambda p: p.drop("kcs"), r"column kcs: missing column"),
    ("wrong dtype", lambda p: p.with_columns(pl.lit(1).alias("statement")),
     r"column statement: wrong type"),
    ("unknown column", lambda p: p.with_columns(pl.lit("x").alias("notes")), r"column notes: unknown"),
    ("empty statement", lambda p: p.with_columns(pl.Series("statement", ["Add.", " "])),
     r"column statement, row 2: empty statement"),
    ("duplicate id", lambda p: p.with_columns(pl.lit("p1").alias("problem_id")),
     r"column problem_id, row 2: duplicate problem_id"),
    ("bad language", lambda p: p.with_columns(pl.Series("language", ["java", "c"])),
     r"column language, row 2:"),
    ("test input not an array", lambda p: p.with_columns(pl.Series(
        "tests", [[{"input": "1", "expected": "3"}], None], dtype=PROBLEM_SCHEMA["tests"])),
     r"column tests, row 1: test input must be a JSON array"),
    # a signature is one header line naming a function, or null
    ("signature on two lines", lambda p: p.with_columns(pl.Series("signature", [None, "int f(\nint a)"])),
     r"column signature, row 2: signature .* is not one line declaring a java function"),
    ("signature without a function", lambda p: p.with_columns(pl.Series("signature", ["add", None])),
     r"column signature, row 1: signature 'add' is not one line"),
]


@pytest.mark.parametrize("change, pattern", [c[1:] for c in PROBLEM_ERRORS],
                         ids=[c[0] for c in PROBLEM_ERRORS])
def test_problem_contract_errors(change, pattern):
    problems, _ = valid_tables()
    with pytest.raises(InputError, match=r"^problems.parquet: " + pattern):
        validate_problems(change(problems))


SUBMISSION_ERRORS = [
    ("missing column", lambda s: s.drop("score"), r"column score: missing column"),
    ("wrong dtype", lambda s: s.with_columns(pl.col("step").cast(pl.String)), r"column step: wrong type"),
    ("empty code", lambda s: s.with_columns(pl.Series("code", ["a", None, "c"])),
     r"column code, row 2: empty code"),
    ("unknown problem", lambda s: s.with_columns(pl.Series("problem_id", ["p1", "p2", "p9"])),
     r"column problem_id, row 3: unknown problem_id"),
    ("duplicate pair", lambda s: s.with_columns(pl.Series("problem_id", ["p2", "p2", "p2"])),
     r"column problem_id, row 2: duplicate \(student_id, problem_id\)"),
    ("score above 1", lambda s: s.with_columns(pl.Series("score", [1.0, 1.5, 0.0])),
     r"column score, row 2: score must lie in \[0, 1\]"),
    ("correct inconsistent", lambda s: s.with_columns(pl.Series("correct", [True, True, False])),
     r"column correct, row 2:"),
    ("step gap", lambda s: s.with_columns(pl.Series("step", [0, 2, 0])),
     r"column step, row 2: steps of a student must be 0..n-1"),
    ("step repeated", lambda s: s.with_columns(pl.Series("step", [0, 0, 0])),
     r"column step, row 2:"),
    ("unknown error label", lambda s: s.with_columns(pl.Series("true_errors", [[], ["Typo"], []])),
     r"column true_errors, row 2:"),
    ("mastery length", lambda s: s.with_columns(pl.Series("true_mastery", [[0.5, 0.2], [0.6], [0.1, 0.9]])),
     r"column true_mastery, row 2: true_mastery must hold 2 values"),
    ("NUL byte in code", lambda s: s.with_columns(pl.Series("code", ["a", "b", "c\x00"])),
     r"column code, row 3: NUL byte in code"),
    ("code over the cap", lambda s: s.with_columns(pl.Series("code", ["a", "b" * (MAX_CELL_CHARS + 1), "c"])),
     r"column code, row 2: code over the cap of 1,000,000 characters"),
]


@pytest.mark.parametrize("change, pattern", [c[1:] for c in SUBMISSION_ERRORS],
                         ids=[c[0] for c in SUBMISSION_ERRORS])
def test_submission_contract_errors(change, pattern):
    problems, submissions = valid_tables()
    with pytest.raises(InputError, match=r"^submissions.parquet: " + pattern):
        validate_submissions(change(submissions), problems)


def test_write_dataset_is_byte_deterministic_and_reads_back(tmp_path):
    problems, submissions = valid_tables()
    write_dataset(tmp_path / "a", problems, submissions)
    write_dataset(tmp_path / "b", problems.reverse(), submissions.reverse())   # row order differs
    for name in ("problems.parquet", "submissions.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    back_problems, back_submissions = read_dataset(tmp_path / "a")
    assert back_problems.equals(problems.sort("problem_id"))
    assert back_submissions.equals(submissions.sort("student_id", "step"))
    with pytest.raises(InputError, match=r"nowhere/problems.parquet: not found"):
        read_dataset(tmp_path / "nowhere")


# ---------------------------------------------------------------------------- folds

def fold_submissions(students=23, problems=12):
    return pl.DataFrame({"student_id": [f"s{i}" for i in range(students) for _ in range(problems)],
                         "problem_id": [f"p{j}" for _ in range(students) for j in range(problems)]})


def test_folds_disjoint_covering_balanced_deterministic(tmp_path):
    submissions = fold_submissions()
    folds = make_folds(submissions, 5, seed=3)
    assert folds["seed"] == 3
    for key, column in (("by_student", "student_id"), ("by_problem", "problem_id")):
        members = [i for fold in folds[key] for i in fold]
        assert len(folds[key]) == 5
        assert sorted(members) == sorted(submissions[column].unique())   # each id exactly once
        sizes = [len(fold) for fold in folds[key]]
        assert max(sizes) - min(sizes) <= 1
    assert make_folds(submissions.reverse(), 5, seed=3) == folds
    assert make_folds(submissions, 5, seed=4)["by_student"] != folds["by_student"]
    write_folds(tmp_path / "folds.json", folds)
    assert read_folds(tmp_path / "folds.json") == folds
    with pytest.raises(InputError, match="3 distinct values cannot fill 5 folds"):
        make_folds(fold_submissions(students=3), 5)


# ---------------------------------------------------------------------------- CLI and stage

def test_cli_ingest_writes_tables_and_prints_counts(tmp_path, capsys):
    cli_main(["ingest", "falconcode", str(falconcode(tmp_path / "raw")), "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert "students 2, problems 3, kcs 2, first submissions 3, share correct 0.333" in printed
    problems, submissions = read_dataset(tmp_path / "out")
    assert submissions.height == 3 and problems.height == 3


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    root = codeworkout(tmp_path / "raw")
    write_csv(root / "Data" / "MainTable.csv", MAIN_COLUMNS, edit_event(2, "ProblemID", "99"))
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["ingest", "codeworkout", str(root), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    assert "MainTable.csv: column ProblemID, row 3:" in error


# ---------------------------------------------------------------------------- strict raw files

def patch_bytes(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1, old
    path.write_bytes(data.replace(old, new))


def cw_file(root, name):
    return root / ("Data/CodeStates/CodeStates.csv" if name == "codes" else
                   "Data/MainTable.csv" if name == "main" else "problems.csv")


# (what is wrong, (format, change to a valid release), the one line `kaser ingest` must print)
# CodeStates.csv holds c1..c9 as rows 1..9; c1 and c2 span 3 lines each, so c3 starts on line 8.
STRICT_ERRORS = [
    ("invalid UTF-8 in a code cell", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "codes"), b"int h() { return 0; }", b"int h() { return \xff; }")),
     r"CodeStates.csv: column Code, row 6: not UTF-8: byte 0xff at character 25 of the cell; "
     r"save the file as UTF-8"),
    ("Latin-1 text in a problem statement", ("falconcode", lambda r: patch_bytes(
        r / "falconcode_v1_table_problems.csv", b"<p>Nobody</p>", b"<p>Nob\xf6dy</p>")),
     r"table_problems.csv: column prompt, row 4: not UTF-8: byte 0xf6 at character 7"),
    ("invalid UTF-8 in the header", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "codes"), b"CodeStateID,Code", b"CodeStateID,C\xc3de")),
     r"CodeStates.csv: column #2: not UTF-8: byte 0xc3 at character 2 of the cell of the header"),
    ("NUL byte in a code cell", ("falconcode", lambda r: patch_bytes(
        r / "falconcode_v1_code_samples.csv", b"print(3)", b"print(\x003)")),
     r"code_samples.csv: column source_code, row 4: NUL byte at character 7 of the cell"),
    ("NUL byte in an id", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "main"), b",c7,", b",c\x007,")),
     r"MainTable.csv: column CodeStateID, row 5: NUL byte at character 2 of the cell"),
    ("code cell over the cap", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "codes"), b"c9,unused", b"c9," + b"x" * (MAX_CELL_CHARS + 1))),
     r"CodeStates.csv: column Code, row 9: cell of 1,000,001 characters is over the cap of "
     r"1,000,000 \(kaser.data.contracts.MAX_CELL_CHARS\)"),
    ("duplicated header column", ("codeworkout", lambda r: write_csv(
        cw_file(r, "main"), MAIN_COLUMNS + ["Score"], [row + ["1"] for row in main_rows()])),
     r"MainTable.csv: column Score: appears twice in the header \(columns 12 and 15\)"),
    ("duplicated concept column", ("falconcode", lambda r: falconcode(
        r, extra_problem_column=("if_statement", "0"))),
     r"table_problems.csv: column if_statement: appears twice in the header \(columns 6 and 8\)"),
    ("row with an extra cell", ("codeworkout", lambda r: write_csv(
        cw_file(r, "main"), MAIN_COLUMNS, [row + ["x"] if i == 3 else row
                                           for i, row in enumerate(main_rows())])),
     r"MainTable.csv: row 4: 15 cells, but the header has 14 columns; the record starts on line 5"),
    ("row with a missing cell", ("falconcode", lambda r: falconcode(
        r, runs=FALCON_RUNS[:5] + [FALCON_RUNS[5][:5]] + FALCON_RUNS[6:])),
     r"table_runs.csv: row 6: 5 cells, but the header has 6 columns; the record starts on line 7"),
    ("unclosed quote", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "codes"), b"c9,unused", b'c9,"unused')),
     r"CodeStates.csv: row 9: a quoted cell is never closed \(it runs to the end of the file\); "
     r"the record starts on line 18 of the file"),
    ("unclosed quote before other quoted cells", ("codeworkout", lambda r: patch_bytes(
        cw_file(r, "codes"), b"c3,public int g(int a) { return a }", b'c3,"public int g(int a) {')),
     r"CodeStates.csv: row 3: unbalanced quotes: text follows a closing quote .*the record "
     r"starts on line 8 of the file"),
    ("lone CR line ends", ("codeworkout", lambda r: cw_file(r, "main").write_bytes(
        cw_file(r, "main").read_bytes().replace(b"\r\n", b"\r"))),
     r"MainTable.csv: line 1 of the file ends in a lone CR \(old Mac line ends\).*save the file with LF "
     r"or CRLF line ends"),
    ("lone CR line ends after the header", ("falconcode", lambda r: patch_bytes(
        r / "falconcode_v1_table_runs.csv", b"s2,3,sum_two,h5,0,2021-09-02 12:00:00\r\n",
        b"s2,3,sum_two,h5,0,2021-09-02 12:00:00\r")),
     r"table_runs.csv: row 5: line 6 of the file ends in a lone CR"),
    ("text after a closing quote", ("falconcode", lambda r: patch_bytes(
        r / "falconcode_v1_table_runs.csv", b"s2,3,sum_two,h5", b's2,"3"x,sum_two,h5')),
     r"table_runs.csv: row 5: unbalanced quotes: text follows a closing quote \(a quote inside a "
     r"quoted cell must be doubled\); the record starts on line 6"),
]


@pytest.mark.parametrize("case", [c[1:] for c in STRICT_ERRORS], ids=[c[0] for c in STRICT_ERRORS])
def test_strict_ingestion_one_line_and_exit_2(tmp_path, capsys, case):
    (kind, change), pattern = case
    root = (codeworkout if kind == "codeworkout" else falconcode)(tmp_path / "raw")
    change(root)
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["ingest", kind, str(root), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.match(rf"kaser ingest: error: {re.escape(str(root))}/\S*{pattern}", err), err
    assert not (tmp_path / "out").exists()


def test_strict_csv_names_the_row_of_a_cell_beyond_the_parser_limit(tmp_path):
    # a cell far over the cap is never held whole: only its row is known
    path = write_csv(tmp_path / "codes.csv", ["id", "code"], [["a", "ok"], ["b", "y" * 1000]])
    assert check_csv(path, max_cell_chars=1000) == ["id", "code"]
    with pytest.raises(InputError, match=r"codes.csv: row 2: a cell longer than 160 characters, "
                                         r"far over the cap of 10 .*starts on line 3"):
        check_csv(path, max_cell_chars=10)


def test_strict_csv_accepts_what_releases_hold(tmp_path):
    # a byte-order mark, CRLF line ends, quoted multi-line cells with doubled quotes, padded
    # names and a blank last line pass, with the header cleaned as ingestion uses it
    path = tmp_path / "x.csv"
    path.write_bytes(b'\xef\xbb\xbfid , code\r\n1,"a\r\n""b"",\xc3\xa9"\r\n\r\n')
    assert check_csv(path) == ["id", "code"]
    # a lone CR inside a quoted cell (CodeWorkout code holds them) is no line end
    path.write_bytes(b'id,code\n1,"a\rb ""c\r"""\n2,x\n')
    assert check_csv(path) == ["id", "code"]


def test_prepare_stage_on_a_codeworkout_release(tmp_path):
    codeworkout(tmp_path / "raw" / "cw")
    (tmp_path / "params.yaml").write_text(
        "datasets:\n  cw:\n    source: codeworkout\n    raw: raw/cw\n    problems: null\n"
        "    kc_file: null\n  typo:\n    source: falconcode\n    raw: x\n    seed: 1\n"
        "splits:\n  folds: 2\n  seed: 0\n")
    stage = [sys.executable, str(REPO / "stages" / "prepare.py")]
    done = subprocess.run(stage + ["cw"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    problems, submissions = read_dataset(tmp_path / "data" / "cw")
    assert as_rows(submissions) == [(s, p, n, CODES[c], x) for s, p, n, c, x in EXPECTED_CW]
    folds = read_folds(tmp_path / "data" / "cw" / "folds.json")
    assert sorted(sum(folds["by_student"], [])) == ["101", "102"]
    first = {p: (tmp_path / "data" / "cw" / p).read_bytes()
             for p in ("problems.parquet", "submissions.parquet", "folds.json")}
    assert subprocess.run(stage + ["cw"], cwd=tmp_path, capture_output=True).returncode == 0
    assert all((tmp_path / "data" / "cw" / p).read_bytes() == b for p, b in first.items())
    bad = subprocess.run(stage + ["typo"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("prepare: error: params.yaml:datasets.typo: unknown key(s) seed; "
                                  "known: source, raw")


def test_prepare_stage_on_synthetic_data(tmp_path):
    (tmp_path / "params.yaml").write_text(
        "datasets:\n  tiny:\n    source: synthetic\n    raw: kaser/data/synth\n    language: python\n"
        "    students: 6\n    problems: 3\n    seed: 1\nsplits:\n  folds: 3\n  seed: 0\n")
    stage = [sys.executable, str(REPO / "stages" / "prepare.py"), "tiny"]
    done = subprocess.run(stage, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    problems, submissions = read_dataset(tmp_path / "data" / "tiny")
    assert submissions["student_id"].n_unique() == 6 and set(problems["language"]) == {"python"}
    assert sorted(sum(read_folds(tmp_path / "data" / "tiny" / "folds.json")["by_student"], [])) \
        == sorted(submissions["student_id"].unique())
