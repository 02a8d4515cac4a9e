"""The synthetic benchmark: a student population with known mastery and known errors.

    kaser synth --language java --students 200 --problems 30 --seed 1 --out data/synthetic-java

`generate` picks problems from the bank (`kaser.data.synth.bank`), draws students
(`kaser.data.synth.students`), and for each attempt writes the student's version of a reference
solution, injects errors from the catalogue (`kaser.data.synth.mutations`) with chances that fall as the
mastery of their KCs rises, and runs every program on the problem's tests in the sandbox for its
score. The result follows the data contracts of docs/design.md, plus `true_errors` and `true_mastery`.

How the truth is kept true:
1. An injected error counts only where it shows when the program runs alone with it: a Syntax error
   must stop compilation, a Runtime error must raise on some test, a Logical error must give a
   wrong answer (or never finish, for "Infinite loop") on some test without raising. An edit that
   does not show (e.g. `<` -> `<=` where the tests never reach the bound) is taken back, so the code
   holds exactly the errors in `true_errors`.
2. Several errors in one submission are applied one after the other to the same program. Each
   was checked alone; together a syntax error hides the others at run time, which is how such
   code behaves, and the labels stay. If the combination still passes every test (errors that cancel
   out, not seen in practice), the submission is written correct with no errors.
3. Java data needs a JDK, because scores come from running the code; there is no fallback that
   guesses scores.

The paper has no synthetic data; this generator is the project's own ground truth (docs/design.md,
"The synthetic benchmark"), so annotators, knowledge tracing and simulators can be scored against
errors and mastery that are known.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from kaser import InputError
from kaser.data.contracts import PROBLEM_SCHEMA, SUBMISSION_SCHEMA, SYNTHETIC_SCHEMA, write_dataset
from kaser.code.sandbox import java_available
from kaser.data.synth.bank import BankProblem, load_bank
from kaser.data.synth.execution import run_problems, score, shows
from kaser.data.synth.mutations import CATALOGUE
from kaser.data.synth.students import (
    MAX_ERRORS, Student, draw_students, error_chance, practise, preferred_reference, style_code,
)

LANGUAGE_SEED = {"java": 11, "python": 23}   # the same seed gives different draws per language


@dataclass
class Attempt:
    student_id: str
    problem: int                       # index into the chosen problems
    step: int
    mastery: tuple[float, ...]         # before the attempt, over the dataset KC vocabulary
    clean: str                         # the student's correct version of the solution
    planned: list[tuple[str, str]] = field(default_factory=list)   # (label, mutated program) each alone
    seeds: dict[str, str] = field(default_factory=dict)            # label -> operator seed


def generate(language: str, students: int, problems: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(problems, submissions) dataframes of a synthetic population; same arguments, same data."""
    available = load_bank(language)
    if not 1 <= problems <= len(available):
        raise InputError(f"--problems must be between 1 and {len(available)} (the {language} bank size), "
                         f"got {problems}")
    if students < 1:
        raise InputError(f"--students must be at least 1, got {students}")
    if language == "java" and not java_available():
        raise InputError("Java data is scored by running it, and no JDK was found: install one "
                         "(e.g. `apt-get install default-jdk-headless`) or generate --language python")
    rng = np.random.default_rng([seed, LANGUAGE_SEED[language]])
    chosen = [available[i] for i in sorted(rng.choice(len(available), size=problems, replace=False))]
    kc_vocabulary = sorted({kc for p in chosen for kc in p.kcs})
    population = draw_students(students, kc_vocabulary, len(chosen), rng)
    attempts = [a for student in population for a in _plan(student, chosen, kc_vocabulary, language, rng)]
    by_problem = [[a for a in attempts if a.problem == index] for index in range(len(chosen))]

    # 1. every student's clean code, each drawn error alone, and all drawn errors together
    first = [[a.clean for a in mine] + [m for a in mine for _, m in a.planned]
             + [_combine(a, [label for label, _ in a.planned], language)[0] for a in mine if len(a.planned) > 1]
             for mine in by_problem]
    results = _run(language, chosen, first, f"synth {language}: running submissions")
    # 2. the errors that show, together (a combination not run yet only when some error did not show)
    finals = [[_final(problem, a, results[i], language) for a in mine]
              for i, (problem, mine) in enumerate(zip(chosen, by_problem))]
    missing = [[code for code, _ in final if code not in results[i]] for i, final in enumerate(finals)]
    if any(missing):
        extra = _run(language, chosen, missing, f"synth {language}: running combined errors")
        results = [done | more for done, more in zip(results, extra)]

    rows = []
    for i, (problem, mine) in enumerate(zip(chosen, by_problem)):
        for attempt, (code, labels) in zip(mine, finals[i]):
            value = score(results[i][code])
            if value == 1.0:
                code, labels = attempt.clean, []      # errors that cancel out: see note 2 of the module
            rows.append({"student_id": attempt.student_id, "problem_id": problem.problem_id,
                         "step": attempt.step, "code": code, "score": value, "correct": value == 1.0,
                         "true_errors": labels, "true_mastery": list(attempt.mastery)})
    rows.sort(key=lambda r: (r["student_id"], r["step"]))
    return _problems_frame(chosen, language), _submissions_frame(rows)


