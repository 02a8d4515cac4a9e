"""Running untrusted student code: compile it, run it on test cases, report what happened.

The only place in KASER where student code executes, always in subprocesses, never in ours:

    from kaser.sandbox import run_tests
    results = run_tests("java", "luckySum", codes, [([1, 2, 3], 6), ([1, 2, 13], 3)])
    results[0].compiled, results[0].cases[1].status      # True, "pass"

Batches are cheap: all Java programs of a call go through one javac run (more only when some
fail to compile) and one JVM (KaserHarness, kaser/java_harness.py); Python programs are shared
among `Limits.workers` worker processes (kaser/python_worker.py). A process that dies or stops
answering is killed, the case it was on gets the blame (timeout / memory / exit), and a fresh
process carries on with the rest.

Barriers, strongest first (probed once per process; the choice is logged):
1. Running as root (CI): every batch runs under its own fresh, unprivileged user id in its own
   network namespace (`unshare --net --setuid`), so it cannot read or delete our files, reach
   any network, or see our environment; afterwards every process of that user id is killed.
   RLIMIT_NPROC then really caps processes and threads (root ignores it).
2. Otherwise, a user namespace with its own network namespace when the kernel allows one,
   else none (a warning says so): the worker keeps our user id.
3. Always: rlimits (CPU, processes, file size, no core files; address space for Python, -Xmx
   for the JVM, where RLIMIT_AS would break it), a fresh working directory, a minimal
   environment (no API keys), stdout/stderr captured up to `Limits.output_chars`, and in-process
   guards: an audit hook in Python, a SecurityManager in Java (JDK 17-23) that refuse processes,
   sockets, writes and deletions outside the working directory, and report sys.exit/System.exit
   as status "exit".
Limits, honestly: without root, barrier 3 is all that separates student code from files the
user owns, and audit hooks can in principle be escaped by a determined attacker (they are meant
for student mistakes and mischief, not for hostile experts); on JDK 24+ Java has no in-process
guard at all. Run paper-scale annotation as root in a container (as CI does) for real isolation.

Departures from the paper: it runs no code (o4-mini reads it); execution is our addition (issue 3).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from kaser import java_harness

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    case_timeout_s: float = 2.0     # one test case (and a Python module's top level); then "timeout"
    memory_mb: int = 256            # Python: address space of a worker; Java: heap (-Xmx)
    java_stack_mb: int = 16         # stack of the thread running one Java case
    processes: int = 128            # processes + threads for one batch (Java needs ~30 itself)
    file_bytes: int = 16 << 20      # largest file a worker may write, its own result stream included
    output_chars: int = 2000        # printed output kept per case
    workers: int = 2                # Python worker processes per batch
    startup_s: float = 60.0         # allowance for a JVM/javac to start on a loaded machine


@dataclass(frozen=True)
class Diagnostic:
    line: int | None    # line in the student's code (1-based), None when unknown
    message: str        # the compiler's own text: "';' expected", "SyntaxError: invalid syntax"
    detail: str = ""    # javac's symbol/required/found lines, "; "-joined


@dataclass(frozen=True)
class CaseResult:
    status: str                 # pass | fail | exception | timeout | memory | exit
    actual: str | None = None   # JSON of the returned value
    exception: str | None = None  # type name: "ArrayIndexOutOfBoundsException", "IndexError"
    detail: str = ""
    output: str = ""            # what the program printed, cut at Limits.output_chars


@dataclass(frozen=True)
class ProgramResult:
    compiled: bool | None       # None: not checked (Java without a JDK)
    diagnostics: tuple[Diagnostic, ...] = ()
    cases: tuple[CaseResult, ...] = ()


# ---------------------------------------------------------------- comparing results

def same_value(actual: Any, expected: Any, tolerance: float = 1e-6) -> bool:
    """JSON values equal, numbers within `tolerance` (absolute or relative), booleans not numbers.

    >>> same_value([1.0000001, "a"], [1, "a"]), same_value(True, 1), same_value({"a": [1]}, {"a": [2]})
    (True, False, False)
    """
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        if math.isnan(actual) or math.isnan(expected):
            return math.isnan(actual) and math.isnan(expected)
        return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(map(same_value, actual, expected))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(same_value(actual[k], expected[k]) for k in actual)
    return type(actual) is type(expected) and actual == expected


def _case(record: dict, expected: Any) -> CaseResult:
    """A worker's record for one case -> CaseResult, judging returned values against `expected`."""
    status, actual = record.get("status"), record.get("actual")
    extra = {"exception": record.get("exception"), "detail": str(record.get("detail") or ""),
             "output": str(record.get("output") or "")}
    if status != "returned":
        if status not in ("exception", "timeout", "memory", "exit"):
            status, extra["detail"] = "exception", f"unexpected record from the worker: {status!r}"
        return CaseResult(status, **extra)
    if not isinstance(actual, str):
        return CaseResult("fail", None, **extra)
    try:
        passed = same_value(json.loads(actual), expected)
    except ValueError:
        passed = False
    return CaseResult("pass" if passed else "fail", actual, **extra)


