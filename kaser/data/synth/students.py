"""Synthetic students: latent mastery per knowledge component that grows with practice, the chance
of each catalogued error given that mastery, an order of problems, and a personal coding style.

    population = draw_students(200, kc_vocabulary, n_problems=30, rng=np.random.default_rng(1))
    code = style_code(reference, "java", population[0].style)

Model (all draws from the caller's numpy Generator, so a seed fixes everything):
- mastery_k = sigmoid(ability + ease_k + noise_k): ability ~ N(0, 0.8) per student, ease_k ~ N(-0.6, 0.5)
  per KC and dataset (some KCs are harder for everyone), noise ~ N(0, 0.6) per student and KC.
- after an attempt, every KC of the problem moves toward 1 by the student's learn rate
  (m <- m + r (1 - m), r ~ Beta(2, 20), mean 0.09): BKT's learning transition with a continuous state.
- an error type is possible on a problem when its KCs meet the problem's KCs; its chance is
  base(category) * weight(error) * (1 - m)^GAMMA with m the weakest mastery among those shared KCs.
- order: course order (the bank order of the chosen problems) with Gaussian jitter of 2 positions;
  each student skips each problem with probability ~ Beta(2, 14) drawn per student.
- style: which reference solution the student tends to write (verbosity), variable names (as in
  the reference, short, or long), Java brace placement, and indentation width; all applied as
  source edits that keep the program's behaviour (a test runs every bank reference through them).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext
from functools import lru_cache

import numpy as np

from kaser.code.syntax import all_names, find, is_reserved, local_names, parse, rename, splice

# Chance of an error of each category at zero mastery of its KCs (before the error must show on the
# tests to count). Chosen so that about half the submissions are correct at the default size
# (measured 200 x 30: Python 55%, Java about 60%) and errors fall steeply with mastery.
BASE_RATE = {"Syntax": 0.3, "Runtime": 0.65, "Logical": 0.75}
GAMMA = 2.5                  # > 1: errors concentrate on weak students (error_chance spells out x ** 2.5)
MAX_ERRORS = 3               # per submission
ORDER_JITTER = 2.0           # standard deviation, in course positions, of a student's reordering

NAMINGS = ("as-is", "short", "long")
BRACES = ("same-line", "next-line")


@dataclass(frozen=True)
class Style:
    reference: float    # in [0, 1): position among a problem's references the student tends to write
    naming: str         # one of NAMINGS
    braces: str         # one of BRACES (Java only)
    indent: int         # spaces per level: 4 or 2


@dataclass(frozen=True)
class Student:
    student_id: str
    mastery: tuple[float, ...]     # initial mastery, one per KC of the dataset vocabulary
    learn_rate: float
    order: tuple[int, ...]         # indices into the chosen problems, in attempt order
    style: Style


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) with the same bits on every machine.

    Not np.exp: numpy picks an exp kernel by CPU (AVX-512 or AVX2), and the kernels differ in the
    last bit; that alone gave a machine without AVX-512 other `true_mastery` bytes (and libm's exp
    and pow have CPU variants too). Decimal's arithmetic is fully specified (exp correctly rounded
    at the context's 40 digits), so its result, rounded to a float, is the same everywhere.
    """
    with localcontext(prec=40):
        return np.array([float(1 / (1 + Decimal(-float(v)).exp())) for v in np.atleast_1d(x)])


def draw_students(count: int, kc_vocabulary: list[str], n_problems: int,
                  rng: np.random.Generator) -> list[Student]:
    """`count` students with priors over `kc_vocabulary` and attempt orders over `n_problems`."""
    ease = rng.normal(-0.6, 0.5, size=len(kc_vocabulary))
    width = max(4, len(str(count - 1)))       # ids sort as numbers: s0000, s0001, ...
    students = []
    for index in range(count):
        ability = rng.normal(0.0, 0.8)
        mastery = _sigmoid(ability + ease + rng.normal(0.0, 0.6, size=len(kc_vocabulary)))
        learn_rate = rng.beta(2.0, 20.0)
        skip = rng.beta(2.0, 14.0)
        keys = np.arange(n_problems) + rng.normal(0.0, ORDER_JITTER, size=n_problems)
        attempted = rng.random(n_problems) >= skip
        attempted[np.argsort(keys, kind="stable")[:min(2, n_problems)]] = True   # everyone starts
        order = tuple(int(i) for i in np.argsort(keys, kind="stable") if attempted[i])
        style = Style(reference=float(rng.random()), naming=NAMINGS[rng.integers(len(NAMINGS))],
                      braces=BRACES[int(rng.random() < 0.3)], indent=4 if rng.random() < 0.8 else 2)
        students.append(Student(f"s{index:0{width}d}", tuple(float(m) for m in mastery), float(learn_rate),
                                order, style))
    return students


