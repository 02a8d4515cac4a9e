"""Running untrusted student code: compile it, run it on test cases, report what happened.

The only place in KASER where student code executes, always in subprocesses, never in ours:

    from kaser.code.sandbox import run_tests
    results = run_tests("java", "luckySum", codes, [([1, 2, 3], 6), ([1, 2, 13], 3)])
    results[0].compiled, results[0].cases[1].status      # True, "pass"

Batches are cheap: all Java programs of a call go through one javac run (more only when some
fail to compile; kaser/code/java_compiler.py) and are shared among `Limits.workers` JVMs (KaserHarness, kaser/code/java_harness.py);
Python programs likewise among worker processes (kaser/code/python_worker.py). `run_problems` does the same
for many problems at once, which is how a whole dataset is annotated quickly. A worker that dies
or stops answering is killed, the case it was on gets the blame (timeout / memory / exit), and a
fresh worker carries on with the rest.

How the workers are isolated (a namespace jail per worker, rlimits, in-process guards) is in
kaser/code/isolation.py. Where the kernel refuses namespaces, run_tests raises
isolation.IsolationUnavailable unless `Limits.unsafe_no_isolation` is set.

Verdicts only the supervisor writes: a Python worker forks one process per program, which gets
no handle on the worker's result stream (kaser/code/python_worker.py); a JVM runs its programs
under a SecurityManager whose policy gives student classes no way to reach the harness
(kaser/code/java_harness.py). The supervisor accepts a record only for a program it gave to
that worker, only once, and a worker's time runs from the last record it accepted (per case,
so no output extends it): a worker without progress for 2 x case_timeout_s + 5 s is killed.
What a record holds comes from student code, so each is checked against a schema (`_case`:
types, sizes, the nesting of a returned value) and whatever fails is that program's own
"invalid" verdict; its texts are cut at `Limits.output_chars` and made encodable as UTF-8. No
record can raise in the supervisor.

Departures from the paper: it runs no code (o4-mini reads it); executing the code is our addition.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from kaser.code import isolation

from kaser.code import java_compiler

from kaser.code import java_harness
from kaser.code import namespaces
from kaser.code.java_compiler import java_available

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    case_timeout_s: float = 2.0     # CPU seconds of one test case (and a Python module's top level); then "timeout"
                                    # (one that waits is stopped after 2 x this + 2 s of wall-clock time)
    memory_mb: int = 256            # Python: address space of each process of a worker; Java: heap (-Xmx)
    jail_memory_mb: int = 768       # resident memory of all of a worker's processes together: memory_mb for
                                    # the program, the rest for the worker (a JVM's metaspace, code, threads);
                                    # beyond it the worker is killed and its case is "memory" (isolation.py)
    java_stack_mb: int = 16         # stack of the thread that runs Java cases
    processes: int = 128            # processes + threads for one worker (Java needs ~30 itself)
    file_bytes: int = 16 << 20      # largest file student code may write
    output_chars: int = 2000        # printed output kept per case
    workers: int = 2                # worker processes per batch (Python workers; JVMs for Java)
    stop_after_timeout: bool = False  # a program's cases after its first timeout are not run (SKIPPED)
    startup_s: float = 60.0         # allowance for a JVM/javac to start on a loaded machine
    writable_mb: int = 64           # size of a worker's writable /work, and of its /dev/shm
    unsafe_no_isolation: bool = False  # run even where the kernel refuses the namespace jail (see isolation.py)


@dataclass(frozen=True)
class Diagnostic:
    line: int | None    # line in the student's code (1-based), None when unknown
    message: str        # the compiler's own text: "';' expected", "SyntaxError: invalid syntax"
    detail: str = ""    # javac's symbol/required/found lines, "; "-joined


@dataclass(frozen=True)
class CaseResult:
    status: str                 # pass | fail | exception | timeout | memory | exit | invalid (a record
                                # that fails the schema: the program's own verdict, see _case)
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

    An integer beyond float range (a program can return 10**400) equals only the same integer.

    >>> same_value([1.0000001, "a"], [1, "a"]), same_value(True, 1), same_value({"a": [1]}, {"a": [2]})
    (True, False, False)
    >>> same_value(10**400, 3), same_value(10**400, 2.5), same_value(10**400, 10**400)
    (False, False, True)
    """
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        try:
            if math.isnan(actual) or math.isnan(expected):
                return math.isnan(actual) and math.isnan(expected)
            return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance)
        except OverflowError:   # an int too large for a float
            return actual == expected
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(map(same_value, actual, expected))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(same_value(actual[k], expected[k]) for k in actual)
    return type(actual) is type(expected) and actual == expected


