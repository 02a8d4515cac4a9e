"""Per student-problem pair metrics of the paper's Tables 1 and 2.

For one test pair we have the student's real code and its error set, and K predicted codes with
the errors the judge found in each. `best_of_k` gives CodeBLEU@K and IoU@K (the best of the first
K samples, as the paper's §4.4); `category_counts` gives the true/false positives per error
category behind Table 2's precision / recall / F1. `python -m pytest tests/test_pair_metrics.py`.

Departures, and why:
1. IoU@K is reported twice: over pairs whose ground truth is incorrect (as the authors' code,
   `iou_incorrect`) and over all pairs (`iou_all`, where a correct real code is matched by a
   predicted code the judge finds free of every error: the authors' correctness rule).
2. Table 2 precision / recall / F1 are micro-averaged over pairs from the first sample (K = 1),
   the setting the paper states for that table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kaser.metrics.codebleu import codebleu_many
from kaser.metrics.sets import error_match

# metric -> whether a larger value is better (every metric the evaluation reports says so)
HIGHER_IS_BETTER = {
    "codebleu@1": True, "codebleu@5": True,
    "iou_incorrect@1": True, "iou_incorrect@5": True,
    "iou_all@1": True, "iou_all@5": True,
    "precision": True, "recall": True, "f1": True,
    "knowledge_alignment": True,
    "error_recall@1": True, "error_recall@5": True,
    "valid_share": True, "truncated_share": False,
}


@dataclass(frozen=True)
class PairScores:
    codebleu: float        # best CodeBLEU(real code, sample) over the first K samples
    iou: float             # best error_match(sample, real errors) over the first K samples


def best_of_k(real_code: str, real_errors: set[str], sample_codes: Sequence[str],
              sample_errors: Sequence[set[str]], k: int, language: str,
              sample_clean: Sequence[bool] | None = None,
              truth_correct: bool | None = None) -> PairScores:
    """Best CodeBLEU and best error match (kaser.metrics.sets.error_match) among the first k
    samples (each maximised on its own). `sample_clean`: whether the judge found each sample free
    of every error (by default: no candidate errors, a rule that lets a code diagnosed only
    outside the list pass for correct); `truth_correct`: whether the real code
    is correct (by default: no real errors).

    >>> s = best_of_k("return a + b;", {"Off-by-one error"},
    ...               ["return a + b;", "return a - b;"], [set(), {"Off-by-one error"}], 2, "java")
    >>> round(s.codebleu, 6), s.iou
    (1.0, 1.0)
    >>> best_of_k("return a + b;", {"Off-by-one error"},
    ...           ["return a + b;", "return a - b;"], [set(), {"Off-by-one error"}], 1, "java").iou
    0.0
    """
    if k < 1 or len(sample_codes) < k or len(sample_errors) < k:
        raise ValueError(f"best_of_k: need at least k={k} samples, got {len(sample_codes)}")
    scores = codebleu_many(real_code, list(sample_codes[:k]), language)
    clean = ([not errors for errors in sample_errors] if sample_clean is None else list(sample_clean))
    return PairScores(codebleu=max(scores),
                      iou=max(error_match(errors, real_errors, is_clean, truth_correct)
                              for errors, is_clean in zip(sample_errors[:k], clean[:k])))


@dataclass(frozen=True)
class CategoryCounts:
    true_positive: int
    false_positive: int
    false_negative: int

    def __add__(self, other: "CategoryCounts") -> "CategoryCounts":
        return CategoryCounts(self.true_positive + other.true_positive,
                              self.false_positive + other.false_positive,
                              self.false_negative + other.false_negative)

    def precision_recall_f1(self) -> dict[str, float]:
        """Micro precision, recall and F1; a ratio with nothing to count is 0.

        >>> CategoryCounts(2, 0, 6).precision_recall_f1()
        {'precision': 1.0, 'recall': 0.25, 'f1': 0.4}
        >>> CategoryCounts(0, 0, 0).precision_recall_f1()
        {'precision': 0.0, 'recall': 0.0, 'f1': 0.0}
        """
        tp, fp, fn = self.true_positive, self.false_positive, self.false_negative
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": precision, "recall": recall, "f1": f1}


def category_counts(predicted: set[str], real: set[str], category_of: Mapping[str, str]
                    ) -> dict[str, CategoryCounts]:
    """True / false positives and false negatives of one pair, split by error category.

    >>> cats = {"A": "Logical", "B": "Logical", "S": "Syntax"}
    >>> category_counts({"A", "S"}, {"A", "B"}, cats)
    {'Logical': CategoryCounts(true_positive=1, false_positive=0, false_negative=1), 'Syntax': CategoryCounts(true_positive=0, false_positive=1, false_negative=0)}
    """
    counts: dict[str, CategoryCounts] = {}
    for label in sorted(predicted | real):
        hit = CategoryCounts(int(label in predicted and label in real),
                             int(label in predicted and label not in real),
                             int(label in real and label not in predicted))
        category = category_of.get(label, "Unknown")
        counts[category] = counts.get(category, CategoryCounts(0, 0, 0)) + hit
    return counts


def knowledge_alignment(predicted: set[str], error_kcs: Mapping[str, Sequence[str]],
                        true_mastery: Mapping[str, float], threshold: float = 0.5) -> float | None:
    """Share of predicted errors tied to at least one KC the student has low true mastery on.

    Our addition, measurable only on synthetic data where true mastery is known. None when no
    predicted error has known KCs (nothing to score).

    >>> kcs = {"Off-by-one error": ["for loops"], "Missing semicolon": ["variables"]}
    >>> knowledge_alignment({"Off-by-one error", "Missing semicolon"}, kcs,
    ...                     {"for loops": 0.2, "variables": 0.9})
    0.5
    >>> knowledge_alignment(set(), kcs, {"for loops": 0.2}) is None
    True
    """
    scored = [label for label in sorted(predicted) if error_kcs.get(label)]
    if not scored:
        return None
    low = sum(any(true_mastery.get(kc, 1.0) < threshold for kc in error_kcs[label]) for label in scored)
    return low / len(scored)
