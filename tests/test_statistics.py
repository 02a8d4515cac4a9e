"""The evaluation's statistics (kaser.evaluation.summary): confidence intervals, Holm's
correction, the minimal detectable effect, and how summarise attaches them. Every expected value
is worked out by hand from t tables (t(0.975, 2) = 4.302653, t(0.975, 3) = 3.182446,
t(0.975, 4) = 2.776445, t(0.8, 3) = 0.978472, t(0.975, 29) = 2.045230, t(0.8, 29) = 0.854192)."""

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import t as student_t
from scipy.stats import ttest_rel

from kaser.evaluation.summary import (MethodResult, bootstrap_ratio_intervals, holm,
                                      minimal_detectable_effect, problem_bootstrap_interval,
                                      slope_interval, summarise, t_interval, unit_scores,
                                      within_slope_interval)
from kaser.taxonomy import CATEGORIES


@pytest.mark.parametrize("values, expected", [
    # mean 2, s 1, n 3: 2 ± 4.302653/√3
    ([1.0, 2.0, 3.0], (2 - 2.484138, 2 + 2.484138)),
    # mean 0.6, s √0.3, n 5: 0.6 ± 2.776445·0.244949
    ([0.0, 0.0, 1.0, 1.0, 1.0], (0.6 - 0.680087, 0.6 + 0.680087)),
    # no spread: the interval is the point
    ([0.5, 0.5], (0.5, 0.5)),
    # one value: no interval
    ([0.7], None),
])
def test_t_interval(values, expected):
    result = t_interval(values)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("differences, expected", [
    # s_d = 1.290994, n 4: (3.182446 + 0.978472)·1.290994/2
    ([0.0, 1.0, 2.0, 3.0], 2.685853),
    # ±1 fifteen times each: s_d = √(30/29), n 30: (2.045230 + 0.854192)·1.017095/√30
    ([-1.0, 1.0] * 15, 0.538409),
    # no spread in the differences: any non-zero effect is detected
    ([0.2, 0.2, 0.2], 0.0),
    # one pair: undefined
    ([0.3], None),
])
def test_minimal_detectable_effect(differences, expected):
    result = minimal_detectable_effect(differences)
    assert result == (None if expected is None else pytest.approx(expected, abs=1e-5))


def test_within_slope_is_the_slope_of_a_regression_with_one_intercept_per_unit():
    """Against least squares on step + one indicator column per unit, written out."""
    rng = np.random.default_rng(3)
    units = np.repeat(np.arange(6), 4)
    steps = rng.permutation(24).astype(float)
    values = 0.02 * steps + rng.normal(0, 0.5, 6)[units] + rng.normal(0, 0.05, 24)
    design = np.column_stack([steps, np.eye(6)[units]])
    coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
    residual = values - design @ coefficients
    dof = 24 - 7
    error = math.sqrt(residual @ residual / dof * np.linalg.inv(design.T @ design)[0, 0])
    fit = within_slope_interval(values, steps, units)
    assert fit["slope"] == pytest.approx(coefficients[0])
    assert fit["interval"] == pytest.approx([coefficients[0] - student_t.ppf(0.975, dof) * error,
                                             coefficients[0] + student_t.ppf(0.975, dof) * error])
    assert (fit["n"], fit["units"]) == (24, 6)
    # the units' spread hides the rise from a plain slope over the same values, not from this one
    assert fit["interval"][0] > 0 > slope_interval(values[np.argsort(steps)])["interval"][0]


def test_within_slope_needs_a_step_spread_inside_a_unit_and_a_degree_of_freedom():
    assert within_slope_interval([1.0, 2.0, 3.0], [0, 1, 2], ["a", "b", "c"]) is None
    assert within_slope_interval([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], ["a", "a", "b", "b"]) is None
    with pytest.raises(ValueError):
        within_slope_interval([1.0, 2.0], [0, 1, 2], ["a", "a"])


def test_minimal_detectable_effect_tends_to_the_normal_formula():
    # large n: (z(0.975) + z(0.8))·s_d/√n = (1.959964 + 0.841621)·1/100
    differences = np.tile([-1.0, 1.0], 5000)
    assert minimal_detectable_effect(differences) == pytest.approx(
        2.801585 * differences.std(ddof=1) / 100, rel=1e-3)


