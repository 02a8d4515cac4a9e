"""The student prompt is the authors' text, character for character, through the chat template."""

import numpy as np
import polars as pl
import pytest

from kaser import InputError, config
from kaser.predictor.prompt import (build_messages, build_prompt_text, pair_messages, problem_mastery,
                                  student_pairs, system_message, user_message)

JAVA_SYSTEM = ("You are a student code simulator. Given a programming problem and the student's "
               "mastery levels for specific knowledge components (KCs), generate Java code that "
               "reflects that understanding, including plausible student errors. Output only the "
               "code, with no explanations or comments. Do not wrap the code in markdown fences "
               "(no ```).")

USER_CASES = [
    # one KC: numbered from 1, level with two decimals
    ("Add a and b.", ["arithmetic"], [0.25],
     "Problem: Add a and b.\n\nStudent information: KC 1: arithmetic. The student's mastery level "
     "on arithmetic is 0.25. Simulate the student written code:"),
    # two KCs in the problem's order; float noise is rounded, 1 prints as 1.00
    ("Sum an array.", ["loops", "arrays"], [0.4213780164718628, 1.0],
     "Problem: Sum an array.\n\nStudent information: KC 1: loops. The student's mastery level on "
     "loops is 0.42. KC 2: arrays. The student's mastery level on arrays is 1.00. Simulate the "
     "student written code:"),
    # a problem without KCs still asks for the code
    ("Print hi.", [], [],
     "Problem: Print hi.\n\nStudent information: Simulate the student written code:"),
    # a multi-line statement is kept as it is
    ("Line one.\nLine two.", ["strings"], [0.005],
     "Problem: Line one.\nLine two.\n\nStudent information: KC 1: strings. The student's mastery "
     "level on strings is 0.01. Simulate the student written code:"),
]


@pytest.mark.parametrize("statement, kcs, levels, expected", USER_CASES)
def test_user_message_is_the_authors_format_without_a_signature(statement, kcs, levels, expected):
    assert user_message(statement, kcs, levels, signature=None) == expected
    assert user_message(statement, kcs, levels, signature="  ") == expected   # blank: unknown


SIGNATURE_CASES = [
    # the starter signature is its own paragraph between the problem and the student (departure 4)
    ("def add(a, b):", "Problem: Add a and b.\n\nFunction signature: def add(a, b):\n\n"
     "Student information: KC 1: arithmetic."),
    # a Java method header, as the CodeWorkout editor shows it
    ("public int add(int a, int b)", "Problem: Add a and b.\n\nFunction signature: public int "
     "add(int a, int b)\n\nStudent information: KC 1: arithmetic."),
]


@pytest.mark.parametrize("signature, start", SIGNATURE_CASES)
def test_user_message_shows_the_starter_signature(signature, start):
    text = user_message("Add a and b.", ["arithmetic"], [0.25], signature=signature)
    assert text.startswith(start) and text.endswith(" Simulate the student written code:")
    assert text.count(signature) == 1


def test_system_message_names_the_language():
    assert system_message("java") == JAVA_SYSTEM
    assert system_message("python") == JAVA_SYSTEM.replace("generate Java", "generate Python")
    with pytest.raises(InputError, match="unknown language"):
        system_message("c++")


def test_messages_are_system_then_user():
    messages = build_messages("Add a and b.", ["arithmetic"], [0.25], "java", signature=None)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == JAVA_SYSTEM
    assert messages[1]["content"] == USER_CASES[0][3]
    shown = build_messages("Add a and b.", ["arithmetic"], [0.25], "java",
                           signature="public int add(int a, int b)")
    assert shown[0] == messages[0]
    assert shown[1]["content"].startswith(SIGNATURE_CASES[1][1])


def test_mismatched_levels_fail():
    with pytest.raises(InputError, match="2 KCs but 1 mastery levels"):
        user_message("x", ["a", "b"], [0.5], signature=None)


