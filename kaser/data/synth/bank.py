"""The shape of a synthetic problem, and the fixed knowledge-component vocabulary.

`bank_java.PROBLEMS` and `bank_python.PROBLEMS` are lists of `BankProblem`: CodingBat-style
one-function tasks written for this project, each with its KCs, at least two reference solutions
in different styles, and at least eight test cases that every reference passes.

Java code is a single method (or a method plus helpers) without a class, as students submit it on
CodeWorkout; Python code is a top-level function. `entry` names the function the tests call.
A test case is `(args, expected)`: `args` is a tuple of JSON-representable arguments (int, float,
bool, str, list of int, list of str), `expected` is the JSON-representable return value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class BankProblem:
    problem_id: str                       # e.g. "java_lucky_sum"
    entry: str                            # function the tests call, e.g. "luckySum"
    statement: str                        # the task in our own words
    kcs: tuple[str, ...]                  # subset of KC_VOCABULARY
    references: tuple[str, ...]           # >= 2 correct solutions in different styles
    tests: tuple[tuple[tuple[Any, ...], Any], ...]   # >= 8 (args, expected)