@pytest.mark.parametrize("p_values, expected", [
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> running max 0.06
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
    # one test: unchanged
    ([0.5], [0.5]),
    # the larger p keeps its value, the smaller doubles
    ([0.2, 0.6], [0.4, 0.6]),
    # step-down monotone: 0.3·2 = 0.6 carries over to the larger 0.4
    ([0.4, 0.3], [0.6, 0.6]),
    # capped at 1
    ([0.6, 0.7], [1.0, 1.0]),
    # ties: both times 2
    ([0.01, 0.01], [0.02, 0.02]),
])
def test_holm(p_values, expected):
    assert holm(p_values) == pytest.approx(expected, abs=1e-12)


def test_bootstrap_of_identical_pairs_is_the_point_value():
    # every pair tp 1, fp 1, fn 0: precision 1/2, recall 1, F1 2/3 in every resample
    bounds = bootstrap_ratio_intervals(np.array([[1, 1, 0]] * 5))
    assert bounds["precision"] == pytest.approx((0.5, 0.5))
    assert bounds["recall"] == pytest.approx((1.0, 1.0))
    assert bounds["f1"] == pytest.approx((2 / 3, 2 / 3))
    assert bootstrap_ratio_intervals(np.array([[1, 0, 0]])) is None


def pairs_frame(codebleu, iou_all, iou_incorrect, syntax_counts):
    """A per-pair table as kaser.evaluation.scoring.pair_table writes it, K = 1, one fold."""
    n = len(codebleu)
    columns = {"fold": [0] * n, "student_id": [f"s{i}" for i in range(n)], "problem_id": ["p1"] * n,
               "correct": [value is None for value in iou_incorrect],
               "codebleu@1": codebleu, "iou_all@1": iou_all, "iou_incorrect@1": iou_incorrect,
               "knowledge_alignment": [None] * n}
    for category in CATEGORIES:
        counts = syntax_counts if category == "Syntax" else [(0, 0, 0)] * n
        for i, name in enumerate(("tp", "fp", "fn")):
            columns[f"{category.lower()}_{name}"] = [c[i] for c in counts]
    schema = {"codebleu@1": pl.Float64, "iou_all@1": pl.Float64, "iou_incorrect@1": pl.Float64,
              "knowledge_alignment": pl.Float64}
    return pl.DataFrame(columns, schema_overrides=schema)


def hand_results():
    kaser = pairs_frame([0.5, 0.6, 0.7, 0.8], [1.0, 0.0, 1.0, 0.5], [None, 0.0, 1.0, 0.5],
                        [(1, 0, 0), (0, 1, 0), (1, 0, 1), (0, 0, 0)])
    sft = pairs_frame([0.4, 0.4, 0.6, 0.5], [0.0, 0.0, 1.0, 0.5], [None, 0.0, 1.0, 0.5],
                      [(0, 0, 1), (0, 0, 0), (0, 0, 1), (0, 0, 0)])
    return {name: MethodResult(frame, pl.DataFrame(), (1,)) for name, frame in
            (("kaser", kaser), ("student_sft", sft))}


def test_summarise_attaches_intervals_holm_and_mde():
    _, evaluation = summarise(hand_results(), 0.05, (1,))
    tests = evaluation["t_tests"]["student_sft"]
    # CodeBLEU@1 differences 0.1, 0.2, 0.1, 0.3: mean 0.175, s_d 0.095743, t = 0.175/(0.095743/2)
    codebleu = tests["codebleu@1"]
    assert (codebleu["over"], codebleu["n"]) == ("pairs", 4)
    assert codebleu["statistic"] == pytest.approx(3.655631, abs=1e-5)
    assert codebleu["p_value"] == pytest.approx(2 * student_t.sf(3.655631, 3), abs=1e-6)
    assert codebleu["sd_difference"] == pytest.approx(0.095743, abs=1e-6)
    assert codebleu["mde"] == pytest.approx((3.182446 + 0.978472) * 0.095743 / 2, abs=1e-5)
    # IoU all pairs differences 1, 0, 0, 0: t = 0.25/(0.5/2) = 1
    iou = tests["iou_all@1"]
    assert iou["p_value"] == pytest.approx(2 * student_t.sf(1.0, 3), abs=1e-6)
    # IoU incorrect pairs identical: no p, so not in Holm's family; P/R/F1 have no per-pair test
    assert tests["iou_incorrect@1"]["p_value"] is None and "syntax_f1" not in tests
    assert evaluation["correction"]["family_size"] == 2
    # Holm over two: the smaller p doubles (0.0354 -> 0.0707), the larger keeps max(itself, that)
    assert codebleu["p_holm"] == pytest.approx(2 * codebleu["p_value"])
    assert iou["p_holm"] == pytest.approx(max(iou["p_value"], codebleu["p_holm"]))
    # significant before the correction, not after it
    assert codebleu["significant_uncorrected"] and not codebleu["significant"]