# ---------------------------------------------------------------- isolation

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "MALLOC_ARENA_MAX": "2"}
_WORKER_SOURCE = Path(__file__).with_name("python_worker.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class _Isolation:
    name: str
    prefix: tuple[str, ...]     # command prefix; "{uid}" is replaced by the batch's user id
    own_uid: bool
    python: str                 # an interpreter of our version that the sandbox user may run


def _candidates() -> list[_Isolation]:
    uid_net = ("unshare", "--net", "--setuid", "{uid}", "--setgid", "{uid}", "--")
    uid_only = ("setpriv", "--reuid", "{uid}", "--regid", "{uid}", "--clear-groups", "--")
    found = []
    if os.geteuid() == 0:
        found += [_Isolation("own user id + no network", uid_net, True, ""),
                  _Isolation("own user id", uid_only, True, "")]
    found.append(_Isolation("user namespace without network", ("unshare", "--user", "--net", "--"), False, ""))
    return found


@functools.cache
def _isolation() -> _Isolation:
    """The strongest isolation that works here, with a Python the sandbox user can run.

    Our own interpreter may live where another user id cannot reach (e.g. pyenv under /root),
    so the system interpreter of the same version is tried too.
    """
    version = "%d.%d" % sys.version_info[:2]
    pythons = dict.fromkeys([sys.executable, os.path.realpath(sys.executable),
                             getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}"])
    check = ["-I", "-S", "-c", "import json, sys; print('%d.%d' % sys.version_info[:2])"]
    uid = str(_fresh_uid())
    for candidate in _candidates():
        prefix = [a.replace("{uid}", uid) for a in candidate.prefix]
        for python in pythons:
            if not (shutil.which(prefix[0]) and os.path.exists(python)):
                continue
            run = subprocess.run(prefix + [python, *check], env=_ENV, cwd="/", capture_output=True,
                                 text=True, timeout=30)
            if run.returncode == 0 and run.stdout.strip() == version:
                log.info("sandbox isolation: %s (worker Python %s)", candidate.name, python)
                return _Isolation(candidate.name, candidate.prefix, candidate.own_uid, python)
    log.warning("sandbox: no user id or network namespace available; student code runs as this user "
                "with only rlimits and in-process guards (run as root in a container for real isolation)")
    return _Isolation("rlimits only", (), False, sys.executable)


def _fresh_uid() -> int:
    return random.SystemRandom().randrange(1 << 20, 1 << 30)


def _tasks_of(uid: int) -> int:
    """Processes + threads owned by `uid` (RLIMIT_NPROC counts them all)."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return total


def _set_limits(limits: dict[int, int]) -> None:  # runs in the child between fork and exec
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))


# ---------------------------------------------------------------- supervising workers

@dataclass
class _Slot:
    """A stream of programs worked through by successive processes (one at a time)."""
    order: list[int]
    first_case: int = 0
    process: subprocess.Popen | None = None
    reader: Any = None
    pending: str = ""
    seen: float = 0.0
    ready: bool = False
    finish: str = ""
    killed: bool = False
    progress: int = 0           # results the current process has delivered
    runs: int = 0
    stderr: Path | None = None


@dataclass
class _Batch:
    """State of one call: every program with its entry point and cases, and what came back."""
    language: str
    codes: list[str]
    entries: list[str]
    args: list[list[str]]       # per program: JSON of each case's argument list
    expected: list[list[Any]]
    limits: Limits
    folder: Path
    uid: int | None
    compiled: dict[int, bool | None] = field(default_factory=dict)
    diagnostics: dict[int, list[Diagnostic]] = field(default_factory=dict)
    loaded: set[int] = field(default_factory=set)
    cases: dict[int, list[CaseResult | None]] = field(default_factory=dict)

    def unfinished(self, slot: _Slot) -> tuple[int, int] | None:
        for p in slot.order:
            if self.compiled.get(p) is None:
                return p, 0
            if self.compiled[p] and None in self.cases[p]:
                return p, self.cases[p].index(None)
        return None

    def take(self, slot: _Slot, record: dict) -> None:
        if record.get("ready"):
            slot.ready = True
            if record.get("guarded") is False:
                _warn_once("java-guard", "sandbox: this JDK has no SecurityManager; Java runs with OS limits only")
        if record.get("end") or record.get("restart"):
            slot.finish = "end" if record.get("end") else "restart"
        p, c = record.get("p"), record.get("c")
        if p not in slot.order:
            return
        if "compiled" in record and self.compiled.get(p) is None:
            self.compiled[p] = bool(record["compiled"])
            self.diagnostics[p] = [Diagnostic(line if isinstance(line, int) else None, str(message))
                                   for line, message in record.get("diagnostics", [])]
        elif record.get("loaded") is True:
            self.loaded.add(p)
        elif record.get("loaded") is False:  # the module's top level failed: every case shares it
            self.loaded.add(p)
            self._blame(p, None, _case(record, None))
        elif isinstance(c, int) and 0 <= c < len(self.cases[p]) and self.cases[p][c] is None:
            self.cases[p][c] = _case(record, self.expected[p][c])
            slot.progress += 1

    def _blame(self, p: int, c: int | None, result: CaseResult) -> None:
        todo = range(len(self.cases[p])) if c is None else [c]
        self.cases[p] = [result if i in todo and old is None else old for i, old in enumerate(self.cases[p])]

    def after_exit(self, slot: _Slot) -> bool:
        """Blame the case a dead worker was on; True while the slot still has work."""
        where = self.unfinished(slot)
        if where is None:
            return False
        if not slot.ready:
            error = slot.stderr.read_text(errors="replace")[-2000:] if slot.stderr else ""
            raise RuntimeError(f"sandbox worker for {self.language} did not start: {error}")
        p, c = where
        if slot.finish != "restart" or slot.progress == 0:  # a restart must not loop without progress
            result = _death(slot.process.returncode, slot.killed)
            if self.compiled.get(p) is None:
                self.compiled[p] = False
                self.diagnostics[p] = [Diagnostic(None, f"compiler crashed: {result.detail}")]
            elif self.language == "python" and p not in self.loaded:
                self._blame(p, None, CaseResult(result.status, None, result.exception,
                                                result.detail + " (while loading the program)"))
            else:
                self._blame(p, c, result)
        where = self.unfinished(slot)
        if where is not None:
            slot.order = slot.order[slot.order.index(where[0]):]
            slot.first_case = where[1]
        return where is not None


def _death(returncode: int, killed: bool) -> CaseResult:
    """What a worker's end says about the case it was running."""
    if killed:
        return CaseResult("timeout", detail="no answer within the time limit; worker killed")
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if name == "SIGXCPU":
            return CaseResult("timeout", detail="CPU time limit of the worker exceeded")
        if name in ("SIGSEGV", "SIGBUS", "SIGKILL", "SIGABRT"):
            return CaseResult("memory", detail=f"worker killed by {name} (stack or memory exhausted)")
        return CaseResult("exception", exception=name, detail=f"worker killed by {name}")
    return CaseResult("exit", detail=f"process exited with status {returncode}")


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def _supervise(batch: _Batch, slots: list[_Slot], command) -> None:
    """Run every slot to completion; `command(slot, n)` -> (argv, stdin path or None, rlimits)."""
    isolation = _isolation()
    prefix = [a.replace("{uid}", str(batch.uid)) for a in isolation.prefix]
    work = batch.folder / "work"
    private = batch.folder / "private"
    grace = 2 * batch.limits.case_timeout_s + 5.0
    active = list(slots)

    def start(slot: _Slot) -> None:
        slot.runs += 1
        argv, stdin, limits = command(slot, slot.runs)
        out = private / f"out-{id(slot)}-{slot.runs}.jsonl"
        slot.stderr = private / f"err-{id(slot)}-{slot.runs}.txt"
        with open(out, "wb") as sink, open(slot.stderr, "wb") as errors, \
                open(stdin or os.devnull, "rb") as source:
            slot.process = subprocess.Popen(
                prefix + argv, stdin=source, stdout=sink, stderr=errors, cwd=work, env={**_ENV, "HOME": str(work)},
                start_new_session=True, preexec_fn=functools.partial(_set_limits, limits))
        slot.reader = open(out, encoding="utf-8", errors="replace")
        slot.pending, slot.seen, slot.ready, slot.finish, slot.killed = "", time.monotonic(), False, "", False
        slot.progress = 0

    def read(slot: _Slot) -> None:
        chunk = slot.reader.read()
        if not chunk:
            return
        slot.seen = time.monotonic()
        lines = (slot.pending + chunk).split("\n")
        slot.pending = lines.pop()
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                batch.take(slot, record)

    try:
        for slot in active:
            start(slot)
        while active:
            time.sleep(0.01)
            for slot in list(active):
                read(slot)
                done = slot.process.poll() is not None
                allowance = grace if slot.ready else batch.limits.startup_s
                if not done and time.monotonic() - slot.seen > allowance:
                    slot.killed = True
                    _kill(slot.process)
                    done = True
                if not done:
                    continue
                read(slot)
                slot.reader.close()
                if batch.after_exit(slot):
                    start(slot)
                else:
                    active.remove(slot)
    finally:
        for slot in slots:
            if slot.process is not None and slot.process.poll() is None:
                _kill(slot.process)
        if batch.uid is not None:  # anything still running under the batch's user id dies now
            subprocess.run([isolation.python, "-I", "-S", "-c", "import os; os.kill(-1, 9)"], env=_ENV,
                           cwd="/", user=batch.uid, group=batch.uid, extra_groups=[], capture_output=True)


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _new_batch(language: str, problems: Sequence[tuple[str, Sequence[str], Sequence[tuple[list, Any]]]],
               limits: Limits) -> _Batch:
    """Flatten (entry, programs, tests) problems into one batch in a fresh folder."""
    if language not in ("java", "python"):
        raise ValueError(f"unknown language {language!r}; expected 'java' or 'python'")
    folder = Path(tempfile.mkdtemp(prefix="kaser-sandbox-"))
    folder.chmod(0o711)  # the worker may enter known paths (work, classes, jobs), list nothing
    uid = _fresh_uid() if _isolation().own_uid else None
    for name, mode in (("work", 0o700), ("private", 0o700), ("classes", 0o755)):
        (folder / name).mkdir(mode=mode)
    if uid is not None:
        os.chown(folder / "work", uid, uid)
    batch = _Batch(language, [], [], [], [], limits, folder, uid)
    for number, (entry, programs, tests) in enumerate(problems):
        for args, _ in tests:
            if not isinstance(args, (list, tuple)):
                raise ValueError(f"problem {number}: test arguments must be a list, got {args!r}")
        args = [json.dumps(list(args)) for args, _ in tests]
        expected = [value for _, value in tests]
        for code in programs:
            batch.cases[len(batch.codes)] = [None] * len(tests)
            batch.codes.append(code)
            batch.entries.append(entry)
            batch.args.append(args)
            batch.expected.append(expected)
    return batch


def _rlimits(batch: _Batch, cases: int, memory: bool) -> dict[int, int]:
    processes = batch.limits.processes + (0 if batch.uid is not None or os.geteuid() == 0
                                          else _tasks_of(os.getuid()))
    limits = {resource.RLIMIT_CPU: int(60 + 2 * cases * batch.limits.case_timeout_s),
              resource.RLIMIT_NPROC: processes, resource.RLIMIT_FSIZE: batch.limits.file_bytes,
              resource.RLIMIT_CORE: 0}
    if memory:
        limits[resource.RLIMIT_AS] = batch.limits.memory_mb << 20
    return limits


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return path


# ---------------------------------------------------------------- Python

def _run_python(batch: _Batch, mode: str) -> None:
    count = len(batch.codes)
    share = math.ceil(count / max(1, min(batch.limits.workers, count)))
    slots = [_Slot(list(range(i, min(i + share, count)))) for i in range(0, count, share)]

    def command(slot: _Slot, run: int):
        job = {"mode": mode, "first_case": slot.first_case, "timeout": batch.limits.case_timeout_s,
               "output_chars": batch.limits.output_chars,
               "programs": [[p, batch.codes[p], batch.entries[p], batch.args[p]] for p in slot.order]}
        path = _write(batch.folder / f"job-{id(slot)}-{run}.json", json.dumps(job))
        cases = sum(max(1, len(batch.args[p])) for p in slot.order)
        return [_isolation().python, "-I", "-S", "-B", "-c", _WORKER_SOURCE], path, _rlimits(batch, cases, memory=True)

    _supervise(batch, slots, command)


# ---------------------------------------------------------------- Java

def java_available() -> bool:
    """True when javac and java are on PATH."""
    return shutil.which("javac") is not None and shutil.which("java") is not None


_JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Duser.language=en",
              "-Duser.country=US", "-Dfile.encoding=UTF-8"]


def _javac(files: dict[int, Path], out: Path, lines: dict[int, int], limits: Limits) -> dict[int, list[Diagnostic]]:
    """Compile in as few javac runs as possible; diagnostics of the programs that fail.

    javac writes no class file while any source has an error, and stops after parsing when one
    has a syntax error, so: compile all, drop the ones it blames, compile the rest again (at most
    three rounds: parse, attribution, flow). A run that fails without blaming anyone (javac
    crashed or timed out) is split in halves until the culprit is alone.
    """
    if not files:
        return {}
    empty = out.parent / "empty"
    empty.mkdir(exist_ok=True)
    argv = ["javac", *(f"-J{flag}" for flag in _JVM_FLAGS), "-encoding", "UTF-8", "-nowarn", "-Xlint:none",
            "-Xmaxerrs", "100000", "-proc:none", "-implicit:none", "-cp", str(empty), "-sourcepath", str(empty),
            "-d", str(out), *map(str, files.values())]
    try:
        run = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=_ENV, cwd=out.parent,
                             timeout=limits.startup_s + 0.2 * len(files))
        returncode, output = run.returncode, run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        returncode, output = -1, "javac timed out"
    if returncode == 0:
        return {}
    blamed = {p: [Diagnostic(*d) for d in found] for p, found in java_harness.parse_javac(output, lines).items()
              if p in files}
    if not blamed:
        if len(files) == 1:
            first = output.strip().splitlines()[:1] or ["javac failed"]
            return {next(iter(files)): [Diagnostic(None, first[0])]}
        keys = sorted(files)
        halves = keys[: len(keys) // 2], keys[len(keys) // 2:]
        return {p: d for half in halves for p, d in _javac({k: files[k] for k in half}, out, lines, limits).items()}
    rest = {p: path for p, path in files.items() if p not in blamed}
    return blamed | _javac(rest, out, lines, limits)


@functools.cache
def _harness() -> Path:
    """KaserHarness compiled once per process into a folder every sandbox user may read."""
    folder = Path(tempfile.mkdtemp(prefix="kaser-java-harness-"))
    source = folder / f"{java_harness.HARNESS_CLASS}.java"
    source.write_text(java_harness.HARNESS_SOURCE, encoding="utf-8")
    run = subprocess.run(["javac", "-nowarn", "-Xlint:none", "-encoding", "UTF-8", "-d", str(folder), str(source)],
                         capture_output=True, text=True, env=_ENV)
    if run.returncode != 0:
        raise RuntimeError(f"the Java harness does not compile: {run.stdout}{run.stderr}")
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def _compile_java(batch: _Batch) -> None:
    sources = batch.folder / "sources"
    sources.mkdir()
    files, lines = {}, {}
    for p, code in enumerate(batch.codes):
        files[p] = sources / f"{java_harness.class_name(p)}.java"
        files[p].write_text(java_harness.wrap_program(p, code), encoding="utf-8")
        lines[p] = code.count("\n") + 1
    failed = _javac(files, batch.folder / "classes", lines, batch.limits)
    for p in range(len(batch.codes)):
        batch.compiled[p] = p not in failed
        batch.diagnostics[p] = failed.get(p, [])
    for path in (batch.folder / "classes").iterdir():
        path.chmod(0o644)


def _run_java(batch: _Batch) -> None:
    _compile_java(batch)
    runnable = [p for p in range(len(batch.codes)) if batch.compiled[p] and batch.args[p]]
    if not runnable:
        return
    limits = batch.limits

    def command(slot: _Slot, run: int):
        job = [f"timeout_ms {int(limits.case_timeout_s * 1000)}", f"output_chars {limits.output_chars}",
               f"stack_bytes {limits.java_stack_mb << 20}", f"first_case {slot.first_case}"]
        for p in slot.order:
            job.append(f"program {p} {java_harness.class_name(p)} {batch.entries[p]}")
            job.extend(f"test {args}" for args in batch.args[p])
        path = _write(batch.folder / f"job-{run}.txt", "\n".join(job) + "\n")
        argv = [shutil.which("java"), f"-Xmx{limits.memory_mb}m", "-XX:-UsePerfData", "-XX:MaxMetaspaceSize=256m",
                "-XX:MaxDirectMemorySize=64m", "-Djava.security.manager=allow", *_JVM_FLAGS,
                "-cp", str(_harness()), java_harness.HARNESS_CLASS,
                str(path), str(batch.folder / "classes"), str(batch.folder / "work")]
        cases = sum(len(batch.args[p]) for p in slot.order)
        return argv, None, _rlimits(batch, cases, memory=False)

    _supervise(batch, [_Slot(runnable)], command)


def _no_jdk(count: int) -> list[ProgramResult]:
    _warn_once("no-jdk", "sandbox: no JDK (javac/java) on PATH; Java code is not compiled or run. "
                         "Install one, e.g. `apt-get install default-jdk-headless`.")
    return [ProgramResult(compiled=None) for _ in range(count)]


# ---------------------------------------------------------------- public entry points

def run_problems(language: str, problems: Sequence[tuple[str, Sequence[str], Sequence[tuple[list, Any]]]],
                 limits: Limits = Limits()) -> list[list[ProgramResult]]:
    """run_tests for many problems at once, each (entry, programs, tests): one javac + one JVM
    (or one set of Python workers) for all of them, which is what makes a whole dataset fast.
    """
    if language == "java" and not java_available():
        return [_no_jdk(len(programs)) for _, programs, _ in problems]
    batch = _new_batch(language, problems, limits)
    try:
        if batch.codes and language == "java":
            _run_java(batch)
        elif batch.codes:
            _run_python(batch, "run" if any(batch.args) else "compile")
    finally:
        shutil.rmtree(batch.folder, ignore_errors=True)
    results = [ProgramResult(batch.compiled[p], tuple(batch.diagnostics[p]),
                             tuple(batch.cases[p]) if batch.compiled[p] else ())
               for p in range(len(batch.codes))]
    grouped, start = [], 0
    for _, programs, _ in problems:
        grouped.append(results[start:start + len(programs)])
        start += len(programs)
    return grouped


def run_tests(language: str, entry: str, programs: Sequence[str], tests: Sequence[tuple[list, Any]],
              limits: Limits = Limits()) -> list[ProgramResult]:
    """Run every program (all answers to one problem) on every test case (args, expected value).

    Returns one ProgramResult per program, in order; its cases are in test order and empty when
    the program does not compile. Without a JDK, Java programs come back with compiled=None.
    """
    return run_problems(language, [(entry, programs, tests)], limits)[0]


def compile_diagnostics(language: str, programs: Sequence[str]) -> list[tuple[Diagnostic, ...]]:
    """Compiler messages only (javac; Python's compile()), one tuple per program, () when clean.

    Java without a JDK gives () for every program after one warning.
    """
    return [result.diagnostics for result in run_tests(language, "", programs, [])]
