"""Time KASER's hybrid reward per GRPO group of 5: kaser.predictor.rewards vs `codebleu.calc_codebleu` per pair.

Builds 40 groups (20 Java, 20 Python): a ground-truth student code and 5 completions, each a
reference program changed by a few student-like edits (renamed variable, off-by-one comparison,
dropped or repeated line, missing semicolon or colon, added comment). Then times, per group:
(a) our reward: similarity_reward + diversity_reward + error_reward (with a judge that finds
    nothing, so the judge costs nothing and the time is the reward code's own), parse cache
    cleared before every group so each group starts cold, as new completions do in training;
(b) the package: calc_codebleu once per (ground truth, completion) and once per ordered pair of
    completions, the same 5 + 20 CodeBLEU scores.
It checks that both give the same scores, prints the time per group of each, and as its last line
`speedup: X` (time (b) / time (a)).

    .venv/bin/python benchmarks/reward_speed.py [--groups 20]    # groups per language
    .venv/bin/python benchmarks/reward_speed.py --smoke          # 2 groups per language, seconds
"""

from __future__ import annotations

import argparse
import random
import re
import time

from codebleu import calc_codebleu

from kaser.errors.judge import Verdict
from kaser.metrics.codebleu import code_features
from kaser.predictor.rewards import diversity_reward, make_error_reward, similarity_reward

GROUPS_PER_LANGUAGE = 20
SMOKE_GROUPS_PER_LANGUAGE = 2
GROUP_SIZE = 5  # the paper's num_generations
SEED = 0

REFERENCES = {
    "java": [
        """public int sum13(int[] nums) {
    int sum = 0;
    for (int i = 0; i < nums.length; i++) {
        if (nums[i] == 13) {
            i++;
        } else {
            sum += nums[i];
        }
    }
    return sum;
}""",
        """public int[] fizzArray(int n) {
    int[] result = new int[n];
    for (int i = 0; i < n; i++) {
        result[i] = i;
    }
    return result;
}""",
        """public int caughtSpeeding(int speed, boolean isBirthday) {
    int limit = 60;
    if (isBirthday) {
        limit = limit + 5;
    }
    if (speed <= limit) {
        return 0;
    } else if (speed <= limit + 20) {
        return 1;
    }
    return 2;
}""",
        """public String withoutX(String str) {
    String result = "";
    for (int i = 0; i < str.length(); i++) {
        char c = str.charAt(i);
        if (i == 0 && c == 'x' || i == str.length() - 1 && c == 'x') {
            continue;
        }
        result = result + c;
    }
    return result;
}""",
    ],
    "python": [
        """def no_teen_sum(a, b, c):
    def fix_teen(n):
        if 13 <= n <= 19 and n != 15 and n != 16:
            return 0
        return n
    return fix_teen(a) + fix_teen(b) + fix_teen(c)
""",
        """def count_evens(nums):
    count = 0
    for i in range(len(nums)):
        if nums[i] % 2 == 0:
            count += 1
    return count
""",
        """temperature = float(input("Temperature: "))
cough = input("Cough? ")
score = 0
if temperature > 100.4:
    score = score + 2
if cough == "yes":
    score = score + 1
if score >= 2:
    print("see a doctor")
else:
    print("rest")
""",
        """def string_splosion(s):
    result = ""
    i = 1
    while i <= len(s):
        result = result + s[:i]
        i += 1
    return result
""",
    ],
}


def student_variant(code: str, language: str, rng: random.Random) -> str:
    """The code after 1-3 random student-like edits."""
    for _ in range(rng.randint(1, 3)):
        code = rng.choice(EDITS)(code, language, rng)
    return code


def _rename(code, language, rng):
    names = sorted(set(re.findall(r"\b(result|count|score|limit|sum|i|c|a|b)\b", code)))
    if not names:
        return code
    name = rng.choice(names)
    return re.sub(rf"\b{name}\b", rng.choice(["tmp", "total", "val", "k"]), code)


def _off_by_one(code, language, rng):
    swaps = [("<=", "<"), ("<", "<="), ("== 13", "= 13"), ("+ 1", ""), ("0", "1")]
    old, new = rng.choice(swaps)
    return code.replace(old, new, 1)


