"""Knowledge tracing: the LSTM trains, stays in [0,1], is deterministic, keeps folds apart;
the baselines and metrics give the values worked out by hand."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import torch

from kaser import config
from kaser.knowledge.tracing import (KnowledgeParams, build_histories, correct_probability, load_checkpoint,
                             plot_mastery, run_knowledge, save_checkpoint, trace, train_final_model,
                             train_tracer)
from kaser.knowledge.baselines import (Attempts, bkt_predict, BKTParams, difficulty_baseline, fit_bkt,
                                mastery_spearman, mean_over_folds, pfa_baseline, pfa_features,
                                prediction_metrics, prior_counts)

KCS = ["kc_a", "kc_b", "kc_c", "kc_d"]
EMBEDDING_DIM = 8
FAST = config.settings(KnowledgeParams, "knowledge", projection=8, hidden_size=16, max_epochs=30, patience=5, batch_size=16,
                       learning_rate=0.02, seed=0)


def simulate(n_students=40, n_problems=10, seed=0):
    """Known-truth students: per-KC mastery starts low and grows with practice; an attempt is
    correct with probability = product of the mastery of the problem's KCs (before the attempt).
    The "code embedding" is noise plus a direction per outcome, as code would carry."""
    rng = np.random.default_rng(seed)
    problem_kcs = [[KCS[i % 4]] if i < 4 else sorted(rng.choice(KCS, 2, replace=False).tolist())
                   for i in range(n_problems)]
    problems = pl.DataFrame({
        "problem_id": [f"p{i:02d}" for i in range(n_problems)], "language": "python",
        "statement": [f"problem {i}" for i in range(n_problems)], "kcs": problem_kcs,
        "tests": None, "reference": None})
    outcome_direction = rng.normal(size=(2, EMBEDDING_DIM))
    rows, embeddings = [], []
    for s in range(n_students):
        mastery = rng.uniform(0.1, 0.7, size=len(KCS))
        rate = rng.uniform(0.1, 0.35)
        for step, p in enumerate(rng.permutation(n_problems)):
            used = [KCS.index(kc) for kc in problem_kcs[p]]
            right = bool(rng.random() < np.prod(mastery[used]))
            rows.append({"student_id": f"s{s:03d}", "problem_id": f"p{p:02d}", "step": step,
                         "code": f"def f(): return {s * 100 + p}", "score": float(right),
                         "correct": right, "true_errors": [] if right else ["Off-by-one error"],
                         "true_mastery": mastery.tolist()})
            embeddings.append(outcome_direction[int(right)] + rng.normal(size=EMBEDDING_DIM))
            mastery[used] += rate * (1 - mastery[used])
    submissions = pl.DataFrame(rows)
    students = sorted(submissions["student_id"].unique().to_list())
    folds = {"seed": 0, "by_student": [students[i::5] for i in range(5)],
             "by_problem": [problems["problem_id"].to_list()[i::5] for i in range(5)]}
    return problems, submissions, folds, np.array(embeddings, dtype=np.float32)


@pytest.fixture(scope="module")
def synthetic():
    return simulate()


@pytest.fixture(scope="module")
def cross_validated(synthetic):
    problems, submissions, folds, embeddings = synthetic
    return run_knowledge(problems, submissions, folds, embeddings, FAST)


# ------------------------------------------------------------------------------ the LSTM

def test_training_lowers_the_loss(synthetic):
    problems, submissions, _, embeddings = synthetic
    data = build_histories(problems, submissions, embeddings, KCS)
    _, history = train_tracer(data, np.arange(len(data.students)), FAST)
    assert history[-1]["train_loss"] < history[0]["train_loss"] - 0.02
    assert min(h["validation_loss"] for h in history) < history[0]["validation_loss"]


def test_mastery_is_a_profile_in_unit_interval_before_each_attempt(synthetic, cross_validated):
    _, submissions, _, _ = synthetic
    _, mastery = cross_validated
    assert mastery.columns == ["student_id", "problem_id", "step", "fold", "mastery"]
    assert mastery.schema["mastery"] == pl.List(pl.Float64)
    assert mastery.height == submissions.height
    values = np.array(mastery["mastery"].to_list())
    assert values.shape == (submissions.height, len(KCS))
    assert values.min() >= 0.0 and values.max() <= 1.0
    # step 0 is the learned prior: the same profile for every student of a fold model
    first = mastery.filter(pl.col("step") == 0)
    for fold in range(5):
        profiles = np.array(first.filter(pl.col("fold") == fold)["mastery"].to_list())
        assert np.allclose(profiles, profiles[0])


def test_every_student_gets_mastery_from_the_fold_that_held_them_out(synthetic, cross_validated):
    _, _, folds, _ = synthetic
    _, mastery = cross_validated
    fold_of = {s: i for i, members in enumerate(folds["by_student"]) for s in members}
    per_student = mastery.group_by("student_id").agg(pl.col("fold").unique())
    for student, fold_list in per_student.iter_rows():
        assert fold_list == [fold_of[student]]


def test_held_out_mastery_equals_a_model_trained_without_those_students(synthetic, cross_validated):
    problems, submissions, folds, embeddings = synthetic
    _, mastery = cross_validated
    data = build_histories(problems, submissions, embeddings, KCS)
    test = np.array([data.students.index(s) for s in folds["by_student"][2]])
    train = np.setdiff1d(np.arange(len(data.students)), test)
    model, _ = train_tracer(data, train, FAST, desc="KT fold 2")
    profiles, _ = trace(model, data, test, FAST.aggregate)
    expected = mastery.filter(pl.col("fold") == 2).sort("student_id", "step")
    assert np.allclose(np.array(expected["mastery"].to_list()), profiles, atol=1e-6)


def test_training_is_deterministic_given_the_seed(synthetic):
    problems, submissions, _, embeddings = synthetic
    data = build_histories(problems, submissions, embeddings, KCS)
    everyone = np.arange(len(data.students))
    runs = [trace(train_tracer(data, everyone, FAST)[0], data, everyone, "product")[0]
            for _ in range(2)]
    other_seed = trace(train_tracer(data, everyone, replace(FAST, seed=1))[0],
                       data, everyone, "product")[0]
    assert np.array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], other_seed)


def test_report_has_every_model_and_beats_difficulty_on_known_truth(cross_validated):
    report, _ = cross_validated
    assert report["kcs"] == KCS
    assert set(report["models"]) == {"lstm", "difficulty", "pfa", "bkt"}
    assert len(report["per_fold"]) == 5
    for metrics in report["models"].values():
        assert 0.5 < metrics["auc"] <= 1 and 0 <= metrics["accuracy"] <= 1 and metrics["log_loss"] > 0
    json.dumps(report)   # serialisable as it is
    # on students whose success is driven by growing mastery, tracing beats item difficulty
    assert report["models"]["lstm"]["auc"] > report["models"]["difficulty"]["auc"]
    assert report["spearman"]["attempted_kcs"] > 0.3
    assert report["spearman"]["n_attempted_kcs"] < report["spearman"]["n_all_kcs"]


@pytest.mark.parametrize("aggregate, ease, expected", [
    ("product", None, 0.5 * 0.8),              # problem with KCs 0 and 2: product of their mastery
    ("mean", None, (0.5 + 0.8) / 2),           # or their mean
    ("product", 0.0, 0.5 * 0.8 * 0.5),         # times the problem's ease factor sigmoid(0)
])
def test_correct_probability_aggregates_the_next_problems_kcs(aggregate, ease, expected):
    mastery = torch.tensor([[[0.5, 0.1, 0.8], [0.9, 0.9, 0.9]]])   # before attempt 0, after it
    logits = torch.log(mastery / (1 - mastery))
    kcs = torch.tensor([[[1.0, 0.0, 1.0]]])
    ease = None if ease is None else torch.tensor([[ease]])
    assert correct_probability(logits, kcs, aggregate, ease).item() == pytest.approx(expected)


def test_kc_shrinkage_pulls_the_kcs_read_outs_together(synthetic):
    problems, submissions, _, embeddings = synthetic
    data = build_histories(problems, submissions, embeddings, KCS)
    everyone = np.arange(len(data.students))
    free, _ = train_tracer(data, everyone, FAST)
    shrunk, _ = train_tracer(data, everyone, replace(FAST, kc_shrinkage=1.0))
    assert shrunk.kc_spread().item() < 0.5 * free.kc_spread().item()


@pytest.mark.parametrize("problem_ease", [False, True])
def test_checkpoint_round_trip(synthetic, tmp_path, problem_ease):
    problems, submissions, _, embeddings = synthetic
    model, config = train_final_model(problems, submissions, embeddings,
                                      replace(FAST, max_epochs=2, problem_ease=problem_ease))
    save_checkpoint(model, config, tmp_path / "knowledge")
    loaded, loaded_config = load_checkpoint(tmp_path / "knowledge")
    data = build_histories(problems, submissions, embeddings, KCS)
    students = np.arange(3)
    assert loaded_config["kcs"] == KCS
    for before, after in zip(trace(model, data, students, "product"),
                             trace(loaded, data, students, "product")):
        assert np.array_equal(before, after)     # same profiles, same P(correct)


def test_mastery_plot_names_its_lines(synthetic, cross_validated):
    problems, submissions, _, _ = synthetic
    _, mastery = cross_validated
    figure = plot_mastery(mastery, submissions, problems, KCS, n_kcs=2)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert len([label for label in labels if label.endswith("(true)")]) == 2
    assert len([label for label in labels if label.endswith("(estimated)")]) == 2


# ------------------------------------------------------------------------------ baselines, metrics

def attempts(student, problem, kcs, correct):
    return Attempts(np.array(student), np.array(problem), np.array(kcs, dtype=np.float32),
                    np.array(correct, dtype=np.float64))


@pytest.mark.parametrize("correct, probability, expected", [
    # perfect ranking, all on the right side of 0.5
    ([0, 0, 1, 1], [0.1, 0.4, 0.6, 0.9],
     {"auc": 1.0, "accuracy": 1.0, "log_loss": -np.mean(np.log([0.9, 0.6, 0.6, 0.9]))}),
    # one of the four (miss, hit) pairs in the wrong order (0.7 > 0.6); one wrong side of 0.5
    ([0, 0, 1, 1], [0.2, 0.7, 0.6, 0.9],
     {"auc": 0.75, "accuracy": 0.75, "log_loss": -np.mean(np.log([0.8, 0.3, 0.6, 0.9]))}),
    # a tie between classes counts half; 0.5 is predicted correct
    ([0, 1], [0.5, 0.5], {"auc": 0.5, "accuracy": 0.5, "log_loss": np.log(2)}),
    # one class only: AUC undefined; probability 1 on a miss is clipped, not infinite
    ([0, 0], [0.0, 1.0], {"auc": None, "accuracy": 0.5, "log_loss": -np.log(1e-7) / 2}),
])
def test_prediction_metrics(correct, probability, expected):
    result = prediction_metrics(np.array(correct), np.array(probability))
    assert result["auc"] == (pytest.approx(expected["auc"]) if expected["auc"] is not None else None)
    assert result["accuracy"] == pytest.approx(expected["accuracy"])
    assert result["log_loss"] == pytest.approx(expected["log_loss"], rel=1e-6)


def test_difficulty_is_the_training_share_correct_and_overall_for_unseen_problems():
    train = attempts([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [[1]] * 5, [1, 0, 1, 1, 0])
    test = attempts([3, 3, 3], [1, 0, 2], [[1]] * 3, [0, 0, 0])
    # problem 0: 2 of 3 right; problem 1: 1 of 2; problem 2 unseen: 3 of 5 overall
    assert difficulty_baseline(train, test) == pytest.approx([1 / 2, 2 / 3, 3 / 5])


def test_prior_counts_use_only_the_students_own_earlier_attempts():
    data = attempts([0, 0, 0, 1, 1], [0, 1, 2, 0, 1],
                    [[1, 0], [1, 1], [0, 1], [1, 0], [1, 0]], [1, 0, 1, 0, 1])
    success, failure = prior_counts(data)
    assert success.tolist() == [[0, 0], [1, 0], [1, 0], [0, 0], [0, 0]]
    assert failure.tolist() == [[0, 0], [0, 0], [1, 1], [0, 0], [1, 0]]
    # features are masked by the current problem's KCs: row 2 practises KC 1 only
    assert pfa_features(data)[2].tolist() == [0, 1, 0, 0, 0, 1]


def test_pfa_learns_that_earlier_success_predicts_success():
    rng = np.random.default_rng(0)
    student, correct = [], []
    for s in range(60):
        skilled = s % 2
        for _ in range(6):
            student.append(s)
            correct.append(float(rng.random() < (0.85 if skilled else 0.15)))
    data = attempts(student, [0] * len(student), [[1]] * len(student), correct)
    predicted = pfa_baseline(data, data)
    later = np.arange(len(student)) % 6 == 5
    skilled_rows = np.array(student) % 2 == 1
    assert predicted[later & skilled_rows].mean() > predicted[later & ~skilled_rows].mean() + 0.3


def test_bkt_prediction_follows_the_update_rules():
    params = [BKTParams(init=0.5, learn=0.2, guess=0.2, slip=0.1)]
    data = attempts([0, 0], [0, 0], [[1], [1]], [1, 0])
    # first attempt: 0.5 * 0.9 + 0.5 * 0.2 = 0.55; after a correct answer,
    # P(known) = 0.45 / 0.55, then learning: k + (1 - k) * 0.2
    known = 0.45 / 0.55
    known = known + (1 - known) * 0.2
    assert bkt_predict(params, data) == pytest.approx([0.55, known * 0.9 + (1 - known) * 0.2])


def test_bkt_averages_over_a_problems_kcs_and_fits_learners():
    params = [BKTParams(0.9, 0.1, 0.2, 0.1), BKTParams(0.1, 0.1, 0.2, 0.1)]
    data = attempts([0], [0], [[1, 1]], [1])
    assert bkt_predict(params, data) == pytest.approx([(0.83 + 0.27) / 2])
    # students who fail twice then succeed: the fit finds a low prior and a real learning rate
    learners = attempts(np.repeat(np.arange(30), 4), [0] * 120, [[1]] * 120, [0, 0, 1, 1] * 30)
    fitted = fit_bkt(learners)[0]
    assert fitted.init < 0.3 and fitted.learn >= 0.2


def test_mastery_spearman_over_attempted_kcs_and_over_all():
    problems = pl.DataFrame({"problem_id": ["p1", "p2"], "kcs": [["a"], ["b"]]})
    # KC a (attempted in rows 1-2) is estimated in the true order; KC b (attempted in row 3)
    # in the reverse order of its truth elsewhere
    rows = [("s1", 0, "p1", [0.1, 0.9], [0.2, 0.1]),
            ("s1", 1, "p1", [0.5, 0.8], [0.6, 0.2]),
            ("s2", 0, "p2", [0.7, 0.7], [0.9, 0.3])]
    mastery = pl.DataFrame({"student_id": [r[0] for r in rows], "step": [r[1] for r in rows],
                            "problem_id": [r[2] for r in rows], "mastery": [r[3] for r in rows]})
    submissions = pl.DataFrame({"student_id": [r[0] for r in rows], "step": [r[1] for r in rows],
                                "true_mastery": [r[4] for r in rows]})
    result = mastery_spearman(mastery, submissions, problems, ["a", "b"])
    # attempted: estimated (0.1, 0.5, 0.7) vs true (0.2, 0.6, 0.3): ranks (1,2,3) vs (1,3,2)
    assert result["attempted_kcs"] == pytest.approx(0.5)
    assert result["n_attempted_kcs"] == 3 and result["n_all_kcs"] == 6
    assert result["all_kcs"] < result["attempted_kcs"]


def test_mean_over_folds_skips_undefined_values():
    folds = [{"m": {"auc": 0.6, "log_loss": 0.5}}, {"m": {"auc": None, "log_loss": 0.7}}]
    assert mean_over_folds(folds) == {"m": {"auc": 0.6, "auc_std": 0.0, "log_loss": pytest.approx(0.6),
                                            "log_loss_std": pytest.approx(0.1)}}
