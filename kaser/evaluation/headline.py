"""The few numbers per dataset that DVC shows: `dvc metrics show`, `dvc metrics diff`, `dvc exp show`.

    python stages/report.py synthetic-python     # writes reports/synthetic-python/headline.json

Every stage keeps its detailed results as outputs (annotation_quality.json, knowledge.json,
metrics.json, evaluation.json); this file picks at most 20 of them, flat, so that comparing two
experiments fits a terminal: how well errors were annotated, how well knowledge was traced, and
how KASER and Student SFT predict students' errors and code (the paper's Tables 1 and 3).
A number a run did not produce (F1 without true errors, a method not evaluated) is null.
"""

from __future__ import annotations

from collections.abc import Mapping

from kaser.methods import REFERENCE_METHOD

# headline prefix -> method; the two the paper's claim is about
COMPARED = {"kaser": REFERENCE_METHOD, "sft": "student_sft"}
# metric of evaluation.json (at the largest K where it has one) -> headline suffix
# (valid: parses / compiles; truncated: cut off by the token budget, scored apart)
PREDICTION_METRICS = {"iou_incorrect@{k}": "iou@{k}", "codebleu@{k}": "codebleu@{k}",
                      "coverage_iou": "coverage_iou", "valid_share": "valid_share",
                      "truncated_share": "truncated_share"}


def _get(tree: Mapping | None, *keys: str):
    for key in keys:
        if not isinstance(tree, Mapping) or key not in tree:
            return None
        tree = tree[key]
    return tree


def headline_metrics(evaluation: Mapping, annotation_quality: Mapping | None,
                     knowledge: Mapping | None) -> dict[str, float | int | None]:
    """About 20 flat numbers from the detailed reports of one dataset.

    >>> evaluation = {"k_values": [1, 5], "reference_method": "kaser", "methods": {
    ...     "kaser": {"n_pairs": 8, "n_incorrect_pairs": 3, "metrics": {
    ...         "iou_incorrect@5": {"mean": 0.25}, "codebleu@5": {"mean": 0.5}}}}}
    >>> h = headline_metrics(evaluation, {"overall": {"f1": 0.9}}, None)
    >>> h["annotation_f1"], h["kaser_iou@5"], h["sft_iou@5"], h["kt_auc"], h["n_test_pairs"]
    (0.9, 0.25, None, None, 8)
    """
    k = max(evaluation.get("k_values") or [1])
    methods = evaluation.get("methods", {})
    counted = methods.get(REFERENCE_METHOD) or next(iter(methods.values()), {})
    counts = _get(annotation_quality, "counts") or annotation_quality or {}
    headline: dict[str, float | int | None] = {
        "annotation_f1": _get(annotation_quality, "overall", "f1"),
        "annotated_incorrect_share": counts.get("incorrect_share_with_errors"),
        "annotated_correct_share": counts.get("correct_share_with_errors"),
        "kt_auc": _get(knowledge, "models", "lstm", "auc"),
        "kt_auc_difficulty": _get(knowledge, "models", "difficulty", "auc"),
        "mastery_spearman": _get(knowledge, "spearman", "attempted_kcs"),
        "n_test_pairs": counted.get("n_pairs"),
        "n_incorrect_pairs": counted.get("n_incorrect_pairs"),
    }
    for prefix, method in COMPARED.items():
        for metric, suffix in PREDICTION_METRICS.items():
            value = _get(methods, method, "metrics", metric.format(k=k), "mean")
            headline[f"{prefix}_{suffix.format(k=k)}"] = value
    return headline
