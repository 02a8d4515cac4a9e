"""Test cases for problems that come without any: generated inputs, answers from references.

Part of the static annotator (`kaser annotate DIR`, `python stages/annotate.py <dataset>`): real
CodeWorkout problems have no test cases, so the annotator tests differentially. Inputs are drawn
from the entry function's signature (Java types; Python parameter names and how the reference
uses them), mixing boundary values (0, 1, -1, empty string / array, a single element, equal
values) with the literals the reference itself tests against (`n == 13` -> 12, 13, 14;
`"hi"` -> strings built around "hi") and seeded random values. The expected answer of an input
is what the references return; an input is kept only when every reference returns the same
value without raising, so inputs outside the task (where correct programs disagree or fail) are
not used to judge anyone.

    tests = reference_tests("java", [("countEvens", [reference_code])])   # [[(args, expected), ...]]
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Sequence
from itertools import product
from typing import Any

from kaser.code import sandbox
from kaser.code.syntax import field, find, parse, text

# Java parameter type -> our generator kind
_JAVA_KINDS = {"int": "int", "long": "int", "short": "int", "byte": "int", "Integer": "int",
               "double": "double", "float": "double", "Double": "double", "boolean": "bool",
               "Boolean": "bool", "char": "char", "Character": "char", "String": "str",
               "int[]": "int[]", "Integer[]": "int[]", "List<Integer>": "int[]", "ArrayList<Integer>": "int[]",
               "double[]": "double[]", "List<Double>": "double[]", "boolean[]": "bool[]",
               "String[]": "str[]", "List<String>": "str[]", "ArrayList<String>": "str[]", "char[]": "char[]"}

_WORDS = ("a", "ab", "abc", "hello", "code", "xyz", "Hello", "aaa", "abba", "hi", "bob", "cat", "dog",
          "xx", "x", "madam", "java", "Python", "  a b ", "AbC")


def entry_signature(code: str, language: str, entry: str | None = None) -> tuple[str, list[str]] | None:
    """(name, parameter names or Java types) of the entry function: `entry`, else the first one
    that no other function of the code calls."""
    root = parse(code, language)
    kind = "method_declaration" if language == "java" else "function_definition"
    functions = find(root, kind)
    if not functions:
        return None
    calls = {text(field(c, "name" if language == "java" else "function"))
             for c in find(root, "method_invocation" if language == "java" else "call")
             if field(c, "name" if language == "java" else "function") is not None}
    chosen = [f for f in functions if text(field(f, "name")) == entry] if entry else []
    chosen = chosen or [f for f in functions if text(field(f, "name")) not in calls] or functions
    function = chosen[0]
    params = field(function, "parameters")
    if language == "java":
        items = [re.sub(r"\s+", "", text(field(p, "type"))) for p in params.named_children
                 if p.type == "formal_parameter"]
    else:
        items = [text(p) if p.type == "identifier" else text(field(p, "name") or p)
                 for p in params.named_children if p.type in ("identifier", "default_parameter",
                                                               "typed_parameter")]
    return text(field(function, "name")), items


# ---------------------------------------------------------------- Python parameter kinds

_NAME_HINTS = [
    (r"^(nums?|arr\w*|array|lst|list\w*|values|items|numbers|scores|xs|ints|data|seq|marks|grades|a?list)$", "int[]"),
    (r"^(words|names|strs|strings|tokens)$", "str[]"),
    (r"^(s|s\d|str\w*|text|word|name|phrase|sentence|line|string|msg|message|first|last|sep|word\d|"
     r"password|user\w*|email|sky|letters|prefix|suffix|target_word|c|ch|char|letter)$", "str"),
    (r"^(is_\w+|has_\w+|flag|\w+ing|member|weekend|vacation|raining|sunny|[a-c]_?ok)$", "bool"),
    (r"^(celsius|fahrenheit|rate|price|amount|ratio|x|y|weight|height)$", "double"),
]
_STRING_METHODS = r"upper|lower|startswith|endswith|find|rfind|strip|lstrip|rstrip|split|replace|count|isdigit|" \
                  r"isalpha|isupper|islower|join|index|capitalize|title"


def python_kinds(code: str, names: list[str]) -> list[list[str]]:
    """Plausible kinds per parameter, most likely first (name hints, then how the code uses it)."""
    kinds = []
    for name in names:
        q = re.escape(name)
        guesses = []
        if re.search(rf"\b{q}\.({_STRING_METHODS})\(", code) or re.search(rf"\b{q}\s*==\s*['\"]", code):
            guesses.append("str")
        if re.search(rf"\bfor \w+ in {q}\b|len\({q}\)|\b{q}\[", code):
            guesses += ["int[]", "str"]
        if re.search(rf"\b{q}\s*[%*/-]|range\([^)]*\b{q}\b|[<>]=?\s*{q}\b|\b{q}\s*[<>]", code):
            guesses.append("int")
        if re.search(rf"\bif (not )?{q}\s*:|\b(and|or|not) {q}\b|\b{q} (and|or)\b", code):
            guesses.append("bool")
        for pattern, kind in _NAME_HINTS:
            if re.match(pattern, name):
                guesses.insert(0 if not guesses or kind in guesses else 1, kind)
                break
        guesses += ["int", "str", "int[]"]
        kinds.append(list(dict.fromkeys(guesses))[:3])
    return kinds


# ---------------------------------------------------------------- values

def _literals(code: str) -> tuple[list[int], list[str], list[float]]:
    masked_numbers = [int(n) for n in re.findall(r"(?<![\w.])-?\d+(?![\w.])", code)]
    numbers = sorted({v for n in masked_numbers if abs(n) < 10_000 for v in (n - 1, n, n + 1)})
    strings = sorted({s for s in re.findall(r"\"([^\"\\\n]{0,12})\"|'([^'\\\n]{0,12})'", code) for s in s if s})
    floats = sorted({float(f) for f in re.findall(r"(?<![\w.])\d+\.\d+", code)})
    return numbers, strings, floats


class _Values:
    """Value pools of one problem, boundary values first."""

    def __init__(self, code: str, rng: random.Random):
        numbers, strings, floats = _literals(code)
        self.rng = rng
        self.ints = list(dict.fromkeys([0, 1, -1, 2, 3, 5, 10] + numbers))
        self.numbers = numbers
        self.strings = list(dict.fromkeys(["", "a", "ab"] + strings + list(_WORDS)))
        self.literals = strings
        # letters, plus the characters the reference tests for ("0".."9", "A".."Z", " ", ...)
        self.alphabet = "abcdehixyz" * 2 + "AB12 " + "".join(c for c in strings if len(c) == 1)
        self.doubles = list(dict.fromkeys([0.0, 1.0, -1.5, 2.5, 10.0, 0.5] + floats))

    def literal_choices(self, kind: str) -> list[Any]:
        """A few values of a kind taken from the reference's literals, plus one drawn at random."""
        if kind == "str":
            return [*self.literals[:4], self.draw(kind)]
        if kind == "int":
            return [*self.rng.sample(self.numbers, min(3, len(self.numbers))), self.draw(kind)]
        if kind == "bool":
            return [True, False]
        return [self.draw(kind)]

    def boundary(self, kind: str) -> list[Any]:
        return {"int": [0, 1, -1, 2], "double": [0.0, 1.0, -1.5], "bool": [True, False], "char": ["a", "Z"],
                "str": ["", "a", "ab", *self.literals[:3]], "int[]": [[], [1], [2, 2], [1, 2, 3]],
                "double[]": [[], [1.5], [1.0, 2.0]], "bool[]": [[], [True], [True, False]],
                "str[]": [[], ["a"], ["ab", "ab"]], "char[]": [[], ["a"]]}[kind]

    def draw(self, kind: str) -> Any:
        rng = self.rng
        if kind == "int":
            return rng.choice(self.ints) if rng.random() < 0.6 else rng.randint(-5, 30)
        if kind == "double":
            return rng.choice(self.doubles) if rng.random() < 0.5 else round(rng.uniform(-10, 100), 2)
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "char":
            return rng.choice("abcxyzAZ09 ")
        if kind == "str":
            if self.literals and rng.random() < 0.5:
                parts = [rng.choice(self.literals + ["x", "a", "b", " "]) for _ in range(rng.choice((1, 1, 2, 3, 4)))]
                return "".join(parts)
            return rng.choice(self.strings) if rng.random() < 0.4 else \
                "".join(rng.choice(self.alphabet) for _ in range(rng.randint(0, 12)))
        element = kind[:-2]
        size = rng.choice([0, 1, 2, 3, 4, 5, 6, 8])
        if element == "int" and rng.random() < 0.2:
            value = self.draw("int")
            return [value] * max(size, 2)
        return [self.draw(element) for _ in range(size)]


