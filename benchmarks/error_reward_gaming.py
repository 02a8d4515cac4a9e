"""Can a policy that writes no code earn the GRPO error reward? Fixed answers scored on real pairs.

Needs a dataset through the cluster stage (data/<ds>/ submissions, problems, error_labels.parquet,
submission_errors.parquet, problem_errors.json). Draws `N_PAIRS` first-submission pairs (seeded),
answers every pair with one fixed policy (a sentence of prose, the problem statement restated, a
`pass` stub of the problem's function (Python), or the student's true code) and scores each
answer with the static judge under two rules:
- before issue 11: IoU(candidate errors found, true errors), with IoU(∅, ∅) = 1;
- now: kaser.predictor.rewards.make_error_reward (kaser.metrics.sets.error_match: a correct
  student is matched only by a code the judge finds free of every error).
Prints the mean error reward per policy over pairs whose real code is correct, incorrect, and all.

Run: PYTHONPATH=$PWD python benchmarks/error_reward_gaming.py synthetic-python
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl

from kaser.data.contracts import read_dataset
from kaser.errors.cluster import join_submission_errors
from kaser.errors.judge import reward_judge
from kaser.metrics.sets import iou
from kaser.predictor.rewards import make_error_reward

N_PAIRS, SEED = 200, 0
PROSE = "This function checks the input and returns the answer the problem asks for."


def stub(reference: str, language: str) -> str | None:
    """The reference's first line (its signature) with a `pass` body (Python only)."""
    if language != "python":
        return None
    header = next(line for line in reference.splitlines() if line.startswith("def "))
    return header + "\n    pass"


def main(dataset: str) -> None:
    folder = Path("data") / dataset
    problems, submissions = read_dataset(folder)
    firsts = (submissions.sort("student_id", "problem_id", "step")
              .unique(["student_id", "problem_id"], keep="first", maintain_order=True))
    pairs = join_submission_errors(firsts, pl.read_parquet(folder / "submission_errors.parquet"))
    pairs = pairs.sample(min(N_PAIRS, pairs.height), seed=SEED).join(
        problems.select("problem_id", "language", "statement", "reference"), on="problem_id")
    candidates = json.loads((folder / "problem_errors.json").read_text())
    policies = {"prose": lambda row: PROSE, "restated problem": lambda row: row["statement"],
                "pass stub": lambda row: stub(row["reference"], row["language"]),
                "true code": lambda row: row["code"]}
    rows = pairs.to_dicts()
    with reward_judge(folder, "params.yaml") as judge:
        reward = make_error_reward(judge)
        print(f"{dataset}: {len(rows)} pairs, {sum(r['correct'] for r in rows)} with correct real code")
        print("| policy | rule | correct pairs | incorrect pairs | all |\n|---|---|---|---|---|")
        for name, policy in policies.items():
            answers = [policy(row) for row in rows]
            if any(a is None for a in answers):
                continue
            lists = [candidates.get(r["problem_id"], []) for r in rows]
            new = reward(answers, problem_id=[r["problem_id"] for r in rows],
                         errors=[r["errors"] for r in rows], candidate_errors=lists,
                         correct=[r["correct"] for r in rows])
            old = [iou(judge(r["problem_id"], a, c), r["errors"]) for r, a, c in zip(rows, answers, lists)]
            for rule, values in (("before (IoU(∅, ∅) = 1)", old), ("now (error_match)", new)):
                right = [v for v, r in zip(values, rows) if r["correct"]]
                wrong = [v for v, r in zip(values, rows) if not r["correct"]]
                print(f"| {name} | {rule} | {sum(right) / max(len(right), 1):.3f} | "
                      f"{sum(wrong) / max(len(wrong), 1):.3f} | {sum(values) / len(values):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
