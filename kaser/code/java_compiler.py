"""Compiling Java for the sandbox: student programs in few javac runs (reading javac's diagnostics),
and the JVM harness once.

    from kaser.code.sandbox import run_tests      # the entry point; it compiles through this module
    failed = compile_sources({0: Path("P0.java")}, Path("classes"), {0: 12}, startup_s=10)

Only javac runs here (a compiler reads student code, it does not execute it); running the
classes is kaser.code.sandbox's, in isolated JVMs (kaser/code/java_harness.py, kaser/code/isolation.py).
"""

from __future__ import annotations

import atexit
import functools
import math
import os
import re
import resource
import shutil
import subprocess
import threading
from pathlib import Path

from kaser.code import isolation

from kaser.code import java_harness


_HEADER = re.compile(r"^(?:.*[/\\])?Sub(\d+)\.java:(\d+): error: (.*)$")
_DETAIL = re.compile(r"^\s+(symbol|required|found|reason)\s*:")


def parse_javac(output: str, line_counts: dict[int, int]) -> dict[int, list[tuple[int | None, str, str]]]:
    """javac's text output -> {program index: [(student line, message, detail), ...]}.

    The message is javac's own first line ("';' expected", "missing return statement", ...);
    detail holds the symbol/required/found/reason lines that follow it. Lines outside the
    student's code (the wrapper's header and closing brace) are clamped to the first/last line.

    >>> out = "Sub0.java:3: error: cannot find symbol\\n  return y;\\n         ^\\n  symbol:   variable y\\n"
    >>> parse_javac(out, {0: 5})
    {0: [(2, 'cannot find symbol', 'symbol:   variable y')]}
    """
    found: dict[int, list[tuple[int | None, str, str]]] = {}
    current = None
    for text in output.splitlines():
        header = _HEADER.match(text)
        if header:
            index, line = int(header.group(1)), int(header.group(2)) - 1
            last = max(1, line_counts.get(index, 1))
            current = [min(max(line, 1), last), header.group(3).strip(), []]
            found.setdefault(index, []).append(current)
        elif current is not None and _DETAIL.match(text):
            current[2].append(text.strip())
    return {i: [(line, message, "; ".join(detail)) for line, message, detail in items]
            for i, items in found.items()}


def java_available() -> bool:
    """True when javac and java are on PATH."""
    return shutil.which("javac") is not None and shutil.which("java") is not None


JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Duser.language=en",
              "-Duser.country=US", "-Dfile.encoding=UTF-8"]


# javac's heap: it reads student code, and 1 KB of source with constant folding can ask for
# gigabytes; a run that runs out is split until the program that caused it fails on its own
JAVAC_HEAP_MB = 512
# javac runs outside the jail, so rlimits hold it besides its heap and its wall-clock limit: no
# core dumps, and no class file over JAVAC_FILE_BYTES (folded constants in a few lines of source
# fill megabytes of constant pool; a write past the cap fails that run, which is then split).
# RLIMIT_AS would break the JVM (it reserves far more address space than it uses).
JAVAC_FILE_BYTES = 16 << 20


def compile_sources(files: dict[int, Path], out: Path, lines: dict[int, int],
                    startup_s: float) -> dict[int, list[tuple[int | None, str]]]:
    """Compile in few javac runs; {program: [(line, message)]} of the programs that do not compile.

    `files` maps a program number to its source file, `lines` to its line count (to tell its
    diagnostics from those of the wrapper around it); class files go to `out`.

    1. All files at once, told to go on through attribution and flow analysis after errors
       (plain javac stops flow analysis at the first error, so 300 "missing return" programs
       would cost 300 runs). javac writes no class file while any source has an error, so
    2. the programs it blames are parsed again on their own: one with a syntax error keeps only
       its syntax errors, as javac would report for it alone (the rest are echoes of recovery);
    3. the others are compiled again, now cleanly, for their class files.
    A run that fails without blaming anyone (javac crashed or timed out) is split in halves.
    """
    if not files:
        return {}
    returncode, output = _javac_run(files.values(), out, ["-XDshould-stop.ifError=FLOW"], startup_s)
    if returncode == 0:
        return {}
    blamed = {p: list(found) for p, found in parse_javac(output, lines).items() if p in files}
    if not blamed:
        if len(files) == 1:
            first = output.strip().splitlines()[:1] or ["javac failed"]
            return {next(iter(files)): [(None, first[0])]}
        keys = sorted(files)
        halves = keys[: len(keys) // 2], keys[len(keys) // 2:]
        return {p: d for half in halves for p, d in compile_sources({k: files[k] for k in half}, out, lines, startup_s).items()}
    parse_only = ["-XDshould-stop.ifError=PARSE", "-XDshould-stop.ifNoError=PARSE"]
    _, output = _javac_run([files[p] for p in blamed], out, parse_only, startup_s)
    for p, found in parse_javac(output, lines).items():
        if p in blamed:
            blamed[p] = list(found)
    rest = {p: path for p, path in files.items() if p not in blamed}
    return blamed | compile_sources(rest, out, lines, startup_s)


def _javac_run(files, out: Path, policy: list[str], startup_s: float) -> tuple[int, str]:
    empty = out.parent / "empty"  # no class or source path: a program sees only itself and the JDK
    empty.mkdir(exist_ok=True)
    argv = ["javac", *(f"-J{flag}" for flag in JVM_FLAGS), f"-J-Xmx{JAVAC_HEAP_MB}m", *policy, "-encoding", "UTF-8",
            "-nowarn", "-Xlint:none",
            "-Xmaxerrs", "1000000", "-proc:none", "-implicit:none", "-cp", str(empty), "-sourcepath", str(empty),
            "-d", str(out), *map(str, files)]
    timeout = startup_s + 0.2 * len(argv)
    limits = {resource.RLIMIT_CORE: 0, resource.RLIMIT_FSIZE: JAVAC_FILE_BYTES,
              resource.RLIMIT_CPU: math.ceil(2 * timeout)}   # its threads together, on the wall-clock limit
    try:
        run = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=isolation.ENV,
                             cwd=out.parent, timeout=timeout, preexec_fn=_dies_with_us(limits))
        return run.returncode, run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        return -1, "javac timed out"


def _dies_with_us(limits: dict | None = None):
    """A javac that outlived us would write into a scratch folder after its reaper removed it;
    `limits`: rlimits it runs under."""
    return functools.partial(isolation.start_child, limits or {}, os.getpid())


_harness_lock = threading.Lock()


@functools.cache
def _harness_folder() -> Path:
    """KaserHarness compiled once per process into a folder every sandbox user may read."""
    folder = isolation.scratch_folder("kaser-java-harness-")
    atexit.register(isolation.remove_scratch, folder)
    source = folder / f"{java_harness.HARNESS_CLASS}.java"
    source.write_text(java_harness.HARNESS_SOURCE, encoding="utf-8")
    run = subprocess.run(["javac", *(f"-J{flag}" for flag in JVM_FLAGS), "-nowarn", "-Xlint:none", "-encoding",
                          "UTF-8", "-d", str(folder), str(source)], capture_output=True, text=True, env=isolation.ENV,
                         preexec_fn=_dies_with_us())
    if run.returncode != 0:
        raise RuntimeError(f"the Java harness does not compile: {run.stdout}{run.stderr}")
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def harness_classes() -> Path:
    """Folder holding the compiled KaserHarness (compiled on first use, once per process)."""
    with _harness_lock:  # problems may run in parallel threads; compile it once
        return _harness_folder()
