"""Summaries of evaluated methods over test folds: per-fold values, mean ± std over folds, a 95%
confidence interval per method and metric, the paired t-tests of KASER against every other method
with Holm's correction over all of them, and the minimal detectable effect of each test
(kaser.evaluation.scoring scores the folds).

    python stages/evaluate.py synthetic-python   # reports/<ds>/metrics.json + evaluation.json

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
3. Not in the paper: every metric gets a 95% confidence interval over the units behind it,
   pooled over folds: a t-interval (mean ± t(0.975, n−1)·s/√n) over pairs or problems for the
   metrics that are means of a unit's value, and a percentile bootstrap over pairs (2,000 seeded
   resamples) for Table 2's precision / recall / F1, which are ratios of summed counts.
4. Not in the paper (which t-tests 17 metrics x 4 baselines at p < 0.05 each): the p-values of
   all tests (every metric x every method tested against KASER) are corrected together by
   Holm's step-down method; `significant` uses the corrected p (`p_holm`), the raw one is kept.
5. Each test reports its minimal detectable effect: the smallest true mean difference a paired
   two-sided t-test at alpha 0.05 detects with power 0.8 at its n, from the observed SD of the
   differences s_d: (t(1 − alpha/2, n−1) + t(power, n−1))·s_d/√n (the usual t-approximation;
   with n ≥ 30 within ~1% of the exact noncentral-t answer).
6. Not in the paper: every per-pair metric (and its paired difference) also gets a 95% interval
   from a two-stage bootstrap over problems (`problem_bootstrap_interval`: resample the problems
   with replacement, then each drawn problem's pairs, 2,000 seeded resamples, percentiles). The
   pair-level intervals of departure 3 treat pairs as independent; pairs of one problem share
   its difficulty, so for a claim about new problems (a study's 300 pairs may come from 6
   problems) the problem bootstrap is the honest width.
7. Per-problem comparisons use only the problems both methods have a value for (cosine distance
   and CodeBLEU^∁_max need at least 2 valid codes of a problem, so one method can have them where
   the other has not): a t-test over problems pairs them, a t-test over folds compares fold
   means over the common problems, and each test records both means it compared
   (`reference_mean`, `other_mean`) and the number of common problems. `common_problem_metrics`
   gives every method's per-problem metrics over the problems every method with a value has, for
   Table 3.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.stats import t as student_t
from scipy.stats import ttest_rel

from kaser.methods import REFERENCE_METHOD
from kaser.metrics.pair_metrics import HIGHER_IS_BETTER as PAIR_HIGHER_IS_BETTER
from kaser.metrics.pair_metrics import CategoryCounts
from kaser.metrics.problem_metrics import HIGHER_IS_BETTER as PROBLEM_HIGHER_IS_BETTER
from kaser.taxonomy import CATEGORIES

PROBLEM_METRICS = ("coverage_iou", "chi2_distance", "cosine_distance", "codebleu_complement_max",
                   "problem_valid_share", "error_rate_rmse", "pass_rate_error")
MIN_FOLDS_FOR_FOLD_TEST = 3
CONFIDENCE = 0.95
POWER = 0.8
BOOTSTRAP_RESAMPLES = 2000
SCORES = ("precision", "recall", "f1")   # Table 2's ratio metrics, from summed tp / fp / fn


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


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Two-sided t confidence interval of the mean; None with fewer than 2 values (departure 3).

    >>> [round(x, 4) for x in t_interval([1.0, 2.0, 3.0])]   # 2 ± t(0.975, 2)·1/√3 = 2 ± 4.3027·0.57735
    [-0.4841, 4.4841]
    """
    a = np.asarray(values, dtype=float)
    if len(a) < 2:
        return None
    half = student_t.ppf((1 + confidence) / 2, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a))
    return float(a.mean() - half), float(a.mean() + half)



def slope_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> dict | None:
    """Least-squares slope of `values` against their index (0, 1, ...) with its two-sided t
    interval (n - 2 degrees of freedom): is a per-step series rising? None with fewer than 3.

    >>> fit = slope_interval([0.0, 1.0, 2.0, 3.5])
    >>> round(fit["slope"], 3), [round(x, 3) for x in fit["interval"]], fit["n"]
    (1.15, [0.777, 1.523], 4)
    """
    y = np.asarray(values, dtype=float)
    if len(y) < 3:
        return None
    x = np.arange(len(y), dtype=float)
    sxx = ((x - x.mean()) ** 2).sum()
    slope = float(((x - x.mean()) * (y - y.mean())).sum() / sxx)
    residual = y - (y.mean() + slope * (x - x.mean()))
    error = float(np.sqrt((residual ** 2).sum() / (len(y) - 2) / sxx))
    half = float(student_t.ppf((1 + confidence) / 2, len(y) - 2)) * error
    return {"slope": slope, "interval": [slope - half, slope + half], "n": len(y)}


