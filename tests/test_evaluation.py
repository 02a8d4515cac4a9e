"""The evaluate stage's work on the hand-made dataset of marker_dataset.py: 3 Python problems,
4 students, K = 2. Its judge reads a marker comment per error (# OBO, # COLON, # DIV), so every
expected value below was worked out by hand from the tables in that file.
"""

import itertools
import json
import math

import polars as pl
import pytest

from kaser import InputError
from kaser.evaluation.scoring import (codebleu_diversity, evaluate_dataset, judge_predictions,
                              pair_table, problem_table, read_predictions, write_json)
from kaser.evaluation.summary import (MethodResult, pair_fold_values, paired_t_test, problem_fold_values,
                                      unit_scores)
from marker_dataset import (CANDIDATES, COLON, DIV, KASER, OBO, PARAMS, R_B, R_E, hash_embed, judged,
                            marker_judge, predictions, sft_rows, truth)


@pytest.fixture(scope="module")
def kaser_pairs():
    return pair_table(judged(KASER), truth(), (1, 2))


@pytest.mark.parametrize("student, problem, expected", [
    # A: real code correct, samples "" (no candidate error, but not correct: 0) then the real code
    ("s1", "p1", {"codebleu@1": 0.0, "codebleu@2": 1.0, "iou_all@1": 0.0, "iou_all@2": 1.0,
                  "iou_incorrect@1": None, "error_recall@1": None, "knowledge_alignment": None,
                  "valid_share": 0.5, "truncated_share": None}),
    # B: first sample is the real code with its OBO; only OBO, on a 'for loops' problem the
    # student masters at 0.2 -> aligned
    ("s1", "p2", {"codebleu@1": 1.0, "iou_all@1": 1.0, "iou_incorrect@2": 1.0,
                  "error_recall@1": 1.0, "knowledge_alignment": 1.0}),
    # C: {DIV} vs {COLON} = 0, then {COLON, OBO} vs {COLON} = 1/2; of DIV (arithmetic .9),
    # COLON (conditionals .3, outside the problem's KCs so all its KCs) and OBO (for loops .8)
    # only COLON is on a low KC
    # recall (the authors' score) of {COLON}: 0, then 1 (the extra OBO does not lower it)
    ("s2", "p1", {"iou_incorrect@1": 0.0, "iou_incorrect@2": 0.5, "knowledge_alignment": 1 / 3,
                  "error_recall@1": 0.0, "error_recall@2": 1.0}),
    # D: correct code, invented OBO then the empty code: 0 both (plain IoU(∅, ∅) would pay 1)
    ("s2", "p2", {"iou_all@1": 0.0, "iou_all@2": 0.0, "iou_incorrect@2": None,
                  "knowledge_alignment": 0.0, "valid_share": 0.5}),
    # F: empty predictions score CodeBLEU 0 and miss the error
    ("s4", "p3", {"codebleu@2": 0.0, "iou_incorrect@2": 0.0, "knowledge_alignment": None}),
])
def test_pair_values(kaser_pairs, student, problem, expected):
    row = kaser_pairs.filter((pl.col("student_id") == student) & (pl.col("problem_id") == problem)).row(0, named=True)
    for metric, value in expected.items():
        assert row[metric] == (None if value is None else pytest.approx(value, abs=1e-9)), metric


