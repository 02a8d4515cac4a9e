"""The synthetic problem bank: `load_bank(language)`, read from the data files in problem_bank/.

    python -c "from kaser.data.synth.bank import load_bank; print(len(load_bank('java')))"

The bank is data, not code. `problem_bank/problems.yaml` holds what every language shares, in bank
order: per problem an id, the statement, its KCs and its tests. `problem_bank/<language>.yaml` holds
what differs: the words a statement uses in that language (`{true}` is `true` in Java and `True` in
Python), and per problem the function the tests call and at least two reference solutions in
different styles. `load_bank` joins the two into a list of `BankProblem`: CodingBat-style
one-function tasks written for this project, each with at least eight test cases that every
reference passes (checked by `python -m pytest tests/test_bank.py`).

Java code is a single method (or a method plus helpers) without a class, as students submit it on
CodeWorkout; Python code is a top-level function. `entry` names the function the tests call, and
`signature` is its header in the first reference (`def count_vowels(s):`, `public int luckySum(int
a, int b)`): what the student sees in the editor, and what the student prompt shows
(`kaser.data.signatures`); every reference declares the same header.
A test case is `(args, expected)`: `args` is a tuple of JSON-representable arguments (int, float,
bool, str, list of int, list of str), `expected` is the JSON-representable return value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from kaser import InputError
from kaser.data.contracts import signature_name
from kaser.data.signatures import starter_signature

BANK_DIR = Path(__file__).with_name("problem_bank")
LANGUAGES = ("java", "python")

# ~20 knowledge components shared by both languages. Readable names, because they appear in the
# model's prompt ("The student's mastery level on {kc} is ...") and in `kaser simulate --mastery`.
# They follow the 18 concept columns of the CodeWorkout problem table, plus return statements and
# variables.
KC_VOCABULARY = (
    "conditionals",            # If/Else
    "nested conditionals",     # NestedIf
    "while loops",             # While
    "for loops",               # For
    "nested loops",            # NestedFor
    "arithmetic",              # Math+-*/
    "modulo",                  # Math%
    "boolean operators",       # LogicAndNotOr
    "numeric comparison",      # LogicCompareNum
    "boolean logic",           # LogicBoolean
    "string formatting",       # StringFormat
    "string concatenation",    # StringConcat
    "string indexing",         # StringIndex
    "string length",           # StringLen
    "string equality",         # StringEqual
    "character comparison",    # CharEqual
    "array indexing",          # ArrayIndex
    "function definition",     # DefFunction
    "return statements",
    "variables",
)

_WORD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class BankProblem:
    problem_id: str                       # e.g. "java_lucky_sum"
    entry: str                            # function the tests call, e.g. "luckySum"
    statement: str                        # the task in our own words
    kcs: tuple[str, ...]                  # subset of KC_VOCABULARY
    references: tuple[str, ...]           # >= 2 correct solutions in different styles
    tests: tuple[tuple[tuple[Any, ...], Any], ...]   # >= 8 (args, expected)
    signature: str                        # the entry's header in references[0], e.g. "def f(n):"


def load_bank(language: str, directory: Path = BANK_DIR) -> list[BankProblem]:
    """The problems of one language's bank, in bank order (a new list; the problems are frozen).

    `directory` holds problems.yaml and <language>.yaml; tests point it at altered copies.
    """
    if language not in LANGUAGES:
        raise InputError(f"unknown language '{language}'; choose {' or '.join(LANGUAGES)}")
    return list(_load(language, Path(directory)))


@cache
def _load(language: str, directory: Path) -> tuple[BankProblem, ...]:
    shared_file, language_file = directory / "problems.yaml", directory / f"{language}.yaml"
    shared, own = _read(shared_file), _read(language_file)
    words, solutions = own.get("words") or {}, own.get("problems") or {}
    ids = [problem["id"] for problem in shared]
    if set(ids) != set(solutions) or len(ids) != len(solutions):
        raise InputError(f"problems must be those of {shared_file.name}: missing "
                         f"{sorted(set(ids) - set(solutions))}, unknown {sorted(set(solutions) - set(ids))}",
                         file=language_file)
    bank = []
    for problem in shared:
        solution = solutions[problem["id"]]
        signature = starter_signature(solution["references"][0], language, solution["entry"])
        if signature_name(signature, language) != solution["entry"]:
            raise InputError(f"the first reference of {problem['id']} defines no function "
                             f"{solution['entry']!r} (its entry)", file=language_file)
        problem_words = {**words, **(solution.get("words") or {}), "entry": solution["entry"]}
        bank.append(BankProblem(
            problem_id=solution.get("problem_id", f"{language}_{problem['id']}"),
            entry=solution["entry"],
            statement=_fill(problem["statement"], problem_words, f"{language_file}:problems.{problem['id']}"),
            kcs=tuple(problem["kcs"]),
            references=tuple(solution["references"]),
            tests=tuple((tuple(args), expected) for args, expected in problem["tests"]),
            signature=signature,
        ))
    return tuple(bank)


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _fill(statement: str, words: dict[str, str], where: str) -> str:
    """The statement with each {word} replaced by what the language calls it."""
    unknown = sorted(set(_WORD.findall(statement)) - set(words))
    if unknown:
        raise InputError(f"the statement uses {', '.join('{' + w + '}' for w in unknown)}, which neither "
                         f"this problem's words nor the language's words define", file=where)
    return _WORD.sub(lambda match: words[match.group(1)], statement)
