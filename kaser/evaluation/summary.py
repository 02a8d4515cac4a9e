"""Summaries of evaluated methods over test folds: per-fold values, mean ± std over folds, and
the paired t-tests of KASER against every other method (kaser.evaluation.scoring scores the folds).

    python stages/evaluate.py synthetic-java   # reports/<ds>/metrics.json + evaluation.json

A method's per-pair table (kaser.evaluation.scoring.pair_table) and per-problem table (problem_table)
each hold a `fold` column; a fold's value of a metric is the mean over the fold's pairs or
problems (Table 2's precision / recall / F1 from the fold's summed counts). With the full
protocol (params.yaml model.splits [student, problem], model.folds [0..4]) fold f of a per-pair
metric is student fold f and fold f of a per-problem metric is problem fold f.

Departures from the paper and the authors' code, and why:
1. The paired t-test (scipy.stats.ttest_rel, two-sided) runs over folds when both methods have
   at least 3 folds in common, as the paper's 5-fold protocol; with fewer (the CPU default
   evaluates one fold) it runs over per-pair values paired by (fold, student, problem), or
   per-problem values paired by (fold, problem), so a one-fold run still says whether a
   difference is noise. evaluation.json records which (`over`: folds | pairs | problems) and n.
2. The std over folds is numpy's population std (ddof 0), 0 with one fold (a note says so).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.stats import ttest_rel

from kaser.methods import REFERENCE_METHOD
from kaser.metrics.pair_metrics import HIGHER_IS_BETTER as PAIR_HIGHER_IS_BETTER
from kaser.metrics.pair_metrics import CategoryCounts
from kaser.metrics.problem_metrics import HIGHER_IS_BETTER as PROBLEM_HIGHER_IS_BETTER
from kaser.taxonomy import CATEGORIES

PROBLEM_METRICS = ("coverage_iou", "chi2_distance", "cosine_distance", "codebleu_complement_max",
                   "problem_valid_share")
MIN_FOLDS_FOR_FOLD_TEST = 3


def higher_is_better(metric: str) -> bool:
    """Direction of any metric this module reports.

    >>> higher_is_better("iou_incorrect@3"), higher_is_better("chi2_distance"), higher_is_better("syntax_f1")
    (True, False, True)
    >>> higher_is_better("truncated_share")
    False
    """
    if metric in PROBLEM_HIGHER_IS_BETTER:
        return PROBLEM_HIGHER_IS_BETTER[metric]
    if metric in PAIR_HIGHER_IS_BETTER:
        return PAIR_HIGHER_IS_BETTER[metric]
    return True   # CodeBLEU, IoU, precision / recall / F1 and knowledge alignment


def pair_fold_values(pairs: pl.DataFrame, k_values: Sequence[int]) -> dict[int, dict[str, float]]:
    """fold -> metric -> value: means over the fold's pairs; P/R/F1 from summed counts."""
    result = {}
    if pairs.is_empty():
        return result
    for (fold,), part in pairs.group_by("fold", maintain_order=True):
        values = {}
        for name in [f"{m}@{k}" for m in ("codebleu", "iou_incorrect", "iou_all", "error_recall")
                     for k in k_values] + ["knowledge_alignment", "valid_share", "truncated_share"]:
            if name not in part.columns:
                continue
            column = part[name].drop_nulls()
            if len(column):
                values[name] = float(column.mean())
        for category in CATEGORIES:
            c = category.lower()
            counts = CategoryCounts(*(int(part[f"{c}_{n}"].sum()) for n in ("tp", "fp", "fn")))
            if counts.true_positive + counts.false_positive + counts.false_negative:
                values |= {f"{c}_{score}": v for score, v in counts.precision_recall_f1().items()}
        result[int(fold)] = values
    return dict(sorted(result.items()))


def problem_fold_values(problems: pl.DataFrame) -> dict[int, dict[str, float]]:
    """fold -> metric -> mean over the fold's test problems."""
    result = {}
    if problems.is_empty():
        return result
    for (fold,), part in problems.group_by("fold", maintain_order=True):
        result[int(fold)] = {name: float(part[name].drop_nulls().mean())
                             for name in PROBLEM_METRICS if part[name].drop_nulls().len()}
    return dict(sorted(result.items()))


@dataclass(frozen=True)
class MethodResult:
    pairs: pl.DataFrame       # pair_table
    problems: pl.DataFrame    # problem_table
    k_values: tuple[int, ...]
    problem_split: str = "problem"   # the split behind `problems` (evaluation.per_problem_split)
    pair_split: str = "student"      # the split behind `pairs` (evaluation.per_pair_split)

    def fold_values(self) -> dict[int, dict[str, float]]:
        merged: dict[int, dict[str, float]] = {}
        for part in (pair_fold_values(self.pairs, self.k_values), problem_fold_values(self.problems)):
            for fold, values in part.items():
                merged.setdefault(fold, {}).update(values)
        return dict(sorted(merged.items()))

    def unit_values(self, metric: str) -> tuple[str, pl.DataFrame]:
        """("pairs" | "problems", frame of key columns + `value`) behind one metric."""
        if metric in PROBLEM_METRICS:
            return "problems", self.problems.select("fold", "problem_id", pl.col(metric).alias("value"))
        if metric in self.pairs.columns:
            return "pairs", self.pairs.select("fold", "student_id", "problem_id",
                                              pl.col(metric).alias("value"))
        return "none", pl.DataFrame()


