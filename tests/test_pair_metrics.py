"""Per-pair metrics (Tables 1-2): best-of-K, per-category counts, knowledge alignment."""

import pytest

from kaser.metrics.pair_metrics import (CategoryCounts, best_of_k, category_counts,
                                        knowledge_alignment)

JAVA = "public int add(int a, int b) {\n    int total = a + b;\n    return total;\n}"
JAVA_OTHER = "public int add(int x, int y) {\n    return x - y;\n}"
OFF = "Off-by-one error"
SEMI = "Missing semicolon"


@pytest.mark.parametrize("sample_errors, k, expected_iou", [
    ([set(), {OFF}], 1, 0.0),          # first sample predicts correct code: no overlap
    ([set(), {OFF}], 2, 1.0),          # the second sample hits the error exactly
    ([{OFF, SEMI}, {SEMI}], 2, 0.5),   # best of {1/2, 0}
    ([{OFF, SEMI}, {OFF}], 1, 0.5),    # K=1 only looks at the first sample
])
def test_iou_at_k(sample_errors, k, expected_iou):
    scores = best_of_k(JAVA, {OFF}, [JAVA_OTHER, JAVA], sample_errors, k, "java")
    assert scores.iou == expected_iou


def test_codebleu_at_k_is_best_and_independent_of_iou():
    at1 = best_of_k(JAVA, {OFF}, [JAVA_OTHER, JAVA], [{OFF}, set()], 1, "java")
    at2 = best_of_k(JAVA, {OFF}, [JAVA_OTHER, JAVA], [{OFF}, set()], 2, "java")
    assert at1.codebleu < 1.0
    assert at2.codebleu == pytest.approx(1.0)   # the identical second sample
    assert at2.iou == 1.0                        # from the first sample, not the same one


def test_too_few_samples_is_an_error():
    with pytest.raises(ValueError, match="k=5"):
        best_of_k(JAVA, set(), [JAVA], [set()], 5, "java")


CATEGORY = {OFF: "Logical", SEMI: "Syntax", "Index out of bounds": "Runtime"}


@pytest.mark.parametrize("predicted, real, expected", [
    # exact hit: one true positive in Logical
    ({OFF}, {OFF}, {"Logical": CategoryCounts(1, 0, 0)}),
    # predicted a correct code for a buggy one: a false negative
    (set(), {SEMI}, {"Syntax": CategoryCounts(0, 0, 1)}),
    # invented an error: a false positive
    ({"Index out of bounds"}, set(), {"Runtime": CategoryCounts(0, 1, 0)}),
    # both correct: nothing counted
    (set(), set(), {}),
    # a label the vocabulary does not know lands in "Unknown"
    ({"Made-up"}, set(), {"Unknown": CategoryCounts(0, 1, 0)}),
])
def test_category_counts(predicted, real, expected):
    assert category_counts(predicted, real, CATEGORY) == expected


def test_micro_average_over_pairs():
    total = CategoryCounts(0, 0, 0)
    for predicted, real in [({OFF}, {OFF}), (set(), {OFF}), (set(), {OFF}), ({OFF}, set())]:
        total = total + category_counts(predicted, real, CATEGORY)["Logical"]
    # tp=1, fp=1, fn=2 -> precision 1/2, recall 1/3, F1 = 2·(1/6)/(5/6) = 0.4
    assert total.precision_recall_f1() == pytest.approx({"precision": 0.5, "recall": 1 / 3, "f1": 0.4})


@pytest.mark.parametrize("predicted, mastery, expected", [
    ({OFF}, {"for loops": 0.1}, 1.0),                       # error on the weak KC
    ({OFF}, {"for loops": 0.9}, 0.0),                       # error on a mastered KC
    ({OFF, SEMI}, {"for loops": 0.1, "variables": 0.8}, 0.5),
    ({"No KCs known"}, {"for loops": 0.1}, None),           # nothing to score
])
def test_knowledge_alignment(predicted, mastery, expected):
    kcs = {OFF: ["for loops"], SEMI: ["variables"]}
    assert knowledge_alignment(predicted, kcs, mastery) == expected
