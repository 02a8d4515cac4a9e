"""Running the synthetic submissions in the sandbox, batched for speed, and reading the outcome.

    results = run_problems("java", [(entry, programs, tests), ...])   # one {program: ProgramResult} each
    score(results[0][program]), shows("Logical", "Off-by-one error", results[0][program])

Speed matters: 200 students x 30 problems is about 6,000 submissions plus their single-error
variants, and `make repro` builds two such datasets on 2 cores. So:
1. Java: one `compile_diagnostics` call over every program of every problem first (javac needs a
   round per kind of compile error, so those rounds are paid once, not once per problem); each
   problem's `run_tests` call then gets only programs that compile: one javac round, one JVM.
2. Test cases get a short timeout (bank solutions take microseconds); a program that timed out is
   tried again on that case with a three times longer limit, and run again in full (default limits)
   only if the case then finishes (slow, not hanging). So hanging mutants (a loop whose counter is
   never incremented) cost a fraction of a second. The limits count CPU time (kaser.code.sandbox),
   so a program that a busy machine keeps waiting is not scored as hanging; the data are the same
   bytes on a loaded machine (tests/test_reproducible.py).
3. Problems run two at a time (javac, the JVM and the Python workers are processes of their own).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tqdm import tqdm

from kaser.code import sandbox

QUICK_TIMEOUT_S = 0.1     # per test case in the first run (see note 2)
PROBE_TIMEOUT_S = 0.3     # for the case a program timed out on, to tell a hang from a stall
PARALLEL_PROBLEMS = 2     # problems whose sandbox runs overlap (see note 3)

Job = tuple[str, Sequence[str], Sequence[tuple[list, Any]]]   # (entry, programs, tests) of one problem


def run_problems(language: str, jobs: Sequence[Job], desc: str = "running submissions") -> list[dict]:
    """For each job, {program: sandbox.ProgramResult} of its distinct programs."""
    jobs = [(entry, sorted(set(programs)), list(tests)) for entry, programs, tests in jobs]
    failed: dict[str, sandbox.ProgramResult] = {}
    if language == "java":
        everything = sorted({p for _, programs, _ in jobs for p in programs})
        for program, diagnostics in zip(everything, sandbox.compile_diagnostics("java", everything)):
            if diagnostics:
                failed[program] = sandbox.ProgramResult(compiled=False, diagnostics=diagnostics)

    def run(job: Job) -> dict:
        entry, programs, tests = job
        runnable = [p for p in programs if p not in failed]
        results = dict(zip(runnable, _run_with_short_timeouts(language, entry, runnable, tests)))
        return {p: results[p] if p in results else failed[p] for p in programs}

    with ThreadPoolExecutor(PARALLEL_PROBLEMS) as pool:
        return list(tqdm(pool.map(run, jobs), total=len(jobs), desc=desc, unit="problem"))


def _run_with_short_timeouts(language: str, entry: str, programs: list[str], tests: list) -> list:
    if not programs:
        return []
    quick = sandbox.run_tests(language, entry, programs, tests, sandbox.Limits(case_timeout_s=QUICK_TIMEOUT_S))
    hung = {i: next(c for c, case in enumerate(r.cases) if case.status == "timeout")
            for i, r in enumerate(quick) if any(case.status == "timeout" for case in r.cases)}
    stalled = []
    for case in sorted(set(hung.values())):
        group = [i for i in sorted(hung) if hung[i] == case]
        probes = sandbox.run_tests(language, entry, [programs[i] for i in group], [tests[case]],
                                   sandbox.Limits(case_timeout_s=PROBE_TIMEOUT_S))
        stalled += [i for i, probe in zip(group, probes) if probe.cases[0].status != "timeout"]
    if stalled:
        again = sandbox.run_tests(language, entry, [programs[i] for i in sorted(stalled)], tests)
        for i, result in zip(sorted(stalled), again):
            quick[i] = result
    return quick


def score(result: sandbox.ProgramResult) -> float:
    """Share of the tests passed; 0 for a program that does not compile."""
    if not result.compiled or not result.cases:
        return 0.0
    return sum(case.status == "pass" for case in result.cases) / len(result.cases)


def shows(category: str, label: str, result: sandbox.ProgramResult) -> bool:
    """Whether an error, alone in a program, behaves as its category says.

    Syntax: does not compile. Runtime: compiles and raises on some test. Logical: compiles, raises
    on no test, and gives a wrong answer on some test ("Infinite loop": runs out of time).
    """
    if category == "Syntax":
        return not result.compiled
    if not result.compiled:
        return False
    statuses = {case.status for case in result.cases}
    if category == "Runtime":
        return "exception" in statuses
    if "exception" in statuses:
        return False
    if label == "Infinite loop":
        return bool(statuses & {"timeout", "memory"})
    return bool(statuses - {"pass"})
