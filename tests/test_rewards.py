"""kaser.predictor.rewards (TRL reward functions) and kaser.metrics.sets.iou on hand-made cases.

Run: python -m pytest tests/test_rewards.py
"""

from __future__ import annotations

import doctest
import pickle

import pytest
from codebleu import calc_codebleu

import kaser.metrics.sets
import kaser.predictor.rewards
from kaser import config
from kaser.errors.judge import StaticJudge, Verdict
from kaser.errors.static_annotator import StaticParams
from kaser.metrics.codebleu import codebleu
from kaser.metrics.sets import error_match, error_recall, iou
from kaser.predictor.rewards import (
    completion_code,
    diversity_reward,
    make_error_reward,
    similarity_reward,
)

JAVA_SUM = """public int sum(int[] xs) {
    int s = 0;
    for (int x : xs) s += x;
    return s;
}"""
JAVA_SUM_WHILE = """public int sum(int[] xs) {
    int s = 0;
    int i = 0;
    while (i < xs.length) {
        s = s + xs[i];
        i++;
    }
    return s;
}"""
JAVA_SUM_OFF_BY_ONE = JAVA_SUM_WHILE.replace("i < xs.length", "i <= xs.length")
JAVA_SUM_NO_SEMI = JAVA_SUM.replace("int s = 0;", "int s = 0")
PY_EVENS = "def count_evens(nums):\n    count = 0\n    for n in nums:\n        if n % 2 == 0:\n" \
           "            count += 1\n    return count"
PY_EVENS_SHORT = "def count_evens(nums):\n    return len([n for n in nums if n % 2 == 0])"
PY_EVENS_BROKEN = "def count_evens(nums)\n    count = 0\n    for n in nums:\n        count += 1\n" \
                  "    return count"


def test_doctests_pass():
    # every reward's and iou's doctest, since the default pytest run does not collect doctests
    for module in (kaser.predictor.rewards, kaser.metrics.sets):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


@pytest.mark.parametrize("predicted, truth, expected", [
    ({"Off-by-one error"}, {"Off-by-one error"}, 1.0),      # same single error
    (set(), set(), 1.0),                                    # both correct: perfect match
    (set(), {"Missing semicolon"}, 0.0),                    # predicted correct, truth wrong
    ({"Missing semicolon"}, set(), 0.0),                    # predicted an error in correct code
    ({"A", "B"}, {"B", "C"}, 1 / 3),                        # one shared of three labels
    ({"A", "B", "C", "D"}, {"A", "B"}, 0.5),                # superset of the truth
    (["A", "A", "B"], ("A", "B"), 1.0),                     # duplicates and sequences count as sets
])
def test_iou(predicted, truth, expected):
    assert iou(predicted, truth) == pytest.approx(expected)


def test_iou_refuses_a_bare_string():
    # a string column cell would otherwise become a set of characters
    with pytest.raises(TypeError, match="not a string"):
        iou({"A"}, "A")


@pytest.mark.parametrize("completion, expected", [
    ("x = 1\ny = 2", "x = 1\ny = 2"),                                 # plain code, kept as is
    ("```java\nint x = 1;\n```", "int x = 1;"),                       # fenced, language tag
    ("```\nint x = 1;\n```", "int x = 1;"),                           # fenced, no language tag
    ("Sure:\n```python\nx = 1\n```\nIt sets x.", "x = 1"),            # prose around the fence
    ("```python\nx = 1\nwhile x:", "x = 1\nwhile x:"),                 # cut off before closing
    ("```python\na = 1\n```\n```python\nb = 2\n```", "a = 1"),        # first block only
    ("\n\n  \ndef f():\n    pass\n\n", "def f():\n    pass"),          # blank lines dropped
    ([{"role": "assistant", "content": "```java\nreturn 1;\n```"}], "return 1;"),  # chat format
    ([{"role": "assistant", "content": [{"type": "text", "text": "x = 1"}]}], "x = 1"),  # parts
    ({"role": "assistant", "content": "x = 2"}, "x = 2"),             # a bare message dict
    ([{"role": "assistant", "content": "a"}, {"role": "tool", "content": "b"}], "a"),  # tool msg
    ([], ""),                                                         # no message at all
    ("", ""),                                                         # empty completion
    ("def f():\n    return 1\n```", "def f():\n    return 1"),      # a closing fence never opened
    ("def f():\n    return 1\n```\nIt returns 1.", "def f():\n    return 1"),  # ... and prose after it
    ("Sure:\n```\nx = 1\n```\nIt sets x.", "x = 1"),                 # bare fences in a pair
    ("x = '``` inside a string'", "x = '``` inside a string'"),       # backticks that are no fence line
])
def test_completion_code(completion, expected):
    assert completion_code(completion) == expected


