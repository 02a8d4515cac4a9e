"""Knowledge-tracing baselines and the metrics every KT model is scored with (next-attempt AUC,
accuracy, log-loss; on synthetic data, Spearman of estimated against true mastery).

The knowledge stage (`python stages/knowledge.py <dataset>`) runs these on the same 5 folds by
student as the LSTM and writes their scores beside it in `reports/<ds>/knowledge.json`. Each
baseline is a function `(train: Attempts, test: Attempts) -> P(correct) per test attempt`, where
an attempt at step t of a test student may use that student's attempts 0..t-1 (never t itself):

- `difficulty`: share of training students who got the problem right (unseen problem: the
  training rate over all attempts). Knows nothing about the student.
- `pfa`: Performance Factors Analysis as a logistic regression: for each KC of the problem an
  easiness term plus weights on the student's earlier successes and failures on that KC.
- `bkt`: Bayesian Knowledge Tracing, one (p_init, p_learn, p_guess, p_slip) per KC, no
  forgetting, fitted by grid search on the training students' likelihood.

Departures from the textbook models, and why:
1. BKT is a single-skill model; an attempt on a problem with several KCs is an observation of
   each of its KCs (the usual "duplicate the row per skill" treatment), and its prediction is the
   **mean** over the problem's KCs of each KC's P(correct). Each per-KC model was fitted to predict
   the whole attempt's correctness, so each is already an estimate of the same probability; the
   product would count guessing and slipping once per KC and push multi-KC problems towards 0.
2. BKT is fitted by a grid search (2,000 points) rather than EM: exact, deterministic, and a
   few seconds for ~20 KCs, where EM needs restarts to avoid degenerate optima (guess > 1 - slip).
   Guess and slip are kept below 0.5, the usual identifiability constraint.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import polars as pl
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from kaser import InputError

PROBABILITY_FLOOR = 1e-7   # log-loss clips predictions to [floor, 1 - floor]


@dataclass(frozen=True)
class Attempts:
    """Attempts as arrays, rows ordered by student, then step.

    student: (N,) int index of the student; problem: (N,) int index of the problem;
    kcs: (N, K) float32 multi-hot of the problem's KCs; correct: (N,) float64 in {0, 1}.
    """
    student: np.ndarray
    problem: np.ndarray
    kcs: np.ndarray
    correct: np.ndarray

    def __post_init__(self):
        n = len(self.student)
        if not (len(self.problem) == len(self.kcs) == len(self.correct) == n):
            raise ValueError("Attempts arrays differ in length")
        if n and np.any(np.diff(self.student) < 0):
            raise ValueError("Attempts must be ordered by student")

    def select(self, students: np.ndarray) -> "Attempts":
        """The attempts of the given student indices (order of rows kept)."""
        keep = np.isin(self.student, students)
        return Attempts(self.student[keep], self.problem[keep], self.kcs[keep], self.correct[keep])


def prediction_metrics(correct: np.ndarray, probability: np.ndarray) -> dict[str, float | None]:
    """AUC, accuracy (threshold 0.5) and log-loss; AUC is None when only one class occurs.

    >>> m = prediction_metrics(np.array([0, 1, 1]), np.array([0.2, 0.6, 0.4]))
    >>> m["auc"], round(m["accuracy"], 3), round(m["log_loss"], 3)   # -mean(log .8, log .6, log .4)
    (1.0, 0.667, 0.55)
    """
    correct = np.asarray(correct, dtype=np.float64)
    probability = np.clip(np.asarray(probability, dtype=np.float64),
                          PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR)
    both_classes = 0 < correct.sum() < len(correct)
    return {
        "auc": float(roc_auc_score(correct, probability)) if both_classes else None,
        "accuracy": float(np.mean((probability >= 0.5) == (correct == 1))),
        "log_loss": float(-np.mean(correct * np.log(probability)
                                   + (1 - correct) * np.log(1 - probability))),
    }


def mean_over_folds(per_fold: list[dict[str, dict]]) -> dict[str, dict]:
    """{model: {metric: mean, metric_std: std}} over folds; None values (one-class AUC) are skipped."""
    means = {}
    for name in per_fold[0]:
        means[name] = {}
        for metric in per_fold[0][name]:
            values = [f[name][metric] for f in per_fold if f[name][metric] is not None]
            means[name][metric] = float(np.mean(values)) if values else None
            means[name][f"{metric}_std"] = float(np.std(values)) if values else None
    return means


def mastery_spearman(mastery: pl.DataFrame, submissions: pl.DataFrame,
                     problems: pl.DataFrame, kcs: list[str]) -> dict:
    """Spearman between estimated and true mastery, pooled over (student, step, KC).

    "attempted_kcs" (the headline) uses only the KCs of the problem attempted at that step: those
    are the entries the loss constrains at that step and the ones a prompt states for that
    problem. "all_kcs" uses every KC of the vocabulary.
    """
    joined = mastery.join(submissions.select("student_id", "step", "true_mastery"),
                          on=["student_id", "step"], how="inner")
    estimated = np.array(joined["mastery"].to_list(), dtype=np.float64)
    true = np.array(joined["true_mastery"].to_list(), dtype=np.float64)
    if true.shape != estimated.shape:
        raise InputError(f"true_mastery has {true.shape[-1]} values per row, the KC vocabulary "
                         f"{len(kcs)}", file="submissions.parquet", column="true_mastery")
    kc_index = {kc: j for j, kc in enumerate(kcs)}
    problem_kcs = dict(zip(problems["problem_id"].to_list(), problems["kcs"].to_list()))
    attempted = np.zeros_like(estimated, dtype=bool)
    for i, problem_id in enumerate(joined["problem_id"].to_list()):
        attempted[i, [kc_index[kc] for kc in problem_kcs[problem_id]]] = True
    return {
        "attempted_kcs": float(spearmanr(estimated[attempted], true[attempted]).statistic),
        "all_kcs": float(spearmanr(estimated.ravel(), true.ravel()).statistic),
        "n_attempted_kcs": int(attempted.sum()),
        "n_all_kcs": int(estimated.size),
    }


def difficulty_baseline(train: Attempts, test: Attempts) -> np.ndarray:
    """P(correct) = the problem's share correct among training attempts (unseen: overall share)."""
    overall = train.correct.mean() if len(train.correct) else 0.5
    n_problems = int(max(train.problem.max(initial=-1), test.problem.max(initial=-1))) + 1
    right = np.bincount(train.problem, weights=train.correct, minlength=n_problems)
    seen = np.bincount(train.problem, minlength=n_problems)
    rate = np.where(seen > 0, right / np.maximum(seen, 1), overall)
    return rate[test.problem]


