"""Limits that hold for a jail as a whole (kaser/code/isolation.py, kaser/code/namespaces.py).

- a killed supervisor takes its jails and scratch folders with it;
- the memory cap counts all of a jail's processes together, not each one;
- the jail also runs where we are root only inside a user namespace (rootless containers).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sandbox_attacks import ESCAPE, rootless

from kaser.code.sandbox import Limits, run_tests

ROOT = Path(__file__).resolve().parents[1]
needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
SPINS = {"python": "def add(a, b):\n    while True:\n        pass\n",
         "java": "public int add(int a, int b) {\n    while (true) { }\n}"}

SUPERVISOR = """
import sys
from kaser.code.sandbox import Limits, run_tests
run_tests(sys.argv[1], "add", [sys.argv[2]], [([1, 2], 3)], Limits(case_timeout_s=60.0, workers=1))
"""


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, found through /proc/<pid>/task/<tid>/children."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                todo.extend(int(child) for child in children.read_text().split())
            except OSError:
                continue
        if parent != pid:
            found.append(parent)
    return found


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its parent does not count)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def scratch_folders_of(pids: list[int]) -> set[Path]:
    """The sandbox scratch folders that `pids` hold open (a worker's result stream lives there)."""
    found = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = Path(os.readlink(fd))
            except OSError:
                continue
            for folder in target.parents:
                if folder.name.startswith("kaser-sandbox-"):
                    found.add(folder)
    return found


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[pytest.mark.java, needs_jdk])])
def test_a_killed_supervisor_takes_its_jail_and_scratch_folder_with_it(language):
    """kill -9 of the supervisor mid-batch: after 5 s no process of its jail runs and its scratch
    folder is gone, though the spinning program had a minute of CPU left."""
    supervisor = subprocess.Popen([sys.executable, "-c", SUPERVISOR, language, SPINS[language]],
                                  cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline, folders = time.monotonic() + 60, set()
        while time.monotonic() < deadline and not folders:   # until a worker writes its results
            time.sleep(0.2)
            folders = scratch_folders_of(descendants(supervisor.pid))
        assert folders, "no worker started"
        time.sleep(3)
        jail = descendants(supervisor.pid)
        assert any(cpu_ticks(pid) > 100 for pid in jail), f"the program does not spin: {jail}"
    finally:
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait()
    time.sleep(5)
    left, kept = [pid for pid in jail if alive(pid)], [folder for folder in folders if folder.exists()]
    for pid in left:   # a failed run must not leave a spinning program behind for the next tests
        os.kill(pid, signal.SIGKILL)
    for folder in kept:
        shutil.rmtree(folder, ignore_errors=True)
    assert left == [] and kept == []


def test_ten_children_cannot_hold_more_than_the_jail_total():
    """A program whose ten children each touch 200 MB (2 GB against a memory_mb of 256) dies of
    the jail's memory limit within seconds; its neighbours keep their verdicts."""
    hostile = "def add(a, b):\n" + ESCAPE + textwrap.indent(textwrap.dedent("""
        import os, time
        for _ in range(10):
            if os.fork() == 0:
                held = b"x" * (200 << 20)
                time.sleep(60)
                os._exit(0)
        while True:
            time.sleep(1)
        """), "    ")
    right, wrong = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"
    limits = Limits(case_timeout_s=5.0, memory_mb=256, workers=1)
    start = time.monotonic()
    results = run_tests("python", "add", [right, hostile, right, wrong], [([1, 2], 3), ([5, 5], 10)], limits)
    seconds = time.monotonic() - start
    assert [[case.status for case in result.cases] for result in results] == \
        [["pass", "pass"], ["memory", "memory"], ["pass", "pass"], ["fail", "fail"]]
    assert "MB" in results[1].cases[0].detail, results[1].cases[0].detail
    assert seconds < 2 * (2 * limits.case_timeout_s + 2), f"the memory limit took {seconds:.1f} s to act"


ROOTLESS = """
import logging, os
from kaser.code import isolation
from kaser.code.sandbox import run_tests
logging.basicConfig(level=logging.WARNING)
assert os.geteuid() == 0 and open("/proc/self/uid_map").read().split()[2] == "1"
result = run_tests("python", "add", ["def add(a, b):\\n    return a + b\\n"], [([1, 2], 3)])[0]
print(isolation.isolation().name, result.cases[0].status)
"""


@pytest.mark.skipif(not rootless(), reason="unshare --user --map-root-user is refused here")
def test_the_jail_runs_as_root_of_a_user_namespace():
    """As in a rootless container: root, but only one user id mapped, so no fresh id to switch to."""
    run = subprocess.run(["unshare", "--user", "--map-root-user", sys.executable, "-c", ROOTLESS], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["namespace", "jail", "pass"], run.stdout