def test_summarise_intervals_per_method_and_metric():
    _, evaluation = summarise(hand_results(), 0.05, (1,))
    metrics = evaluation["methods"]["kaser"]["metrics"]
    # CodeBLEU@1 0.5..0.8: mean 0.65, s 0.129099, 0.65 ± 3.182446·0.064550
    ci = metrics["codebleu@1"]["ci95"]
    assert (ci["over"], ci["n"], ci["method"]) == ("pairs", 4, "t-interval")
    assert (ci["low"], ci["high"]) == pytest.approx((0.65 - 0.205427, 0.65 + 0.205427), abs=1e-5)
    # IoU over incorrect pairs only: 0, 1, 0.5 (n 3), mean 0.5, s 0.5: 0.5 ± 4.302653·0.288675
    ci = metrics["iou_incorrect@1"]["ci95"]
    assert ci["n"] == 3
    assert (ci["low"], ci["high"]) == pytest.approx((0.5 - 1.242069, 0.5 + 1.242069), abs=1e-5)
    # Syntax counts tp 2, fp 1, fn 1: precision 2/3 from summed counts, bootstrap interval around it
    ci = metrics["syntax_precision"]["ci95"]
    assert ci["mean"] == pytest.approx(2 / 3) and ci["method"].startswith("percentile bootstrap")
    assert 0.0 <= ci["low"] <= 2 / 3 <= ci["high"] <= 1.0 and ci["low"] < ci["high"]
    assert not math.isnan(metrics["syntax_f1"]["ci95"]["low"])


def test_unit_scores_recompute_every_test(tmp_path):
    results = hand_results()
    _, evaluation = summarise(results, 0.05, (1,))
    pairs, problems = unit_scores(results)
    assert pairs.height == 8 and pairs.columns[0] == "method" and problems.height == 0
    pairs.write_csv(tmp_path / "pair_scores.csv")
    again = pl.read_csv(tmp_path / "pair_scores.csv")
    wide = again.pivot("method", index=["fold", "student_id", "problem_id"], values="codebleu@1")
    test = ttest_rel(wide["kaser"], wide["student_sft"])
    assert test.pvalue == pytest.approx(evaluation["t_tests"]["student_sft"]["codebleu@1"]["p_value"])
    low, high = t_interval(again.filter(pl.col("method") == "kaser")["codebleu@1"])
    ci = evaluation["methods"]["kaser"]["metrics"]["codebleu@1"]["ci95"]
    assert (low, high) == pytest.approx((ci["low"], ci["high"]))


# ---------------------------------------------------------------- the problem bootstrap (departure 6)

def test_problem_bootstrap_of_two_constant_problems_spans_both():
    # one pair per problem, 0 and 1: a resample is {p, p} (mean 0), {p, q} (0.5) or {q, q} (1) with
    # chances 1/4, 1/2, 1/4, so the 2.5th and 97.5th percentiles are 0 and 1
    assert problem_bootstrap_interval([0.0, 1.0], ["p", "q"]) == (0.0, 1.0)


def test_problem_bootstrap_also_resamples_the_pairs_within_a_problem():
    # both problems hold 0 and 1: drawing problems alone would give 0.5 every time
    low, high = problem_bootstrap_interval([0.0, 1.0, 0.0, 1.0], ["p", "p", "q", "q"])
    assert low < 0.5 < high


def test_problem_bootstrap_is_wider_than_the_pair_interval_when_problems_differ():
    # 6 problems x 50 pairs: each problem's own level plus small noise; the pairs look like 300
    # independent values to a t-interval, but there are only 6 problems
    rng = np.random.default_rng(0)
    levels = [0.1, 0.2, 0.3, 0.6, 0.7, 0.9]
    values = np.concatenate([level + rng.normal(0, 0.02, 50) for level in levels])
    problems = [f"p{i}" for i in range(6) for _ in range(50)]
    low, high = problem_bootstrap_interval(values, problems)
    t_low, t_high = t_interval(values)
    assert low < values.mean() < high and (high - low) > 2 * (t_high - t_low)
    assert problem_bootstrap_interval(values, problems) == (low, high)       # seeded
    assert problem_bootstrap_interval(values, problems, seed=1) != (low, high)


