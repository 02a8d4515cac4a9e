"""kaser.metrics.codebleu gives the `codebleu` package's numbers, guards empty code, caches parses.

Run: python -m pytest tests/test_metrics_codebleu.py
"""

from __future__ import annotations

import itertools

import pytest
from codebleu import calc_codebleu

from kaser.metrics.codebleu import (
    PARTS,
    code_features,
    codebleu,
    codebleu_many,
    codebleu_parts,
    max_codebleu_to_rest,
)

# Student-style submissions, correct and broken, as CodeWorkout (Java methods) and FalconCode
# (Python scripts/functions) hold them.
JAVA = {
    # correct, else-if chain
    "lucky_sum": """public int luckySum(int a, int b, int c) {
    if (a == 13) {
        return 0;
    } else if (b == 13) {
        return a;
    } else if (c == 13) {
        return a + b;
    }
    return a + b + c;
}""",
    # assignment instead of comparison, wrong return (the paper's Table 4 student)
    "lucky_sum_assign": """public int luckySum(int a, int b, int c) {
    if (a = 13) {
        return 0;
    }
    if (b == 13) {
        return b;
    }
    if (c=13) return a+b;
    return a+b+c;
}""",
    # missing semicolons and a missing closing brace
    "lucky_sum_syntax": """public int luckySum(int a, int b, int c) {
    int sum = 0
    if (a != 13) {
        sum = a;
        if (b != 13) {
            sum += b
            if (c != 13) sum += c;
        }
    return sum;
}""",
    # loop over an array with an off-by-one bound and a comment
    "count_evens": """public int countEvens(int[] nums) {
    int count = 0; // how many evens
    for (int i = 0; i <= nums.length; i++) {
        if (nums[i] % 2 == 0) {
            count++;
        }
    }
    return count;
}""",
    # enhanced for, correct, block comment
    "count_evens_foreach": """public int countEvens(int[] nums) {
    /* count the even numbers */
    int evens = 0;
    for (int n : nums) {
        if (n % 2 == 0) evens = evens + 1;
    }
    return evens;
}""",
    # string comparison with == and a string holding comment-like text
    "caught_speeding": """public int caughtSpeeding(int speed, boolean isBirthday) {
    String note = "speed // km/h";
    int extra = 0;
    if (isBirthday == true) extra = 5;
    if (speed <= 60 + extra) {
        return 0;
    } else if (speed <= 80 + extra) {
        return 1;
    } else {
        return 2;
    }
}""",
    # while loop, string building, missing return
    "string_times": """public String stringTimes(String str, int n) {
    String result = "";
    int i = 0;
    while (i < n) {
        result = result + str;
        i++;
    }
}""",
    # truncated mid-statement, as a completion cut at the token limit
    "truncated": """public boolean sleepIn(boolean weekday, boolean vacation) {
    if (!weekday || vacation) {
        return true;
    } else {
        return fal""",
}

PYTHON = {
    # correct function, docstring
    "lucky_sum": '''def lucky_sum(a, b, c):
    """Sum of a, b, c, stopping at 13."""
    if a == 13:
        return 0
    elif b == 13:
        return a
    elif c == 13:
        return a + b
    return a + b + c
''',
    # missing logic branch, comment
    "lucky_sum_branch": '''def lucky_sum(a, b, c):
    # add them up
    total = a + b + c
    if a == 13:
        total = 0
    return total
''',
    # missing colon and wrong indentation
    "lucky_sum_syntax": '''def lucky_sum(a, b, c)
    if a == 13:
    return 0
    return a+b+c
''',
    # FalconCode-style script reading input, printing, a string treated as a boolean
    "symptoms_script": '''fever = float(input("Temperature: "))
body_aches = input("Body aches? ")
loss_of_smell = input("Loss of smell? ")
score = 0
if fever > 100.4:
    score += 2
if body_aches:
    score += 1
if loss_of_smell:
    score += 3
if score >= 4:
    result = "covid likely"
''',
    # loop with an index error and augmented assignment
    "count_evens": '''def count_evens(nums):
    count = 0
    for i in range(len(nums) + 1):
        if nums[i] % 2 == 0:
            count += 1
    return count
''',
    # comprehension style, correct
    "count_evens_comprehension": '''def count_evens(nums):
    return len([n for n in nums if n % 2 == 0])
''',
    # while loop with an infinite loop (counter never moves) and a non-ASCII string
    "string_times": '''def string_times(s, n):
    result = "résumé: "
    i = 0
    while i < n:
        result = result + s
    return result
''',
    # unbalanced parentheses, then more code
    "unbalanced": '''def make_bricks(small, big, goal):
    if (goal > big * 5 + small:
        return False
    return goal % 5 <= small
''',
}

