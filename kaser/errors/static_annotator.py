"""The `static` annotator: errors in student code found by compiling, running and repairing it.

    kaser annotate DIR --backend static        # every submission of a folder
    python stages/annotate.py synthetic-java   # the DVC stage
    annotate_static(problem, codes, settings=settings)   # one problem's programs -> [[Error, ...], ...]

For each program it reports errors `{category: Syntax|Runtime|Logical, label, evidence}` under the
standard labels of `kaser.taxonomy`:
- Syntax: javac's messages / Python's parser (`kaser.errors.compile_errors`), e.g. "';' expected" ->
  Missing semicolon; bracket counts; an `=` where a condition belongs.
- Runtime: the program runs on the problem's tests in `kaser.code.sandbox`; an exception names the
  label by its type (IndexError -> Index out of bounds, ZeroDivisionError -> Division by zero,
  NameError -> Undefined variable, ...); no answer in time -> Infinite loop.
- Logical: a wrong answer is explained by repair (`kaser.errors.repairs`): candidate inverse edits
  (flip `&&`/`||`, shift a loop bound, `.equals` for `==`, ...) run in one batch, and the one that
  makes failing tests pass without breaking passing ones names the error. A program that still
  fails is searched again (up to `repair_rounds`), so two errors are found one after the other.
  What no repair explains falls back to rules: a Python function returning None with no return
  at its end -> Missing return statement; fewer branches than the nearest correct program ->
  Missing logic branch; else Wrong return value.
- Behind a syntax error: the repaired program (`;` put back, parenthesis closed, ...) runs too,
  so an error a compiler hides is still found.
Problems without tests (real CodeWorkout) are tested against a reference on generated inputs
(`kaser.errors.generated_tests`).

The function the tests call (`called_function`), and what a wrong name is:
- The problem's entry is the function its starter signature names (problems.parquet
  `signature`), else the entry function of its references.
- A code that defines the entry (Python: at module level; Java: a method of that name) is run
  as it is.
- A code that does not, but has exactly one function the tests could mean, is run with the
  tests calling that function instead, and gets one error "Wrong function name" (Runtime
  category). "Could mean": no other function of the code calls it (helpers are called), it
  takes the tests' number of arguments, and in Java it is not `main`. Its behaviour is then
  judged like any other code's, so a renamed code's bug gets its own label beside the wrong
  name (e.g. "Wrong boolean operator"), and a correct code under another name has the wrong
  name as its only error.
- A code with no such function, or with several (the tests cannot tell which one is meant), is
  run as it is: every test fails to find the entry, which gives "Wrong function name" too,
  and nothing about its behaviour is known.
- The name is checked only where tests run: a code whose syntax error no repair gets past, or
  a problem with neither tests nor references, gets no name check.
A wrong name is a Runtime-category error, never Syntax: the code parses / compiles on its own,
and the failure shows only when the tests call it (Python's NameError, a missing method for the
Java harness). So `valid` (no Syntax-category error, kaser.errors.judge) means what it says.

Everything is batched across problems: each round is one `sandbox.run_problems` call per
language (one javac, one JVM), so a dataset of 6,000 submissions takes a few rounds, not 6,000
runs.

Departures from the paper, and why:
1. The paper labels errors with o4-mini only and says its labels can be wrong on edge cases for
   lack of tests. This backend is grounded in compilers and execution instead, with the
   LLM annotator (`kaser.errors.llm_tasks.annotate_llm`) kept as the `openai` backend.
2. Labels come from a fixed vocabulary (kaser.taxonomy) plus a few generic ones ("Syntax error",
   "Undefined method", "Uncaught <Exception>") where no standard label fits, instead of free text;
   the `cluster` stage works the same on both.
3. Correct submissions are annotated too (the LLM backend skips them): a score-1 submission that
   fails a generated input has an edge-case error; otherwise it gets none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from tqdm import tqdm

from kaser.code import sandbox
from kaser.errors.compile_errors import (GENERIC_SYNTAX, UNDEFINED_METHOD, closest_names, declared_names, java_compile_errors,
                                  java_method_return_repairs, java_syntax_repairs, python_syntax_pass)
from kaser.errors.code_shape import branch_count, ends_without_else, falls_through, nearest
from kaser.errors.generated_tests import entry_signature, reference_tests
from kaser.errors.repairs import Repair, combine, logic_repairs, python_runtime_reveals
from kaser.data.contracts import signature_name
from kaser.data.signatures import defined_functions
from kaser.taxonomy import STANDARD_ERRORS, category_of

WRONG_NAME = "Wrong function name"
# labels outside the standard vocabulary, for what it does not name (a wrong name: see the module
# docstring, Runtime since the code itself parses / compiles)
EXTRA_LABELS = {GENERIC_SYNTAX: "Syntax", UNDEFINED_METHOD: "Syntax", WRONG_NAME: "Runtime",
                "Null pointer dereference": "Runtime", "Invalid cast": "Runtime",
                "Invalid number format": "Runtime", "Unexpected exit": "Runtime"}

_EXCEPTION_LABELS = {
    "ArrayIndexOutOfBoundsException": "Index out of bounds", "StringIndexOutOfBoundsException": "Index out of bounds",
    "IndexOutOfBoundsException": "Index out of bounds", "NegativeArraySizeException": "Index out of bounds",
    "IndexError": "Index out of bounds", "KeyError": "Index out of bounds",
    "ArithmeticException": "Division by zero", "ZeroDivisionError": "Division by zero",
    "NameError": "Undefined variable", "UnboundLocalError": "Uninitialized variable",
    "TypeError": "Type mismatch", "ValueError": "Type mismatch",
    "StackOverflowError": "Infinite loop", "RecursionError": "Infinite loop",
    "NullPointerException": "Null pointer dereference", "ClassCastException": "Invalid cast",
    "NumberFormatException": "Invalid number format", "NoSuchMethodError": WRONG_NAME,
}


@dataclass(frozen=True)
class Error:
    category: str    # Syntax | Runtime | Logical
    label: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        return {"category": self.category, "label": self.label, "evidence": self.evidence}


@dataclass(frozen=True)
class StaticParams:
    """The static annotator's knobs (the `annotate` section of params.yaml carries them)."""
    case_timeout_s: float  # per test case; longer counts as an infinite loop
    repair_rounds: int  # rounds of repair after the first run (each: one sandbox batch)
    max_repairs: int  # candidate repairs per failing program and round
    generated_inputs: int  # inputs generated per problem without tests
    max_references: int  # score-1 submissions used as references without tests
    seed: int  # input generation
    unsafe_no_isolation: bool  # run student code even where the sandbox cannot jail it


