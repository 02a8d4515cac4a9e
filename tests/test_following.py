"""Scores that a student-blind simulator cannot win (kaser.evaluation.following), through the
evaluate stage's own per-pair table on a hand-made class: one Python problem, 8 students, the 4
with the highest mastery estimate correct and the other 4 with an off-by-one error, K = 2.
The judge reads marker comments (tests/marker_dataset.py), so every verdict is known.
"""

import polars as pl
import pytest

from kaser.evaluation.following import student_following, truth_following
from kaser.evaluation.scoring import judge_predictions, pair_table, problem_table, read_truth
from marker_dataset import ERROR_LABELS, OBO, hash_embed, marker_judge

PROBLEMS = pl.DataFrame({"problem_id": ["p"], "language": ["python"], "statement": ["Count to n."],
                         "kcs": [["for loops"]]})
CORRECT = "def count(n):\n    return n"
WRONG = "def count(n):\n    return n + 1  # OBO"
STUDENTS = [f"s{i}" for i in range(8)]
ESTIMATES = [0.40, 0.42, 0.44, 0.46, 0.60, 0.62, 0.64, 0.66]    # the knowledge stage's, per student
REAL_CORRECT = [estimate > 0.5 for estimate in ESTIMATES]


def _truth():
    submissions = pl.DataFrame({"student_id": STUDENTS, "problem_id": ["p"] * 8,
                                "code": [CORRECT if ok else WRONG for ok in REAL_CORRECT],
                                "correct": REAL_CORRECT})
    errors = pl.DataFrame({"student_id": STUDENTS, "problem_id": ["p"] * 8,
                           "errors": [[] if ok else [OBO] for ok in REAL_CORRECT]},
                          schema_overrides={"errors": pl.List(pl.String)})
    mastery = pl.DataFrame({"student_id": STUDENTS, "problem_id": ["p"] * 8,
                            "mastery": [[e] for e in ESTIMATES]})
    return read_truth(PROBLEMS, submissions, errors, ERROR_LABELS, mastery)


def _judged(samples_of):
    """Judged predictions where student i writes samples_of(i) (a list of K codes)."""
    rows = [{"split": "student", "fold": 0, "student_id": s, "problem_id": "p", "sample": k,
             "code": code, "method": "m"}
            for i, s in enumerate(STUDENTS) for k, code in enumerate(samples_of(i))]
    return judge_predictions(pl.DataFrame(rows), {"p": [OBO]}, marker_judge, "markers")[0]


SIMULATORS = {
    # the same two samples for everyone, one right and one wrong: ignores the student
    "blind": lambda i: [CORRECT, WRONG],
    # the real outcome, twice
    "copy": lambda i: [CORRECT, CORRECT] if REAL_CORRECT[i] else [WRONG, WRONG],
    # backwards: the strong students fail, the weak ones pass
    "reversed": lambda i: [WRONG, WRONG] if REAL_CORRECT[i] else [CORRECT, CORRECT],
}


@pytest.fixture(scope="module")
def scores():
    truth = _truth()
    return {name: student_following(pair_table(_judged(samples), truth, (1, 2)), (1, 2), seed=0)
            for name, samples in SIMULATORS.items()}


@pytest.mark.parametrize("simulator, k, auc", [
    ("blind", 1, 0.5),      # every first sample passes: one score for all students
    ("blind", 2, 0.5),      # every pass rate is 1/2
    ("copy", 1, 1.0),
    ("copy", 2, 1.0),
    ("reversed", 2, 0.0),
])
def test_pass_auc_is_a_half_for_a_student_blind_simulator_and_one_for_a_copy(scores, simulator, k, auc):
    assert scores[simulator][f"pass_auc@{k}"]["value"] == pytest.approx(auc)


def test_pass_slope_is_zero_when_blind_and_the_truths_own_slope_when_copied(scores):
    truth = truth_following(pair_table(_judged(SIMULATORS["copy"]), _truth(), (1, 2)))
    real = truth["real_pass_slope"]["value"]
    assert real > 0.4                  # pass rises by about half its range per SD of mastery
    assert scores["blind"]["pass_slope@2"]["value"] == pytest.approx(0.0)
    assert scores["copy"]["pass_slope@2"]["value"] == pytest.approx(real)
    assert scores["reversed"]["pass_slope@2"]["value"] == pytest.approx(-real)
    assert truth["mastery_auc"]["value"] == pytest.approx(1.0)        # the estimate orders them
    assert truth["real_pass_rate"]["value"] == pytest.approx(0.5)