def practise(mastery: np.ndarray, kc_indices: list[int], learn_rate: float) -> np.ndarray:
    """Mastery after one attempt at a problem exercising the KCs at `kc_indices`."""
    after = mastery.copy()
    after[kc_indices] += learn_rate * (1.0 - after[kc_indices])
    return after


def error_chance(category: str, weight: float, weakest_mastery: float) -> float:
    """Chance of one error type (of a category and relative weight) whose weakest relevant KC has
    mastery `weakest_mastery`.

    >>> error_chance("Logical", 1.0, 1.0), round(error_chance("Logical", 1.0, 0.0), 2)
    (0.0, 0.75)
    """
    lack = 1.0 - weakest_mastery
    # lack ** GAMMA as x * x * sqrt(x): IEEE arithmetic and sqrt are exact everywhere, libm's pow
    # has CPU variants (see _sigmoid)
    return BASE_RATE[category] * weight * lack * lack * math.sqrt(lack)


def preferred_reference(style: Style, n_references: int, rng: np.random.Generator) -> int:
    """The reference a student writes: the preferred style 70% of the time, another one otherwise."""
    preferred = min(int(style.reference * n_references), n_references - 1)
    return preferred if rng.random() < 0.7 else int(rng.integers(n_references))


@lru_cache(maxsize=4096)
def style_code(code: str, language: str, style: Style) -> str:
    """`code` rewritten in the student's style; behaviour unchanged."""
    code = _rename_locals(code, language, style.naming)
    if language == "java" and style.braces == "next-line":
        code = _braces_on_next_line(code)
    if style.indent != 4:
        code = _reindent(code, style.indent)
    return code


def _rename_locals(code: str, language: str, naming: str) -> str:
    if naming == "as-is":
        return code
    root = parse(code, language)
    taken = all_names(root)
    mapping: dict[str, str] = {}
    for name in local_names(root, language):
        if len(name) <= 1:
            continue                     # loop indices keep their names in every style
        for candidate in _names_for(name, language, naming):
            if candidate not in taken and not is_reserved(candidate, language):
                mapping[name] = candidate
                taken.add(candidate)
                break
    return rename(code, language, mapping) if mapping else code


def _names_for(name: str, language: str, naming: str) -> list[str]:
    """Candidate new names, best first: `count` -> c, c1, c2 (short) or myCount / my_count (long)."""
    if naming == "short":
        first = name.lstrip("_")[0].lower()
        return [first] + [f"{first}{i}" for i in range(1, 10)]
    if language == "java":
        return [f"my{name[0].upper()}{name[1:]}", f"the{name[0].upper()}{name[1:]}"]
    return [f"my_{name}", f"the_{name}"]


def _braces_on_next_line(code: str) -> str:
    """Allman style: every block's `{` and every `else` after `}` start their own line."""
    root = parse(code, "java")
    data = code.encode()
    edits = []
    for block in find(root, "block", "class_body"):
        brace = block.children[0]
        start = brace.start_byte
        while start > 0 and data[start - 1:start] in (b" ", b"\t"):
            start -= 1
        line_start = data.rfind(b"\n", 0, start) + 1
        if start > line_start and data[start - 1:start] != b"\n":
            edits.append((start, brace.start_byte, "\n" + _indent_of(data, line_start)))
    for statement in find(root, "if_statement"):
        for keyword in (c for c in statement.children if c.type == "else"):
            start = keyword.start_byte
            while start > 0 and data[start - 1:start] in (b" ", b"\t"):
                start -= 1
            if data[start - 1:start] == b"}":
                line_start = data.rfind(b"\n", 0, start) + 1
                edits.append((start, keyword.start_byte, "\n" + _indent_of(data, line_start)))
    return splice(code, edits)


def _indent_of(data: bytes, line_start: int) -> str:
    end = line_start
    while end < len(data) and data[end:end + 1] in (b" ", b"\t"):
        end += 1
    return data[line_start:end].decode()


def _reindent(code: str, width: int) -> str:
    """Indentation of 4 spaces per level turned into `width` spaces per level."""
    if '"""' in code or "'''" in code:
        return code                      # a multi-line string's content must not move
    def shrink(match: re.Match) -> str:
        spaces = len(match.group(0))
        return " " * (spaces // 4 * width + spaces % 4)
    return "\n".join(re.sub(r"^ +", shrink, line) for line in code.split("\n"))