def test_prompt_text_through_the_smollm2_chat_template():
    from tiny_lm import smollm2_tokenizer
    text = build_prompt_text(smollm2_tokenizer(), "Add a and b.", ["arithmetic"], [0.25], "java",
                             signature=None)
    assert text == (f"<|im_start|>system\n{JAVA_SYSTEM}<|im_end|>\n"
                    f"<|im_start|>user\n{USER_CASES[0][3]}<|im_end|>\n<|im_start|>assistant\n")
    shown = build_prompt_text(smollm2_tokenizer(), "Add a and b.", ["arithmetic"], [0.25], "java",
                              signature="public int add(int a, int b)")
    assert "Function signature: public int add(int a, int b)\n\nStudent information" in shown


def test_problem_mastery_picks_the_problems_kcs():
    assert problem_mastery(["c", "a"], ["a", "b", "c"], [0.1, 0.2, 0.3]) == [0.3, 0.1]
    with pytest.raises(InputError, match="KC\\(s\\) z not in the KC vocabulary"):
        problem_mastery(["z"], ["a"], [0.1])
    with pytest.raises(InputError, match="2 values for 1 KCs"):
        problem_mastery(["a"], ["a"], [0.1, 0.2])


def _tables():
    problems = pl.DataFrame({"problem_id": ["p1", "p2"], "language": ["java", "java"],
                             "statement": ["Add.", "Loop."], "kcs": [["math"], ["loops", "math"]],
                             "signature": ["public int add(int a, int b)", None]})
    submissions = pl.DataFrame({"student_id": ["s1", "s1", "s2"], "problem_id": ["p2", "p1", "p1"],
                                "step": [1, 0, 0], "code": ["for", "a+b", "a-b"]})
    # mastery over the sorted vocabulary [loops, math]
    mastery = pl.DataFrame({"student_id": ["s1", "s1", "s2"], "problem_id": ["p1", "p2", "p1"],
                            "step": [0, 1, 0], "fold": [0, 0, 1],
                            "mastery": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]})
    return problems, submissions, mastery


def test_student_pairs_join_problem_and_the_kcs_mastery():
    problems, submissions, mastery = _tables()
    pairs = student_pairs(problems, submissions, mastery, ["s1"])
    assert pairs["problem_id"].to_list() == ["p1", "p2"]          # in step order
    # p1: math; p2: loops, math; each level the row's percentile on its KC over all three rows
    assert pairs["mastery"].to_list() == [[0.1667], [0.5, 0.5]]
    assert pairs["statement"].to_list() == ["Add.", "Loop."]
    assert pairs["signature"].to_list() == ["public int add(int a, int b)", None]
    assert pairs["code"].to_list() == ["a+b", "for"]


def test_students_whose_estimates_differ_a_little_read_levels_far_apart_on_one_problem():
    # the knowledge stage's estimates sit in a narrow band (the CPU study: SD 0.04 in a prompt);
    # the prompt shows each student's place among all rows, so the model sees the difference
    problems = pl.DataFrame({"problem_id": ["p1"], "language": ["python"], "statement": ["Loop."],
                             "kcs": [["loops", "math"]], "signature": [None]})
    students = [f"s{i}" for i in range(10)]
    submissions = pl.DataFrame({"student_id": students, "problem_id": ["p1"] * 10, "step": [0] * 10,
                                "code": ["pass"] * 10})
    mastery = pl.DataFrame({"student_id": students, "problem_id": ["p1"] * 10,
                            "mastery": [[0.55 + 0.005 * i, 0.60 - 0.004 * i] for i in range(10)]})
    pairs = student_pairs(problems, submissions, mastery)
    weakest, strongest = pairs.row(0, named=True), pairs.row(9, named=True)
    assert weakest["mastery"] == [0.05, 0.95] and strongest["mastery"] == [0.95, 0.05]
    prompts = {" ".join(m["content"] for m in messages) for messages in pair_messages(pairs)}
    assert len(prompts) == 10                       # every student reads a prompt of their own
    assert "mastery level on loops is 0.05" in pair_messages(pairs)[0][1]["content"]
    raw_spread = np.std([m[0] for m in mastery["mastery"].to_list()])
    assert np.std([m[0] for m in pairs["mastery"].to_list()]) > 10 * raw_spread