def two_problem_results():
    """KASER and Student SFT on 4 pairs of 2 problems, and per-problem tables where Cos Dis
    exists for 2 problems for KASER and for 4 for Student SFT (issue 20's case)."""
    results = hand_results()
    for name, result in results.items():
        pairs = result.pairs.with_columns(pl.Series("problem_id", ["p1", "p1", "p2", "p2"]))
        cosine = {"kaser": [0.08, 0.09, None, None], "student_sft": [0.07, 0.08, 0.3, 0.3]}[name]
        problems = pl.DataFrame({"fold": [0] * 4, "problem_id": ["p1", "p2", "p3", "p4"],
                                 "coverage_iou": [0.5, 0.5, 0.5, 0.5], "cosine_distance": cosine},
                                schema_overrides={"cosine_distance": pl.Float64})
        problems = problems.with_columns(pl.lit(None, dtype=pl.Float64).alias(m) for m in
                                         ("chi2_distance", "codebleu_complement_max", "problem_valid_share"))
        results[name] = MethodResult(pairs, problems, (1,))
    return results


def test_pair_metrics_get_a_problem_bootstrap_beside_the_pair_interval():
    results = two_problem_results()
    ci = results["kaser"].interval("codebleu@1")
    assert ci["method"] == "t-interval" and ci["problem_bootstrap"]["n_problems"] == 2
    assert ci["problem_bootstrap"]["low"] <= ci["mean"] <= ci["problem_bootstrap"]["high"]
    assert results["kaser"].interval("syntax_precision")["problem_bootstrap"]["n_problems"] == 2
    assert "problem_bootstrap" not in (results["kaser"].interval("coverage_iou") or {})   # per problem
    # one problem: no interval over problems
    assert hand_results()["kaser"].interval("codebleu@1")["problem_bootstrap"] is None
    _, evaluation = summarise(results, 0.05, (1,))
    test = evaluation["t_tests"]["student_sft"]["codebleu@1"]
    # paired differences 0.1, 0.2 (p1) and 0.1, 0.3 (p2), resampled by problem, then pair
    low, high = test["difference_problem_ci95"]
    assert test["n_problems"] == 2 and 0.1 - 1e-9 <= low < 0.175 < high <= 0.3 + 1e-9


def test_per_problem_comparisons_use_the_problems_both_methods_have():
    results = two_problem_results()
    _, evaluation = summarise(results, 0.05, (1,))
    test = evaluation["t_tests"]["student_sft"]["cosine_distance"]
    # p1, p2 only: KASER 0.085 vs 0.075, not vs Student SFT's 0.1875 over its own four problems
    assert (test["over"], test["n"], test["n_problems"]) == ("problems", 2, 2)
    assert (test["reference_mean"], test["other_mean"]) == pytest.approx((0.085, 0.075))
    assert evaluation["methods"]["student_sft"]["metrics"]["cosine_distance"]["mean"] == pytest.approx(0.1875)
    common = {m: evaluation["methods"][m]["common_problem_metrics"]["cosine_distance"]
              for m in ("kaser", "student_sft")}
    assert (common["kaser"]["mean"], common["student_sft"]["mean"]) == pytest.approx((0.085, 0.075))
    assert common["kaser"]["n_problems"] == common["student_sft"]["n_problems"] == 2
    # coverage exists everywhere: all four problems
    assert evaluation["methods"]["kaser"]["common_problem_metrics"]["coverage_iou"]["n_problems"] == 4


def test_per_problem_fold_tests_compare_fold_means_over_common_problems():
    results = two_problem_results()
    for name, result in results.items():   # three folds of two problems each
        problems = pl.concat([result.problems.with_columns(pl.lit(f).alias("fold"),
                                                           pl.format("{}-{}", "problem_id", pl.lit(f)))
                              for f in range(3)])
        results[name] = MethodResult(result.pairs, problems, (1,))
    from kaser.evaluation.summary import paired_t_test
    test = paired_t_test(results["kaser"], results["student_sft"], "cosine_distance")
    assert (test["over"], test["n"], test["n_problems"]) == ("folds", 3, 6)
    assert (test["reference_mean"], test["other_mean"]) == pytest.approx((0.085, 0.075))
