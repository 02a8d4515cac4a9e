"""Sandbox 3, Java: what one program of a batch declares, loads, throws or makes javac do stays its
own; the correct and the wrong neighbour in the same batch keep their verdicts. javac's heap cap
is held by tests/test_sandbox_attacks.py::test_javac_folding_constants_stops_at_its_heap, which
measures the peak memory below a batch in a process of its own.

    .venv/bin/python -m pytest -q tests/test_sandbox3_java.py

Each attack runs in one batch with a correct neighbour (`a + b`) and a wrong one (`a - b`), so a
leak shows as a flipped verdict, not only as an attacker that passes.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import sandbox_thread_bomb
from sandbox_attacks import LIMITS, NEIGHBOURS, TESTS, USERS, python_as

from kaser.code.sandbox import run_tests

pytestmark = [pytest.mark.java, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")]

# Neighbours that name Math unqualified, as students do: a Math in their package would win
MATH_RIGHT = "public int add(int a, int b) {\n    return Math.addExact(a, b);\n}"
MATH_WRONG = "public int add(int a, int b) {\n    return Math.subtractExact(a, b);\n}"
# Closes its wrapper and declares a top-level Math whose addExact subtracts and subtractExact adds
SHADOWS_MATH = """public int add(int a, int b) { return a + b; }
}
class Math {
    static int addExact(int a, int b) { return a - b; }
    static int subtractExact(int a, int b) { return a + b; }
}
class Tail {"""
# Closes its wrapper and declares Sub1 .. Sub59, the class names of the programs after it
DECLARES_SUB1_TO_SUB59 = "public int add(int a, int b) { return a + b; }\n}\n" + \
    "".join(f"class Sub{k} {{ public int add(int a, int b) {{ return -999; }} }}\n" for k in range(1, 60)) + \
    "class Tail {"
# A wrong answer unless it finds program 0's class: then it returns that program's answer
BORROWS_A_NEIGHBOURS_ANSWER = """public int add(int a, int b) {
    for (String name : new String[]{"Sub0", "p0.Sub0"}) {
        try {
            Class<?> neighbour = Class.forName(name);
            Object instance = neighbour.getDeclaredConstructor().newInstance();
            return (Integer) neighbour.getMethod("add", int.class, int.class).invoke(instance, a, b);
        } catch (Throwable e) { }
    }
    return a - b;
}"""
# Throws ThreadDeath itself on its last case (a = 5)
THROWS_THREAD_DEATH = """public int add(int a, int b) {
    if (a == 5) throw new ThreadDeath();
    return a + b;
}"""
RIGHT, WRONG = NEIGHBOURS["java"]


def statuses(programs: list[str]) -> list[list[str]]:
    return [[case.status for case in result.cases] for result in run_tests("java", "add", programs, TESTS, LIMITS)]


def test_a_top_level_math_shadows_no_neighbours_math():
    """In a shared package the correct neighbour would fail and the wrong one pass."""
    assert statuses([SHADOWS_MATH, MATH_RIGHT, MATH_WRONG]) == [["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]


def test_declaring_the_later_programs_classes_breaks_no_compile():
    """In a shared package every later program would fail with "duplicate class"."""
    assert statuses([DECLARES_SUB1_TO_SUB59, RIGHT, WRONG, RIGHT]) == \
        [["pass", "pass"], ["pass", "pass"], ["fail", "fail"], ["pass", "pass"]]


def test_no_program_loads_a_neighbours_class():
    """On a shared classpath the wrong program would return program 0's answer and pass."""
    assert statuses([RIGHT, BORROWS_A_NEIGHBOURS_ANSWER, WRONG]) == [["pass", "pass"], ["fail", "fail"], ["fail", "fail"]]


def test_a_student_thread_death_is_the_students_exception():
    """Rethrown, it would kill the case thread and time out the next program's first case."""
    results = statuses([THROWS_THREAD_DEATH, RIGHT, WRONG])
    assert results[1:] == [["pass", "pass"], ["fail", "fail"]]
    assert results[0][0] == "pass" and results[0][1] != "pass"


def test_a_thread_bomb_in_one_worker_starves_no_other():
    """Under one user id for the batch the other JVM (or the bomb's own next one) could not start a
    thread: "sandbox worker for java did not start" and no verdict for anyone."""
    assert sandbox_thread_bomb.statuses() == sandbox_thread_bomb.EXPECTED


@pytest.mark.parametrize("user", USERS)
def test_a_thread_bomb_starves_no_other_worker_as_other_users(user):
    """The same where all workers share one user id: as `nobody` (when we are root) and as root of a
    user namespace mapping one id (a rootless container)."""
    command = python_as(user)
    if command is None:
        pytest.skip(f"cannot run Python as {user} here")
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([*command, str(root / "tests" / "sandbox_thread_bomb.py")], cwd="/",
                         env={"PATH": "/usr/bin:/bin", "HOME": "/", "PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == sandbox_thread_bomb.EXPECTED
