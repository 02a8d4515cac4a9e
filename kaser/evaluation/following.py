"""Does a simulator follow the student? Scores that a method cannot win by hedging, computed by
the evaluate stage for every method from its per-pair table (kaser.evaluation.scoring.pair_table).

    python stages/evaluate.py synthetic-python   # evaluation.json "follows_student", metrics.json

A simulator that ignores who the student is can still score well on all-pairs IoU@K by writing
one correct code among its K (a correct real code is matched by any clean sample), and on
CodeBLEU by writing the reference. What it cannot do is say *which* students will fail:
- `pass_auc@k`: the AUC of the pair's predicted pass rate (share of its first k samples that the
  judge finds free of every error) against the real code's correctness. A student-blind
  simulator scores 0.5 whatever its pass rate; one whose samples pass exactly for the students
  who pass scores 1.
- `pass_slope@k`: within a problem, the change in the predicted pass rate per standard deviation
  of the knowledge stage's mastery estimate (the mean over the problem's KCs of the number the
  prompt's levels are ranked from), a least-squares slope with one intercept per problem. The
  truth's own slope (`real_pass_slope`: real correctness on the same estimate) is the target;
  a simulator that ignores the profile scores 0.
- `iou_all_hedged@k`: the all-pairs IoU a student-blind hedge would get from the same method: its
  first k − 1 samples plus the problem's reference solution (a correct code: it matches every
  correct pair). IoU on incorrect pairs stays the headline for errors; this number beside
  `iou_all@k` shows how much of an all-pairs score a hedge buys.
Intervals: a percentile bootstrap over problems (resample the test problems with replacement and
take all their pairs; 2,000 seeded resamples), since pairs of one problem share its difficulty.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from kaser.evaluation.summary import BOOTSTRAP_RESAMPLES, CONFIDENCE

# metric -> whether a larger value is better; `pass_slope@k` is best near the truth's slope and
# has no direction of its own, so it is left out here
HIGHER_IS_BETTER = {"pass_auc": True, "iou_all_hedged": True, "prompt_word_share": False}


def auc(scores: Sequence[float], outcomes: Sequence[bool]) -> float | None:
    """Area under the ROC curve of `scores` for the positive `outcomes` (the Mann-Whitney
    statistic: the chance that a random positive scores above a random negative, ties counting
    one half). None without both a positive and a negative.

    >>> auc([0.2, 0.2, 0.2, 0.2], [True, False, True, False])   # student-blind: one score for all
    0.5
    >>> auc([1.0, 0.0, 1.0, 0.0], [True, False, True, False])   # copies the real outcome
    1.0
    >>> auc([0.6, 0.4, 0.2], [True, False, True])
    0.5
    """
    y = np.asarray(outcomes, dtype=bool)
    s = np.asarray(scores, dtype=float)
    positives, negatives = s[y], s[~y]
    if not len(positives) or not len(negatives):
        return None
    above = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return float((above + 0.5 * ties) / (len(positives) * len(negatives)))


def within_problem_slope(values: Sequence[float], mastery: Sequence[float],
                         problems: Sequence[str]) -> float | None:
    """Least-squares slope of `values` on `mastery` standardised within each problem (one
    intercept per problem): the change per within-problem standard deviation of mastery. None
    when no problem has a mastery spread.

    >>> within_problem_slope([0.0, 1.0, 0.5, 0.5], [0.1, 0.3, 0.6, 0.9], ["p", "p", "q", "q"])
    0.25
    """
    frame = pl.DataFrame({"y": np.asarray(values, dtype=float), "x": np.asarray(mastery, dtype=float),
                          "problem": list(problems)})
    frame = frame.with_columns((pl.col("x") - pl.col("x").mean().over("problem")).alias("x"),
                               (pl.col("y") - pl.col("y").mean().over("problem")).alias("y"))
    frame = frame.with_columns(pl.col("x").pow(2).mean().over("problem").sqrt().alias("sd"))
    frame = frame.filter(pl.col("sd") > 0).with_columns(pl.col("x") / pl.col("sd"))
    sxx = float((frame["x"] ** 2).sum()) if frame.height else 0.0
    if sxx == 0:
        return None
    return float((frame["x"] * frame["y"]).sum() / sxx)


def problem_bootstrap(statistic, frame: pl.DataFrame, resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = 0, confidence: float = CONFIDENCE) -> list[float] | None:
    """Percentile interval of `statistic(rows)` over resamples of `frame`'s problems (column
    `problem_id`, drawn with replacement, each with all its rows); None with fewer than 2
    problems or when the statistic is undefined on most resamples.

    >>> rows = pl.DataFrame({"problem_id": ["p", "q"], "v": [1.0, 1.0]})
    >>> problem_bootstrap(lambda r: float(r["v"].mean()), rows, resamples=50)
    [1.0, 1.0]
    """
    problems = sorted(frame["problem_id"].unique().to_list())
    if len(problems) < 2:
        return None
    column = frame["problem_id"].to_numpy()
    rows = [np.flatnonzero(column == p) for p in problems]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(problems), len(problems))
        value = statistic(frame[np.concatenate([rows[i] for i in drawn])])
        if value is not None:
            values.append(value)
    if len(values) < resamples / 2:
        return None
    tail = (1 - confidence) / 2 * 100
    return [float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))]


def _pass_auc(k: int):
    return lambda rows: auc(rows[f"pass_rate@{k}"].to_numpy(), rows["correct"].to_numpy())


def _pass_slope(column: str):
    def slope(rows: pl.DataFrame) -> float | None:
        known = rows.drop_nulls(["mastery_estimate", column])
        return within_problem_slope(known[column].cast(pl.Float64).to_numpy(),
                                    known["mastery_estimate"].to_numpy(), known["problem_id"].to_list())
    return slope


def _mean(column: str):
    return lambda rows: (float(rows[column].drop_nulls().mean())
                         if rows[column].drop_nulls().len() else None)


def _entry(statistic, rows: pl.DataFrame, seed: int) -> dict:
    return {"value": statistic(rows), "ci95_problems": problem_bootstrap(statistic, rows, seed=seed)}


def student_following(pairs: pl.DataFrame, k_values: Sequence[int], seed: int = 0) -> dict:
    """One method's scores of this module from its per-pair table: metric -> {value,
    ci95_problems}, plus n_pairs and n_problems. Needs the pair table's `correct`,
    `pass_rate@k` and `iou_all_hedged@k`; the slopes need `mastery_estimate` (null without the
    knowledge stage's table) and are null when it is missing."""
    result: dict = {"n_pairs": pairs.height, "n_problems": pairs["problem_id"].n_unique()}
    has_mastery = "mastery_estimate" in pairs.columns and pairs["mastery_estimate"].drop_nulls().len()
    for k in k_values:
        result[f"pass_rate@{k}"] = _entry(_mean(f"pass_rate@{k}"), pairs, seed)
        result[f"pass_auc@{k}"] = _entry(_pass_auc(k), pairs, seed)
        result[f"pass_slope@{k}"] = (_entry(_pass_slope(f"pass_rate@{k}"), pairs, seed)
                                     if has_mastery else None)
        result[f"iou_all_hedged@{k}"] = _entry(_mean(f"iou_all_hedged@{k}"), pairs, seed)
    for column in ("prompt_word_share", "no_return_share", "valid_share"):
        if column in pairs.columns:
            result[column] = _entry(_mean(column), pairs, seed)
    return result


def truth_following(pairs: pl.DataFrame, seed: int = 0) -> dict:
    """What the real codes of the same pairs do, the target of `student_following`: the real
    pass rate, the real correctness's slope on the mastery estimate within a problem, the AUC of
    the estimate itself for the real outcome (what the profile knows), and the real codes'
    shares without a `return` and valid (no Syntax-category error: they parse / compile)."""
    result: dict = {"real_pass_rate": _entry(_mean("correct"), pairs.with_columns(
        pl.col("correct").cast(pl.Float64)), seed)}
    if "mastery_estimate" in pairs.columns and pairs["mastery_estimate"].drop_nulls().len():
        known = pairs.drop_nulls("mastery_estimate")
        result["real_pass_slope"] = _entry(_pass_slope("correct"), known, seed)
        result["mastery_auc"] = _entry(
            lambda rows: auc(rows["mastery_estimate"].to_numpy(), rows["correct"].to_numpy()), known, seed)
    for column in ("real_no_return", "real_valid"):
        if column in pairs.columns:
            result[f"{column}_share"] = _entry(_mean(column), pairs, seed)
    return result