@pytest.mark.parametrize("completion, reference, language, expected", [
    (JAVA_SUM, JAVA_SUM, "java", 1.0),                                # identical code
    ("```java\n" + JAVA_SUM + "\n```", JAVA_SUM, "java", 1.0),        # identical once unfenced
    ("", JAVA_SUM, "java", 0.0),                                      # empty: 0, not 0.25
    ([{"role": "assistant", "content": "  \n"}], PY_EVENS, "python", 0.0),  # blank chat reply
])
def test_similarity_reward_hand_made(completion, reference, language, expected):
    assert similarity_reward([completion], code=[reference], language=[language]) == \
        [pytest.approx(expected)]


def test_similarity_reward_equals_package_per_row_and_language():
    # a mixed Java/Python batch: each row is CodeBLEU(GT, completion) in its own language
    rows = [(JAVA_SUM_WHILE, JAVA_SUM, "java"), (JAVA_SUM_OFF_BY_ONE, JAVA_SUM, "java"),
            (PY_EVENS_SHORT, PY_EVENS, "python"), (PY_EVENS_BROKEN, PY_EVENS, "python")]
    rewards = similarity_reward([c for c, _, _ in rows], code=[r for _, r, _ in rows],
                                language=[lang for _, _, lang in rows])
    expected = [calc_codebleu([r], [c], lang)["codebleu"] for c, r, lang in rows]
    assert rewards == pytest.approx(expected, abs=1e-9)


def test_rewards_accept_trl_keywords():
    # TRL passes prompts, completion_ids, trainer_state, log_extra, log_metric and every column
    trl_extras = dict(prompts=["p", "p"], completion_ids=[[1], [2]], trainer_state=None,
                      log_extra=lambda *a: None, log_metric=lambda *a: None, student_id=["s", "s"],
                      problem_id=["q", "q"], errors=[[], []], candidate_errors=[["A"], ["A"]])
    completions = [JAVA_SUM, JAVA_SUM_WHILE]
    columns = dict(code=[JAVA_SUM, JAVA_SUM], language=["java", "java"])
    assert len(similarity_reward(completions, **columns, **trl_extras)) == 2
    assert len(diversity_reward(completions, **columns, **trl_extras)) == 2
    assert make_error_reward(no_errors_judge)(completions, **columns, **trl_extras) == [1.0, 1.0]


def no_errors_judge(problem_id, code, candidate_errors):
    """A judge that finds nothing (module level, so an error reward using it pickles)."""
    return Verdict(frozenset(), True, True, frozenset())


def semicolon_judge(problem_id, code, candidate_errors):
    """Finds 'Missing semicolon' when a Java declaration line lacks its ';' (a toy judge)."""
    missing = any(line.strip().startswith("int ") and not line.rstrip().endswith(";")
                  for line in code.splitlines())
    if not missing:
        return Verdict(frozenset(), True, True, frozenset())
    found = frozenset({"Missing semicolon"})
    return Verdict(found & set(candidate_errors), False, False, found)


CANDIDATES = ["Missing semicolon", "Off-by-one error"]


