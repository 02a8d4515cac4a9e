"""Sandbox 3, the Python side: calls CPython raises no audit event for are refused all the same.

Each hostile program runs between a right and a wrong answer in one batch (one worker), which
must keep their verdicts; the hostile program returns the right sum only when every call it
tries was refused with a PermissionError.
"""

from sandbox_attacks import run_beside


def refused_unless_all(calls: str) -> str:
    """A program whose `add` is right only when each of `calls` (Python expressions) is refused."""
    return ("import os, posix\ndef add(a, b):\n    refused = 0\n"
            f"    for call in ({calls},):\n"
            "        try:\n            call()\n        except PermissionError:\n            refused += 1\n"
            f"    return a + b if refused == len(({calls},)) else -refused\n")


def test_memory_files_are_refused():
    # os.memfd_create raises no audit event; a memory file is memory no rlimit sees (an ordinary
    # user's supervisor cannot read a Python worker's descriptors to count it)
    code = refused_unless_all("lambda: os.memfd_create('x'), lambda: posix.memfd_create('y', 0)")
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


def test_device_nodes_and_fifos_are_refused():
    # os.mknod and os.mkfifo raise no audit event either, inside the program's folder or outside
    code = refused_unless_all("lambda: os.mkfifo('f'), lambda: os.mknod('n'), lambda: posix.mkfifo('/dev/shm/f'), "
                              "lambda: os.mknod('/work/n', 0o600 | 0o010000)")
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


FORK_EXEC = ("_posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1, "
             "-1, -1, -1, -1, False, False, -1, None, None, None, -1, None, False)")


def test_fork_exec_and_second_copies_of_patched_modules_are_refused():
    # _posixsubprocess.fork_exec raises no audit event; a second posix (built by _imp, or imported
    # after deleting it from sys.modules) would hold the unpatched memfd_create
    code = ("import _imp, _posixsubprocess, importlib.machinery, sys\n" + refused_unless_all(
        f"lambda: {FORK_EXEC}, "
        "lambda: _imp.create_builtin(importlib.machinery.ModuleSpec('posix', None)).memfd_create('x'), "
        "lambda: _imp.create_builtin(importlib.machinery.ModuleSpec('x._posixsubprocess', None)), "
        "lambda: (sys.modules.pop('posix', None), __import__('posix').memfd_create('x'))"))
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


def test_a_spec_cannot_show_one_name_to_the_check_and_another_to_the_loader():
    # its name reads "math" once, then "posix": the loader must build math, never posix
    code = """import _imp
class Spec:
    reads = 0
    origin = None
    @property
    def name(self):
        Spec.reads += 1
        return "math" if Spec.reads == 1 else "posix"
def add(a, b):
    try:
        module = _imp.create_builtin(Spec())
    except PermissionError:
        return a + b
    return a + b if not hasattr(module, "memfd_create") else -1
"""
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


def test_ordinary_extension_modules_still_load():
    # the wrapped loaders must not refuse what students import: built-in and extension modules, fresh
    code = """import sys
for name in ("_decimal", "decimal", "_datetime", "datetime", "_statistics", "statistics", "_bisect", "bisect",
             "unicodedata", "_csv", "csv", "zlib", "cmath"):
    sys.modules.pop(name, None)
import bisect, cmath, csv, datetime, decimal, statistics, unicodedata, zlib
def add(a, b):
    return int(decimal.Decimal(a) + decimal.Decimal(b)) + int(statistics.median([0, 0]))
"""
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2