PAIRS = [(language, ref_name, hyp_name, codes[ref_name], codes[hyp_name])
         for language, codes in (("java", JAVA), ("python", PYTHON))
         for ref_name, hyp_name in itertools.permutations(codes, 2)]


@pytest.mark.parametrize("language, ref_name, hyp_name, reference, prediction", PAIRS,
                         ids=[f"{lang}:{r}->{h}" for lang, r, h, _, _ in PAIRS])
def test_equals_package_on_pair(language, ref_name, hyp_name, reference, prediction):
    # every part and the total equal calc_codebleu on the same (reference, prediction)
    expected = calc_codebleu([reference], [prediction], language)
    got = codebleu_parts(reference, prediction, language)
    for key in ("codebleu",) + PARTS:
        assert got[key] == pytest.approx(expected[key], abs=1e-9), key


@pytest.mark.parametrize("language, code", [
    ("java", JAVA["lucky_sum"]),        # correct Java
    ("java", JAVA["truncated"]),        # broken Java
    ("python", PYTHON["lucky_sum"]),    # correct Python with a docstring
    ("python", PYTHON["lucky_sum_syntax"]),  # broken Python
])
def test_identical_code_equals_package(language, code):
    # a code against itself: 1.0 or close, whatever the package says
    assert codebleu(code, code, language) == pytest.approx(
        calc_codebleu([code], [code], language)["codebleu"], abs=1e-9)


@pytest.mark.parametrize("reference, prediction", [
    (PYTHON["lucky_sum"], ""),          # empty prediction: the package would say 0.25
    (PYTHON["lucky_sum"], " \n\t\n "),  # whitespace-only prediction, same
    ("", PYTHON["lucky_sum"]),          # empty reference: nothing to match
    ("  \n", "  "),                     # both empty
])
def test_empty_code_scores_zero(reference, prediction):
    assert codebleu(reference, prediction, "python") == 0.0
    assert set(codebleu_parts(reference, prediction, "python").values()) == {0.0}


def test_package_quirk_the_guard_exists_for():
    # why the guard: the package pays 0.25 for an empty prediction (empty data flow counts as 1)
    assert calc_codebleu([PYTHON["lucky_sum"]], [""], "python")["codebleu"] == pytest.approx(0.25)


def test_surrounding_whitespace_does_not_matter():
    # the package strips both codes; so do we, before the cache
    code = JAVA["count_evens"]
    assert codebleu(code, "\n\n" + code + "  \n", "java") == codebleu(code, code, "java")


def test_reference_parsed_once_for_many_predictions():
    # a group of 5 completions against one reference parses 6 codes, not 10
    predictions = [JAVA[name] for name in ("lucky_sum_assign", "lucky_sum_syntax", "count_evens",
                                           "caught_speeding", "truncated")]
    code_features.cache_clear()
    scores = codebleu_many(JAVA["lucky_sum"], predictions, "java")
    assert code_features.cache_info().misses == 6
    codebleu_many(JAVA["lucky_sum"], predictions, "java")
    assert code_features.cache_info().misses == 6  # second round: all hits
    assert scores == [codebleu(JAVA["lucky_sum"], p, "java") for p in predictions]


def test_argument_order_matters():
    # CodeBLEU is asymmetric: swapping reference and prediction changes the score
    a, b = PYTHON["lucky_sum"], PYTHON["lucky_sum_branch"]
    assert codebleu(a, b, "python") != pytest.approx(codebleu(b, a, "python"), abs=1e-6)


@pytest.mark.parametrize("language, names", [
    ("java", ["lucky_sum", "lucky_sum_assign", "lucky_sum_syntax", "count_evens", "truncated"]),
    ("python", ["lucky_sum", "lucky_sum_branch", "count_evens", "count_evens_comprehension",
                "string_times"]),
    ("python", ["lucky_sum", "lucky_sum"]),  # two identical codes: each has a twin
])
def test_max_to_rest_equals_package_with_code_as_reference(language, names):
    # code i sits in the reference slot against every other code j (paper Eq. 3, authors' order)
    codes = [(JAVA if language == "java" else PYTHON)[n] for n in names]
    expected = [max(calc_codebleu([codes[i]], [codes[j]], language)["codebleu"]
                    for j in range(len(codes)) if j != i) for i in range(len(codes))]
    assert max_codebleu_to_rest(codes, language) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("call, error", [
    (lambda: codebleu("x = 1", "x = 1", "c"), "language must be one of"),  # unsupported language
    (lambda: max_codebleu_to_rest(["x = 1"], "python"), "at least 2 codes"),  # nothing to compare
])
def test_bad_input_is_refused(call, error):
    with pytest.raises(ValueError, match=error):
        call()