@pytest.mark.parametrize("completion, truth, expected", [
    (JAVA_SUM, [], 1.0),                                        # both correct (judge: clean)
    (JAVA_SUM_NO_SEMI, ["Missing semicolon"], 1.0),             # judge finds exactly the truth
    (JAVA_SUM_NO_SEMI, ["Missing semicolon", "Off-by-one error"], 0.5),  # finds half of it
    (JAVA_SUM, ["Off-by-one error"], 0.0),                      # misses the only true error
    (JAVA_SUM_NO_SEMI, [], 0.0),                                # error where the student had none
    ("```java\n" + JAVA_SUM_NO_SEMI + "\n```", ["Missing semicolon"], 1.0),  # judge sees unfenced
])
def test_error_reward(completion, truth, expected):
    reward = make_error_reward(semicolon_judge)
    assert reward([completion], problem_id=["sum"], errors=[truth],
                  candidate_errors=[CANDIDATES]) == [pytest.approx(expected)]


def off_by_one_judge(problem_id, code, candidate_errors):
    """semicolon_judge, and 'Off-by-one error' (valid but wrong) where a loop runs to `<=`."""
    verdict = semicolon_judge(problem_id, code, candidate_errors)
    if verdict.clean and "<=" in code:
        return Verdict(frozenset({"Off-by-one error"}), False, True, frozenset({"Off-by-one error"}))
    return verdict


@pytest.mark.parametrize("completion, truth, correct, expected", [
    (JAVA_SUM_OFF_BY_ONE, ["Missing semicolon"], False, 0.25),  # wrong like the student, labels miss
    (JAVA_SUM_OFF_BY_ONE, ["Off-by-one error"], False, 1.0),    # labels match: the paper's 1
    (JAVA_SUM_NO_SEMI, ["Missing semicolon"], False, 1.0),      # a real syntax error, matched
    (JAVA_SUM_NO_SEMI, ["Off-by-one error"], False, 0.0),       # does not compile: no wrong answer
    (JAVA_SUM, ["Off-by-one error"], False, 0.0),               # correct where the student erred
    (JAVA_SUM_OFF_BY_ONE, [], True, 0.0),                       # correct pair: clean or nothing
    (JAVA_SUM, [], True, 1.0),
])
def test_outcome_share_pays_a_wrong_answer_on_wrong_pairs_only(completion, truth, correct, expected):
    reward = make_error_reward(off_by_one_judge, outcome_share=0.25)
    paper = make_error_reward(off_by_one_judge)
    columns = dict(problem_id=["sum"], errors=[truth], candidate_errors=[CANDIDATES], correct=[correct])
    assert reward([completion], **columns) == [pytest.approx(expected)]
    assert paper([completion], **columns)[0] <= reward([completion], **columns)[0]


def test_outcome_share_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="outcome_share 1.5 is not in"):
        make_error_reward(no_errors_judge, outcome_share=1.5)


def test_error_reward_passes_problem_code_and_candidates_to_the_judge():
    # the judge receives the row's problem id, the extracted code and the candidate list
    calls = []
    reward = make_error_reward(lambda *args: calls.append(args) or no_errors_judge(*args))
    reward(["```java\nreturn 1;\n```"], problem_id=["p7"], errors=[[]],
           candidate_errors=[("A", "B")])
    assert calls == [("p7", "return 1;", ["A", "B"])]


def test_error_reward_is_named_and_picklable():
    # TRL logs a reward under its __name__; async GRPO pickles reward functions
    reward = make_error_reward(semicolon_judge)
    assert reward.__name__ == "error_reward"
    copy = pickle.loads(pickle.dumps(reward))
    assert copy([JAVA_SUM_NO_SEMI], problem_id=["p"], errors=[["Missing semicolon"]],
                candidate_errors=[CANDIDATES]) == [1.0]


