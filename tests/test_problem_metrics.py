"""Per-problem metrics (Table 3): error coverage IoU, χ² distance, diversity."""

import numpy as np
import pytest

from kaser.metrics.problem_metrics import (chi2_distance, codebleu_complement_max, coverage_iou,
                                           mean_cosine_distance)


@pytest.mark.parametrize("predicted, real, expected", [
    ([{"A"}, {"B"}], [{"A"}, {"B"}], 1.0),        # same unique errors
    ([{"A"}, set()], [{"A", "B"}], 0.5),          # found one of two
    ([set(), set()], [set()], 1.0),               # nobody errs on either side
    ([{"C"}], [{"A"}], 0.0),                      # disjoint
])
def test_coverage_iou(predicted, real, expected):
    assert coverage_iou(predicted, real) == expected


@pytest.mark.parametrize("predicted, real, expected", [
    # same rates, different numbers of codes: distance 0
    ([{"A"}, {"A"}, set(), set()], [{"A"}, set()], 0.0),
    # A: rate 1 vs 0 -> (1)^2/1 = 1; times 1 real code
    ([{"A"}], [set()], 1.0),
    # A: .5 vs .25 -> .0625/.75 ; B: 0 vs .5 -> .25/.5 ; sum .58333 x 4 real codes
    ([{"A"}, set()], [{"A", "B"}, {"B"}, set(), set()], 4 * (0.0625 / 0.75 + 0.5)),
])
def test_chi2_distance(predicted, real, expected):
    assert chi2_distance(predicted, real) == pytest.approx(expected)


def test_chi2_needs_codes():
    with pytest.raises(ValueError):
        chi2_distance([], [{"A"}])


@pytest.mark.parametrize("vectors, expected", [
    ([[1, 0], [1, 0]], 0.0),               # identical directions
    ([[1, 0], [0, 2]], 1.0),               # orthogonal, length does not matter
    ([[1, 0], [-1, 0]], 2.0),              # opposite
    ([[1, 0], [0, 1], [1, 0]], 2 / 3),     # pairs: 1, 0, 1
])
def test_mean_cosine_distance(vectors, expected):
    assert mean_cosine_distance(np.array(vectors, dtype=float)) == pytest.approx(expected)


def test_codebleu_complement_max_rises_with_diversity():
    same = ["def f(a, b):\n    total = a + b\n    return total"] * 3
    varied = same[:1] + ["def f(a, b):\n    while a < b:\n        a += 1\n    return a",
                         "def f(x, y):\n    if x > y:\n        return x\n    return y"]
    assert codebleu_complement_max(same, "python") == pytest.approx(0.0)
    assert codebleu_complement_max(varied, "python") > 0.3


@pytest.mark.parametrize("predicted, real, clean, expected", [
    ([set(), set()], [set()], [True, True], 1.0),     # every predicted code correct, as the real ones
    ([set(), set()], [set()], [True, False], 0.0),    # one is prose / a stub: not a match
    ([{"A"}, set()], [{"A"}], [False, False], 1.0),   # candidate errors on either side: plain IoU
])
def test_coverage_iou_with_verdicts(predicted, real, clean, expected):
    assert coverage_iou(predicted, real, clean) == expected
