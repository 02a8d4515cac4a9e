"""Per-problem metrics of the paper's Table 3: error coverage and code diversity.

For one test problem we pool the real submissions of all test students and all predicted codes
for them. `python -m pytest tests/test_problem_metrics.py`.

Departures, and why:
1. The χ² distance compares error *rates* (occurrences per code), not raw counts: there are K
   predicted codes per real one, so raw counts would differ by a factor K even for a perfect
   simulator. χ²(p, q) = Σ_i (p_i − q_i)² / (p_i + q_i) over labels seen on either side, scaled by
   the number of real submissions so it stays comparable in size to a count-based distance.
2. Code-embedding cosine distance uses the project's sentence-transformers model (MiniLM offline
   by default) instead of Qwen3-Embedding-8B; the model is a params choice.
3. Coverage IoU with the authors' semantics: a problem whose real codes have no
   candidate error is matched only when every predicted code is free of every error, not by
   prose or stubs that the judge diagnosed outside the candidate list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from kaser.metrics.codebleu import max_codebleu_to_rest
from kaser.metrics.sets import iou

HIGHER_IS_BETTER = {"coverage_iou": True, "chi2_distance": False, "cosine_distance": True,
                    "codebleu_complement_max": True, "error_rate_rmse": False,
                    "pass_rate_error": False}


def coverage_iou(predicted_errors: Sequence[set[str]], real_errors: Sequence[set[str]],
                 predicted_clean: Sequence[bool] | None = None) -> float:
    """IoU of the unique errors over all predicted codes vs over all real codes of a problem.
    When neither side has a candidate error, the match is 1 only if the judge found every
    predicted code free of every error (`predicted_clean`; departure 3).

    >>> coverage_iou([{"A"}, {"B"}, set()], [{"A"}, {"C"}])
    0.3333333333333333
    >>> coverage_iou([set(), set()], [set()], predicted_clean=[True, False])   # prose among them
    0.0
    """
    predicted, real = set().union(*predicted_errors), set().union(*real_errors)
    if not predicted and not real and predicted_clean is not None:
        return 1.0 if all(predicted_clean) else 0.0
    return iou(predicted, real)


def error_rate_rmse(predicted_errors: Sequence[set[str]], real_errors: Sequence[set[str]]) -> float:
    """Root mean square difference, over the labels seen on either side, between the share of
    predicted codes with a label and the share of real codes with it: how far the simulated class
    is from the real one, error type by error type (the class-level view of CodeInsights-style
    rate errors). 0 when neither side has an error. Each predicted code counts once, so with K
    samples a pair the rate is per sample, not best of K.

    >>> error_rate_rmse([{"A"}, set(), set(), set()], [{"A"}, set()])   # A: 0.25 vs 0.5
    0.25
    >>> error_rate_rmse([{"A"}, {"B"}], [{"B"}, {"A"}])                 # same rates, other codes
    0.0
    """
    if not predicted_errors or not real_errors:
        raise ValueError("error_rate_rmse needs at least one predicted and one real code")
    p = Counter(label for errors in predicted_errors for label in errors)
    q = Counter(label for errors in real_errors for label in errors)
    labels = set(p) | set(q)
    if not labels:
        return 0.0
    gaps = [p[label] / len(predicted_errors) - q[label] / len(real_errors) for label in labels]
    return float(np.sqrt(np.mean(np.square(gaps))))


def pass_rate_error(predicted_clean: Sequence[bool], real_correct: Sequence[bool]) -> float:
    """|share of predicted codes the judge finds free of every error − share of real codes that
    are correct| on one problem.

    >>> pass_rate_error([True, False, False, False], [True, False])
    0.25
    """
    if not predicted_clean or not real_correct:
        raise ValueError("pass_rate_error needs at least one predicted and one real code")
    return abs(float(np.mean(predicted_clean)) - float(np.mean(real_correct)))


def chi2_distance(predicted_errors: Sequence[set[str]], real_errors: Sequence[set[str]]) -> float:
    """χ² distance between error rates, scaled by the number of real codes (see departure 1).

    >>> chi2_distance([{"A"}, {"A"}], [{"A"}])      # same rate, more predicted codes
    0.0
    >>> chi2_distance([{"A"}, set()], [{"B"}, {"B"}])  # rates A: .5 vs 0, B: 0 vs 1; x 2 codes
    3.0
    """
    if not predicted_errors or not real_errors:
        raise ValueError("chi2_distance needs at least one predicted and one real code")
    p = Counter(label for errors in predicted_errors for label in errors)
    q = Counter(label for errors in real_errors for label in errors)
    total = 0.0
    for label in p.keys() | q.keys():
        rate_p, rate_q = p[label] / len(predicted_errors), q[label] / len(real_errors)
        total += (rate_p - rate_q) ** 2 / (rate_p + rate_q)
    return total * len(real_errors)


def mean_cosine_distance(embeddings: np.ndarray) -> float:
    """Mean of 1 − cos(e_i, e_j) over all unordered pairs of code embeddings.

    >>> mean_cosine_distance(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))
    0.6666666666666666
    """
    if len(embeddings) < 2:
        raise ValueError("mean_cosine_distance needs at least two embeddings")
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True).clip(min=1e-12)
    similarity = unit @ unit.T
    upper = np.triu_indices(len(unit), k=1)
    return float(np.mean(1.0 - similarity[upper]))


def codebleu_complement_max(codes: Sequence[str], language: str) -> float:
    """Mean over codes of 1 − max CodeBLEU against the other codes (paper's CodeBLEU^∁_max).

    >>> codebleu_complement_max(["int total = a + b;\\nreturn total;"] * 2, "java")  # identical
    0.0
    """
    return float(np.mean([1.0 - m for m in max_codebleu_to_rest(list(codes), language)]))