def test_pair_fold_values(kaser_pairs):
    folds = pair_fold_values(kaser_pairs, (1, 2))
    # fold 0: incorrect pairs B, C; all pairs A, B, C, D
    assert folds[0]["iou_incorrect@1"] == pytest.approx(0.5)     # B 1, C 0
    assert folds[0]["iou_incorrect@2"] == pytest.approx(0.75)    # B 1, C 1/2
    assert folds[0]["iou_all@1"] == pytest.approx(0.25)          # A 0, B 1, C 0, D 0
    assert folds[0]["iou_all@2"] == pytest.approx(0.625)         # A 1, B 1, C 1/2, D 0
    assert folds[0]["error_recall@2"] == pytest.approx(1.0)      # B 1, C 1
    assert folds[0]["valid_share"] == pytest.approx(0.625)       # A 1/2, B 1/2, C 1, D 1/2
    assert "truncated_share" not in folds[0]                      # not recorded by these predictions
    assert folds[0]["knowledge_alignment"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    # fold 1: E exact (CodeBLEU 1), F empty (0)
    assert folds[1]["codebleu@1"] == pytest.approx(0.5)
    assert folds[1]["iou_incorrect@2"] == pytest.approx(0.5)
    # Table 2, first samples of fold 0: Logical B tp, D fp; Runtime C fp; Syntax C fn
    assert folds[0]["logical_precision"] == pytest.approx(0.5)
    assert folds[0]["logical_recall"] == pytest.approx(1.0)
    assert folds[0]["logical_f1"] == pytest.approx(2 / 3)
    assert folds[0]["runtime_precision"] == 0.0
    assert folds[0]["syntax_recall"] == 0.0
    assert folds[1]["runtime_f1"] == pytest.approx(1.0)             # E hits DIV


def test_problem_values():
    table = problem_table(judged(KASER), truth(), hash_embed, max_codes_per_problem=100)
    rows = {row["problem_id"]: row for row in table.iter_rows(named=True)}
    # p1: predicted {COLON}, {OBO} + 4 empty sets over 6 codes; real ∅, {COLON}, {DIV}
    assert rows["p1"]["coverage_iou"] == pytest.approx(1 / 3)
    # rates COLON 1/6 vs 1/3, OBO 1/6 vs 0, DIV 0 vs 1/3: (1/18 + 1/6 + 1/3) x 3 real codes
    assert rows["p1"]["chi2_distance"] == pytest.approx(5 / 3)
    # diversity over the 4 valid codes (the 2 empty ones left out): 2 commented, 2 without,
    # 4 of 6 pairs at distance 1
    assert rows["p1"]["cosine_distance"] == pytest.approx(2 / 3)
    assert rows["p1"]["problem_valid_share"] == pytest.approx(4 / 6)
    # p2: OBO at rate 1/2 on both sides; the 2 valid codes are the same: no diversity
    assert (rows["p2"]["coverage_iou"], rows["p2"]["chi2_distance"]) == (1.0, 0.0)
    assert rows["p2"]["cosine_distance"] == 0.0 and rows["p2"]["problem_valid_share"] == 0.5
    # p3: nothing predicted, two real errors: coverage 0, chi2 (1 + 1) x 1; no valid code, so
    # no diversity to measure (an empty code does not count as 0)
    assert (rows["p3"]["coverage_iou"], rows["p3"]["chi2_distance"]) == (0.0, 2.0)
    assert rows["p3"]["cosine_distance"] is None and rows["p3"]["codebleu_complement_max"] is None
    assert rows["p3"]["problem_valid_share"] == 0.0
    assert 0.0 <= rows["p1"]["codebleu_complement_max"] <= 1.0
    folds = problem_fold_values(table)
    assert folds[1]["coverage_iou"] == pytest.approx(0.5)        # p2 1, p3 0
    assert folds[1]["cosine_distance"] == pytest.approx(0.0)     # p2 0, p3 none


def test_codebleu_complement_uses_at_most_the_cap():
    codes = [c for split, _, _, p, sample in KASER if split == "problem" and p == "p1" for c in sample]
    capped = problem_table(judged(KASER), truth(), hash_embed, max_codes_per_problem=2, seed=1)
    value = capped.filter(pl.col("problem_id") == "p1")["codebleu_complement_max"].item()
    # p1 has 6 codes: with a cap of 2 the value is that of some pair of them
    assert any(value == pytest.approx(codebleu_diversity([a, b], "python"))
               for a, b in itertools.combinations(codes, 2))
    # so does the cosine distance: two toy vectors are at distance 0 or 1
    assert capped.filter(pl.col("problem_id") == "p1")["cosine_distance"].item() in (0.0, 1.0)
    # the error metrics still see every code
    full = problem_table(judged(KASER), truth(), hash_embed, max_codes_per_problem=100)
    assert capped["coverage_iou"].to_list() == full["coverage_iou"].to_list()


def test_judge_cache_judges_each_code_once():
    calls = []

    def counting_judge(problem_id, codes):
        calls.append((problem_id, len(codes)))
        return marker_judge(problem_id, codes)

    first, cache = judge_predictions(predictions(KASER), CANDIDATES, counting_judge, "markers")
    distinct = predictions(KASER).select("problem_id", "code").unique().height
    assert sum(n for _, n in calls) == distinct and len(calls) == 3     # one batch per problem
    calls.clear()
    again, _ = judge_predictions(predictions(KASER), CANDIDATES, counting_judge, "markers", cache)
    assert calls == [] and again.equals(first)
    # a new candidate list for p3 (e.g. a rerun of the cluster stage) re-judges p3 only
    judge_predictions(predictions(KASER), CANDIDATES | {"p3": [COLON]}, counting_judge, "markers", cache)
    assert [p for p, _ in calls] == ["p3"]


def test_t_test_over_pairs_with_two_folds():
    kaser = MethodResult(pair_table(judged(KASER), truth(), (1, 2)), pl.DataFrame(), (1, 2))
    sft = MethodResult(pair_table(judged(sft_rows(), "student_sft"), truth(), (1, 2)), pl.DataFrame(), (1, 2))
    test = paired_t_test(kaser, sft, "codebleu@2")
    assert test["over"] == "pairs" and test["n"] == 6
    # KASER's CodeBLEU@2 per pair: A 1, B 1, C c, D d, E 1, F 0; SFT 0 everywhere
    assert test["mean_difference"] > 0 and test["reference_better"]
    assert paired_t_test(kaser, sft, "iou_incorrect@1")["n"] == 4   # B, C, E, F


def test_t_test_over_folds_with_three_folds():
    three = [(split, {"s1": 0, "s2": 1}.get(s, 2), s, p, codes) for split, _, s, p, codes in KASER]
    sft = [(split, {"s1": 0, "s2": 1}.get(s, 2), s, p, codes) for split, _, s, p, codes in sft_rows()]
    kaser = MethodResult(pair_table(judged(three), truth(), (1, 2)), pl.DataFrame(), (1, 2))
    other = MethodResult(pair_table(judged(sft, "student_sft"), truth(), (1, 2)), pl.DataFrame(), (1, 2))
    test = paired_t_test(kaser, other, "iou_all@2")
    assert (test["over"], test["n"]) == ("folds", 3)


def test_t_test_on_identical_values_has_no_p_value():
    kaser = MethodResult(pair_table(judged(KASER), truth(), (1, 2)), pl.DataFrame(), (1, 2))
    test = paired_t_test(kaser, kaser, "codebleu@1")
    assert test["p_value"] is None and not test["significant"]


def test_evaluate_dataset_writes_numbers_only_metrics(tmp_path):
    calls = []

    def counting_judge(problem_id, codes):
        calls.append(problem_id)
        return marker_judge(problem_id, codes)

    metrics, evaluation, cache = evaluate_dataset(
        truth(), {"kaser": predictions(KASER), "student_sft": predictions(sft_rows(), "student_sft")},
        CANDIDATES, counting_judge, "markers", PARAMS, hash_embed)
    assert sorted(calls) == ["p1", "p2", "p3"]    # both methods' codes judged in one call per problem
    assert set(metrics) == {"kaser", "student_sft"}

    def leaves(value):
        return [x for v in value.values() for x in leaves(v)] if isinstance(value, dict) else [value]
    assert all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
               for x in leaves(metrics))
    assert metrics["kaser"]["coverage_iou"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    summary = evaluation["methods"]["kaser"]["metrics"]["coverage_iou"]
    assert summary["std"] == pytest.approx(1 / 12) and summary["folds"] == [0, 1]
    assert evaluation["higher_is_better"]["chi2_distance"] is False
    assert evaluation["t_tests"]["student_sft"]["codebleu@1"]["over"] == "pairs"
    assert evaluation["t_tests"]["student_sft"]["coverage_iou"]["over"] == "problems"
    assert evaluation["reference"]["knowledge_alignment_of_real_errors"] is not None
    write_json(tmp_path / "metrics.json", metrics)
    write_json(tmp_path / "evaluation.json", evaluation)
    assert json.loads((tmp_path / "metrics.json").read_text()) == metrics
    assert cache.height == pl.concat([predictions(KASER), predictions(sft_rows())]) \
        .select("problem_id", "code").unique().height


def test_evaluate_dataset_hands_back_the_unit_tables():
    tables = {}
    evaluate_dataset(truth(), {"kaser": predictions(KASER), "student_sft": predictions(sft_rows(), "student_sft")},
                     CANDIDATES, marker_judge, "markers", PARAMS, hash_embed, tables=tables)
    pairs, problems = unit_scores(tables)
    # one row per method and test pair (6 pairs) and per method and test problem (2 folds' problems)
    assert pairs.group_by("method").len().sort("method")["len"].to_list() == [6, 6]
    assert problems.height == 2 * tables["kaser"].problems.height > 0
    assert set(problems.columns) >= {"method", "fold", "problem_id", "coverage_iou"}


def test_one_fold_gives_std_zero_and_a_note():
    one = [row for row in KASER if row[1] == 0]
    _, evaluation, _ = evaluate_dataset(truth(), {"kaser": predictions(one)}, CANDIDATES,
                                        marker_judge, "markers", PARAMS, hash_embed)
    assert evaluation["methods"]["kaser"]["metrics"]["iou_all@2"]["std"] == 0.0
    assert any("one fold" in note for note in evaluation["notes"])


def test_missing_prediction_file_names_it_and_its_stage(tmp_path):
    with pytest.raises(InputError, match=r"predictions/icl\.parquet.*generate stage.*stages/generate\.py"):
        read_predictions(tmp_path / "synthetic-java", "icl")


@pytest.mark.parametrize("change, column", [
    (lambda df: df.drop("split"), "split"),                                    # old generate output
    (lambda df: df.with_columns(pl.lit("train").alias("split")), "split"),     # unknown split
    (lambda df: pl.concat([df, df.head(1)]), "sample"),                        # duplicate sample
])
def test_bad_predictions_are_named(tmp_path, change, column):
    folder = tmp_path / "ds"
    (folder / "predictions").mkdir(parents=True)
    change(predictions(KASER)).write_parquet(folder / "predictions" / "kaser.parquet")
    with pytest.raises(InputError, match=f"column {column}"):
        read_predictions(folder, "kaser")


def test_too_few_samples_for_k_values():
    with pytest.raises(InputError, match="k_values"):
        pair_table(judged(KASER), truth(), (1, 5))


def full_protocol(rows):
    """The rows on 3 folds of each split, as model.folds [0, 1, 2] x model.splits [student,
    problem] writes them: student folds s1 | s2 | s3, s4; problem folds p1 | p2 | p3."""
    by_student, by_problem = {"s1": 0, "s2": 1, "s3": 2, "s4": 2}, {"p1": 0, "p2": 1, "p3": 2}
    return [(split, (by_student[s] if split == "student" else by_problem[p]), s, p, codes)
            for split, _, s, p, codes in rows]


def test_three_folds_of_both_splits_give_std_and_fold_t_tests():
    _, evaluation, _ = evaluate_dataset(
        truth(), {"kaser": predictions(full_protocol(KASER)),
                  "student_sft": predictions(full_protocol(sft_rows()), "student_sft")},
        CANDIDATES, marker_judge, "markers", PARAMS, hash_embed)
    kaser = evaluation["methods"]["kaser"]
    assert (kaser["per_pair_split"], kaser["per_problem_split"]) == ("student", "problem")
    assert kaser["folds"] == [0, 1, 2] and kaser["n_pairs"] == 6 and kaser["n_problems"] == 3
    # per pair, student split: fold 0 A 1, B 1; fold 1 C 1/2, D 0; fold 2 E 1, F 0
    iou = kaser["metrics"]["iou_all@2"]
    assert iou["per_fold"] == pytest.approx([1.0, 0.25, 0.5]) and iou["mean"] == pytest.approx(7 / 12)
    assert iou["std"] == pytest.approx(math.sqrt(((5 / 12) ** 2 + (4 / 12) ** 2 + (1 / 12) ** 2) / 3))
    # per problem, problem split: p1 1/3 (fold 0), p2 1 (fold 1), p3 0 (fold 2)
    coverage = kaser["metrics"]["coverage_iou"]
    assert coverage["per_fold"] == pytest.approx([1 / 3, 1.0, 0.0]) and coverage["folds"] == [0, 1, 2]
    tests = evaluation["t_tests"]["student_sft"]
    assert (tests["iou_all@2"]["over"], tests["iou_all@2"]["n"]) == ("folds", 3)
    assert (tests["coverage_iou"]["over"], tests["coverage_iou"]["n"]) == ("folds", 3)
    assert not any("split" in note or "one fold" in note for note in evaluation["notes"])


def test_problem_split_alone_scores_pairs_with_a_note():
    only = [row for row in full_protocol(KASER) if row[0] == "problem"]
    _, evaluation, _ = evaluate_dataset(truth(), {"kaser": predictions(only)}, CANDIDATES,
                                        marker_judge, "markers", PARAMS, hash_embed)
    kaser = evaluation["methods"]["kaser"]
    assert (kaser["per_pair_split"], kaser["per_problem_split"]) == ("problem", "problem")
    assert kaser["n_pairs"] == 6                       # every problem-split pair
    # problem fold 1 = p2: s1's OBO hit twice (IoU 1), s4 correct but only empty codes (0)
    assert kaser["metrics"]["iou_all@2"]["per_fold"][1] == pytest.approx(0.5)
    assert any("per-pair metrics for kaser come from the problem split" in note
               for note in evaluation["notes"])


def test_truncated_predictions_are_not_judged_and_are_counted_apart():
    # E's two samples were cut off by the token budget: not judged, error match 0, truncated 1
    seen = []

    def recording_judge(problem_id, codes):
        seen.extend(codes)
        return marker_judge(problem_id, codes)

    cut = predictions(KASER).with_columns(
        ((pl.col("student_id") == "s3") & (pl.col("problem_id") == "p1")
         & (pl.col("split") == "student")).alias("truncated"))
    judged_cut, cache = judge_predictions(cut, CANDIDATES, recording_judge, "markers")
    assert R_E not in seen and R_E not in cache["code"].to_list()
    row = pair_table(judged_cut, truth(), (1, 2)).filter(pl.col("student_id") == "s3").row(0, named=True)
    assert (row["iou_incorrect@2"], row["error_recall@2"]) == (0.0, 0.0)     # uncut: 1 and 1
    assert (row["truncated_share"], row["valid_share"]) == (1.0, 0.0)
    assert row["codebleu@2"] == pytest.approx(1.0)          # its similarity is still measured


def test_a_judge_cache_without_verdicts_is_dropped():
    # a cache of labels only (no verdict columns) cannot say whether a code is correct
    old = pl.DataFrame({"judge_key": ["k"], "code": ["x"], "errors": [["A"]]})
    _, cache = judge_predictions(predictions(KASER), CANDIDATES, marker_judge, "markers", old)
    assert "k" not in cache["judge_key"].to_list() and set(cache.columns) >= {"clean", "valid"}


def test_truncated_codes_are_left_out_of_the_per_problem_error_metrics():
    # p2's problem-split codes: R_B twice (s1) and two empty codes (s4); cut off the empty ones
    cut = predictions(KASER).with_columns(
        ((pl.col("split") == "problem") & (pl.col("student_id") == "s4")).alias("truncated"))
    table = problem_table(judge_predictions(cut, CANDIDATES, marker_judge, "markers")[0], truth(),
                          hash_embed)
    p2 = table.filter(pl.col("problem_id") == "p2").row(0, named=True)
    # OBO rate 2/2 among the finished codes vs 1/2 among the real ones: (1 - 1/2)^2 / (3/2) x 2
    assert p2["coverage_iou"] == 1.0 and p2["chi2_distance"] == pytest.approx(1 / 3)
    assert p2["n_predicted"] == 4          # still counted as predictions


def test_pairs_count_wrong_function_names_and_the_real_codes_validity():
    from kaser.errors.static_annotator import WRONG_NAME

    table = judged(KASER)
    first_of_b = ((pl.col("student_id") == "s1") & (pl.col("problem_id") == "p2")
                  & (pl.col("split") == "student") & (pl.col("code") == R_B))
    table = table.with_columns(pl.when(first_of_b).then(pl.col("diagnosed").list.concat(pl.lit([WRONG_NAME])))
                               .otherwise(pl.col("diagnosed")).alias("diagnosed"))
    rows = {(r["student_id"], r["problem_id"]): r for r in pair_table(table, truth(), (1, 2)).iter_rows(named=True)}
    assert rows[("s1", "p2")]["wrong_name_share"] == 0.5          # one of B's two samples
    assert all(r["wrong_name_share"] == 0.0 for key, r in rows.items() if key != ("s1", "p2"))
    # the real codes of C (s2, p1) and F (s4, p3) miss a colon: a Syntax error, so not valid
    assert {key: r["real_valid"] for key, r in rows.items()} == {
        ("s1", "p1"): 1.0, ("s1", "p2"): 1.0, ("s2", "p1"): 0.0, ("s2", "p2"): 1.0,
        ("s3", "p1"): 1.0, ("s4", "p3"): 0.0}