def prior_counts(attempts: Attempts) -> tuple[np.ndarray, np.ndarray]:
    """Per attempt and KC: the student's earlier successes and failures on that KC, (N, K) each.

    Counts include only the student's own earlier rows, never the current one.
    """
    success = attempts.kcs * attempts.correct[:, None]
    failure = attempts.kcs * (1 - attempts.correct)[:, None]
    first_row = np.searchsorted(attempts.student, attempts.student, side="left")
    counts = []
    for per_row in (success, failure):
        before = np.cumsum(per_row, axis=0) - per_row          # all earlier rows, any student
        counts.append(before - before[first_row])               # minus rows of earlier students
    return counts[0], counts[1]


def pfa_features(attempts: Attempts) -> np.ndarray:
    """PFA design matrix: [KC indicators, KC x prior successes, KC x prior failures], (N, 3K)."""
    success, failure = prior_counts(attempts)
    return np.hstack([attempts.kcs, attempts.kcs * success, attempts.kcs * failure])


def pfa_baseline(train: Attempts, test: Attempts) -> np.ndarray:
    """Logistic regression on `pfa_features` (L2, C=1); one class only: that class's rate."""
    if len(np.unique(train.correct)) < 2:
        return np.full(len(test.correct), train.correct.mean() if len(train.correct) else 0.5)
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit(pfa_features(train), train.correct.astype(int))
    return model.predict_proba(pfa_features(test))[:, 1]


@dataclass(frozen=True)
class BKTParams:
    init: float
    learn: float
    guess: float
    slip: float