def generate_inputs(kinds: Sequence[str], code: str, count: int, seed: int) -> list[list]:
    """`count` distinct argument lists: boundary values per parameter, then random ones."""
    values = _Values(code, random.Random(seed))
    found: dict[str, list] = {}

    def add(args: list) -> None:
        found.setdefault(json.dumps(args), args)

    base = [values.boundary(k)[1 % len(values.boundary(k))] for k in kinds]
    for i, kind in enumerate(kinds):
        for value in values.boundary(kind):
            args = [values.draw(k) for k in kinds]
            args[i] = value
            add(args)
    add(base)
    # every number next to a literal of the reference (`temp >= 20` -> 19, 20, 21) in each int
    # parameter: where a comparison flips
    sweep = [(i, n) for i, kind in enumerate(kinds) if kind == "int" for n in values.numbers]
    values.rng.shuffle(sweep)
    for i, number in sweep[:count // 3]:
        args = [values.draw(k) for k in kinds]
        args[i] = number
        add(args)
        add([not a if k == "bool" else a for a, k in zip(args, kinds)])   # under either flag
    # the reference's own literals together ("admin" with "letmein", "sunny" with 24..26): a
    # branch that tests two of them is reached only when both hold at once
    grid = list(product(*[values.literal_choices(k) for k in kinds]))
    values.rng.shuffle(grid)
    for args in grid[:count // 2]:
        add(list(args))
    if kinds and all(k == kinds[0] for k in kinds) and kinds[0] in ("int", "str"):
        add([values.draw(kinds[0])] * len(kinds))   # equal values
    for _ in range(count * 4):
        if len(found) >= count:
            break
        add([values.draw(k) for k in kinds])
    return list(found.values())[:count]


# ---------------------------------------------------------------- answers from references

KIND_PROBE = 8   # inputs per Python kind assignment when choosing among several


def _assignments(language: str, entry: str, references: Sequence[str]) -> list[list[str]]:
    """Plausible kinds of the entry function's parameters (one assignment for Java)."""
    signature = entry_signature(references[0], language, entry) if references else None
    if signature is None:
        return []
    if language == "java":
        kinds = [_JAVA_KINDS.get(t) for t in signature[1]]
        return [kinds] if None not in kinds else []
    options = python_kinds("\n".join(references), signature[1])
    return [list(a) for a in product(*options)][:6] or [[]]


def reference_tests(language: str, problems: Sequence[tuple[str, Sequence[str]]], count: int = 40,
                    seed: int = 0, limits: sandbox.Limits = sandbox.Limits(),
                    run=sandbox.run_problems) -> list[list[tuple[list, Any]]]:
    """Test cases per problem `(entry, references)`: generated inputs on which every reference
    returns the same value (without raising). [] where the signature cannot be read or no
    reference is given.

    Python parameters have no types: each plausible kind assignment first gets KIND_PROBE
    inputs, and the one on which the references agree most often gets the `count` inputs.
    `run` is `sandbox.run_problems` or a stand-in with its signature; the annotator's `limits`
    stop a looping reference at its first timeout (`stop_after_timeout`).
    """
    def generated(entry, references, kinds, a, size):
        # seeded by the problem itself, so its inputs do not depend on what else is in the batch
        return generate_inputs(kinds, "\n".join(references), size, zlib.crc32(f"{seed}:{entry}:{a}".encode()))

    options = [_assignments(language, entry, references) for entry, references in problems]
    chosen = [(kinds[0], 0) if len(kinds) == 1 else None for kinds in options]
    probes = [(p, a, generated(entry, references, kinds, a, KIND_PROBE))
              for p, ((entry, references), kinds) in enumerate(zip(problems, options)) if len(kinds) > 1
              for a, kinds in enumerate(kinds)]
    if probes:
        results = run(language, [(problems[p][0], list(problems[p][1]), [(args, None) for args in inputs])
                                 for p, _, inputs in probes], limits)
        best: dict[int, tuple[int, int]] = {}
        for (p, a, inputs), outcome in zip(probes, results):
            agreed = len(_agreed(inputs, outcome))
            if agreed > best.get(p, (-1, 0))[0]:
                best[p] = (agreed, a)
        for p, (_, a) in best.items():
            chosen[p] = (options[p][a], a)
    jobs, owners = [], []
    for p, ((entry, references), pick) in enumerate(zip(problems, chosen)):
        if pick is not None:
            inputs = generated(entry, references, pick[0], pick[1], count)
            jobs.append((entry, list(references), [(args, None) for args in inputs]))
            owners.append((p, inputs))
    tests: list[list[tuple[list, Any]]] = [[] for _ in problems]
    for (p, inputs), outcome in zip(owners, run(language, jobs, limits) if jobs else []):
        tests[p] = _agreed(inputs, outcome)
    return tests


def _agreed(inputs: list[list], results: list[sandbox.ProgramResult]) -> list[tuple[list, Any]]:
    if not results or not all(r.compiled for r in results):
        return []
    agreed = []
    for case, args in enumerate(inputs):
        values = []
        for result in results:
            outcome = result.cases[case]
            if outcome.status not in ("pass", "fail") or outcome.actual is None:
                break
            values.append(json.loads(outcome.actual))
        else:
            if all(sandbox.same_value(v, values[0]) for v in values[1:]):
                agreed.append((args, values[0]))
    return agreed