def test_error_reward_refuses_missing_labels():
    # a null label list is ambiguous (not annotated vs no errors): say which column and row
    with pytest.raises(ValueError, match="column errors, completion 1"):
        make_error_reward(no_errors_judge)(["a", "b"], problem_id=["p", "p"], errors=[[], None],
                                           candidate_errors=[[], []])


GROUP_A = [JAVA_SUM, JAVA_SUM_WHILE, JAVA_SUM_OFF_BY_ONE, JAVA_SUM_NO_SEMI, JAVA_SUM]
GROUP_B = [PY_EVENS, PY_EVENS_SHORT, PY_EVENS_BROKEN, PY_EVENS + "\n", "```python\nx = 1\n```"]


def _alone(group, language):
    return diversity_reward(group, language=[language] * len(group), prompts=["p"] * len(group))


def test_diversity_equals_one_minus_max_package_codebleu_with_completion_as_reference():
    # R_div(c_i) = 1 - max_j CodeBLEU(reference=c_i, prediction=c_j), the authors' order
    codes = [completion_code(c) for c in GROUP_B]
    expected = [1 - max(calc_codebleu([codes[i]], [codes[j]], "python")["codebleu"]
                        for j in range(len(codes)) if j != i) for i in range(len(codes))]
    assert _alone(GROUP_B, "python") == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("order", [
    list(range(10)),                       # group A then group B, as TRL lays them out
    [0, 5, 1, 6, 2, 7, 3, 8, 4, 9],        # interleaved: grouping must not depend on position
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],        # reversed
])
def test_diversity_groups_do_not_affect_each_other(order):
    # each completion's reward in a mixed batch equals its reward with its group alone
    batch = ([(c, "java", "prompt A") for c in GROUP_A]
             + [(c, "python", "prompt B") for c in GROUP_B])
    alone = _alone(GROUP_A, "java") + _alone(GROUP_B, "python")
    rows = [batch[i] for i in order]
    rewards = diversity_reward([c for c, _, _ in rows], language=[lang for _, lang, _ in rows],
                               prompts=[p for _, _, p in rows])
    assert rewards == pytest.approx([alone[i] for i in order], abs=1e-12)


def test_diversity_group_id_beats_prompt_text():
    # two dataset rows with the same prompt are still two groups when group_id says so
    completions = [JAVA_SUM, JAVA_SUM_WHILE, JAVA_SUM_WHILE, JAVA_SUM]
    rewards = diversity_reward(completions, language=["java"] * 4, prompts=["same"] * 4,
                               group_id=["row1", "row1", "row2", "row2"])
    separately = _alone(completions[:2], "java") + _alone(completions[2:], "java")
    assert rewards == pytest.approx(separately)
    assert min(rewards) > 0  # by prompt alone each would have an identical twin, reward 0


def test_diversity_conversational_prompts_group_by_messages():
    # chat-format prompts (message lists) are grouped by their content
    prompt_a = [{"role": "user", "content": "sum"}]
    prompt_b = [{"role": "user", "content": "evens"}]
    completions = [JAVA_SUM, JAVA_SUM, JAVA_SUM, JAVA_SUM_WHILE]
    rewards = diversity_reward(completions, language=["java"] * 4,
                               prompts=[prompt_a, prompt_a, prompt_b, prompt_b])
    assert rewards[:2] == [0.0, 0.0] and min(rewards[2:]) > 0


@pytest.mark.parametrize("completions, expected", [
    ([JAVA_SUM, JAVA_SUM], [0.0, 0.0]),                    # identical twins: no diversity
    ([JAVA_SUM], [0.0]),                                   # group of one: nothing to differ from
    (["", "  "], [0.0, 0.0]),                              # empty completions earn nothing
])
def test_diversity_hand_made(completions, expected):
    n = len(completions)
    assert diversity_reward(completions, language=["java"] * n, prompts=["p"] * n) == \
        pytest.approx(expected)


