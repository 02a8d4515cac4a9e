"""kaser.code.sandbox against hostile and ordinary student code, in Python and Java.

Every hostile program runs in a batch beside a correct and a wrong answer, which must still be
judged right; every call must come back well within 30 s.
"""

import logging
import os
import shutil
import socket
import time

import pytest

from kaser.code import sandbox
from kaser.code.sandbox import CaseResult, Diagnostic, Limits, compile_diagnostics, run_problems, run_tests, same_value

import sandbox_attacks

FAST = Limits(case_timeout_s=1.0)
TESTS = [([1, 2], 3), ([5, 5], 10)]
needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")

PY_RIGHT = "def add(a, b):\n    return a + b\n"
PY_WRONG = "def add(a, b):\n    return a - b\n"
JAVA_RIGHT = "public int add(int a, int b) {\n    return a + b;\n}"
JAVA_WRONG = "public int add(int a, int b) {\n    return a - b;\n}"


def run_beside(language: str, hostile: str, tests=TESTS, limits=FAST):
    """`sandbox_attacks.run_beside` with this file's neighbours and limits (the default workers)."""
    neighbours = (PY_RIGHT, PY_WRONG) if language == "python" else (JAVA_RIGHT, JAVA_WRONG)
    return sandbox_attacks.run_beside(language, hostile, tests, limits, neighbours)


def statuses(result):
    return [(c.status, c.exception) for c in result.cases]