def test_student_pairs_fail_without_mastery():
    problems, submissions, mastery = _tables()
    with pytest.raises(InputError, match="mastery.parquet: no row for student s2, problem p1"):
        student_pairs(problems, submissions, mastery.filter(pl.col("student_id") == "s1"), ["s2"])


def test_fold_members_of_both_kinds_of_folds():
    from kaser.predictor.prompt import fold_members
    folds = {"by_student": [["a", "d"], ["b"], ["c"]], "by_problem": [["p3"], ["p2", "p1"]]}
    assert fold_members(folds, "student", 0, "test") == ["a", "d"]
    assert fold_members(folds, "student", 0, "train") == ["b", "c"]
    assert fold_members(folds, "problem", 1, "test") == ["p1", "p2"]   # sorted
    assert fold_members(folds, "problem", 1, "train") == ["p3"]
    with pytest.raises(InputError, match="fold 3 does not exist; folds.json has 3 folds by_student"):
        fold_members(folds, "student", 3, "train")
    with pytest.raises(InputError, match="fold 2 does not exist; folds.json has 2 folds by_problem"):
        fold_members(folds, "problem", 2, "test")
    with pytest.raises(ValueError, match="split must be one of student, problem"):
        fold_members(folds, "class", 0, "test")


def test_read_pairs_from_a_dataset_folder(tmp_path):
    from kaser.data.contracts import write_dataset, write_folds
    from kaser.predictor.prompt import read_pairs
    problems, submissions, mastery = _tables()
    from kaser.data.contracts import TEST_CASE
    problems = problems.with_columns(pl.lit(None, dtype=pl.List(TEST_CASE)).alias("tests"),
                                     pl.lit(None, dtype=pl.String).alias("reference"))
    submissions = submissions.with_columns(pl.lit(1.0).alias("score"), pl.lit(True).alias("correct"))
    write_dataset(tmp_path, problems, submissions)
    write_folds(tmp_path / "folds.json", {"seed": 0, "by_student": [["s1"], ["s2"]],
                                          "by_problem": [["p1"], ["p2"]]})
    with pytest.raises(InputError, match="mastery.parquet: not found; run the knowledge stage"):
        read_pairs(tmp_path, "student", 1, "train")
    mastery.write_parquet(tmp_path / "mastery.parquet")
    # split student, test fold 1 = s2: s1's two submissions train, s2's one is tested
    assert read_pairs(tmp_path, "student", 1, "train")["student_id"].to_list() == ["s1", "s1"]
    assert read_pairs(tmp_path, "student", 1, "test")["code"].to_list() == ["a-b"]
    # split problem, test fold 0 = p1: every student's p1 submission is tested, p2's trains
    test = read_pairs(tmp_path, "problem", 0, "test")
    assert test.select("student_id", "problem_id").rows() == [("s1", "p1"), ("s2", "p1")]
    assert test["code"].to_list() == ["a+b", "a-b"]
    assert test["signature"].to_list() == ["public int add(int a, int b)"] * 2   # written, read back
    train = read_pairs(tmp_path, "problem", 0, "train")
    assert train.select("student_id", "problem_id", "code").rows() == [("s1", "p2", "for")]
    assert train["mastery"].to_list() == [[0.5, 0.5]]   # p2 (loops, math): middle of three rows on each


def test_sampling_prompts_the_student_prompt_with_its_signature(monkeypatch):
    # the generate stage's path: predict() renders pair_messages through the chat template
    from tiny_lm import tiny_model_folder
    import kaser.predictor.sampling as sampling
    problems, submissions, mastery = _tables()
    pairs = student_pairs(problems, submissions, mastery, ["s1"])
    seen = []

    def sample(model_path, adapter, prompts, params, dtype="auto"):
        seen.extend(prompts)
        return [["x"] * params.k for _ in prompts]
    monkeypatch.setattr(sampling, "sample_completions", sample)
    rows = sampling.predict(tiny_model_folder(), None, pairs, config.settings(sampling.GenerateParams, "generate", k=1), "kaser")
    assert rows.height == 2 and len(seen) == 2
    assert "Problem: Add.\n\nFunction signature: public int add(int a, int b)\n\nStudent" in seen[0]
    assert "Function signature" not in seen[1]      # p2 has no known signature