def make_error(label: str, language: str, evidence: str) -> Error:
    if label in STANDARD_ERRORS and language in STANDARD_ERRORS[label]:
        category = category_of(label, language)
    else:
        category = EXTRA_LABELS.get(label, "Runtime")
    return Error(category, label, evidence)


def exception_label(exception: str | None, detail: str, language: str) -> str:
    """The label of an exception type (Java or Python); unknown types become "Uncaught <type>".

    >>> exception_label("StringIndexOutOfBoundsException", "", "java"), exception_label("IndexError", "", "python")
    ('Index out of bounds', 'Index out of bounds')
    """
    exception = (exception or "Exception").rsplit(".", 1)[-1]
    if exception == "NameError" and "not defined as a function" in detail:
        return WRONG_NAME
    if exception == "AttributeError":
        return "Wrong string method" if "'str' object" in detail else "Type mismatch"
    if exception == "TypeError" and language == "java":
        return "Invalid cast"
    return _EXCEPTION_LABELS.get(exception, f"Uncaught {exception}")


# ---------------------------------------------------------------- one problem's state

@dataclass
class ProblemSpec:
    """What the engine needs of a problem: how to call the code and what a right answer is."""
    problem_id: str
    language: str
    entry: str
    tests: list[tuple[list, Any]]
    correct_programs: list[str] = field(default_factory=list)   # for the missing-branch rule
    references: list[str] = field(default_factory=list)         # answer generated inputs (no tests)


@dataclass
class _Item:
    """One distinct program of one problem, followed through the rounds."""
    spec: ProblemSpec
    original: str
    program: str = ""
    entry: str = ""                                 # the function the tests call (called_function)
    result: sandbox.ProgramResult | None = None
    errors: dict[str, Error] = field(default_factory=dict)
    pending: list = field(default_factory=list)     # [(kind, code, (Repair, ...))] to run next
    rounds: int = 0
    done: bool = False

    def __post_init__(self):
        self.program = self.program or self.original
        self.entry = self.entry or self.spec.entry

    def add(self, label: str, evidence: str) -> None:
        if label not in self.errors:
            self.errors[label] = make_error(label, self.spec.language, evidence)