def test_empty_completion_gets_zero_and_leaves_others_alone():
    # an empty answer scores 0 (not 1) and does not change the rest of the group's rewards
    with_empty = diversity_reward(GROUP_A[:3] + [""], language=["java"] * 4, prompts=["p"] * 4)
    assert with_empty[3] == 0.0
    assert with_empty[:3] == pytest.approx(_alone(GROUP_A[:3], "java"))


def test_diversity_is_one_minus_codebleu_for_a_pair():
    # with two completions each one's reward is 1 - CodeBLEU(itself, the other)
    rewards = _alone([JAVA_SUM, JAVA_SUM_WHILE], "java")
    assert rewards == pytest.approx([1 - codebleu(JAVA_SUM, JAVA_SUM_WHILE, "java"),
                                     1 - codebleu(JAVA_SUM_WHILE, JAVA_SUM, "java")])


@pytest.mark.parametrize("kwargs, error", [
    (dict(language=["java", "java"]), "group_id column or the prompts"),       # no way to group
    (dict(language=["java", "python"], prompts=["p", "p"]), "mixes languages"),  # bad group
    (dict(language=["java", "java"], prompts=["p"]), "2 completions but 1 prompts"),  # short column
])
def test_diversity_bad_input_is_refused(kwargs, error):
    with pytest.raises(ValueError, match=error):
        diversity_reward([JAVA_SUM, JAVA_SUM_WHILE], **kwargs)


def test_error_reward_refuses_a_judge_that_returns_bare_labels():
    # a label set cannot say whether the code is correct, so prose would pass for a correct answer
    with pytest.raises(TypeError, match="must return kaser.errors.judge.Verdict"):
        make_error_reward(lambda *a: set())(["x"], problem_id=["p"], errors=[[]], candidate_errors=[[]])


@pytest.mark.parametrize("predicted, truth, clean, truth_correct, expected", [
    (set(), set(), True, None, 1.0),            # both correct: the judge found no error at all
    (set(), set(), False, None, 0.0),           # prose / stub: no candidate error, yet not correct
    ({"A"}, set(), False, None, 0.0),           # an error where the student had none
    ({"A"}, {"A", "B"}, False, None, 0.5),      # incorrect truth: plain IoU
    (set(), set(), False, False, 0.0),          # student's errors all outside the list: no match
    (set(), set(), True, False, 0.0),           # ... nor does a correct prediction match them
    (set(), {"A"}, True, True, 1.0),            # truth_correct wins over stray true labels
])
def test_error_match(predicted, truth, clean, truth_correct, expected):
    assert error_match(predicted, truth, clean, truth_correct) == expected


def test_error_match_refuses_clean_code_with_errors():
    with pytest.raises(ValueError, match="clean code has no errors"):
        error_match({"A"}, set(), clean=True)


@pytest.mark.parametrize("diagnosed, truth, expected", [
    ({"A", "X"}, {"A", "B"}, 0.5),     # found one of the student's two; X is not counted
    (set(), {"A"}, 0.0),               # found none
    ({"A"}, set(), None),              # no true errors: undefined (correct real code)
])
def test_error_recall(diagnosed, truth, expected):
    assert error_recall(diagnosed, truth) == expected


# ---------------------------------------------------------------- the reward with the real judge
# A Python problem of the synthetic bank judged by the static judge (compiler-free: Python's
# parser, the sandbox, the tests), its candidate list as the cluster stage would make it.

from hike_problem import CANDIDATES as HIKE_CANDIDATES  # noqa: E402
from hike_problem import CORRECT as HIKE_CORRECT  # noqa: E402
from hike_problem import PROBLEM as HIKE  # noqa: E402
from hike_problem import WRONG_OPERATOR as HIKE_WRONG  # noqa: E402
from hike_problem import dataset as hike_dataset  # noqa: E402