# The search grid: p_init x p_learn x p_guess x p_slip = 10 x 8 x 5 x 5 = 2,000 points.
BKT_GRID = np.array(list(itertools.product(
    np.arange(0.05, 1.0, 0.1),
    (0.01, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4),
    (0.05, 0.15, 0.25, 0.35, 0.45),
    (0.05, 0.15, 0.25, 0.35, 0.45),
)))


def _kc_sequences(attempts: Attempts, kc: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Per student, the attempts that practise `kc`: padded correctness, mask, and row indices."""
    rows = np.flatnonzero(attempts.kcs[:, kc] > 0)
    students, starts = np.unique(attempts.student[rows], return_index=True)
    groups = np.split(rows, starts[1:]) if len(rows) else []
    length = max((len(g) for g in groups), default=0)
    observed = np.zeros((len(groups), length))
    mask = np.zeros((len(groups), length), dtype=bool)
    for i, group in enumerate(groups):
        observed[i, :len(group)] = attempts.correct[group]
        mask[i, :len(group)] = True
    return observed, mask, groups


def _bkt_forward(params: np.ndarray, observed: np.ndarray, mask: np.ndarray,
                 keep_predictions: bool = False):
    """Run BKT for every parameter row (G, 4) on every sequence (S, L).

    Returns P(correct) before each observation, (G, S, L) (None unless `keep_predictions`),
    and the log-likelihood of each parameter row, (G,).
    """
    init, learn, guess, slip = (params[:, i:i + 1] for i in range(4))
    known = np.broadcast_to(init, (len(params), observed.shape[0])).copy()
    predicted = np.zeros((len(params),) + observed.shape) if keep_predictions else None
    loglik = np.zeros(len(params))
    for step in range(observed.shape[1]):
        right, active = observed[:, step], mask[:, step]
        p_right = known * (1 - slip) + (1 - known) * guess
        if keep_predictions:
            predicted[:, :, step] = p_right
        loglik += np.where(active, right * np.log(p_right) + (1 - right) * np.log(1 - p_right),
                           0.0).sum(axis=1)
        posterior = np.where(right > 0, known * (1 - slip) / p_right,
                             known * slip / (1 - p_right))
        known = np.where(active, posterior + (1 - posterior) * learn, known)
    return predicted, loglik


def fit_bkt(attempts: Attempts) -> list[BKTParams]:
    """Maximum-likelihood BKT parameters per KC over `BKT_GRID` (a KC never practised: grid middle)."""
    fitted = []
    for kc in range(attempts.kcs.shape[1]):
        observed, mask, _ = _kc_sequences(attempts, kc)
        if not mask.any():
            fitted.append(BKTParams(0.5, 0.1, 0.25, 0.25))
            continue
        _, loglik = _bkt_forward(BKT_GRID, observed, mask)
        fitted.append(BKTParams(*map(float, BKT_GRID[int(np.argmax(loglik))])))
    return fitted


def bkt_predict(params: list[BKTParams], attempts: Attempts) -> np.ndarray:
    """P(correct) per attempt: mean over the problem's KCs of the KC's BKT prediction (see 1.)."""
    total = np.zeros(len(attempts.correct))
    for kc, p in enumerate(params):
        observed, mask, groups = _kc_sequences(attempts, kc)
        if not groups:
            continue
        grid_row = np.array([[p.init, p.learn, p.guess, p.slip]])
        predicted, _ = _bkt_forward(grid_row, observed, mask, keep_predictions=True)
        for i, group in enumerate(groups):
            total[group] += predicted[0, i, :len(group)]
    n_kcs = attempts.kcs.sum(axis=1)
    return np.where(n_kcs > 0, total / np.maximum(n_kcs, 1), 0.5)


def bkt_baseline(train: Attempts, test: Attempts) -> np.ndarray:
    return bkt_predict(fit_bkt(train), test)


# name in knowledge.json -> baseline
BASELINES: dict[str, Callable[[Attempts, Attempts], np.ndarray]] = {
    "difficulty": difficulty_baseline,
    "pfa": pfa_baseline,
    "bkt": bkt_baseline,
}