def _input(spec: ProblemSpec, case: int) -> str:
    return json.dumps(spec.tests[case][0])[:200]


def _passes(result: sandbox.ProgramResult) -> set[int]:
    return {i for i, c in enumerate(result.cases) if c.status == "pass"}


def _wrong(result: sandbox.ProgramResult) -> set[int]:
    """Cases answered wrongly: a wrong value, or a record that could not stand ("invalid": a value
    nested too deeply, a forged record), which is no right answer either."""
    return {i for i, c in enumerate(result.cases) if c.status in ("fail", "invalid")}


def _read_result(item: _Item, settings: StaticParams) -> None:
    """Labels from the current result, and the candidates to run next (or done)."""
    spec, result, code = item.spec, item.result, item.program
    item.pending = []
    if result.compiled is None:        # Java without a JDK: nothing more to learn
        item.done = True
        return
    if not result.compiled:
        if spec.language == "java":
            for label, evidence in java_compile_errors(code, result.diagnostics):
                if label != GENERIC_SYNTAX or code == item.original:   # not what a repair left behind
                    item.add(label, evidence)
            fixes = java_syntax_repairs(code, list(result.diagnostics))
            if any("missing return statement" in d.message for d in result.diagnostics):
                fixes += java_method_return_repairs(code)
        else:
            for d in result.diagnostics:
                item.add(GENERIC_SYNTAX, f"line {d.line}: {d.message}")
            fixes = []
        item.pending = [("reveal", fix, ()) for fix in fixes]
        item.done = not item.pending or item.rounds >= settings.repair_rounds
        return
    for case, outcome in enumerate(result.cases):
        where = f"on input {_input(spec, case)}"
        if outcome.status == "exception":
            label = exception_label(outcome.exception, outcome.detail, spec.language)
            if outcome.exception == "UnboundLocalError" and _misspelt(code, outcome.detail):
                label = "Undefined variable"
            item.add(label, f"{outcome.exception} {where}: {outcome.detail}"[:300])
        elif outcome.status in ("timeout", "memory"):
            item.add("Infinite loop", f"no answer within {settings.case_timeout_s} s {where} ({outcome.status})")
        elif outcome.status == "exit":
            item.add("Unexpected exit", f"the program stopped the process {where}")
    wrong = _wrong(result)
    if spec.language == "python":
        nones = [c for c in wrong if result.cases[c].actual == "null" and spec.tests[c][1] is not None]
        if nones and falls_through(code, item.entry):
            shown = f"returns None on input {_input(spec, nones[0])}"
            if ends_without_else(code, item.entry):
                item.add("Missing logic branch", f"{shown}: the if / elif chain ending {item.entry} has no else")
            else:
                item.add("Missing return statement", f"{shown}: no return at the end of {item.entry}")
        raised = [c for c in result.cases if c.exception in ("NameError", "UnboundLocalError")]
        if raised and not _passes(result):
            reveals = python_runtime_reveals(code, raised[0].exception, raised[0].detail)
            item.pending = [("reveal", fix, ()) for fix in reveals]
    if wrong and not item.pending:
        item.pending = [("logic", r.code, (r,)) for r in logic_repairs(code, spec.language, settings.max_repairs)]
    item.done = not item.pending or item.rounds >= settings.repair_rounds
    if item.done:
        _fallback(item)