# What a case record may hold. Anything else is the program's own "invalid" verdict, never an
# exception in the supervisor: a record's values come from student code (its own fd-3 records, the
# texts of its exceptions and output, the JSON of what it returned).
RECORD_STATUSES = ("returned", "exception", "timeout", "memory", "exit", "invalid")
MAX_VALUE_DEPTH = 100           # a returned value nested deeper than this is not judged
MAX_EXCEPTION_CHARS = 200       # an exception type name longer than this is not one


def _encodable(value: str) -> str:
    """`value` with each lone surrogate written as its escape, so that every UTF-8 writer (a
    parquet table, a log line) takes it; in a JSON text the escape stands for the same value.

    >>> _encodable('"bad \\ud800"')
    '"bad \\\\ud800"'
    """
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _text(value: str, limit: int) -> str:
    """`value` made encodable and cut at `limit` characters."""
    return _encodable(value[:limit])[:limit]


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value, without recursion.

    >>> _depth(3), _depth([1, {"a": [2]}]), _depth([[], []])
    (0, 3, 2)
    """
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level + 1)
            todo.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _invalid(why: str) -> CaseResult:
    return CaseResult("invalid", detail=f"invalid output: {why}")


def _schema_problem(record: dict, limits: Limits) -> str | None:
    """Why a case record's fields are not what a worker writes, or None."""
    status = record.get("status")
    if not isinstance(status, str) or status not in RECORD_STATUSES:
        shown = repr(status[:40]) if isinstance(status, str) else f"a {type(status).__name__}"
        return f"status {shown} is not one of {', '.join(RECORD_STATUSES)}"
    exception = record.get("exception")
    if exception is not None and not (isinstance(exception, str) and len(exception) <= MAX_EXCEPTION_CHARS):
        return f"exception is not a type name of at most {MAX_EXCEPTION_CHARS} characters"
    for name in ("detail", "output"):
        if not isinstance(record.get(name) or "", str):
            return f"{name} is a {type(record[name]).__name__}, not text"
    actual = record.get("actual")
    if actual is not None and not isinstance(actual, str):
        return f"actual is a {type(actual).__name__}, not the JSON text of a value"
    if isinstance(actual, str) and len(actual) > 100 * limits.output_chars:
        return f"returned value too large ({len(actual):,} characters of JSON)"
    return None


def _case(record: dict, expected: Any, limits: Limits) -> CaseResult:
    """A worker's record for one case -> CaseResult, judging returned values against `expected`.

    A record that fails the schema (_schema_problem), or returns a value nested deeper than
    MAX_VALUE_DEPTH, is the program's "invalid" verdict; texts are cut at `limits.output_chars`.
    Any other exception that judging the record raises is that verdict too, so that no value a
    program returns can stop the batch.
    """
    try:
        return _judged_case(record, expected, limits)
    except Exception as err:    # noqa: BLE001 - the record is the program's, the fault its own
        return _invalid(f"the record could not be judged ({type(err).__name__})")


def _judged_case(record: dict, expected: Any, limits: Limits) -> CaseResult:
    problem = _schema_problem(record, limits)
    if problem is not None:
        return _invalid(problem)
    status, actual, cap = record["status"], record.get("actual"), limits.output_chars
    extra = {"exception": _text(record.get("exception") or "", cap) or None,   # Java's anonymous classes: ""
             "detail": _text(record.get("detail") or "", cap), "output": _text(record.get("output") or "", cap)}
    if status == "invalid":
        return CaseResult("invalid", detail=extra["detail"])
    if status != "returned":
        return CaseResult(status, **extra)
    if actual is None:
        return CaseResult("fail", None, **extra)
    actual = _encodable(actual)
    try:
        value = json.loads(actual)
    except ValueError:
        return CaseResult("fail", actual, **extra)
    except RecursionError:
        return _invalid(f"returned value nested more than {MAX_VALUE_DEPTH} levels deep")
    if _depth(value) > MAX_VALUE_DEPTH:
        return _invalid(f"returned value nested more than {MAX_VALUE_DEPTH} levels deep")
    return CaseResult("pass" if same_value(value, expected) else "fail", actual, **extra)


# what a case not run after an earlier timeout of its program reports (Limits.stop_after_timeout)
SKIPPED = CaseResult("timeout", detail="not run: the program ran out of time on an earlier case")

