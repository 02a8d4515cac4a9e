"""A hand-made evaluation dataset: 3 Python problems, 4 students, K = 2 samples.

Real codes carry a marker comment per error (# OBO, # COLON, # DIV); `marker_judge` reads those
markers, so a sample's errors are known by construction. An empty code is diagnosed outside the
candidate lists (not correct) and is not valid; a code that Python cannot parse is not valid.
The expected values of tests/test_evaluation.py and tests/test_reporting.py are worked out by
hand from the tables here.
"""

import ast

import numpy as np
import polars as pl

from kaser import config
from kaser.errors.judge import Verdict
from kaser.evaluation.scoring import EvaluateParams, judge_predictions, read_truth

OBO, COLON, DIV = "Off-by-one error", "Missing colon", "Division by zero"
MARKERS = {"# OBO": OBO, "# COLON": COLON, "# DIV": DIV}
KCS = ["arithmetic", "conditionals", "for loops"]            # kc vocabulary order

PROBLEMS = pl.DataFrame({
    "problem_id": ["p1", "p2", "p3"], "language": ["python"] * 3,
    "statement": ["Add a and b.", "Count to n.", "Sign of x."],
    "kcs": [["arithmetic"], ["for loops"], ["conditionals"]]})

R_A = "def add(a, b):\n    return a + b"
R_B = "def count(n):\n    return len(range(n + 1))  # OBO"
R_C = "def add(a, b)\n    return a + b  # COLON"
R_E = "def add(a, b):\n    return a / 0  # DIV"
R_F = "def sign(x)\n    return x > 0  # COLON"
# (student, problem, code, correct, errors, true mastery over KCS)
REAL = [
    ("s1", "p1", R_A, True, [], [0.9, 0.9, 0.2]),
    ("s1", "p2", R_B, False, [OBO], [0.9, 0.9, 0.2]),
    ("s2", "p1", R_C, False, [COLON], [0.9, 0.3, 0.8]),
    ("s2", "p2", "def count(n):\n    return n", True, [], [0.9, 0.3, 0.8]),
    ("s3", "p1", R_E, False, [DIV], [0.1, 0.9, 0.9]),
    ("s3", "p3", "def sign(x):\n    return 1  # OBO # COLON", False, [OBO, COLON], [0.1, 0.9, 0.9]),
    ("s4", "p2", "def count(n):\n    return n", True, [], [0.9, 0.9, 0.9]),
    ("s4", "p3", R_F, False, [COLON], [0.9, 0.9, 0.9]),
]
ERROR_LABELS = pl.DataFrame({"category": ["Logical", "Syntax", "Runtime"], "label": [OBO, COLON, DIV],
                             "count": [3, 3, 1], "cluster": [0, 1, 2], "cluster_label": [OBO, COLON, DIV]})
CANDIDATES = {"p1": [COLON, DIV, OBO], "p2": [OBO], "p3": [COLON, OBO]}

# split, fold, student, problem, [sample 0, sample 1]
KASER = [
    ("student", 0, "s1", "p1", ["", R_A]),                 # A: correct; CodeBLEU 0 then 1
    ("student", 0, "s1", "p2", [R_B, ""]),                 # B: first sample hits OBO
    ("student", 0, "s2", "p1", ["x = 1  # DIV", "y = 2  # COLON # OBO"]),   # C: IoU 0, then 1/2
    ("student", 0, "s2", "p2", ["z = 0  # OBO", ""]),      # D: correct; invents OBO, then none
    ("student", 1, "s3", "p1", [R_E, R_E]),                # E: exact twice
    ("student", 1, "s4", "p3", ["", ""]),                  # F: empty code, misses COLON
    ("problem", 0, "s1", "p1", [R_A, ""]),
    ("problem", 0, "s2", "p1", ["x = 1  # COLON", "y = 2"]),
    ("problem", 0, "s3", "p1", ["a = 1  # OBO", ""]),
    ("problem", 1, "s1", "p2", [R_B, R_B]),
    ("problem", 1, "s4", "p2", ["", ""]),
    ("problem", 1, "s3", "p3", ["", ""]),
]
PARAMS = config.settings(EvaluateParams, "evaluate", methods=("kaser", "student_sft"), k_values=(1, 2))


def _parses(code):
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def marker_verdict(code):
    found = frozenset(label for marker, label in MARKERS.items() if marker in code)
    diagnosed = found | ({"Empty code"} if not code.strip() else set())
    return Verdict(found, not diagnosed, bool(code.strip()) and _parses(code), diagnosed)


def marker_judge(problem_id, codes):
    """The fixture's judge: a label for every marker comment in the code (all are candidates
    here); an empty code is diagnosed outside the list."""
    return [marker_verdict(code) for code in codes]


def hash_embed(codes):
    """2-d toy embedding: [1, 0] for code with a comment, [0, 1] without."""
    return np.array([[1.0, 0.0] if "#" in code else [0.0, 1.0] for code in codes])


def truth():
    submissions = pl.DataFrame(
        {"student_id": [r[0] for r in REAL], "problem_id": [r[1] for r in REAL],
         "code": [r[2] for r in REAL], "correct": [r[3] for r in REAL],
         "true_mastery": [r[5] for r in REAL]})
    errors = pl.DataFrame({"student_id": [r[0] for r in REAL], "problem_id": [r[1] for r in REAL],
                           "errors": [r[4] for r in REAL]}, schema_overrides={"errors": pl.List(pl.String)})
    return read_truth(PROBLEMS, submissions, errors, ERROR_LABELS)


def predictions(rows, method="kaser"):
    return pl.DataFrame(
        [{"split": split, "fold": fold, "student_id": s, "problem_id": p, "sample": i,
          "code": code, "method": method}
         for split, fold, s, p, codes in rows for i, code in enumerate(codes)],
        schema={"split": pl.String, "fold": pl.Int64, "student_id": pl.String, "problem_id": pl.String,
                "sample": pl.Int64, "code": pl.String, "method": pl.String})


def judged(rows, method="kaser"):
    return judge_predictions(predictions(rows, method), CANDIDATES, marker_judge, "markers")[0]


def sft_rows():
    """Student SFT: always the empty program (CodeBLEU 0, no errors)."""
    return [(split, fold, s, p, ["", ""]) for split, fold, s, p, _ in KASER]