def _choose(item: _Item, outcomes: list[sandbox.ProgramResult], settings: StaticParams) -> None:
    """Pick the candidate that explains (logic) or gets past (reveal) what went wrong."""
    item.rounds += 1
    candidates, item.pending = item.pending, []
    if candidates[0][0] == "reveal":
        def rank(pair):
            (_, code, _), outcome = pair
            return (bool(outcome.compiled), len(_passes(outcome)) if outcome.compiled else 0,
                    -len(outcome.diagnostics))
        (_, code, _), best = max(zip(candidates, outcomes), key=rank)
        before = sorted(d.message for d in item.result.diagnostics)
        after = sorted(d.message for d in best.diagnostics)
        moved_on = item.result.compiled is False and len(after) <= len(before) and after != before
        if best.compiled or moved_on:
            item.program, item.result = code, best
            _read_result(item, settings)
        else:
            item.done = True
            _fallback(item)
        return
    before_pass, before_wrong = _passes(item.result), _wrong(item.result)
    accepted, partial = [], []
    for (_, code, repairs), outcome in zip(candidates, outcomes):
        if not outcome.compiled:
            continue
        passed = _passes(outcome)
        if passed & before_wrong:
            partial.append(repairs[0])
            if passed >= before_pass:
                accepted.append((len(passed), -len(accepted), code, repairs, outcome))
    if not accepted:
        if candidates[0][0] == "logic" and partial and item.rounds < settings.repair_rounds:
            item.pending = _pairs(item.program, partial, [r for _, _, (r,) in candidates], settings.max_repairs)
        if not item.pending:
            item.done = True
            _fallback(item)
        return
    _, _, code, repairs, outcome = max(accepted)
    explained = len(_passes(outcome) & before_wrong)
    for repair in repairs:
        changes = " and ".join(r.change for r in repairs)
        item.add(repair.label, f"{changes} makes {explained} of {len(before_wrong)} wrong answers right")
    item.program, item.result = code, outcome
    _read_result(item, settings)


def _pairs(code: str, partial: list[Repair], singles: list[Repair], limit: int) -> list:
    """Two-edit candidates: each repair that fixed something (while breaking something else)
    with each other candidate, for two errors that only show together."""
    found: dict[str, tuple] = {}
    for first in partial:
        for second in singles:
            combined = combine(code, first, second)
            if combined is not None and combined[2] not in found and len(found) < 2 * limit:
                found[combined[2]] = ("pair", combined[2], combined[:2])
    return list(found.values())


def _misspelt(code: str, detail: str) -> bool:
    """An unbound Python local that is never assigned with `=` but looks like a declared name
    (`Count += 1` beside `count = 0`): a misspelling rather than a missing initialisation."""
    name = re.search(r"'(\w+)'", detail or "")
    if name is None:
        return False
    name = name.group(1)
    assigned = re.search(rf"^\s*{re.escape(name)}\s*=(?!=)|\bfor\s+{re.escape(name)}\b", code, re.M)
    return assigned is None and bool(closest_names(name, declared_names(code, "python")))


def _fallback(item: _Item) -> None:
    """Labels for wrong answers that no repair explained."""
    result = item.result
    if result is None or not result.compiled or not _wrong(result):
        return
    if item.spec.language == "python" and {"Missing return statement", "Missing logic branch"} & set(item.errors) and all(
            result.cases[c].actual == "null" for c in _wrong(result)):
        return
    case = min(_wrong(item.result))
    outcome = result.cases[case]
    shown = f"on input {_input(item.spec, case)}: expected {json.dumps(item.spec.tests[case][1])[:100]}, " \
            f"got {(outcome.actual or outcome.detail or '')[:100]}"
    missing = _missing_branch(item.program, item.spec)
    if missing:
        item.add("Missing logic branch", f"{missing}; wrong answer {shown}")
    elif not any(e.category == "Logical" for e in item.errors.values()):
        item.add("Wrong return value", f"wrong answer {shown}")


def _missing_branch(code: str, spec: ProblemSpec) -> str | None:
    """Evidence when the nearest correct program has more branches than `code`."""
    if not spec.correct_programs:
        return None
    reference = nearest(code, spec.correct_programs, spec.language)
    mine, theirs = branch_count(code, spec.language), branch_count(reference, spec.language)
    if mine < theirs:
        return f"{mine} branch(es) where the nearest correct program has {theirs}"
    return None


# ---------------------------------------------------------------- the function the tests call

def called_function(code: str, spec: ProblemSpec) -> tuple[str, str | None]:
    """(the function the tests call in `code`, the evidence of a wrong name or None): the
    problem's entry, or the one function the tests could mean (see the module docstring).

    >>> spec = ProblemSpec("p", "python", "can_hike", [([25, True], True)])
    >>> called_function("def go_hiking(temp, raining):\\n    return True", spec)[0]
    'go_hiking'
    >>> called_function("def a(t, r):\\n    return 1\\ndef b(t, r):\\n    return 2", spec)   # which one?
    ('can_hike', None)
    """
    if not spec.entry or not spec.tests:
        return spec.entry, None
    functions = defined_functions(code, spec.language)
    if any(f.name == spec.entry for f in functions):
        return spec.entry, None
    arguments = len(spec.tests[0][0])
    names = list(dict.fromkeys(f.name for f in functions if not f.helper and f.accepts(arguments)
                               and not (spec.language == "java" and f.name == "main")))
    if len(names) != 1:
        return spec.entry, None
    return names[0], (f"defines {names[0]} where the tests call {spec.entry}; the tests ran "
                      f"against {names[0]}")


