"""The Python worker: runs inside a sandbox subprocess and executes student programs.

Never imported to run student code in the caller's process: `kaser.code.sandbox` passes this file's
source to `python -I -S -c` in a limited subprocess (see kaser/code/isolation.py), with a job on stdin:

    {"mode": "run"|"compile", "first_case": 0, "timeout": 2.0, "output_chars": 2000,
     "stop_after_timeout": false,   # true: a program's cases after its first timeout are not run
     "programs": [[index, code, entry function name, [JSON of each case's argument list]], ...]}

It answers with JSON lines on its stdout (one per event, flushed at once so the supervisor can
tell which case was running if the process dies):

    {"ready": true}
    {"p": 3, "compiled": false, "diagnostics": [[line, "SyntaxError: invalid syntax"]]}
    {"p": 3, "loaded": true} | {"p": 3, "loaded": false, "status": ..., "exception": ...}
    {"p": 3, "c": 0, "status": "returned"|"exception"|"timeout"|"memory"|"exit", ...}
    {"end": true}

Before any student code runs, the worker moves its own result stream to a private descriptor,
points fds 0-2 at /dev/null, and installs an audit hook (irremovable) that refuses process
creation, sockets, ctypes, threads, signals to other processes, changing limits or directory,
writes and deletions outside the working directory, and reads of /proc, /sys and of any
directory or file outside the working directory and the Python installation; and it caps
sys.setrecursionlimit at 20,000, since unwinding millions of frames takes longer than any time
limit (a runaway recursion then ends as a quick RecursionError, status "memory"). The hook is
defence in depth: the supervisor's barriers (separate user id, no network namespace, rlimits)
are the ones that hold against code that escapes it.
"""

import builtins
import json
import os
import signal
import sys

_dumps = json.dumps  # kept before student code can patch the json module
_armed = False
_MAX_RECURSION = 20_000


class CaseTimeout(BaseException):
    """Raised in student code by the interval timer; a BaseException so `except Exception` misses it."""


def _on_alarm(signum, frame):
    if _armed:
        raise CaseTimeout()


def _disarm():
    global _armed
    _armed = False
    signal.setitimer(signal.ITIMER_REAL, 0)


class _CappedText:
    """Stands in for sys.stdout/stderr: keeps the first `limit` characters, drops the rest."""

    def __init__(self, limit):
        self.limit, self.parts, self.size = limit, [], 0

    def write(self, text):
        text = str(text)
        if self.size < self.limit:
            self.parts.append(text[: self.limit - self.size])
        self.size += len(text)
        return len(text)

    def flush(self):
        pass

    def take(self):
        text = "".join(self.parts)
        self.parts, self.size = [], 0
        return text


def _inside(path, root):
    return path == root or path.startswith(root + os.sep)


def _install_guard(work):
    """Audit hook that refuses what student code never needs (see the module docstring)."""
    readable = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    denied = {
        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
        "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
        "socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo",
        "socket.gethostbyname", "socket.gethostbyaddr", "socket.sethostname",
        "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "ctypes.call_function",
        "_thread.start_new_thread", "resource.setrlimit", "resource.prlimit",
        "os.chdir", "os.chroot", "os.setxattr", "os.removexattr", "mmap.__new__",
    }
    path_events = {
        "os.remove", "os.rmdir", "os.rename", "shutil.rmtree", "shutil.move", "os.mkdir",
        "os.chmod", "os.chown", "os.link", "os.symlink", "os.truncate", "os.utime", "os.chflags",
    }
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

    def refuse(event, detail=""):
        raise PermissionError(f"sandbox: {event} is not allowed{detail}")

    def hook(event, args):
        if event in denied:
            refuse(event)
        if event in path_events:
            for arg in args:
                if isinstance(arg, int) and not isinstance(arg, bool):
                    refuse(event, " with a directory descriptor")
                if isinstance(arg, (str, bytes, os.PathLike)):
                    if not _inside(os.path.realpath(os.fsdecode(arg)), work):
                        refuse(event, " outside the working directory")
        elif event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path, mode, flags = os.path.realpath(os.fsdecode(args[0])), args[1], args[2] or 0
            if _inside(path, work):
                return
            if (mode and any(m in mode for m in "wax+")) or flags & write_flags:
                refuse("writing", " outside the working directory")
            if path.startswith(("/proc", "/sys")) or os.path.isdir(path):
                refuse("opening " + path)
            if not any(_inside(path, root) for root in readable) and path not in ("/dev/null", "/dev/urandom"):
                refuse("reading " + path)

    sys.addaudithook(hook)


