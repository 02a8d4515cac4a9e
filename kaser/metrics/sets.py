"""Intersection over union of two label sets: the paper's error-match score (Eq. 2).

Used by the GRPO error reward (judge's labels on a completion vs the ground-truth labels) and by
the evaluation (IoU@K per student-problem pair, error coverage per problem). Tested by
`python -m pytest --doctest-modules kaser/metrics/sets.py tests/test_rewards.py`.

`iou` is the bare set score; `error_match` is what the reward and the evaluation use: with the
authors' semantics (their correctness branch), a correct real code is matched only by a predicted
code the judge finds free of every error, so non-code (prose, a stub, truncated text), whose
diagnoses lie outside the candidate list, cannot earn IoU(∅, ∅) = 1. `error_recall` is
the authors' evaluation score (the judge shown the student's own errors: |found| / |true|).

Departure from the authors' code (umass-ml4ed/code_personalization, grpo.py):
1. `error_match` applies the correctness rule to every row, without the released branch's
   assumption of two prompts per batch.
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


def error_match(predicted: Iterable[str], truth: Iterable[str], clean: bool,
                truth_correct: bool | None = None) -> float:
    """The error match of one predicted code with the authors' semantics.

    `predicted`: the candidate labels the judge found in the predicted code; `clean`: the judge
    found no error of any kind in it (it parses/compiles and passes the tests or matches the
    references), which a code whose only diagnoses lie outside the candidate list is not;
    `truth`: the real code's labels; `truth_correct`: whether the real code is correct (by
    default: it has no labels).
    - real code correct: 1 when the predicted code is clean, else 0;
    - real code incorrect: IoU(predicted, truth), and 0 when both label sets are empty (the
      student's errors lie outside the list, and nothing shows the prediction has them).

    >>> error_match(set(), set(), clean=True)             # both correct
    1.0
    >>> error_match(set(), set(), clean=False)            # prose: diagnosed outside the list
    0.0
    >>> error_match({"Off-by-one error"}, {"Off-by-one error", "Missing return"}, clean=False)
    0.5
    >>> error_match(set(), set(), clean=False, truth_correct=False)
    0.0
    """
    for name, labels in (("predicted", predicted), ("truth", truth)):
        if isinstance(labels, str):
            raise TypeError(f"error_match: {name} must be a collection of labels, not a string: {labels!r}")
    predicted, truth = set(predicted), set(truth)
    if clean and predicted:
        raise ValueError(f"error_match: a clean code has no errors, but {sorted(predicted)} were found")
    if truth_correct is None:
        truth_correct = not truth
    if truth_correct:
        return 1.0 if clean else 0.0
    if not predicted and not truth:
        return 0.0
    return iou(predicted, truth)


def outcome_match(clean: bool, valid: bool, truth_correct: bool) -> float:
    """1 when the predicted code has the real code's outcome, else 0: clean where the student's
    code is correct; where it is wrong, a code that parses/compiles (`valid`) and is not clean.
    Prose, a stub or code that does not parse is no wrong answer a student handed in, so it
    earns nothing on a wrong pair either (a real syntax error is paid by its label instead).

    >>> outcome_match(clean=True, valid=True, truth_correct=True)
    1.0
    >>> outcome_match(clean=False, valid=True, truth_correct=False)   # wrong like the student
    1.0
    >>> outcome_match(clean=False, valid=False, truth_correct=False)  # does not parse
    0.0
    """
    if truth_correct:
        return 1.0 if clean else 0.0
    return 1.0 if valid and not clean else 0.0


def error_recall(diagnosed: Iterable[str], truth: Iterable[str]) -> float | None:
    """The authors' evaluation score: the judge is shown the student's own errors and the share
    it finds in the predicted code counts, |found| / |true| (a recall; None without true errors).
    `diagnosed` is every label found in the predicted code, inside the problem's list or not.

    >>> error_recall({"Off-by-one error", "Missing semicolon"}, {"Off-by-one error", "Missing return"})
    0.5
    >>> error_recall({"Missing semicolon"}, set()) is None
    True
    """
    truth = set(truth)
    if not truth:
        return None
    return len(set(diagnosed) & truth) / len(truth)