_WORKER_SOURCE = Path(__file__).with_name("python_worker.py").read_text(encoding="utf-8")


# ---------------------------------------------------------------- supervising workers

@dataclass
class _Slot:
    """A run of programs worked through by successive worker processes, one at a time."""
    order: list[int]
    first_case: int = 0         # where the first program of `order` starts
    worker: isolation.Worker | None = None
    ready: bool = False         # the current worker has said it is ready
    finish: str = ""            # "end" | "restart" once it says it is done
    progress: int = 0           # results the current worker has delivered
    runs: int = 0
    uid: int | None = None      # the current worker's own user id (as root): no other worker shares
                                # its process count (RLIMIT_NPROC counts per user id)
    work: Path | None = None    # the current worker's working folder, outside a jail


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
    mode: isolation.Isolation | None = None
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

    def take(self, slot: _Slot, record: dict) -> bool:
        """Record what a worker said; True when it was progress (a first answer for one of its programs)."""
        if record.get("ready"):
            slot.ready = True
            if record.get("guarded") is False:
                _warn_once("java-guard", "sandbox: this JDK has no SecurityManager; Java runs with OS limits only")
            return True
        if record.get("end") or record.get("restart"):
            slot.finish = "end" if record.get("end") else "restart"
        p, c = record.get("p"), record.get("c")
        if not isinstance(p, int) or isinstance(p, bool) or p not in slot.order:  # not a program of this worker
            return False
        if "compiled" in record and self.compiled.get(p) is None:
            self.compiled[p] = bool(record["compiled"])
            diagnostics = record.get("diagnostics")
            self.diagnostics[p] = [Diagnostic(item[0] if isinstance(item[0], int) else None,
                                              _text(item[1], self.limits.output_chars))
                                   for item in (diagnostics if isinstance(diagnostics, list) else [])
                                   if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str)]
            slot.progress += 1
        elif not self.compiled.get(p):
            return False
        elif self.language == "python" and p not in self.loaded:
            if record.get("loaded") is True:
                self.loaded.add(p)
            elif record.get("loaded") is False:  # the module's top level failed: every case shares it
                self.loaded.add(p)
                self._blame(p, None, _case(record, None, self.limits))
            else:
                return False
        elif isinstance(c, int) and not isinstance(c, bool) and 0 <= c < len(self.cases[p]) and self.cases[p][c] is None:
            self.cases[p][c] = _case(record, self.expected[p][c], self.limits)
            slot.progress += 1
            self._skip_after_timeout(p, self.cases[p][c])
        else:
            return False
        return True

    def _blame(self, p: int, c: int | None, result: CaseResult) -> None:
        todo = range(len(self.cases[p])) if c is None else [c]
        self.cases[p] = [result if i in todo and old is None else old for i, old in enumerate(self.cases[p])]
        self._skip_after_timeout(p, result)

    def _skip_after_timeout(self, p: int, result: CaseResult) -> None:
        if result.status == "timeout" and self.limits.stop_after_timeout:
            self.cases[p] = [SKIPPED if old is None else old for old in self.cases[p]]

    def after_exit(self, slot: _Slot) -> bool:
        """Blame the case a dead worker was on; True while the slot still has work."""
        where = self.unfinished(slot)
        if where is None:
            return False
        if not slot.ready:
            raise RuntimeError(f"sandbox worker for {self.language} did not start: {slot.worker.stderr_tail()}")
        p, c = where
        if slot.finish != "restart" or slot.progress == 0:  # a restart must not loop without progress
            result = _death(slot.worker.process.returncode, slot.worker.killed, self.limits)
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