HIKE_CASES = {
    "prose": "This function checks the temperature and whether it rains, then decides if we "
             "go hiking.",
    "restated problem": HIKE.statement,
    "empty": "",
    "return 0": "def can_hike(temp, raining):\n    return 0",
    "pass stub": "def can_hike(temp, raining):\n    pass",
    "truncated code": "def can_hike(temp, raining):\n    if raining:\n        return temp >= 20 and",
    "correct program": HIKE_CORRECT,
    "one candidate error": HIKE_WRONG,
}
STOP = 0          # the token id that ends a finished completion in these cases
CUT_IDS = [7, 8]  # a completion that ran out of budget: its last token is no stop token


@pytest.fixture(scope="module")
def hike_judge(tmp_path_factory):
    return StaticJudge(*hike_dataset(tmp_path_factory.mktemp("hike")),
                       config.settings(StaticParams, "annotate", part=True))


@pytest.mark.parametrize("case, cut, truth, expected", [
    # the student's code was correct (truth ∅): only a program free of every error matches
    ("prose", False, [], 0.0),                  # diagnosed Syntax error, outside the list
    ("restated problem", False, [], 0.0),       # the statement is not Python either
    ("empty", False, [], 0.0),                  # no can_hike at all
    ("return 0", False, [], 0.0),               # runs, wrong answers
    ("pass stub", False, [], 0.0),              # returns None
    ("truncated code", False, [], 0.0),         # judged: its syntax error is not a candidate
    ("truncated code", True, [], 0.0),          # cut off by the budget: 0 without judging
    ("correct program", False, [], 1.0),        # the only way to match a correct student
    ("one candidate error", False, [], 0.0),    # an error the student did not make
    # the student made the wrong-operator error
    ("prose", False, ["Incorrect logical operator"], 0.0),
    ("pass stub", False, ["Incorrect logical operator"], 0.0),
    ("correct program", False, ["Incorrect logical operator"], 0.0),
    ("one candidate error", False, ["Incorrect logical operator"], 1.0),
    ("one candidate error", True, ["Incorrect logical operator"], 0.0),   # cut off: not a prediction
    ("one candidate error", False, ["Incorrect logical operator", "Missing colon"], 0.5),
])
def test_error_reward_with_the_static_judge(hike_judge, case, cut, truth, expected):
    reward = make_error_reward(hike_judge, stop_token_ids=[STOP])
    assert reward([HIKE_CASES[case]], problem_id=[HIKE.problem_id], errors=[truth],
                  candidate_errors=[HIKE_CANDIDATES],
                  completion_ids=[CUT_IDS if cut else [5, STOP]]) == [expected]


def test_a_cut_off_completion_earns_nothing_from_any_part(hike_judge):
    # a finished correct program, the same program cut off by the budget and a finished wrong
    # one; the cut one is told apart by its last token id (as TRL passes them) and by the
    # sampler's own flag. Unwrapped, its similarity and diversity would be paid.
    from kaser.predictor.grpo import kaser_rewards
    from kaser.predictor.sampling import Completion

    texts = [HIKE_CASES["correct program"], HIKE_CASES["truncated code"], HIKE_WRONG]
    columns = {"code": [HIKE_CASES["correct program"]] * 3, "language": ["python"] * 3,
               "problem_id": [HIKE.problem_id] * 3, "errors": [[]] * 3,
               "candidate_errors": [HIKE_CANDIDATES] * 3, "correct": [True] * 3, "group_id": [0] * 3}
    unpaid = [similarity_reward(texts, **columns)[1], diversity_reward(texts, **columns)[1]]
    assert min(unpaid) > 0
    by_ids = [f(texts, completion_ids=[[5, STOP], CUT_IDS, [5, STOP]], **columns)
              for f in kaser_rewards(hike_judge, stop_token_ids=[STOP])]
    flagged = [Completion(text, truncated=cut) for text, cut in zip(texts, (False, True, False))]
    by_flag = [f(flagged, **columns) for f in kaser_rewards(hike_judge)]
    assert by_ids == by_flag
    similarity, error, diversity = by_ids
    assert [part[1] for part in by_ids] == [0.0, 0.0, 0.0]
    assert similarity[0] == pytest.approx(1.0) and error == [1.0, 0.0, 0.0]
    assert diversity[0] > 0 and diversity[2] > 0                 # the finished ones are still paid
    assert [f.__name__ for f in kaser_rewards(hike_judge)] == ["similarity_reward", "error_reward",
                                                               "diversity_reward"]