# ---------------------------------------------------------------- the engine

def _limits(settings: StaticParams) -> sandbox.Limits:
    # One timeout is all an infinite-loop label needs, and on the JVM each costs the time limit
    # plus a restart: a program's cases after its first timeout are not run (sandbox.SKIPPED).
    return sandbox.Limits(case_timeout_s=settings.case_timeout_s, stop_after_timeout=True,
                          unsafe_no_isolation=settings.unsafe_no_isolation)


def _run_round(language: str, jobs: list[tuple[str, list[str], list, dict]],
               limits: sandbox.Limits) -> list[list[sandbox.ProgramResult]]:
    """Run jobs (entry, programs, tests, known cases): every program on every test case not in
    `known` (those are copied into its result). Results hold one case per test, in test order."""
    plans = [[i for i in range(len(tests)) if i not in known] for _, _, tests, known in jobs]
    results = sandbox.run_problems(language, [(entry, list(codes), [tests[i] for i in plan])
                                              for (entry, codes, tests, _), plan in zip(jobs, plans)], limits)
    merged = []
    for (_, _, tests, known), plan, outcomes in zip(jobs, plans, results):
        mine = []
        for outcome in outcomes:
            if outcome.compiled:
                cases = {**known, **dict(zip(plan, outcome.cases))}
                outcome = sandbox.ProgramResult(True, outcome.diagnostics, tuple(cases[i] for i in range(len(tests))))
            mine.append(outcome)
        merged.append(mine)
    return merged


def annotate_programs(specs: Sequence[ProblemSpec], programs: Sequence[Sequence[str]],
                      settings: StaticParams, progress=None) -> list[list[list[Error]]]:
    """Errors of every program of every problem: result[p][i] for programs[p][i].

    All problems of a language share each round's sandbox batches. `progress(n)` (optional) is
    called with the number of programs finished after each round.
    """
    items: dict[tuple[int, str], _Item] = {}
    for p, (spec, codes) in enumerate(zip(specs, programs)):
        for code in codes:
            if (p, code) not in items:
                items[(p, code)] = _Item(spec, code)
    for item in items.values():
        if item.spec.language == "python":
            labels, parsed = python_syntax_pass(item.program)
            for label, evidence in labels:
                item.add(label, evidence)
            if labels:
                item.result = sandbox.ProgramResult(compiled=False)
                item.pending = [("reveal", code, ()) for code in parsed]
                item.done = not parsed
    limits = _limits(settings)
    finished = 0
    while True:
        active = [i for i in items.values() if not i.done]
        if progress is not None:
            now = len(items) - len(active)
            progress(now - finished)
            finished = now
        if not active:
            break
        for language in sorted({i.spec.language for i in active}):
            mine = [i for i in active if i.spec.language == language]
            jobs = []
            for item in mine:
                codes = [item.program] if item.result is None else [code for _, code, _ in item.pending]
                known = {} if item.result is None or item.pending[0][0] == "reveal" else \
                    {i: c for i, c in enumerate(item.result.cases) if c.status in ("timeout", "memory")}
                # the programs of a round are one code and its repairs: one name for all of them
                item.entry, wrong_name = called_function(codes[0], item.spec)
                if wrong_name:
                    item.add(WRONG_NAME, wrong_name)
                jobs.append((item.entry, codes, item.spec.tests, known))
            for item, outcomes in zip(mine, _run_round(language, jobs, limits)):
                if item.result is None:
                    item.result = outcomes[0]
                    _read_result(item, settings)
                else:
                    _choose(item, outcomes, settings)
    return [[list(items[(p, code)].errors.values()) for code in codes] for p, codes in enumerate(programs)]


# ---------------------------------------------------------------- problems and data frames

def _entry(language: str, programs: Sequence[str]) -> str:
    """The function the tests call: the first of `programs` whose signature reads."""
    names = [s[0] for code in programs if (s := entry_signature(code, language)) is not None]
    return max(set(names), key=lambda n: (names.index(n) == 0, names.count(n))) if names else ""


