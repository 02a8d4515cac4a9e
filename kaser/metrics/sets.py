"""Intersection over union of two label sets: the paper's error-match score (Eq. 2).

Used by the GRPO error reward (judge's labels on a completion vs the ground-truth labels) and by
the evaluation (IoU@K per student-problem pair, error coverage per problem). Tested by
`python -m pytest --doctest-modules kaser/metrics/sets.py tests/test_rewards.py`.

Departure from the authors' code (umass-ml4ed/code_personalization, grpo.py):
1. IoU(∅, ∅) = 1: no predicted errors and no true errors means both codes are correct, a perfect
   match. The released `iou` returns 0 for two empty sets and instead scores correct ground truth
   through a separate "is the code correct?" judge call in a branch that assumes two prompts per
   batch; one rule for every batch layout is simpler and says the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable


def iou(predicted: Iterable[str], truth: Iterable[str]) -> float:
    """|predicted ∩ truth| / |predicted ∪ truth|, and 1.0 when both are empty.

    Duplicates do not count twice: arguments are treated as sets.

    >>> iou({"Off-by-one error"}, {"Off-by-one error"})
    1.0
    >>> iou({"Off-by-one error", "Missing semicolon"}, {"Off-by-one error"})
    0.5
    >>> iou(set(), set())  # both correct: a perfect match
    1.0
    >>> iou(set(), {"Infinite loop"})  # predicted correct code, the student had an error
    0.0
    >>> iou(["Type mismatch", "Type mismatch"], ["Type mismatch"])
    1.0
    >>> iou("Type mismatch", set())
    Traceback (most recent call last):
    TypeError: iou: predicted must be a collection of labels, not a string: 'Type mismatch'
    """
    for name, labels in (("predicted", predicted), ("truth", truth)):
        if isinstance(labels, str):
            raise TypeError(f"iou: {name} must be a collection of labels, not a string: {labels!r}")
    predicted, truth = set(predicted), set(truth)
    union = predicted | truth
    if not union:
        return 1.0
    return len(predicted & truth) / len(union)