def test_a_finished_code_that_does_not_parse_earns_no_diversity(hike_judge):
    # finished, but the truncated-looking code and the prose do not parse: the judge calls them
    # invalid, so GRPO's diversity pays them 0 although they differ most from the group; the
    # valid codes keep exactly their plain diversity (compared with the whole group)
    from kaser.predictor.grpo import kaser_rewards

    texts = [HIKE_CASES["correct program"], HIKE_CASES["truncated code"], HIKE_WRONG,
             HIKE_CASES["prose"]]
    columns = {"code": [HIKE_CASES["correct program"]] * 4, "language": ["python"] * 4,
               "problem_id": [HIKE.problem_id] * 4, "errors": [[]] * 4,
               "candidate_errors": [HIKE_CANDIDATES] * 4, "correct": [True] * 4, "group_id": [0] * 4}
    plain = diversity_reward(texts, **columns)
    valid = [v.valid for v in hike_judge.verdicts(HIKE.problem_id, texts, HIKE_CANDIDATES)]
    assert valid == [True, False, True, False] and min(plain) > 0
    *_, diversity = [f(texts, completion_ids=[[5, STOP]] * 4, **columns)
                     for f in kaser_rewards(hike_judge, stop_token_ids=[STOP])]
    assert diversity == pytest.approx([plain[0], 0.0, plain[2], 0.0])


@pytest.mark.parametrize("case", ["prose", "restated problem", "empty", "return 0", "pass stub",
                                  "truncated code"])
def test_non_code_has_no_candidate_error_but_is_not_clean(hike_judge, case):
    # what plain IoU (IoU(∅, ∅) = 1) would pay for: the judge finds no candidate error in these ...
    [verdict] = hike_judge.verdicts(HIKE.problem_id, [HIKE_CASES[case]], HIKE_CANDIDATES)
    assert verdict.errors == frozenset() and iou(verdict.errors, set()) == 1.0
    # ... but it did diagnose them, so they are not correct
    assert not verdict.clean and verdict.diagnosed


@pytest.mark.parametrize("case, valid", [("prose", False), ("truncated code", False),
                                         ("pass stub", True), ("correct program", True)])
def test_validity_is_parsing(hike_judge, case, valid):
    [verdict] = hike_judge.verdicts(HIKE.problem_id, [HIKE_CASES[case]], HIKE_CANDIDATES)
    assert verdict.valid is valid


def test_error_reward_batches_one_judge_call_per_problem():
    # a judge with verdicts() gets all completions of a problem (and candidate list) at once
    calls = []

    class Judge:
        def verdicts(self, problem_id, codes, candidates):
            calls.append((problem_id, list(codes)))
            return [Verdict(frozenset(), True, True, frozenset()) for _ in codes]

    reward = make_error_reward(Judge())
    assert reward(["a", "b", "c"], problem_id=["p", "q", "p"], errors=[[], [], []],
                  candidate_errors=[["A"]] * 3) == [1.0, 1.0, 1.0]
    assert calls == [("p", ["a", "c"]), ("q", ["b"])]


def test_error_reward_uses_the_correct_column_when_given():
    # a student whose code is wrong with errors outside the list (truth ∅, correct False)
    reward = make_error_reward(no_errors_judge)
    assert reward(["x"], problem_id=["p"], errors=[[]], candidate_errors=[["A"]],
                  correct=[False]) == [0.0]
    assert reward(["x"], problem_id=["p"], errors=[[]], candidate_errors=[["A"]],
                  correct=[True]) == [1.0]