def _run(language: str, chosen: list[BankProblem], programs: list[list[str]], desc: str) -> list[dict]:
    jobs = [(p.entry, codes, [(list(args), expected) for args, expected in p.tests])
            for p, codes in zip(chosen, programs)]
    return run_problems(language, jobs, desc)


def _plan(student: Student, chosen: list[BankProblem], kc_vocabulary: list[str], language: str,
          rng: np.random.Generator) -> list[Attempt]:
    """The student's attempts: mastery before each, the style of the code, the errors drawn."""
    mastery = np.array(student.mastery)
    kc_index = {kc: i for i, kc in enumerate(kc_vocabulary)}
    attempts = []
    for step, problem_index in enumerate(student.order):
        problem = chosen[problem_index]
        reference = problem.references[preferred_reference(student.style, len(problem.references), rng)]
        attempt = Attempt(student.student_id, problem_index, step, tuple(float(m) for m in mastery),
                          style_code(reference, language, student.style))
        drawn = []
        for error in CATALOGUE.values():
            shared = [kc_index[kc] for kc in error.kcs if kc in problem.kcs]
            chance = error_chance(error.category(language), error.weight, float(mastery[shared].min())) \
                if shared and language in error.operators else 0.0
            if rng.random() < chance:
                drawn.append(error.label)
        operator_seed = int(rng.integers(2**62))
        for label in drawn:     # an error without a site in this code does not happen
            attempt.seeds[label] = f"{operator_seed}:{label}"
            mutated = CATALOGUE[label].apply(attempt.clean, language, random.Random(attempt.seeds[label]))
            if mutated is not None:
                attempt.planned.append((label, mutated))
        if len(attempt.planned) > MAX_ERRORS:
            keep = sorted(rng.choice(len(attempt.planned), size=MAX_ERRORS, replace=False).tolist())
            attempt.planned = [attempt.planned[k] for k in keep]
        attempts.append(attempt)
        mastery = practise(mastery, [kc_index[kc] for kc in problem.kcs], student.learn_rate)
    return attempts


def _combine(attempt: Attempt, labels: list[str], language: str) -> tuple[str, list[str]]:
    """The clean code with the errors `labels` applied in turn, and the labels that applied.

    Syntax errors go last, so that the other edits find their sites in a tree that parses.
    """
    code, applied = attempt.clean, []
    for label in sorted(labels, key=lambda label: CATALOGUE[label].category(language) == "Syntax"):
        mutated = CATALOGUE[label].apply(code, language, random.Random(attempt.seeds[label]))
        if mutated is not None:
            code, applied = mutated, applied + [label]
    return code, applied


def _final(problem: BankProblem, attempt: Attempt, results: dict, language: str) -> tuple[str, list[str]]:
    """The submitted code and its true errors: the clean code with the drawn errors that show."""
    if score(results[attempt.clean]) != 1.0:
        raise RuntimeError(f"{problem.problem_id}: a styled reference fails its tests; this is a bug in "
                           f"kaser.data.synth.students.style_code:\n{attempt.clean}")
    shown = [label for label, program in attempt.planned
             if shows(CATALOGUE[label].category(language), label, results[program])]
    return _combine(attempt, shown, language)


def _problems_frame(chosen: list[BankProblem], language: str) -> pl.DataFrame:
    return pl.DataFrame({
        "problem_id": [p.problem_id for p in chosen],
        "language": [language] * len(chosen),
        "statement": [p.statement for p in chosen],
        "kcs": [list(p.kcs) for p in chosen],
        "tests": [[{"input": json.dumps(list(args)), "expected": json.dumps(expected)} for args, expected in p.tests]
                  for p in chosen],
        "reference": [p.references[0] for p in chosen],
        "signature": [p.signature for p in chosen],
    }, schema=PROBLEM_SCHEMA).sort("problem_id")


def _submissions_frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SUBMISSION_SCHEMA | SYNTHETIC_SCHEMA, orient="row")


def summary(problems: pl.DataFrame, submissions: pl.DataFrame) -> str:
    """Counts printed by `kaser synth`."""
    wrong = submissions.filter(~pl.col("correct"))
    errors = wrong["true_errors"].list.len().mean() if len(wrong) else 0.0
    share = submissions["correct"].mean() if len(submissions) else 0.0
    return (f"students {submissions['student_id'].n_unique()}, problems {len(problems)}, "
            f"submissions {len(submissions)}, share correct {share:.3f}, "
            f"mean errors per incorrect submission {errors:.2f}")


def synth_command(args) -> None:
    """`kaser synth --language L --students N --problems M --seed S --out DIR`."""
    problems, submissions = generate(args.language, args.students, args.problems, args.seed)
    write_dataset(args.out, problems, submissions)
    print(f"wrote {args.out}/problems.parquet and submissions.parquet: {summary(problems, submissions)}")