def _death(returncode: int, killed: str, limits: Limits) -> CaseResult:
    """What a worker's end says about the case it was running (`killed`: why we killed it, or "")."""
    if killed == "memory":
        return CaseResult("memory", detail=f"the worker's processes together held more than "
                                           f"{limits.jail_memory_mb} MB; worker killed")
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
    """Run every slot to completion; `command(slot, run)` -> (argv, stdin path or None, rlimits,
    read-only binds {outside path: inside path} for the jail)."""
    grace = 2 * batch.limits.case_timeout_s + 5.0  # no progress beyond this means the worker is stuck

    def start(slot: _Slot) -> None:
        slot.runs += 1
        name = f"{id(slot)}-{slot.runs}"
        slot.uid = isolation.fresh_uid() if batch.mode.own_uid else None
        slot.work = None
        if not batch.mode.jailed:   # a jail has a /work of its own
            slot.work = batch.folder / f"work-{name}"
            slot.work.mkdir(mode=0o700)
            if slot.uid is not None:
                os.chown(slot.work, slot.uid, slot.uid)
        argv, stdin, limits, binds = command(slot, slot.runs)
        jail = None
        if batch.mode.jailed:
            root = batch.folder / f"root-{name}"
            root.mkdir(mode=0o755)
            jail = namespaces.Jail(root, tuple((str(k), v) for k, v in binds.items()), batch.limits.writable_mb)
        slot.worker = isolation.Worker(argv, stdin=stdin, folder=batch.folder, name=name, uid=slot.uid,
                                       work=slot.work, limits=limits, mode=batch.mode, jail=jail,
                                       memory_bytes=batch.limits.jail_memory_mb << 20)
        slot.ready, slot.finish, slot.progress = False, "", 0

    def stop(slot: _Slot) -> None:
        """End the slot's worker and whatever else runs under its user id."""
        slot.worker.close()
        if slot.uid is not None:
            isolation.kill_user(slot.uid, batch.mode.python)
            slot.uid = None

    active = list(slots)
    try:
        for slot in active:
            start(slot)
        while active:
            time.sleep(0.01)
            for slot in list(active):
                for record in slot.worker.records():
                    if batch.take(slot, record):
                        slot.worker.seen = time.monotonic()
                if not slot.worker.finished(grace if slot.ready else batch.limits.startup_s):
                    continue
                for record in slot.worker.records():
                    batch.take(slot, record)
                stop(slot)
                if batch.after_exit(slot):
                    start(slot)
                else:
                    active.remove(slot)
    finally:
        for slot in slots:
            if slot.worker is not None:
                stop(slot)


def _new_batch(language: str, problems: Sequence[tuple[str, Sequence[str], Sequence[tuple[list, Any]]]],
               limits: Limits) -> _Batch:
    """Flatten (entry, programs, tests) problems into one batch (its folder comes later)."""
    if language not in ("java", "python"):
        raise ValueError(f"unknown language {language!r}; expected 'java' or 'python'")
    batch = _Batch(language, [], [], [], [], limits, Path())
    for number, (entry, programs, tests) in enumerate(problems):
        if tests and not entry.isidentifier():
            raise ValueError(f"problem {number}: entry {entry!r} is not a function or method name")
        for args, _ in tests:
            if not isinstance(args, (list, tuple)):
                raise ValueError(f"problem {number}: test arguments must be a list, got {args!r}")
        args = [json.dumps(list(args)) for args, _ in tests]
        expected = [json.loads(json.dumps(value)) for _, value in tests]  # tuples -> lists, as workers report
        for code in programs:
            batch.cases[len(batch.codes)] = [None] * len(tests)
            batch.codes.append(code)
            batch.entries.append(entry)
            batch.args.append(args)
            batch.expected.append(expected)
    return batch


def _make_folder(batch: _Batch) -> None:
    """A fresh folder: classes/, private/ (ours only); each worker outside a jail gets a
    work-<name>/ of its own, under its own user id (_supervise)."""
    batch.mode = isolation.isolation(batch.limits.unsafe_no_isolation)  # raises before any folder exists
    batch.folder = isolation.scratch_folder("kaser-sandbox-")
    batch.folder.chmod(0o711)  # the worker may enter known paths (work, classes, jobs), list nothing
    for name, mode in (("private", 0o700), ("classes", 0o755)):
        (batch.folder / name).mkdir(mode=mode)


# descriptors per process: a Python worker needs about 10 and a JVM about 40 of its own; each
# could hold a memory file of Limits.file_bytes, which only root's memory check sees (isolation.py)
OPEN_FILES = {"python": 32, "java": 256}


def _rlimits(batch: _Batch, cases: int, memory: bool) -> dict:
    # CPU: enough for every case to run to its time limit; the silence watchdog acts sooner.
    # Files: the student's allowance (the result stream is a pipe, isolation.Worker).
    return isolation.rlimits(cpu_s=int(60 + 2 * cases * batch.limits.case_timeout_s),
                             processes=batch.limits.processes, file_bytes=batch.limits.file_bytes,
                             memory_bytes=batch.limits.memory_mb << 20 if memory else None,
                             own_uid=batch.mode.own_uid,
                             open_files=OPEN_FILES[batch.language])


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
               "output_chars": batch.limits.output_chars, "stop_after_timeout": batch.limits.stop_after_timeout,
               "programs": [[p, batch.codes[p], batch.entries[p], batch.args[p]] for p in slot.order]}
        path = _write(batch.folder / f"job-{id(slot)}-{run}.json", json.dumps(job))
        cases = sum(max(1, len(batch.args[p])) for p in slot.order)
        argv = [batch.mode.python, "-I", "-S", "-B", "-c", _WORKER_SOURCE]
        return argv, path, _rlimits(batch, cases, memory=True), {}

    _supervise(batch, slots, command)


