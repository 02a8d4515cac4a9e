"""Running the synthetic submissions in the sandbox, batched for speed, and reading the outcome.

    results = run_problems("java", [(entry, programs, tests), ...])   # one {program: ProgramResult} each
    score(results[0][program]), shows("Logical", "Off-by-one error", results[0][program])

Speed matters: 200 students x 30 problems is about 6,000 submissions plus their single-error
variants, and `make repro` builds such a dataset on 2 cores. So:
1. Every problem shares each round's sandbox batch (`sandbox.run_problems`): one javac run (more
   only for kinds of compile error that hide others; kaser/code/java_compiler.py) and one set of
   JVMs or Python workers per round, not per problem. There are three rounds: every program on
   every case, the hang probes, and the full reruns of slow programs (note 2).
2. Test cases get a short timeout (bank solutions take microseconds); a program that timed out is
   tried again on that case with a three times longer limit, and run again in full (default limits)
   only if the case then finishes (slow, not hanging). So hanging mutants (a loop whose counter is
   never incremented) cost a fraction of a second. The limits count CPU time (kaser.code.sandbox),
   so a program that a busy machine keeps waiting is not scored as hanging; the data are the same
   bytes on a loaded machine (tests/test_reproducible.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from kaser.code import sandbox

QUICK_TIMEOUT_S = 0.1     # per test case in the first run (see note 2)
PROBE_TIMEOUT_S = 0.3     # for the case a program timed out on, to tell a hang from a stall

Job = tuple[str, Sequence[str], Sequence[tuple[list, Any]]]   # (entry, programs, tests) of one problem


def run_problems(language: str, jobs: Sequence[Job], desc: str = "running submissions") -> list[dict]:
    """For each job, {program: sandbox.ProgramResult} of its distinct programs."""
    jobs = [(entry, sorted(set(programs)), list(tests)) for entry, programs, tests in jobs]
    with tqdm(total=3, desc=desc, unit="round") as bar:
        results = sandbox.run_problems(language, jobs, sandbox.Limits(case_timeout_s=QUICK_TIMEOUT_S))
        bar.update()
        probes, probed = [], []       # one probe job per (problem, case a group of its programs hung on)
        for j, ((entry, programs, tests), outcome) in enumerate(zip(jobs, results)):
            hung = {i: next(c for c, case in enumerate(r.cases) if case.status == "timeout")
                    for i, r in enumerate(outcome) if any(case.status == "timeout" for case in r.cases)}
            for case in sorted(set(hung.values())):
                group = [i for i in sorted(hung) if hung[i] == case]
                probes.append((entry, [programs[i] for i in group], [tests[case]]))
                probed.append((j, group))
        stalled: dict[int, list[int]] = {}
        for (j, group), outcome in zip(probed, sandbox.run_problems(
                language, probes, sandbox.Limits(case_timeout_s=PROBE_TIMEOUT_S))):
            stalled.setdefault(j, []).extend(i for i, probe in zip(group, outcome)
                                             if probe.cases[0].status != "timeout")
        bar.update()
        again = {j: sorted(found) for j, found in stalled.items() if found}
        reruns = sandbox.run_problems(language, [(jobs[j][0], [jobs[j][1][i] for i in found], jobs[j][2])
                                                 for j, found in again.items()])
        for (j, found), outcome in zip(again.items(), reruns):
            for i, result in zip(found, outcome):
                results[j][i] = result
        bar.update()
    return [dict(zip(programs, outcome)) for (_, programs, _), outcome in zip(jobs, results)]


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