def aggregate(fold_values: dict[int, dict[str, float]]) -> dict[str, dict]:
    """metric -> {mean, std, folds, per_fold} over the folds that have the metric."""
    metrics = sorted({name for values in fold_values.values() for name in values})
    result = {}
    for name in metrics:
        folds = [f for f, values in fold_values.items() if name in values]
        per_fold = [fold_values[f][name] for f in folds]
        result[name] = {"mean": float(np.mean(per_fold)), "std": float(np.std(per_fold)),
                        "folds": folds, "per_fold": per_fold}
    return result


def paired_t_test(reference: MethodResult, other: MethodResult, metric: str,
                  significance: float = 0.05) -> dict | None:
    """KASER (reference) vs another method on one metric: over folds with >= 3 common folds,
    else over paired units (pairs or problems). None when the metric has no values."""
    mine, theirs = reference.fold_values(), other.fold_values()
    folds = [f for f in mine if f in theirs and metric in mine[f] and metric in theirs[f]]
    if len(folds) >= MIN_FOLDS_FOR_FOLD_TEST:
        over = "folds"
        a = np.array([mine[f][metric] for f in folds])
        b = np.array([theirs[f][metric] for f in folds])
    else:
        over, left = reference.unit_values(metric)
        _, right = other.unit_values(metric)
        if over == "none" or not right.height:
            return None
        keys = [c for c in left.columns if c != "value"]
        both = left.join(right, on=keys, suffix="_other").drop_nulls(["value", "value_other"])
        a, b = both["value"].to_numpy(), both["value_other"].to_numpy()
    if not len(a):
        return None
    difference = float(np.mean(a) - np.mean(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # identical samples: scipy warns and returns nan
        test = ttest_rel(a, b) if len(a) >= 2 else None
    p_value = None if test is None or np.isnan(test.pvalue) else float(test.pvalue)
    better = difference > 0 if higher_is_better(metric) else difference < 0
    return {"over": over, "n": int(len(a)), "mean_difference": difference,
            # a constant nonzero difference (e.g. a share that is 0 for one method) has t = ±inf
            "statistic": (None if p_value is None or not np.isfinite(test.statistic)
                          else float(test.statistic)), "p_value": p_value,
            "reference_better": bool(better),
            "significant": bool(better and p_value is not None and p_value < significance)}


def summarise(results: Mapping[str, MethodResult], significance: float, k_values: Sequence[int],
              reference: dict | None = None) -> tuple[dict, dict]:
    """(metrics.json: method -> metric -> mean, numbers only; evaluation.json: everything)."""
    metrics, methods, notes = {}, {}, []
    for method, result in results.items():
        folds = result.fold_values()
        summary = aggregate(folds)
        metrics[method] = {name: value["mean"] for name, value in summary.items()}
        methods[method] = {"metrics": summary, "folds": list(folds), "n_pairs": result.pairs.height,
                           "n_incorrect_pairs": int((~result.pairs["correct"]).sum()),
                           "n_problems": result.problems.height,
                           "per_pair_split": result.pair_split,
                           "per_problem_split": result.problem_split}
    single = [m for m, v in methods.items() if len(v["folds"]) == 1]
    if single:
        notes.append(f"one fold evaluated for {', '.join(single)}: std over folds is 0 and "
                     "t-tests run over pairs / problems, not folds")
    unseen = [m for m, v in methods.items() if v["per_pair_split"] == "problem"]
    if unseen:
        notes.append(f"per-pair metrics for {', '.join(unseen)} come from the problem split "
                     "(every student on problems unseen in training), not from unseen students")
    seen = [m for m, v in methods.items() if v["per_problem_split"] == "student"]
    if seen:
        notes.append(f"per-problem metrics for {', '.join(seen)} come from the student split "
                     "(test students on problems seen in training), not from unseen problems")
    t_tests = {}
    if REFERENCE_METHOD in results:
        names = sorted({n for m in methods.values() for n in m["metrics"]})
        for method, result in results.items():
            if method == REFERENCE_METHOD:
                continue
            tests = {name: paired_t_test(results[REFERENCE_METHOD], result, name, significance)
                     for name in names}
            t_tests[method] = {name: test for name, test in tests.items() if test is not None}
    else:
        notes.append("kaser not evaluated: no t-tests")
    names = sorted({n for m in methods.values() for n in m["metrics"]})
    evaluation = {"reference_method": REFERENCE_METHOD, "methods": methods, "t_tests": t_tests,
                  "higher_is_better": {n: higher_is_better(n) for n in names},
                  "significance": significance, "k_values": list(k_values),
                  "t_test_rule": (f"over folds when both methods share >= {MIN_FOLDS_FOR_FOLD_TEST} "
                                  "folds, else over pairs (student, problem) or problems"),
                  "std": "population std over folds (ddof 0)",
                  "reference": reference or {}, "notes": notes}
    return metrics, evaluation