def test_a_hedge_with_the_reference_wins_all_pairs_iou_that_the_blind_samples_do_not(scores):
    pairs = pair_table(_judged(SIMULATORS["blind"]), _truth(), (1, 2))
    # blind, K = 2: a correct pair is matched by the clean first sample, an incorrect one by the
    # OBO second: 1 everywhere, but only because one sample of each kind is written for everyone
    assert pairs["iou_all@2"].to_list() == [1.0] * 8
    # the hedge (first sample + the reference): 1 on correct pairs, the clean first sample's 0 else
    assert pairs["iou_all_hedged@2"].to_list() == [0.0] * 4 + [1.0] * 4
    assert pairs["iou_all_hedged@1"].to_list() == [float(ok) for ok in REAL_CORRECT]
    assert scores["blind"]["iou_all_hedged@2"]["value"] == pytest.approx(0.5)


def test_prompt_words_and_missing_returns_are_counted_per_sample():
    leaky = "def count(n):\n    kc1_mastery = 0.4\n    return n"
    no_return = "def count(n):\n    print(n)"
    pairs = pair_table(_judged(lambda i: [leaky, no_return] if i == 0 else [CORRECT, CORRECT]),
                       _truth(), (1, 2))
    first = pairs.row(0, named=True)
    assert (first["prompt_word_share"], first["no_return_share"], first["real_no_return"]) == (0.5, 0.5, 0.0)
    assert pairs["prompt_word_share"][1:].to_list() == [0.0] * 7
    assert pairs["mastery_estimate"].to_list() == pytest.approx(ESTIMATES)


def test_class_level_rates_compare_each_error_types_share_of_samples_with_the_real_share():
    table = problem_table(_judged(SIMULATORS["blind"]), _truth(), hash_embed)
    row = table.row(0, named=True)
    # OBO in half the samples and half the real codes; half the samples pass, as do half the students
    assert (row["error_rate_rmse"], row["pass_rate_error"]) == (0.0, 0.0)
    table = problem_table(_judged(lambda i: [WRONG, WRONG]), _truth(), hash_embed)
    row = table.row(0, named=True)
    assert row["error_rate_rmse"] == pytest.approx(0.5) and row["pass_rate_error"] == pytest.approx(0.5)


def test_the_report_shows_each_methods_scores_beside_the_real_codes(scores):
    from kaser.evaluation.report import following_table
    truth = truth_following(pair_table(_judged(SIMULATORS["copy"]), _truth(), (1, 2)))
    evaluation = {"k_values": [1, 2], "methods": {"kaser": {"metrics": {"iou_all@2": {"mean": 1.0}}}},
                  "follows_student": {"methods": {"kaser": scores["blind"], "student_sft": scores["copy"]},
                                      "truth": truth}}
    lines = following_table(evaluation).splitlines()
    kaser, sft, real = (next(line for line in lines if line.startswith(f"| {name}"))
                        for name in ("KASER", "Student SFT", "Real codes"))
    assert kaser.split(" | ")[2].startswith("0.500") and sft.split(" | ")[2].startswith("1.000")
    assert real.split(" | ")[2].startswith("1.000")      # the mastery estimate's own AUC


def test_the_report_puts_the_share_of_samples_that_parse_beside_the_real_codes_share():
    from kaser.evaluation.report import following_table
    broken = "def count(n)\n    return n"            # no colon: does not parse
    pairs = pair_table(_judged(lambda i: [CORRECT, broken]), _truth(), (1, 2))
    assert pairs["valid_share"].to_list() == [0.5] * 8 and pairs["real_valid"].to_list() == [1.0] * 8
    evaluation = {"k_values": [1, 2], "methods": {},
                  "follows_student": {"methods": {"kaser": student_following(pairs, (1, 2))},
                                      "truth": truth_following(pairs)}}
    lines = following_table(evaluation).splitlines()
    header, kaser, real = (next(line for line in lines if line.startswith(f"| {name}"))
                           for name in ("Model", "KASER", "Real codes"))
    assert header.rstrip(" |").endswith("valid")
    assert kaser.split(" | ")[-1].startswith("0.500") and real.split(" | ")[-1].startswith("1.000")