def _drop_line(code, language, rng):
    lines = code.split("\n")
    if len(lines) > 3:
        del lines[rng.randrange(1, len(lines) - 1)]
    return "\n".join(lines)


def _repeat_line(code, language, rng):
    lines = code.split("\n")
    i = rng.randrange(1, len(lines))
    return "\n".join(lines[:i] + [lines[i - 1]] + lines[i:])


def _missing_punctuation(code, language, rng):
    mark = ";" if language == "java" else ":"
    positions = [m.start() for m in re.finditer(re.escape(mark), code)]
    if not positions:
        return code
    i = rng.choice(positions)
    return code[:i] + code[i + 1:]


def _comment(code, language, rng):
    comment = "// check this" if language == "java" else "# check this"
    lines = code.split("\n")
    i = rng.randrange(1, len(lines))
    indent = re.match(r"\s*", lines[i]).group(0)
    return "\n".join(lines[:i] + [indent + comment] + lines[i:])


EDITS = [_rename, _off_by_one, _drop_line, _repeat_line, _missing_punctuation, _comment]


def build_groups(rng: random.Random, per_language: int) -> list[tuple[str, str, list[str]]]:
    """(language, ground-truth code, 5 completions) per group, `per_language` groups of each."""
    groups = []
    for language, references in REFERENCES.items():
        for g in range(per_language):
            reference = references[g % len(references)]
            truth = student_variant(reference, language, rng)
            completions = [student_variant(reference, language, rng) for _ in range(GROUP_SIZE)]
            groups.append((language, truth, completions))
    return groups


def no_error_judge(problem_id: str, code: str, candidates: list[str]) -> Verdict:
    """A judge that finds nothing in any code (clean, valid): it costs nothing to ask."""
    return Verdict(errors=frozenset(), clean=True, valid=True, diagnosed=frozenset())


def hybrid_reward_ours(language: str, truth: str, completions: list[str]) -> list[list[float]]:
    n = len(completions)
    columns = dict(code=[truth] * n, language=[language] * n, prompts=["one prompt"] * n,
                   problem_id=["p"] * n, errors=[[]] * n, candidate_errors=[["Off-by-one error"]] * n)
    error_reward = make_error_reward(no_error_judge)
    return [similarity_reward(completions, **columns), diversity_reward(completions, **columns),
            error_reward(completions, **columns)]


def hybrid_codebleu_package(language: str, truth: str, completions: list[str]):
    similarity = [calc_codebleu([truth], [c], language)["codebleu"] for c in completions]
    diversity = [1 - max(calc_codebleu([c], [other], language)["codebleu"]
                         for j, other in enumerate(completions) if j != i)
                 for i, c in enumerate(completions)]
    return similarity, diversity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=GROUPS_PER_LANGUAGE, help="groups per language")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{SMOKE_GROUPS_PER_LANGUAGE} groups per language: a few seconds")
    args = parser.parse_args()
    groups = build_groups(random.Random(SEED), SMOKE_GROUPS_PER_LANGUAGE if args.smoke else args.groups)
    calc_codebleu(["int a = 1;"], ["int a = 1;"], "java")  # import/loading costs out of the timing
    ours, package, ours_time, package_time = [], [], 0.0, 0.0
    for language, truth, completions in groups:
        code_features.cache_clear()
        start = time.perf_counter()
        ours.append(hybrid_reward_ours(language, truth, completions))
        ours_time += time.perf_counter() - start
        start = time.perf_counter()
        package.append(hybrid_codebleu_package(language, truth, completions))
        package_time += time.perf_counter() - start
    difference = max(abs(x - y) for (sim, div, _), (psim, pdiv) in zip(ours, package)
                     for x, y in zip(sim + div, psim + pdiv))
    print(f"{len(groups)} groups of {GROUP_SIZE} (Java and Python), 5 similarity + 20 pairwise "
          f"CodeBLEU per group; largest score difference ours vs package: {difference:.1e}")
    print(f"ours (similarity + diversity + error reward, trivial judge): "
          f"{1000 * ours_time / len(groups):.2f} ms per group")
    print(f"codebleu.calc_codebleu per pair (similarity + diversity): "
          f"{1000 * package_time / len(groups):.2f} ms per group")
    print(f"speedup: {package_time / ours_time:.1f}")


if __name__ == "__main__":
    main()