def within_slope_interval(values: Sequence[float], steps: Sequence[float], units: Sequence,
                          confidence: float = CONFIDENCE) -> dict | None:
    """Least-squares slope of `values` against `steps` with an intercept of its own for every
    unit (a fixed effect), with its two-sided t interval (n - units - 1 degrees of freedom): does
    a unit's value rise from one of its visits to the next? With GRPO's fixed pool of pairs
    revisited each epoch, the unit is the pair: the spread between pairs, which a plain slope
    over batches of different pairs counts as noise, drops out. None when the units leave no
    step spread or no degree of freedom.

    >>> fit = within_slope_interval([1.0, 5.0, 2.1, 6.0, 2.9, 7.1], [0, 0, 1, 1, 2, 2], "ababab")
    >>> round(fit["slope"], 3), [round(x, 3) for x in fit["interval"]], fit["n"], fit["units"]
    (1.0, [0.85, 1.15], 6, 2)
    """
    y, x = np.asarray(values, dtype=float), np.asarray(steps, dtype=float)
    if not len(y) == len(x) == len(units):
        raise ValueError(f"{len(y)} values, {len(x)} steps and {len(units)} units")
    codes = pl.Series(list(units)).cast(pl.String).rank("dense").to_numpy() - 1
    count = int(codes.max()) + 1 if len(codes) else 0
    dof = len(y) - count - 1
    if dof < 1:
        return None
    x_within = x - (np.bincount(codes, x, count) / np.bincount(codes, None, count))[codes]
    y_within = y - (np.bincount(codes, y, count) / np.bincount(codes, None, count))[codes]
    sxx = float((x_within ** 2).sum())
    if sxx == 0:
        return None
    slope = float((x_within * y_within).sum() / sxx)
    residual = y_within - slope * x_within
    error = float(np.sqrt((residual ** 2).sum() / dof / sxx))
    half = float(student_t.ppf((1 + confidence) / 2, dof)) * error
    return {"slope": slope, "interval": [slope - half, slope + half], "n": len(y), "units": count}


def ratio_scores(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall, F1 from summed (tp, fp, fn) rows, 0 where nothing is counted, as
    CategoryCounts.precision_recall_f1 does, for many rows at once."""
    tp, fp, fn = (counts[..., i].astype(float) for i in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1}


def bootstrap_ratio_intervals(counts: np.ndarray, confidence: float = CONFIDENCE,
                              resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
                              ) -> dict[str, tuple[float, float]] | None:
    """Percentile bootstrap intervals of precision / recall / F1 over pairs (rows of tp, fp, fn);
    None with fewer than 2 pairs (departure 3)."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1, 3)
    if len(counts) < 2:
        return None
    draws = np.random.default_rng(seed).integers(0, len(counts), size=(resamples, len(counts)))
    scores = ratio_scores(counts[draws].sum(axis=1))
    tail = (1 - confidence) / 2 * 100
    return {name: (float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail)))
            for name, v in scores.items()}


