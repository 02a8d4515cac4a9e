"""The judge: static diagnoses mapped to cluster labels and restricted to candidates; LLM judge."""

import json

import polars as pl
import pytest

from kaser.data.contracts import write_dataset
from kaser.errors.judge import StaticJudge, reward_judge
from kaser.data.synth.bank import load_bank

PROBLEM = next(p for p in load_bank("python") if p.problem_id == "python_can_hike")
CORRECT = PROBLEM.references[0]
WRONG_OPERATOR = CORRECT.replace("temp >= 20 and temp <= 25", "temp >= 20 or temp <= 25")
SYNTAX = CORRECT.replace("if raining:", "if raining")


def dataset(tmp_path):
    problems = pl.DataFrame({
        "problem_id": [PROBLEM.problem_id], "language": ["python"], "statement": [PROBLEM.statement],
        "kcs": [list(PROBLEM.kcs)],
        "tests": [[{"input": json.dumps(list(a)), "expected": json.dumps(e)} for a, e in PROBLEM.tests]],
        "reference": [CORRECT]})
    submissions = pl.DataFrame({"student_id": ["a", "b"], "problem_id": [PROBLEM.problem_id] * 2,
                                "step": [0, 0], "code": [CORRECT, WRONG_OPERATOR],
                                "score": [1.0, 0.5], "correct": [True, False]})
    write_dataset(tmp_path, problems, submissions)
    # the cluster stage named the boolean-operator cluster differently from the standard label
    error_labels = pl.DataFrame({"category": ["Logical", "Syntax"],
                                 "label": ["Wrong boolean operator", "Missing colon"],
                                 "count": [3, 1], "cluster": [0, 1],
                                 "cluster_label": ["Incorrect logical operator", "Missing colon"]})
    error_labels.write_parquet(tmp_path / "error_labels.parquet")
    return problems, submissions, error_labels


CANDIDATES = ["Incorrect logical operator", "Missing colon", "Off-by-one error"]


@pytest.mark.parametrize("code, candidates, expected", [
    (CORRECT, CANDIDATES, set()),                                     # correct code: nothing
    (WRONG_OPERATOR, CANDIDATES, {"Incorrect logical operator"}),     # mapped to its cluster label
    (SYNTAX, CANDIDATES, {"Missing colon"}),                          # compiler-grounded
    (WRONG_OPERATOR, ["Off-by-one error"], set()),                    # not a candidate: dropped
])
def test_static_judge(tmp_path, code, candidates, expected):
    judge = StaticJudge(*dataset(tmp_path))
    assert judge(PROBLEM.problem_id, code, candidates) == expected


def test_judge_many_diagnoses_each_code_once(tmp_path):
    judge = StaticJudge(*dataset(tmp_path))
    first = judge.judge_many(PROBLEM.problem_id, [WRONG_OPERATOR, CORRECT, WRONG_OPERATOR], CANDIDATES)
    assert first == [{"Incorrect logical operator"}, set(), {"Incorrect logical operator"}]
    assert len(judge._found) == 2     # two distinct codes diagnosed, the repeat served from memory


def test_reward_judge_reads_params_and_needs_the_cluster_outputs(tmp_path):
    dataset(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text("judge:\n  backend: static\nannotate:\n  backend: static\n")
    with reward_judge(tmp_path, params) as judge:
        assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    (tmp_path / "error_labels.parquet").unlink()
    with pytest.raises(Exception, match="error_labels.parquet"):
        with reward_judge(tmp_path, params):
            pass


def test_unknown_backend_is_a_clear_error(tmp_path):
    dataset(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text("judge:\n  backend: magic\n")
    with pytest.raises(Exception, match="unknown backend 'magic'"):
        with reward_judge(tmp_path, params):
            pass


# ---------------------------------------------------------------- the openai backend

from test_llm import make_client, server  # noqa: E402,F401  (fake OpenAI-compatible server on 127.0.0.1)

from kaser.errors.judge import LLMJudge  # noqa: E402


def test_llm_judge_keeps_listed_candidates_and_caches(tmp_path, make_client, server):  # noqa: F811
    problems, _, _ = dataset(tmp_path)
    judge = LLMJudge(problems, make_client())
    # the fake model answers with the first candidate and one label that is not on the list
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    assert judge.judge_many(PROBLEM.problem_id, [WRONG_OPERATOR, SYNTAX], CANDIDATES[1:]) == \
        [{"Missing colon"}, {"Missing colon"}]
    asked = len(server.requests)
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    assert len(server.requests) == asked == 3          # the repeat came from the SQLite cache
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, []) == set()   # nothing to choose from: no call
    assert len(server.requests) == 3


def test_verdicts_say_whether_a_code_is_clean_and_valid(tmp_path):
    judge = StaticJudge(*dataset(tmp_path))
    prose = "It returns True when we can go hiking."
    correct, wrong, syntax, text = judge.verdicts(PROBLEM.problem_id, [CORRECT, WRONG_OPERATOR, SYNTAX, prose],
                                                  ["Off-by-one error"])
    assert (correct.clean, correct.valid, correct.errors) == (True, True, frozenset())
    # the wrong operator is not a candidate here: no candidate error, yet not clean
    assert (wrong.clean, wrong.valid, wrong.errors) == (False, True, frozenset())
    assert wrong.diagnosed == {"Incorrect logical operator"}
    assert (syntax.clean, syntax.valid) == (False, False)
    assert (text.clean, text.valid, text.errors) == (False, False, frozenset())


def test_the_evaluation_may_use_another_backend_than_the_reward(tmp_path):
    # params judge.backend is the reward's; reward_judge(backend=...) is the evaluation's
    dataset(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text("judge:\n  backend: openai\nannotate:\n  backend: static\n")
    with reward_judge(tmp_path, params, backend="static") as judge:
        assert isinstance(judge, StaticJudge)
    with pytest.raises(Exception, match="unknown backend 'magic'"):
        with reward_judge(tmp_path, params, backend="magic"):
            pass


def test_llm_judge_verdicts_are_grounded_in_the_static_diagnosis(tmp_path, make_client, server):  # noqa: F811
    problems, submissions, error_labels = dataset(tmp_path)
    judge = LLMJudge(problems, make_client(), grounding=StaticJudge(problems, submissions, error_labels))
    prose = "It returns True when we can go hiking."
    # the fake model names the first candidate for any code; the static diagnosis says prose
    # neither parses nor is correct
    [verdict] = judge.verdicts(PROBLEM.problem_id, [prose], CANDIDATES)
    assert verdict.errors == {"Incorrect logical operator"}
    assert (verdict.clean, verdict.valid) == (False, False)
    [nothing] = judge.verdicts(PROBLEM.problem_id, [CORRECT], [])   # no candidates: no LLM call
    assert (nothing.errors, nothing.clean, nothing.valid) == (frozenset(), True, True)
