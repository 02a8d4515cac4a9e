"""The bank's python_can_hike problem, two wrong versions of its reference (a wrong boolean
operator, a missing colon), the judge's candidate labels, and `dataset`, which writes the dataset
folder a judge reads (problems, two submissions, cluster outputs)."""

import json

import polars as pl

from kaser.data.contracts import write_dataset
from kaser.data.synth.bank import load_bank

PROBLEM = next(p for p in load_bank("python") if p.problem_id == "python_can_hike")
CORRECT = PROBLEM.references[0]
WRONG_OPERATOR = CORRECT.replace("temp >= 20 and temp <= 25", "temp >= 20 or temp <= 25")
SYNTAX = CORRECT.replace("if raining:", "if raining")
CANDIDATES = ["Incorrect logical operator", "Missing colon", "Off-by-one error"]


def dataset(tmp_path):
    problems = pl.DataFrame({
        "problem_id": [PROBLEM.problem_id], "language": ["python"], "statement": [PROBLEM.statement],
        "kcs": [list(PROBLEM.kcs)],
        "tests": [[{"input": json.dumps(list(a)), "expected": json.dumps(e)} for a, e in PROBLEM.tests]],
        "reference": [CORRECT]})
    submissions = pl.DataFrame({"student_id": ["a", "b"], "problem_id": [PROBLEM.problem_id] * 2,
                                "step": [0, 0], "code": [CORRECT, WRONG_OPERATOR],
                                "score": [1.0, 0.5], "correct": [True, False]})
    write_dataset(tmp_path, problems, submissions)
    # the cluster stage named the boolean-operator cluster differently from the standard label
    error_labels = pl.DataFrame({"category": ["Logical", "Syntax"],
                                 "label": ["Wrong boolean operator", "Missing colon"],
                                 "count": [3, 1], "cluster": [0, 1],
                                 "cluster_label": ["Incorrect logical operator", "Missing colon"]})
    error_labels.write_parquet(tmp_path / "error_labels.parquet")
    return problems, submissions, error_labels