def problem_resample_sums(rows: np.ndarray, problems: Sequence, resamples: int = BOOTSTRAP_RESAMPLES,
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(sums (resamples, columns), counts (resamples,)) of a two-stage bootstrap (departure 6):
    per resample, as many problems as there are, drawn with replacement, and for each drawn
    problem as many of its pairs as it has, drawn with replacement; sums of the rows (pairs x
    columns) drawn and how many were drawn. Problems are taken in sorted order, so the same
    rows, problems and seed always give the same draws."""
    rows = np.asarray(rows, dtype=float).reshape(len(problems), -1)
    keys = np.asarray(problems, dtype=object)
    groups = [rows[keys == key] for key in sorted(set(problems))]
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, len(groups), size=(resamples, len(groups)))
    sums, counts = np.zeros((resamples, rows.shape[1])), np.zeros(resamples)
    for number, group in enumerate(groups):
        resample, _ = np.nonzero(chosen == number)       # one entry per draw of this problem
        if not len(resample):
            continue
        drawn = rng.integers(0, len(group), size=(len(resample), len(group)))
        np.add.at(sums, resample, group[drawn].sum(axis=1))
        np.add.at(counts, resample, len(group))
    return sums, counts


def problem_bootstrap_interval(values: Sequence[float], problems: Sequence, confidence: float = CONFIDENCE,
                               resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
                               ) -> tuple[float, float] | None:
    """Percentile interval of the mean over pairs under the problem bootstrap (departure 6); None
    with fewer than 2 problems.

    >>> problem_bootstrap_interval([0.5, 0.5, 0.5, 0.5], ["p", "p", "q", "q"])   # no spread
    (0.5, 0.5)
    >>> problem_bootstrap_interval([0.0, 1.0], ["p", "p"]) is None     # one problem: no interval
    True
    """
    if len(set(problems)) < 2:
        return None
    sums, counts = problem_resample_sums(np.asarray(values, dtype=float), problems, resamples, seed)
    means = sums[:, 0] / counts
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def problem_bootstrap_ratio_intervals(counts: np.ndarray, problems: Sequence,
                                      confidence: float = CONFIDENCE,
                                      resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
                                      ) -> dict[str, tuple[float, float]] | None:
    """Precision / recall / F1 intervals from (tp, fp, fn) rows of pairs under the problem
    bootstrap (departure 6); None with fewer than 2 problems."""
    if len(set(problems)) < 2:
        return None
    sums, _ = problem_resample_sums(np.asarray(counts).reshape(-1, 3), problems, resamples, seed)
    tail = (1 - confidence) / 2 * 100
    return {name: (float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail)))
            for name, v in ratio_scores(sums).items()}


def minimal_detectable_effect(differences: Sequence[float], alpha: float = 0.05,
                              power: float = POWER) -> float | None:
    """Smallest true mean difference a two-sided paired t-test at `alpha` detects with `power`,
    from the observed SD of the differences (departure 5); None with fewer than 2 pairs.

    >>> round(minimal_detectable_effect([0.0, 1.0, 2.0, 3.0]), 4)   # (3.1824 + 0.9785)·1.2910/2
    2.6859
    """
    d = np.asarray(differences, dtype=float)
    if len(d) < 2:
        return None
    df = len(d) - 1
    return float((student_t.ppf(1 - alpha / 2, df) + student_t.ppf(power, df))
                 * d.std(ddof=1) / np.sqrt(len(d)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (departure 4).

    >>> holm([0.01, 0.04, 0.03, 0.005])   # sorted x4, x3, x2, x1, then running max
    [0.03, 0.06, 0.06, 0.02]
    """
    order = np.argsort(p_values, kind="stable")
    m, running, adjusted = len(p_values), 0.0, [0.0] * len(p_values)
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


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
        result[int(fold)] = {name: float(part[name].drop_nulls().mean()) for name in PROBLEM_METRICS
                             if name in part.columns and part[name].drop_nulls().len()}
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

    def interval(self, metric: str, seed: int = 0) -> dict | None:
        """95% CI of one metric over its units pooled over folds (departure 3): {over, n, mean,
        low, high, method}, and for a per-pair metric `problem_bootstrap` {n_problems, low, high,
        method} (departure 6; None with fewer than 2 problems); None when fewer than 2 units have
        a value."""
        category, _, score = metric.rpartition("_")
        if score in SCORES and category in {c.lower() for c in CATEGORIES}:
            counts = self.pairs.select(f"{category}_tp", f"{category}_fp", f"{category}_fn").to_numpy()
            bounds = bootstrap_ratio_intervals(counts, seed=seed)
            if bounds is None:
                return None
            mean = float(ratio_scores(counts.sum(axis=0))[score])
            problems = self.pairs["problem_id"].to_list()
            by_problem = problem_bootstrap_ratio_intervals(counts, problems, seed=seed)
            return {"over": "pairs", "n": len(counts), "mean": mean, "low": bounds[score][0],
                    "high": bounds[score][1], "method": f"percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples",
                    "problem_bootstrap": _problem_bootstrap(by_problem and by_problem[score], problems)}
        over, units = self.unit_values(metric)
        if over != "none":
            units = units.drop_nulls("value")
        values = units["value"].to_numpy() if over != "none" else np.array([])
        bounds = t_interval(values)
        if bounds is None:
            return None
        result = {"over": over, "n": len(values), "mean": float(values.mean()), "low": bounds[0],
                  "high": bounds[1], "method": "t-interval"}
        if over == "pairs":
            problems = units["problem_id"].to_list()
            result["problem_bootstrap"] = _problem_bootstrap(
                problem_bootstrap_interval(values, problems, seed=seed), problems)
        return result


def _problem_bootstrap(bounds: tuple[float, float] | None, problems: Sequence) -> dict | None:
    if bounds is None:
        return None
    return {"n_problems": len(set(problems)), "low": bounds[0], "high": bounds[1],
            "method": f"two-stage bootstrap over problems, then pairs, {BOOTSTRAP_RESAMPLES} resamples"}


def common_problems(results: Sequence[MethodResult], metric: str) -> pl.DataFrame:
    """(fold, problem_id) where every one of `results` that has any value of the per-problem
    `metric` has one (departure 7)."""
    keys = None
    for result in results:
        present = result.problems.filter(pl.col(metric).is_not_null()).select("fold", "problem_id") \
            if result.problems.height and metric in result.problems.columns else None
        if present is None or not present.height:
            continue
        keys = present if keys is None else keys.join(present, on=["fold", "problem_id"])
    return keys if keys is not None else pl.DataFrame(schema={"fold": pl.Int64, "problem_id": pl.String})


def common_problem_metrics(results: Mapping[str, MethodResult]) -> dict[str, dict[str, dict]]:
    """method -> per-problem metric -> {mean, std, folds, per_fold, n_problems} over the problems
    every method with a value has (`common_problems`; departure 7): what Table 3 compares."""
    found: dict[str, dict[str, dict]] = {method: {} for method in results}
    for metric in PROBLEM_METRICS:
        keys = common_problems(list(results.values()), metric)
        for method, result in results.items():
            if not keys.height or metric not in result.problems.columns:
                continue
            part = result.problems.join(keys, on=["fold", "problem_id"]).drop_nulls(metric)
            if not part.height:
                continue
            folds = {int(fold): float(group[metric].mean())
                     for (fold,), group in part.group_by("fold", maintain_order=True)}
            summary = aggregate({fold: {metric: value} for fold, value in sorted(folds.items())})[metric]
            found[method][metric] = summary | {"n_problems": part.height}
    return found


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
    else over paired units (pairs or problems). A per-problem metric compares only the problems
    both methods have a value for (departure 7); a per-pair metric also gets the problem
    bootstrap of its paired differences (departure 6). None when the metric has no values."""
    over, left = reference.unit_values(metric)
    _, right = other.unit_values(metric)
    both = None
    if over != "none" and right.height:
        keys = [c for c in left.columns if c != "value"]
        both = left.join(right, on=keys, suffix="_other").drop_nulls(["value", "value_other"])
    if over == "problems":
        # departure 7: fold means (or units) over the problems both methods have
        folds = sorted(both["fold"].unique().to_list()) if both is not None else []
        if len(folds) >= MIN_FOLDS_FOR_FOLD_TEST:
            means = both.group_by("fold").agg(pl.col("value").mean(), pl.col("value_other").mean()).sort("fold")
            over, a, b = "folds", means["value"].to_numpy(), means["value_other"].to_numpy()
        elif both is not None:
            a, b = both["value"].to_numpy(), both["value_other"].to_numpy()
        else:
            return None
    else:
        mine, theirs = reference.fold_values(), other.fold_values()
        folds = [f for f in mine if f in theirs and metric in mine[f] and metric in theirs[f]]
        if len(folds) >= MIN_FOLDS_FOR_FOLD_TEST:
            over = "folds"
            a = np.array([mine[f][metric] for f in folds])
            b = np.array([theirs[f][metric] for f in folds])
        elif both is not None:
            a, b = both["value"].to_numpy(), both["value_other"].to_numpy()
        else:
            return None
    if not len(a):
        return None
    difference = float(np.mean(a) - np.mean(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # identical samples: scipy warns and returns nan
        test = ttest_rel(a, b) if len(a) >= 2 else None
    p_value = None if test is None or np.isnan(test.pvalue) else float(test.pvalue)
    better = difference > 0 if higher_is_better(metric) else difference < 0
    differences = a - b
    result = {"over": over, "n": int(len(a)), "mean_difference": difference,
              "reference_mean": float(np.mean(a)), "other_mean": float(np.mean(b)),
              "sd_difference": float(differences.std(ddof=1)) if len(a) >= 2 else None,
              "difference_ci95": t_interval(differences),
              "mde": minimal_detectable_effect(differences, significance),
              # a constant nonzero difference (e.g. a share that is 0 for one method) has t = ±inf
              "statistic": (None if p_value is None or not np.isfinite(test.statistic)
                            else float(test.statistic)), "p_value": p_value,
              "p_holm": p_value,   # corrected over every test of the run by correct_holm
              "reference_better": bool(better),
              "significant": bool(better and p_value is not None and p_value < significance)}
    if both is not None and "student_id" in both.columns:      # a per-pair metric: departure 6
        problems = both["problem_id"].to_list()
        result["difference_problem_ci95"] = problem_bootstrap_interval(
            (both["value"] - both["value_other"]).to_numpy(), problems)
        result["n_problems"] = len(set(problems))
    elif both is not None:
        result["n_problems"] = both.height
    return result


def correct_holm(t_tests: dict[str, dict[str, dict]], significance: float) -> int:
    """Holm-correct every test's p in place (departure 4): `p_holm`, and `significant` from it
    (`significant_uncorrected` keeps the raw verdict). Returns the family size."""
    family = [test for tests in t_tests.values() for test in tests.values() if test["p_value"] is not None]
    for test, adjusted in zip(family, holm([test["p_value"] for test in family])):
        test["significant_uncorrected"] = test["significant"]
        test["p_holm"] = adjusted
        test["significant"] = bool(test["reference_better"] and adjusted < significance)
    return len(family)


def summarise(results: Mapping[str, MethodResult], significance: float, k_values: Sequence[int],
              reference: dict | None = None) -> tuple[dict, dict]:
    """(metrics.json: method -> metric -> mean, numbers only; evaluation.json: everything)."""
    metrics, methods, notes = {}, {}, []
    for method, result in results.items():
        folds = result.fold_values()
        summary = aggregate(folds)
        metrics[method] = {name: value["mean"] for name, value in summary.items()}
        for name, value in summary.items():
            value["ci95"] = result.interval(name)
        methods[method] = {"metrics": summary, "folds": list(folds), "n_pairs": result.pairs.height,
                           "n_incorrect_pairs": int((~result.pairs["correct"]).sum()),
                           "n_problems": result.problems.height,
                           "per_pair_split": result.pair_split,
                           "per_problem_split": result.problem_split}
    for method, common in common_problem_metrics(results).items():
        methods[method]["common_problem_metrics"] = common
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
        family = correct_holm(t_tests, significance)
    else:
        family = 0
        notes.append("kaser not evaluated: no t-tests")
    names = sorted({n for m in methods.values() for n in m["metrics"]})
    evaluation = {"reference_method": REFERENCE_METHOD, "methods": methods, "t_tests": t_tests,
                  "higher_is_better": {n: higher_is_better(n) for n in names},
                  "significance": significance, "k_values": list(k_values),
                  "t_test_rule": (f"over folds when both methods share >= {MIN_FOLDS_FOR_FOLD_TEST} "
                                  "folds, else over pairs (student, problem) or problems"),
                  "std": "population std over folds (ddof 0)",
                  "ci95": ("t-interval over pairs / problems pooled over folds; precision / recall / "
                           f"F1: percentile bootstrap over pairs ({BOOTSTRAP_RESAMPLES} resamples); "
                           "beside it, for per-pair metrics, problem_bootstrap: resample problems, "
                           f"then pairs within them ({BOOTSTRAP_RESAMPLES} resamples)"),
                  "common_problems": ("per-problem t-tests compare the problems both methods have a "
                                      "value for; common_problem_metrics: every method over the "
                                      "problems every method with a value has"),
                  "correction": {"method": "holm", "family_size": family,
                                 "family": "every metric x every method t-tested against kaser"},
                  "mde": (f"paired two-sided t-test, alpha = significance, power {POWER}, from the "
                          "observed SD of the differences: (t(1-alpha/2, n-1) + t(power, n-1)) s_d / sqrt(n)"),
                  "reference": reference or {}, "notes": notes}
    return metrics, evaluation


def unit_scores(results: Mapping[str, MethodResult]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pair scores, problem scores): every method's per-pair and per-problem table stacked, one
    row per (method, pair) or (method, problem), `method` first; what every test and interval
    above is computed from (reports/<ds>/pair_scores.csv, problem_scores.csv)."""
    def stack(frames):
        frames = [frame.select(pl.lit(method).alias("method"), pl.all())
                  for method, frame in frames if frame.width]
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame({"method": []})
    return (stack((m, r.pairs) for m, r in results.items()),
            stack((m, r.problems) for m, r in results.items()))