def problem_specs(problems: Sequence[dict], programs: Sequence[Sequence[str]],
                  correct: Sequence[Sequence[str]], settings: StaticParams) -> list[ProblemSpec]:
    """A ProblemSpec per problem row (problems.parquet contract): its tests, or, without tests,
    inputs generated and answered by its references (the `reference` column and up to
    `max_references` programs in `correct`), in one sandbox batch per language. The entry is
    the function the row's `signature` names, else its references' entry function."""
    specs = []
    for problem, codes, right in zip(problems, programs, correct):
        references = ([problem["reference"]] if problem.get("reference") else []) + list(right)
        references = list(dict.fromkeys(references))[:settings.max_references]
        entry = (signature_name(problem.get("signature"), problem["language"])
                 or _entry(problem["language"], references or list(codes)))
        tests = [(json.loads(t["input"]), json.loads(t["expected"])) for t in problem.get("tests") or []]
        specs.append(ProblemSpec(problem["problem_id"], problem["language"], entry, tests,
                                 list(dict.fromkeys([*references, *right]))[:50], references))
    limits = _limits(settings)
    for language in sorted({s.language for s in specs}):
        untested = [s for s in specs if s.language == language and not s.tests and s.references]
        if untested:
            generated = reference_tests(language, [(s.entry, s.references) for s in untested],
                                        settings.generated_inputs, settings.seed, limits)
            for spec, tests in zip(untested, generated):
                spec.tests = tests
    return specs


def annotate_static(problem: dict, codes: Sequence[str], correct_programs: Sequence[str] = (),
                    *, settings: StaticParams) -> list[list[Error]]:
    """Errors of each program of one problem (a problems.parquet row as a dict).

    `correct_programs` (score-1 submissions to the problem) serve as references when the problem
    has no tests, and as the correct programs the missing-branch rule compares with.
    """
    spec = problem_specs([problem], [codes], [correct_programs], settings)[0]
    return annotate_programs([spec], [list(codes)], settings)[0]


def annotate_submissions(problems: pl.DataFrame, submissions: pl.DataFrame,
                         settings: StaticParams) -> pl.DataFrame:
    """annotations.parquet rows for `submissions`, in their order (ANNOTATION_SCHEMA)."""
    from kaser.errors.llm_tasks import ANNOTATION_SCHEMA
    rows = {r["problem_id"]: r for r in problems.iter_rows(named=True)}
    correct = submissions["correct"] if "correct" in submissions.columns else submissions["score"] == 1.0
    frame = submissions.with_columns(correct.alias("_correct"))
    order = sorted(set(frame["problem_id"].to_list()) & set(rows))
    unknown = sorted(set(frame["problem_id"].to_list()) - set(rows))
    if unknown:
        from kaser import InputError
        raise InputError(f"unknown problem {unknown[0]!r}", file="submissions.parquet", column="problem_id")
    codes = {pid: list(dict.fromkeys(g["code"].to_list())) for (pid,), g in frame.group_by("problem_id")}
    right = {pid: list(dict.fromkeys(g.filter(pl.col("_correct"))["code"].to_list()))
             for (pid,), g in frame.group_by("problem_id")}
    bar = tqdm(total=sum(len(codes[p]) for p in order), desc="annotate (static)", unit="program")
    specs = problem_specs([rows[p] for p in order], [codes[p] for p in order], [right[p] for p in order], settings)
    found = annotate_programs(specs, [codes[p] for p in order], settings, progress=bar.update)
    bar.close()
    errors = {(p, code): [e.as_dict() for e in errs]
              for p, p_codes, p_errors in zip(order, (codes[p] for p in order), found)
              for code, errs in zip(p_codes, p_errors)}
    no_jdk = not sandbox.java_available()
    statuses = ["not-run" if no_jdk and rows[p]["language"] == "java" else "ok" for p in frame["problem_id"]]
    return pl.DataFrame({"student_id": frame["student_id"].cast(pl.String),
                         "problem_id": frame["problem_id"].cast(pl.String),
                         "errors": [errors[(p, c)] for p, c in zip(frame["problem_id"], frame["code"])],
                         "status": statuses}, schema=ANNOTATION_SCHEMA)