@pytest.fixture
def listener():
    """A TCP socket listening on 127.0.0.1; afterwards it must have no connection waiting."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    yield server.getsockname()[1]
    with pytest.raises(BlockingIOError):
        server.accept()
    server.close()


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("actual, expected, same", [
    (3, 3, True),                    # ints
    (0.1 + 0.2, 0.3, True),          # float rounding is within 1e-6
    (1.00001, 1.0, False),           # but a real difference is not
    (3.0, 3, True),                  # Java double vs expected int
    (True, 1, False),                # a boolean is not a number
    ([1, [2, "x"]], [1, [2, "x"]], True),  # nested lists
    ([1, 2], [1, 2, 3], False),      # length matters
    ({"a": 1.0}, {"a": 1}, True),    # objects by key
    ("abc", "abd", False),           # strings exactly
    (None, 0, False),                # null is not zero
])
def test_same_value(actual, expected, same):
    assert same_value(actual, expected) is same


# ---------------------------------------------------------------- Python

def test_python_right_wrong_and_syntax_error():
    results = run_tests("python", "add", [PY_RIGHT, PY_WRONG, "def add(a, b)\n    return a + b\n"], TESTS, FAST)
    assert results[0].cases[0] == CaseResult("pass", "3")
    assert results[1].cases[1].status == "fail" and results[1].cases[1].actual == "0"
    assert results[2].compiled is False and results[2].cases == ()
    assert results[2].diagnostics == (Diagnostic(1, "SyntaxError: expected ':'"),)


def test_python_infinite_loop_times_out():
    result = run_beside("python", "def add(a, b):\n    while True:\n        pass\n")
    assert statuses(result) == [("timeout", None)] * 2


def test_python_loop_that_swallows_the_timeout_is_killed():
    code = "def add(a, b):\n    while True:\n        try:\n            while True: pass\n        except BaseException:\n            pass\n"
    assert [c.status for c in run_beside("python", code).cases] == ["timeout"] * 2


def test_python_that_ignores_the_timer_is_killed_by_the_watchdog():
    code = "import signal\ndef add(a, b):\n    signal.signal(signal.SIGPROF, signal.SIG_IGN)\n    while True:\n        pass\n"
    result = run_beside("python", code, tests=TESTS[:1], limits=Limits(case_timeout_s=0.5))
    assert result.cases[0].status == "timeout" and "killed" in result.cases[0].detail


def test_python_huge_allocation_is_memory():
    result = run_beside("python", "def add(a, b):\n    return len([0] * 10**10)\n")
    assert statuses(result) == [("memory", "MemoryError")] * 2


def test_python_deep_recursion_is_memory_even_with_a_raised_limit():
    code = "import sys\nsys.setrecursionlimit(10**8)\ndef add(a, b):\n    return add(a, b) + 1\n"
    assert statuses(run_beside("python", code)) == [("memory", "RecursionError")] * 2


@pytest.mark.parametrize("body", [
    "import os\n    while True:\n        os.fork()",                       # fork bomb
    "import subprocess\n    return subprocess.run(['sh', '-c', 'echo hi']).returncode",
    "import os\n    return os.system('echo hi')",
])
def test_python_cannot_start_processes(body):
    result = run_beside("python", f"def add(a, b):\n    {body}\n")
    assert statuses(result) == [("exception", "PermissionError")] * 2


def test_python_cannot_delete_a_file_outside_its_folder(tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("alive")
    code = (f"import os, shutil\ndef add(a, b):\n    try:\n        os.remove({str(canary)!r})\n    finally:\n"
            f"        shutil.rmtree({str(tmp_path)!r})\n")
    result = run_beside("python", code)
    assert {c.status for c in result.cases} == {"exception"}
    assert canary.read_text() == "alive"


def test_python_may_make_and_change_folders_in_its_own_folder_only():
    # mode and dir_fd arguments are ints: neither is taken for a descriptor of a folder elsewhere
    code = ("import os, shutil\ndef add(a, b):\n    os.mkdir('sub', 0o755)\n    os.makedirs('sub/deep/er')\n"
            "    os.chmod('sub', 0o700)\n    open('sub/x', 'w').write('1')\n    os.rename('sub/x', 'sub/y')\n"
            "    os.remove('sub/y')\n    shutil.rmtree('sub')\n    refused = 0\n"
            "    for call in (lambda: os.mkdir('../elsewhere'), lambda: os.chmod('..', 0o777),\n"
            "                 lambda: os.mkdir('/usr/x', 0o700), lambda: os.chmod('/usr', 0o700)):\n"
            "        try:\n            call()\n        except PermissionError:\n            refused += 1\n"
            "    return a + b if refused == 4 else -refused\n")
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


def test_python_lists_only_its_own_folder_and_the_python_installation():
    # its folder, a folder it made (by path or by descriptor) and the standard library may be listed
    # (imports list them too); the root, /etc, /dev/shm and the folder above its own may not
    code = ("import os\ndef add(a, b):\n    os.makedirs('sub', exist_ok=True)\n    open('sub/x', 'w').close()\n"
            "    seen = os.listdir() + os.listdir(os.open('sub', os.O_RDONLY)) + [e.name for e in os.scandir('.')]\n"
            "    stdlib = os.listdir(os.path.dirname(os.__file__))\n    import json, textwrap\n    refused = 0\n"
            "    for call in (lambda: os.listdir('/'), lambda: list(os.scandir('/etc')), lambda: os.listdir('..'),\n"
            "                 lambda: os.listdir('/dev/shm')):\n"
            "        try:\n            call()\n        except PermissionError:\n            refused += 1\n"
            "    return a + b if refused == 4 and seen == ['sub', 'x', 'sub'] and 'json' in stdlib else -refused\n")
    assert [(c.status, c.detail) for c in run_beside("python", code).cases] == [("pass", "")] * 2


def test_python_exit_is_reported_as_exit():
    code = "import os, sys\ndef add(a, b):\n    if a == 1:\n        sys.exit(3)\n    os._exit(4)\n"
    result = run_beside("python", code)
    assert [c.status for c in result.cases] == ["exit", "exit"]
    assert result.cases[0].detail == "sys.exit(3)" and "status 4" in result.cases[1].detail


def test_python_output_flood_is_capped():
    result = run_beside("python", "def add(a, b):\n    while True:\n        print('flood' * 100)\n")
    assert [c.status for c in result.cases] == ["timeout"] * 2
    assert 0 < len(result.cases[0].output) <= FAST.output_chars


def test_python_file_size_is_capped():
    code = "def add(a, b):\n    with open('big.bin', 'wb') as f:\n        f.write(b'x' * (8 << 20))\n    return a + b\n"
    result = run_beside("python", code, limits=Limits(case_timeout_s=2.0, file_bytes=1 << 20))
    assert statuses(result) == [("exception", "OSError")] * 2 and "too large" in result.cases[0].detail


def test_python_cannot_reach_the_network(listener):
    code = (f"import socket\ndef add(a, b):\n    socket.create_connection(('127.0.0.1', {listener}), timeout=1)\n"
            f"    return a + b\n")
    assert {c.status for c in run_beside("python", code).cases} == {"exception"}


def test_python_cannot_see_our_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    code = (f"import os\ndef add(a, b):\n    seen = os.environ.get('OPENAI_API_KEY', '')\n"
            f"    try:\n        seen += open('/proc/{os.getpid()}/environ').read()\n    except OSError:\n        pass\n"
            f"    return a + b if 'sk-test-secret' not in seen else -1\n")
    assert [c.status for c in run_beside("python", code).cases] == ["pass", "pass"]


def test_python_error_while_loading_blames_every_case():
    result = run_beside("python", "x = 1 / 0\ndef add(a, b):\n    return a + b\n")
    assert statuses(result) == [("exception", "ZeroDivisionError")] * 2
    assert "while loading" in result.cases[0].detail


def test_python_missing_function_and_unjsonable_return():
    results = run_tests("python", "add", ["def plus(a, b):\n    return a + b\n", "def add(a, b):\n    return {a}\n"],
                        TESTS[:1], FAST)
    assert statuses(results[0]) == [("exception", "NameError")]
    assert results[1].cases[0].status == "fail" and results[1].cases[0].actual is None


def test_python_compile_diagnostics():
    found = compile_diagnostics("python", [PY_RIGHT, "def f(x):\nreturn x\n", "x = (1,\n"])
    assert found[0] == ()
    assert found[1][0].line == 2 and found[1][0].message.startswith("IndentationError")
    assert found[2][0].message.startswith("SyntaxError")


# ---------------------------------------------------------------- Java

@pytest.mark.java
@needs_jdk
def test_java_compile_diagnostics_keep_javac_text_and_student_lines():
    programs = [
        JAVA_RIGHT,
        "public int add(int a, int b) {\n    return a + b\n}",                       # parse error
        "public int add(int a, int b) {\n    if (a > 0) return 1;\n}",               # flow error
        "public int add(int a, int b) {\n    String s = a;\n    return y;\n}",       # attribution errors
        "public int add(int a, int b) {\n    return a;\n    a++;\n}",                # unreachable
        "public int add(int a, int b) {\n    int x;\n    return x;\n}",              # uninitialized
        "public int add(int a, int b) {\n    return a + b;\n",                       # missing brace
    ]
    found = compile_diagnostics("java", programs)
    assert found[0] == ()
    assert found[1] == (Diagnostic(2, "';' expected"),)
    assert found[2] == (Diagnostic(3, "missing return statement"),)
    assert found[3] == (Diagnostic(2, "incompatible types: int cannot be converted to String"),
                        Diagnostic(3, "cannot find symbol", "symbol:   variable y"))
    assert found[4] == (Diagnostic(3, "unreachable statement"),)
    assert found[5] == (Diagnostic(3, "variable x might not have been initialized"),)
    assert found[6][0].message == "reached end of file while parsing" and found[6][0].line == 3


@pytest.mark.java
@needs_jdk
def test_java_argument_and_return_types():
    cases = [
        ("int[]", "public int add(int[] xs, String s) { return xs.length + s.length(); }", [[1, 2], "abc"], 5),
        ("double", "public double add(double x, boolean b) { return b ? x / 2 : x; }", [3, True], 1.5),
        ("char", "public char add(String s, int i) { return s.charAt(i); }", ["hey", 1], "e"),
        ("List", "public List<Integer> add(List<Integer> xs, int k) { xs.add(k); return xs; }", [[1], 2], [1, 2]),
        ("String[]", "public String[] add(String[] xs, long n) { return new String[]{xs[0], \"\" + n}; }",
         [["a"], 7], ["a", "7"]),
        ("static", "public static int[] add(int n, int m) { return new int[]{n, m}; }", [4, 5], [4, 5]),
        ("overload", "int add(int x) { return x; }\nint add(String s) { return s.length(); }", ["abc"], 3),
        ("nested class", "public class Solution {\n  public int add(int a) { return a * 2; }\n}", [4], 8),
    ]
    results = run_problems("java", [("add", [code], [(args, expected)]) for _, code, args, expected in cases], FAST)
    for (name, *_), [result] in zip(cases, results):
        assert result.cases[0].status == "pass", (name, result)


@pytest.mark.java
@needs_jdk
def test_java_infinite_loops_time_out_and_the_jvm_recovers():
    code = "public int add(int a, int b) {\n    while (true) { try { while (true) { } } catch (Throwable t) { } }\n}"
    assert [c.status for c in run_beside("java", code).cases] == ["timeout"] * 2


@pytest.mark.java
@needs_jdk
def test_java_a_stopped_case_does_not_cost_its_program_the_jvm():
    # A case thread stopped at its time limit ends, and its program's next case runs in the same
    # JVM (a restart costs about half a second, and a hanging program times out on many cases).
    # The static counter tells the two apart: a fresh JVM loads the class anew and counts from 0.
    code = ("static int calls = 0;\n"
            "public int add(int a, int b) {\n    calls++;\n    while (a == 0) { }\n    return calls;\n}")
    tests = [([0, 0], 0), ([0, 0], 0), ([5, 0], 3)]
    result, = run_tests("java", "add", [code], tests, Limits(case_timeout_s=0.2, workers=1))
    assert [c.status for c in result.cases] == ["timeout", "timeout", "pass"]


@pytest.mark.java
@needs_jdk
def test_java_huge_allocation_and_deep_recursion_are_memory():
    big = run_beside("java", "public int add(int a, int b) { long[] x = new long[1 << 30]; return x.length; }")
    deep = run_beside("java", "public int add(int a, int b) { return add(a, b) + 1; }")
    assert statuses(big) == [("memory", "OutOfMemoryError")] * 2
    assert statuses(deep) == [("memory", "StackOverflowError")] * 2


@pytest.mark.java
@needs_jdk
@pytest.mark.parametrize("body, exception", [
    ('new ProcessBuilder("sh", "-c", "echo hi").start(); return 0;', "SecurityException"),
    ('while (true) Runtime.getRuntime().exec("sleep 100");', "SecurityException"),
    ('while (true) new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) { } }).start();',
     "OutOfMemoryError"),  # a thread bomb meets the process limit
])
def test_java_cannot_start_processes_or_unlimited_threads(body, exception):
    result = run_beside("java", f"public int add(int a, int b) throws Exception {{ {body} }}")
    assert {c.exception for c in result.cases} == {exception}


@pytest.mark.java
@needs_jdk
def test_java_cannot_delete_a_file_outside_its_folder(tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("alive")
    code = (f"public int add(int a, int b) throws Exception {{\n"
            f"    java.nio.file.Files.delete(java.nio.file.Paths.get(\"{canary}\"));\n    return a + b;\n}}")
    assert {c.status for c in run_beside("java", code).cases} == {"exception"}
    assert canary.read_text() == "alive"


@pytest.mark.java
@needs_jdk
def test_java_exit_is_reported_and_contained():
    code = "public int add(int a, int b) {\n    System.exit(2);\n    return 0;\n}"
    result = run_beside("java", code)
    assert [c.status for c in result.cases] == ["exit", "exit"] and result.cases[0].detail == "System.exit(2)"


@pytest.mark.java
@needs_jdk
def test_java_output_flood_is_capped():
    result = run_beside("java", "public int add(int a, int b) { while (true) System.out.println(\"flood\"); }")
    assert [c.status for c in result.cases] == ["timeout"] * 2
    assert 0 < len(result.cases[0].output) <= FAST.output_chars


@pytest.mark.java
@needs_jdk
def test_java_file_size_is_capped():
    code = ("public int add(int a, int b) throws Exception {\n"
            "    java.nio.file.Files.write(java.nio.file.Paths.get(\"big.bin\"), new byte[8 << 20]);\n    return a + b;\n}")
    result = run_beside("java", code, limits=Limits(case_timeout_s=2.0, file_bytes=1 << 20))
    assert statuses(result) == [("exception", "IOException")] * 2


@pytest.mark.java
@needs_jdk
def test_java_cannot_reach_the_network(listener):
    code = (f"public int add(int a, int b) throws Exception {{\n"
            f"    new java.net.Socket(\"127.0.0.1\", {listener}).close();\n    return a + b;\n}}")
    assert {c.status for c in run_beside("java", code).cases} == {"exception"}


@pytest.mark.java
@needs_jdk
def test_java_cannot_see_our_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    code = ("public int add(int a, int b) {\n    String seen = \"\";\n"
            "    try { seen = System.getenv().toString(); } catch (SecurityException e) { }\n"
            f"    try {{ seen += new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(\"/proc/{os.getpid()}/environ\"))); }}\n"
            "    catch (Exception e) { }\n"
            "    return seen.contains(\"sk-test-secret\") ? -1 : a + b;\n}")
    assert [c.status for c in run_beside("java", code).cases] == ["pass", "pass"]


@pytest.mark.java
@needs_jdk
def test_run_problems_batches_several_problems():
    first, second = run_problems("java", [
        ("add", [JAVA_RIGHT, "public int add(int a, int b) { return a; }"], TESTS),
        ("twice", ["public String twice(String s) { return s + s; }"], [(["ab"], "abab")]),
    ], FAST)
    assert [[c.status for c in r.cases] for r in first] == [["pass", "pass"], ["fail", "fail"]]
    assert second[0].cases[0] == CaseResult("pass", '"abab"')


def test_without_a_jdk_java_is_skipped_with_one_warning(monkeypatch, caplog):
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox._warned.discard("no-jdk")
    with caplog.at_level(logging.WARNING, logger="kaser.code.sandbox"):
        results = run_tests("java", "add", [JAVA_RIGHT, JAVA_WRONG], TESTS, FAST)
        found = compile_diagnostics("java", [JAVA_RIGHT])
    assert sandbox.java_available() is False
    assert [r.compiled for r in results] == [None, None] and found == [()]
    assert len(caplog.records) == 1 and "no JDK" in caplog.records[0].message


# ---------------------------------------------------------------- stop after the first timeout

LOOPS_ON_ZERO = {"python": "def add(a, b):\n    while a == 0:\n        pass\n    return a + b\n",
                 "java": "public int add(int a, int b) {\n    while (a == 0) { }\n    return a + b;\n}"}
STOP_TESTS = [([1, 2], 3), ([0, 1], 1), ([5, 5], 10), ([0, 2], 2)]


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[pytest.mark.java, needs_jdk])])
def test_stop_after_timeout_skips_the_rest_of_that_program_only(language):
    stop = Limits(case_timeout_s=0.5, stop_after_timeout=True)
    start = time.monotonic()
    result = run_beside(language, LOOPS_ON_ZERO[language], tests=STOP_TESTS, limits=stop)
    # the case before the loop ran; the first loop timed out; later cases were not run
    assert [c.status for c in result.cases] == ["pass", "timeout", "timeout", "timeout"]
    assert result.cases[2] == result.cases[3] == sandbox.SKIPPED
    assert "not run" not in result.cases[1].detail
    assert time.monotonic() - start < 15


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[pytest.mark.java, needs_jdk])])
def test_without_stop_after_timeout_every_case_runs(language):
    result = run_beside(language, LOOPS_ON_ZERO[language], tests=STOP_TESTS, limits=Limits(case_timeout_s=0.5))
    assert [c.status for c in result.cases] == ["pass", "timeout", "pass", "timeout"]


def test_stop_after_timeout_when_the_watchdog_kills_the_worker():
    code = "import time\ndef add(a, b):\n    if a == 0:\n        while True:\n            try:\n" \
           "                time.sleep(10)\n            except BaseException:\n                pass\n    return a + b\n"
    stop = Limits(case_timeout_s=0.3, stop_after_timeout=True)
    result = run_beside("python", code, tests=STOP_TESTS, limits=stop)
    assert [c.status for c in result.cases] == ["pass", "timeout", "timeout", "timeout"]
    assert result.cases[3] == sandbox.SKIPPED


# ---------------------------------------------------------------- CPU time, not wall-clock time

WAITS = {"python": "import time\ndef add(a, b):\n    time.sleep({s})\n    return a + b\n",
         "java": "public int add(int a, int b) {{\n    try {{ Thread.sleep({ms}); }} catch (InterruptedException e) {{ }}\n"
                 "    return a + b;\n}}"}


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[pytest.mark.java, needs_jdk])])
def test_time_off_the_cpu_is_not_a_timeout(language):
    """A case's limit is CPU time: 0.4 s asleep (as a starved program on a busy machine) is no hang."""
    result = run_beside(language, WAITS[language].format(s=0.4, ms=400), limits=Limits(case_timeout_s=0.2))
    assert [c.status for c in result.cases] == ["pass", "pass"]


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[pytest.mark.java, needs_jdk])])
def test_a_case_that_waits_for_ever_is_stopped_by_the_wall_clock(language):
    limits = Limits(case_timeout_s=0.2)   # backstop: 2 x 0.2 + 2 s of wall-clock time per case
    start = time.monotonic()
    result = run_beside(language, WAITS[language].format(s=60, ms=60_000), tests=TESTS[:1], limits=limits)
    assert [c.status for c in result.cases] == ["timeout"]
    assert time.monotonic() - start < 15

@pytest.mark.java
@needs_jdk
def test_java_programs_are_shared_among_workers():
    codes = [JAVA_RIGHT, JAVA_WRONG, LOOPS_ON_ZERO["java"], JAVA_RIGHT]
    for workers in (1, 2):
        results = run_tests("java", "add", codes, STOP_TESTS, Limits(case_timeout_s=0.5, workers=workers,
                                                                        stop_after_timeout=True))
        assert [[c.status for c in r.cases] for r in results] == [
            ["pass"] * 4, ["fail"] * 4, ["pass", "timeout", "timeout", "timeout"], ["pass"] * 4]
