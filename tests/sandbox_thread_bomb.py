"""A Java thread bomb in one JVM of a batch while another JVM of it runs: plain Python (no pytest),
so tests/test_sandbox3_java.py can run it as root, as an ordinary user and as root of a user
namespace:

    PYTHONPATH=. python tests/sandbox_thread_bomb.py     # prints the statuses as one JSON line

The bomb's 6 cases are half the batch, so it has a JVM of its own; the other JVM runs a program
that waits, then a right and a wrong answer, whose case threads start while the bomb holds every
thread it may have.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_attacks import LIMITS, NEIGHBOURS, TESTS  # noqa: E402

from kaser.code.sandbox import run_problems  # noqa: E402

# Fills the process limit with sleeping threads and keeps trying until its case runs out of time
HOLDS_EVERY_THREAD = """public int add(int a, int b) {
    while (true) {
        try { new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) { } }).start(); }
        catch (Throwable e) { }
    }
}"""
WAITS = """public int add(int a, int b) throws Exception {
    Thread.sleep(500);
    return a + b;
}"""
EXPECTED = [["timeout"] * 6, ["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]


def statuses() -> list[list[str]]:
    right, wrong = NEIGHBOURS["java"]
    results = run_problems("java", [("add", [HOLDS_EVERY_THREAD], TESTS * 3), ("add", [WAITS, right, wrong], TESTS)],
                           dataclasses.replace(LIMITS, workers=2))
    return [[case.status for case in result.cases] for group in results for result in group]


if __name__ == "__main__":
    print(json.dumps(statuses()))