# ---------------------------------------------------------------- Java

def _compile_java(batch: _Batch) -> None:
    sources = batch.folder / "sources"
    sources.mkdir()
    files, lines = {}, {}
    for p, code in enumerate(batch.codes):
        files[p] = sources / f"{java_harness.class_name(p)}.java"
        files[p].write_text(java_harness.wrap_program(p, code), encoding="utf-8")
        lines[p] = code.count("\n") + 1
    built = batch.folder / "built"   # javac's output, ours only; each program's part moves to classes/<p>
    built.mkdir(mode=0o700)
    failed = java_compiler.compile_sources(files, built, lines, batch.limits.startup_s)
    for p in range(len(batch.codes)):
        batch.compiled[p] = p not in failed
        batch.diagnostics[p] = [Diagnostic(*d) for d in failed.get(p, [])]
        package = built / java_harness.package_name(p)
        if batch.compiled[p] and package.is_dir():   # each program's classes in a folder of its own
            own = batch.folder / "classes" / str(p)
            own.mkdir(mode=0o755)
            package.rename(own / package.name)
            own.joinpath(package.name).chmod(0o755)
            for path in own.joinpath(package.name).iterdir():
                path.chmod(0o644)


def _run_java(batch: _Batch) -> None:
    _compile_java(batch)
    runnable = [p for p in range(len(batch.codes)) if batch.compiled[p] and batch.args[p]]
    if not runnable:
        return
    limits = batch.limits

    def command(slot: _Slot, run: int):
        job = [f"timeout_ms {int(limits.case_timeout_s * 1000)}", f"output_chars {limits.output_chars}",
               f"stack_bytes {limits.java_stack_mb << 20}", f"first_case {slot.first_case}",
               f"stop_after_timeout {int(limits.stop_after_timeout)}", f"wipe_work {int(batch.mode.jailed)}"]
        for p in slot.order:
            job.append(f"program {p} {java_harness.qualified_name(p)} {batch.entries[p]}")
            job.extend(f"test {args}" for args in batch.args[p])
        path = _write(batch.folder / f"job-{id(slot)}-{run}.txt", "\n".join(job) + "\n")
        binds = {path: "/job.txt", batch.folder / "classes": "/classes", java_compiler.harness_classes(): "/harness"}
        inside = (lambda p: binds[p]) if batch.mode.jailed else str
        argv = [os.path.realpath(shutil.which("java")), f"-Xmx{limits.memory_mb}m", "-XX:-UsePerfData", "-XX:MaxMetaspaceSize=256m",
                "-XX:MaxDirectMemorySize=64m", "-Djava.security.manager=allow", *java_compiler.JVM_FLAGS,
                "-cp", inside(java_compiler.harness_classes()), java_harness.HARNESS_CLASS,
                inside(path), inside(batch.folder / "classes"),
                "/work" if batch.mode.jailed else str(slot.work)]
        cases = sum(len(batch.args[p]) for p in slot.order)
        return argv, None, _rlimits(batch, cases, memory=False), binds

    _supervise(batch, [_Slot(order) for order in _shares(runnable, [len(batch.args[p]) for p in runnable],
                                                          limits.workers)], command)


def _shares(programs: list[int], cases: list[int], workers: int) -> list[list[int]]:
    """`programs` cut into at most `workers` consecutive runs of about equal case counts.

    >>> _shares([0, 1, 2, 3], [5, 5, 5, 5], 2), _shares([7], [3], 2)
    ([[0, 1], [2, 3]], [[7]])
    """
    shares, done, total = [[]], 0, sum(cases)
    for p, count in zip(programs, cases):
        if shares[-1] and done >= total * len(shares) / max(1, workers):
            shares.append([])
        shares[-1].append(p)
        done += count
    return shares


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
    if batch.codes:
        _make_folder(batch)
        try:
            if language == "java":
                _run_java(batch)
            else:
                _run_python(batch, "run" if any(batch.args) else "compile")
        finally:
            isolation.remove_scratch(batch.folder)
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
