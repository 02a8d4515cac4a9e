"""Raw release folders in the CodeWorkout (ProgSnap2 + problems.csv) and FalconCode formats,
written with what real releases carry: extra columns, quoted multi-line code, no Score on compile
events, several runs per student and problem, rows out of order. Used by tests/test_data.py and
tests/test_documented_commands.py."""

from pathlib import Path

from kaser.data.ingest import CODEWORKOUT_CONCEPTS
from csv_files import write_csv

# ---------------------------------------------------------------------------- CodeWorkout fixture

MAIN_COLUMNS = ["Order", "SubjectID", "ToolInstances", "ServerTimestamp", "ServerTimezone",
                "CourseID", "AssignmentID", "ProblemID", "Attempt", "CodeStateID", "EventType",
                "Score", "Compile.Result", "EventID"]
# (Order, SubjectID, ServerTimestamp, ProblemID, CodeStateID, EventType, Score)
EVENTS = [
    (1, "101", "2019-02-20T10:00:05", "2", "c1", "Run.Program", "0.5"),
    (2, "101", "2019-02-20T10:00:01", "2", "c1", "Compile", ""),
    (3, "101", "2019-02-20T10:01:00", "2", "c2", "Run.Program", "1.0"),   # a later attempt
    (4, "101", "2019-02-20T10:02:00", "1", "c3", "Compile.Error", ""),
    (5, "101", "2019-02-20T10:03:00", "1", "c4", "Run.Program", "1"),
    (6, "102", "2019-02-20T09:00:00", "1", "c5", "Run.Program", "0.0"),
    (7, "102", "2019-02-20T09:05:00", "3", "c6", "Run.Program", ""),      # ran, not scored
    (8, "102", "2019-02-20T09:06:00", "3", "c7", "Run.Program", "0.25"),
    (9, "101", "2019-02-20T10:04:00", "3", "c8", "Run.Program", "1"),
]
FILE_ORDER = [8, 2, 5, 0, 7, 3, 1, 6, 4]   # rows are written out of order
CODES = {
    "c1": 'public int f(int a) {\n    return a + 1;\n}',
    "c2": "public int f(int a) {\n  return a;\n}",
    "c3": "public int g(int a) { return a }",
    "c4": "public int g(int a) { return a; }",
    "c5": 'public String g(int a) {\n    return "x, \\"y\\"" ;\n}',   # quotes and a comma
    "c6": "public int h() { return 0; }",
    "c7": "public int h() {\n\treturn 1;\n}",
    "c8": "public int h() { return 2; }",
    "c9": "unused",
}
REQUIREMENTS = {"1": "Return the value\nof a.", "2": "Add one to a.", "3": "Return two.",
                "4": "A problem nobody tried."}
FLAGS = {"1": {"If/Else": "1", "Math%": "1"}, "2": {"Math+-*/": "1"}, "3": {},
         "4": {"While": "1"}}


def main_rows(events=EVENTS, order=FILE_ORDER):
    rows = []
    for i in order:
        number, subject, stamp, problem, state, event, score = events[i]
        rows.append([number, subject, "Java 8", stamp, "UTC", "CS1", "a1", problem, "1", state,
                     event, score, "Success" if event != "Compile.Error" else "Error", f"e{i}"])
    return rows


def problem_rows():
    return [["a1", pid, text, *(FLAGS[pid].get(c, "0" if pid != "3" else "") for c in
                                CODEWORKOUT_CONCEPTS)] for pid, text in REQUIREMENTS.items()]


def codeworkout(root: Path, events_rows=None, codes=CODES, table_rows=None) -> Path:
    write_csv(root / "Data" / "MainTable.csv", MAIN_COLUMNS,
              main_rows() if events_rows is None else events_rows)
    write_csv(root / "Data" / "CodeStates" / "CodeStates.csv", ["CodeStateID", "Code"],
              list(codes.items()))
    write_csv(root / "problems.csv", ["AssignmentID", "ProblemID", "Requirement",
                                      *CODEWORKOUT_CONCEPTS],
              problem_rows() if table_rows is None else table_rows)
    return root


# ---------------------------------------------------------------------------- FalconCode fixture

FALCON_PROBLEMS = [
    # id, course_id, prompt, type, max_score, if_statement, for_loop
    ("sum_two", "2", "<p>Add <b>a</b> &amp; <code>b</code>.</p><ul><li>print it</li></ul>",
     "lab", "10", "1", "0"),
    ("sum_two", "3", "<p>Add a and b.</p>", "lab", "10", "1", ""),
    ("loop", "2", "<p>Loop</p><pre>for i in range(3):\n    print(i)</pre>", "skill", "1", "0", "1"),
    ("unused", "2", "<p>Nobody</p>", "lab", "5", "0", "0"),
]
SOURCES = {"h1": "a = 1\nprint(a + b)", "h2": "print(a + b)",
           "h3": 'for i in range(3):\n    print("i, ", i)', "h4": "print(3)", "h5": "print(b)"}
# student_id, course_id, problem_id, code_hash, score, timestamp (written in this order)
FALCON_RUNS = [
    ("s1", "2", "sum_two", "h2", "10", "2021-09-01 10:05:00"),
    ("s1", "2", "sum_two", "h1", "-1", "2021-09-01 09:00:00"),   # local run: dropped
    ("s1", "2", "loop", "h3", "1", "2021-09-01 08:00:00"),
    ("s1", "2", "sum_two", "h1", "5", "2021-09-01 10:00:00"),    # first graded sum_two
    ("s2", "3", "sum_two", "h5", "0", "2021-09-02 12:00:00"),
    ("s2", "3", "sum_two", "h2", "10", "2021-09-02 12:30:00"),
    ("s1", "2", "loop", "h4", "0", "2021-09-01 11:00:00"),
]

def falconcode(root: Path, problems=FALCON_PROBLEMS, runs=FALCON_RUNS, sources=SOURCES,
               extra_problem_column=None) -> Path:
    header = ["id", "course_id", "prompt", "type", "max_score", "if_statement", "for_loop"]
    rows = [list(p) for p in problems]
    if extra_problem_column:
        header.append(extra_problem_column[0])
        rows = [r + [extra_problem_column[1]] for r in rows]
    write_csv(root / "falconcode_v1_table_problems.csv", header, rows)
    write_csv(root / "falconcode_v1_code_samples.csv", ["hash", "source_code", "redacted"],
              [(h, s, "0") for h, s in sources.items()])
    write_csv(root / "falconcode_v1_table_runs.csv",
              ["student_id", "course_id", "problem_id", "code_hash", "score", "timestamp"], runs)
    return root