def _outcome(kind, value, output_chars):
    """Result record for a call that returned `value` or raised `value`."""
    if kind == "returned":
        try:
            actual = _dumps(value, allow_nan=True)
        except (TypeError, ValueError, RecursionError):
            return {"status": "returned", "actual": None,
                    "detail": f"returned a {type(value).__name__}, which is not a JSON value"}
        if len(actual) > 100 * output_chars:
            return {"status": "returned", "actual": None, "detail": "returned value too large"}
        return {"status": "returned", "actual": actual, "detail": ""}
    name = type(value).__name__
    try:
        message = str(value)[:300]
    except BaseException:
        message = ""
    if isinstance(value, CaseTimeout):
        return {"status": "timeout", "detail": "time limit exceeded"}
    if isinstance(value, SystemExit):
        return {"status": "exit", "exception": name, "detail": f"sys.exit({message})"}
    if isinstance(value, (MemoryError, RecursionError)):
        return {"status": "memory", "exception": name, "detail": message}
    return {"status": "exception", "exception": name, "detail": message}


def _call(function, args, seconds):
    """Run function(*args) under the interval timer; ('returned', value) or ('raised', error)."""
    global _armed
    _armed = True
    # The timer repeats every 50 ms so student code that swallows one CaseTimeout gets another.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    try:
        return "returned", function(*args)
    except BaseException as error:
        return "raised", error.with_traceback(None)  # frees the frames of a deep recursion
    finally:
        _disarm()


def _compile(code):
    try:
        return compile(code, "<student>", "exec"), []
    except (SyntaxError, ValueError) as error:  # ValueError: source holds a null byte
        line = getattr(error, "lineno", None)
        message = getattr(error, "msg", None) or str(error)
        return None, [[line, f"{type(error).__name__}: {message}"]]


def _run_program(emit, job, program_spec, first_case, sink):
    index, code, entry, tests = program_spec
    program, diagnostics = _compile(code)
    emit({"p": index, "compiled": program is not None, "diagnostics": diagnostics})
    if program is None or job["mode"] == "compile" or not tests:
        return
    namespace = {"__name__": "__student__", "__builtins__": builtins}
    try:
        kind, value = _call(exec, (program, namespace), job["timeout"])
    except CaseTimeout:
        _disarm()
        kind, value = "raised", CaseTimeout()
    if kind == "raised":
        record = _outcome(kind, value, job["output_chars"])
        record["detail"] = f"while loading the program: {record.get('detail', '')}"
        emit({"p": index, "loaded": False, "output": sink.take(), **record})
        return
    emit({"p": index, "loaded": True})
    function = namespace.get(entry)
    for case in range(first_case, len(tests)):
        if not callable(function):
            record = {"status": "exception", "exception": "NameError",
                      "detail": f"name '{entry}' is not defined as a function"}
        else:
            args = json.loads(tests[case])  # a fresh copy: student code may mutate it
            try:
                record = _outcome(*_call(function, args, job["timeout"]), job["output_chars"])
            except CaseTimeout:  # landed in our own code, just after the student's call
                _disarm()
                record = _outcome("raised", CaseTimeout(), job["output_chars"])
        emit({"p": index, "c": case, "output": sink.take(), **record})
        if record["status"] == "timeout" and job.get("stop_after_timeout"):
            return   # the supervisor marks the program's later cases as not run


def main():
    job = json.load(sys.stdin)
    results = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sink = _CappedText(job["output_chars"])
    sys.stdout = sys.stderr = sink
    sys.stdin = open(os.devnull)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized file write fails instead of killing us

    def emit(record):
        results.write(_dumps(record, allow_nan=True) + "\n")

    # Unwinding a million Python frames takes seconds; a student who raises the recursion limit
    # gets at most this much, so a runaway recursion ends as a quick RecursionError.
    set_limit = sys.setrecursionlimit
    sys.setrecursionlimit = lambda limit: set_limit(min(int(limit), _MAX_RECURSION))
    _install_guard(os.path.realpath(os.getcwd()))
    emit({"ready": True})
    first_case = job["first_case"]
    for program_spec in job["programs"]:
        _run_program(emit, job, program_spec, first_case, sink)
        first_case = 0
    emit({"end": True})


if __name__ == "__main__":
    main()
