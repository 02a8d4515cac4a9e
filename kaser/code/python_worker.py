"""The Python worker: runs inside a sandbox subprocess and executes student programs.

Never imported to run student code in the caller's process: `kaser.code.sandbox` passes this file's
source to `python -I -S -c` in a limited subprocess (see kaser/code/isolation.py), with a job on stdin:

    {"mode": "run"|"compile", "first_case": 0, "timeout": 2.0, "output_chars": 2000,
     "stop_after_timeout": false,   # true: a program's cases after its first timeout are not run
     # first_case applies to the first program only (the supervisor's restart point)
     "programs": [[index, code, entry function name, [JSON of each case's argument list]], ...]}

It answers with JSON lines on its stdout (one per event, flushed at once so the supervisor can
tell which case was running if the process dies):

    {"ready": true}
    {"p": 3, "compiled": false, "diagnostics": [[line, "SyntaxError: invalid syntax"]]}
    {"p": 3, "loaded": true} | {"p": 3, "loaded": false, "status": ..., "exception": ...}
    {"p": 3, "c": 0, "status": "returned"|"exception"|"timeout"|"memory"|"exit", ...}
    {"end": true}

The worker itself never runs student code. Warm after its imports, it forks one process per program
(again after a death, to go on with the program's next case). That process gets a pipe of its own
as fd 3 and nothing else: the worker's result stream, the job and every other descriptor are closed
before student code runs, and the worker is not dumpable, so no child can ptrace it or read its
memory. The worker passes on only a child's record for the step its program is on (its compile
result, its load, its next case), under the program's own index, so a program can forge only its
own verdict; every field cut to a fixed size (texts at `output_chars`, status and exception just
past what the supervisor accepts; a returned value over 100 x `output_chars` makes the record
"invalid"), and a record with a nested field, or nested too deeply to read, is the step's "invalid"
verdict (kaser.code.sandbox checks the rest). A step's
`timeout` is CPU time (an interval timer on the child's user + system time), so a program that a
busy machine keeps off the CPU is not taken for a hang; a child without a new
record for 2 x `timeout` + 2 seconds of wall-clock time (one that waits: a sleep, a swallowed
timeout) is killed and its step gets "timeout", whatever it writes. Each program works in a folder
the worker makes for it just before it runs, under a name no earlier program could guess
(work/p<index>-<random>), so nothing an earlier one left can stand in its way. After each program
the worker (pid 1 of its jail's pid namespace, kaser/code/namespaces.py) kills every process left
in the namespace and empties the jail's writable folders (/work, seen as /tmp too, and /dev/shm),
modes and depths whatever the program made them, so the next program finds nothing of it;
unjailed, it deletes the program's own folder. The program's last record is sent only then, so
the time a cleanup takes is charged to the program that made the mess. Where something cannot be
deleted, the worker says "restart" and ends, and a fresh worker in a fresh jail runs the programs
after it.

Inside a child, fds 0-2 point at /dev/null and an audit hook (irremovable) refuses process
creation, sockets, ctypes, threads, signals to other processes, changing limits or directory,
writes, deletions, new folders and mode changes outside its working folder (a path argument is
taken relative to its dir_fd where one is given; an int mode is no path), reads of /proc,
/sys and of any directory or file outside that folder and the Python installation, and listing
a folder outside those two (os.listdir, os.scandir), and os.mknod, os.mkfifo, os.memfd_create and
_posixsubprocess.fork_exec (which raise no audit event, so the worker replaces them in their
modules, and refuses loading a second copy of those modules);
sys.setrecursionlimit is capped at 20,000, since unwinding millions of frames takes longer than
any time limit (a runaway recursion then ends as a quick RecursionError, status "memory"). The hook is defence in depth: the jail
and the process boundary are what hold against code that escapes it.
"""

import _imp
import _posixsubprocess
import builtins
import json
import os
import signal
import sys
import time

_dumps = json.dumps  # kept before student code can patch the json module
_armed = False
_MAX_RECURSION = 20_000
_MAX_STATUS = 16        # longer than any status (kaser.code.sandbox.RECORD_STATUSES)
_MAX_EXCEPTION = 200    # kaser.code.sandbox.MAX_EXCEPTION_CHARS


class CaseTimeout(BaseException):
    """Raised in student code by the CPU-time timer; a BaseException, so `except Exception` misses
    it."""


def _on_alarm(signum, frame):
    if _armed:
        raise CaseTimeout()


def _disarm():
    global _armed
    _armed = False
    signal.setitimer(signal.ITIMER_PROF, 0)


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


def _descriptor_path(fd):
    """The path an open descriptor stands for (its /proc/self/fd link), or None."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except (OSError, ValueError, TypeError):
        return None


def _named_path(arg, folder_fd):
    """The real path a path argument of an audit event names: a path, relative to `folder_fd`
    where that is a descriptor (not None or -1), or a descriptor itself; None when unknown."""
    if isinstance(arg, bool):
        return None
    if isinstance(arg, int):
        arg = _descriptor_path(arg)
    elif not isinstance(arg, (str, bytes, os.PathLike)):
        return None
    elif isinstance(folder_fd, int) and folder_fd != -1 and not os.path.isabs(os.fsdecode(arg)):
        base = _descriptor_path(folder_fd)
        arg = None if base is None else os.path.join(base, os.fsdecode(arg))
    return None if arg is None else os.path.realpath(os.fsdecode(arg))


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
    # event -> (position of a path argument, position of the descriptor it is relative to or None),
    # as CPython's audit events pass them: os.mkdir is (path, mode, dir_fd), dir_fd -1 when unset
    path_events = {
        "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),), "os.chmod": ((0, 2),),
        "os.chown": ((0, 3),), "os.utime": ((0, 3),), "os.truncate": ((0, None),), "os.chflags": ((0, None),),
        "os.rename": ((0, 2), (1, 3)), "os.link": ((0, 2), (1, 3)), "os.symlink": ((0, 2), (1, 2)),
        "shutil.rmtree": ((0, 1),), "shutil.move": ((0, None), (1, None)),
    }
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    patched = {"posix", "_posixsubprocess"}   # modules whose functions are replaced below

    def refuse(event, detail=""):
        raise PermissionError(f"sandbox: {event} is not allowed{detail}")

    def hook(event, args):
        if event in denied:
            refuse(event)
        if event in path_events:
            for position, fd_position in path_events[event]:
                if position < len(args):
                    folder_fd = args[fd_position] if fd_position is not None and fd_position < len(args) else None
                    path = _named_path(args[position], folder_fd)
                    if path is None or not _inside(path, work):
                        refuse(event, " outside the working directory")
        elif event == "import" and isinstance(args[0], str) and args[0].rpartition(".")[2] in patched:
            refuse("a second " + args[0])   # a fresh copy would hold the functions replaced below
        elif event in ("os.listdir", "os.scandir"):   # a path, a descriptor, or None for "."
            path = _named_path("." if args[0] is None else args[0], None)
            if path is None or not any(_inside(path, root) for root in (work, *readable)):
                refuse("listing " + str(path))
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

    # CPython raises no audit event for these, so the hook never sees them: the functions
    # themselves are replaced in os and posix (a memory file is memory no rlimit counts; a FIFO or
    # device node is nothing a program needs), and in _posixsubprocess (fork_exec starts a process)
    import posix
    for module, name in ((os, "memfd_create"), (posix, "memfd_create"), (os, "mknod"), (posix, "mknod"),
                         (os, "mkfifo"), (posix, "mkfifo"), (_posixsubprocess, "fork_exec")):
        def refused(*args, _event=f"{module.__name__}.{name}", **kwargs):
            refuse(_event)
        if hasattr(module, name):
            setattr(module, name, refused)
    # A fresh copy of those modules would hold the originals: the hook refuses importing one again
    # after it was deleted from sys.modules ("import"), and these wrappers refuse building one with
    # the loaders directly (_imp.create_builtin, _imp.create_dynamic, which raise no event). The
    # loaders get a fresh namespace of plain strings read once (the only fields they read), so a
    # spec whose `name` changes between reads cannot pass one name to the check and another to them.
    namespace = type(sys.implementation)

    def loader(load):
        def guarded(spec, *args):
            name, origin = getattr(spec, "name", None), getattr(spec, "origin", None)
            if type(name) is not str or (origin is not None and type(origin) is not str) \
                    or name.rpartition(".")[2] in patched:
                refuse(f"_imp.{load.__name__}({name!r})")
            return load(namespace(name=name, origin=origin), *args)
        return guarded
    _imp.create_builtin, _imp.create_dynamic = loader(_imp.create_builtin), loader(_imp.create_dynamic)
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
    """Run function(*args) with `seconds` of CPU time; ('returned', value) or ('raised', error)."""
    global _armed
    _armed = True
    # The timer repeats every 50 ms of CPU time, so code that swallows one CaseTimeout gets another.
    signal.setitimer(signal.ITIMER_PROF, seconds, 0.05)
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


def _child(job, spec, first_case, channel, folder):
    """In a fresh fork: run one program with `channel` as the only way out, then exit."""
    os.dup2(channel, 3)
    os.closerange(4, 1 << 16)  # the worker's result stream and the job are gone before student code runs
    results = os.fdopen(3, "w", encoding="utf-8", buffering=1)
    os.chdir(folder)
    sink = _CappedText(job["output_chars"])
    sys.stdout = sys.stderr = sink

    def emit(record):
        results.write(_dumps(record, allow_nan=True) + "\n")

    # Unwinding a million Python frames takes seconds; a student who raises the recursion limit
    # gets at most this much, so a runaway recursion ends as a quick RecursionError.
    set_limit = sys.setrecursionlimit
    sys.setrecursionlimit = lambda limit: set_limit(min(int(limit), _MAX_RECURSION))
    _install_guard(os.path.realpath(folder))
    try:
        _run_program(emit, job, spec, first_case, sink)
        results.flush()
    finally:
        os._exit(0)


def _death(status, killed):
    """A record for the step a program's process was on when it ended (as the supervisor's _death)."""
    if killed:
        return {"status": "timeout", "detail": "no answer within the time limit; process killed"}
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        if name == "SIGXCPU":
            return {"status": "timeout", "detail": "CPU time limit exceeded"}
        if name in ("SIGSEGV", "SIGBUS", "SIGKILL", "SIGABRT"):
            return {"status": "memory", "detail": f"killed by {name} (stack or memory exhausted)"}
        return {"status": "exception", "exception": name, "detail": f"killed by {name}"}
    return {"status": "exit", "detail": f"process exited with status {os.waitstatus_to_exitcode(status)}"}


def _accept(record, step, output_chars):
    """The fields of a child's record that may stand for `step`, or None when it is not the next one.

    Texts are cut at `output_chars` (a program's own record gets the cap its printed output
    gets); a field holding a list or an object, where the worker writes none, makes the record
    the step's "invalid" verdict, so nothing nested travels on. The supervisor checks the rest
    (kaser.code.sandbox._case).
    """
    if not isinstance(record, dict):
        return None
    if step == "compile":
        keep = ("compiled", "diagnostics")
    elif step == "load":
        keep = ("loaded", "status", "exception", "detail", "output")
        if not isinstance(record.get("loaded"), bool):
            return None
    else:
        keep = ("c", "status", "actual", "exception", "detail", "output")
        if record.get("c") != step or isinstance(record.get("c"), bool):
            return None
    accepted = {key: record[key] for key in keep if key in record}
    if step == "compile":
        diagnostics = accepted.get("diagnostics")
        if isinstance(diagnostics, list):   # the worker's own compile() writes one or none
            accepted["diagnostics"] = [[line if isinstance(line, int) else None, str(text)[:output_chars]]
                                       for line, text in (d for d in diagnostics[:20]
                                                          if isinstance(d, list) and len(d) == 2)]
        return accepted
    nested = [key for key, value in accepted.items() if isinstance(value, (list, dict))]
    if nested:
        return _unreadable(step, f"its {nested[0]} is a {type(accepted[nested[0]]).__name__}")
    # every text a fixed size, so no program's records can weigh more than its own cases allow:
    # `status` and `exception` just past what the supervisor accepts (longer is "invalid" there)
    for key, cap in (("status", _MAX_STATUS), ("exception", _MAX_EXCEPTION + 1), ("detail", output_chars),
                     ("output", output_chars)):
        if isinstance(accepted.get(key), str):
            accepted[key] = accepted[key][:cap]
    if isinstance(accepted.get("actual"), str) and len(accepted["actual"]) > 100 * output_chars:
        return _unreadable(step, "returned value too large")   # _outcome never writes one
    return accepted


def _unreadable(step, why):
    """The "invalid" verdict for `step` (load or a case) of a program whose record could not stand."""
    record = {"status": "invalid", "detail": f"invalid output: the program's own record: {why}"}
    return {"loaded": False, **record} if step == "load" else {"c": step, **record}


def _clean_up(pid_one):
    """Kill whatever the program left behind (we are pid 1 of the jail's pid namespace) and reap it."""
    if pid_one:
        try:
            os.kill(-1, signal.SIGKILL)  # every process of the namespace but us
        except ProcessLookupError:
            pass
    while True:
        try:
            if os.waitpid(-1, 0 if pid_one else os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _run_forked(emit, job, spec, work):
    """Run one program in forked processes; only what they say about its own next step is passed on.

    A process that dies, or runs past its limit (killed), is blamed for the step it was on, and a
    fresh one carries on with the program's next case, as a fresh worker would. The program's
    last record is held back until what it left is cleaned up: a cleanup that outlasts the
    supervisor's patience is charged to this program's last step, never to the next program.
    """
    import select
    index, code, entry, tests = spec
    limit = 2 * job["timeout"] + 2.0   # wall-clock backstop; a step's own limit is CPU time (_call)
    step, first_case = "compile", job["first_case"] if job.get("first_program") == index else 0
    pid_one = os.getpid() == 1
    # a name no earlier program could guess, made here and now: nothing it left can be in the way
    folder = os.path.join(work, f"p{index}-{os.urandom(8).hex()}")
    os.mkdir(folder, 0o700)
    last = None   # the record of the program's last step, sent once its leftovers are gone

    def say(record):
        nonlocal last
        if step is None:
            last = record
        else:
            emit(record)

    while step is not None:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(job, spec, first_case, write_end, folder)
        os.close(write_end)
        pending, deadline, killed = b"", time.monotonic() + limit, False
        while True:
            ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                killed = True
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()[: 1 << 22]
            for line in lines:
                try:
                    record = _accept(json.loads(line), step, job["output_chars"])
                except ValueError:
                    continue
                except RecursionError:   # a record nested deeper than the parser goes
                    record = None if step == "compile" else _unreadable(step, "nested too deeply to read")
                if record is None:
                    continue
                deadline = time.monotonic() + limit
                if step == "compile":
                    step = "load" if record.get("compiled") and job["mode"] == "run" and tests else None
                elif step == "load":
                    step = first_case if record.get("loaded") and first_case < len(tests) else None
                else:
                    stop = record.get("status") == "timeout" and job.get("stop_after_timeout")
                    step = step + 1 if step + 1 < len(tests) and not stop else None
                say({"p": index, **record})
                if step is None:
                    break
            if step is None:
                break
        os.close(read_end)
        if step is not None:  # the process ended or was killed before it finished: blame its step
            _, status = os.waitpid(pid, 0)
            death, at = _death(status, killed), step
            if step == "compile":
                step = None
                say({"p": index, "compiled": False, "diagnostics": [[None, "compiler crashed: " + death["detail"]]]})
            elif step == "load":
                death["detail"] += " (while loading the program)"
                step = None
                say({"p": index, "loaded": False, **death})
            else:
                stop = death["status"] == "timeout" and job.get("stop_after_timeout")
                step = step + 1 if step + 1 < len(tests) and not stop else None
                first_case = step if step is not None else 0
                say({"p": index, "c": at, **death})
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _clean_up(pid_one)
    clean = (_empty(work) & _empty("/dev/shm")) if pid_one else (_empty(folder) and _removed(folder))
    if last is not None:
        emit(last)
    return clean


def _empty(top):
    """Delete everything under `top`, whatever its modes and depth; True when `top` is empty.

    Works one level at a time through descriptors, so no path grows long and nothing recurses:
    each folder found directly in `top` is opened (its mode set to 0o700 first, as a program may
    have left it 000), its files deleted, its subfolders moved up into `top`, then it is removed.
    """
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        while True:
            changed = False
            for entry in list(os.scandir(top_fd)):
                if not entry.is_dir(follow_symlinks=False):
                    changed |= _gone(os.unlink, entry.name, top_fd)
                    continue
                try:
                    os.chmod(entry.name, 0o700, dir_fd=top_fd)
                    folder_fd = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top_fd)
                except OSError:
                    continue
                try:
                    for inner in list(os.scandir(folder_fd)):
                        if inner.is_dir(follow_symlinks=False):
                            try:
                                os.chmod(inner.name, 0o700, dir_fd=folder_fd)  # moving a folder writes its ".."
                                os.rename(inner.name, f".wipe-{os.urandom(8).hex()}", src_dir_fd=folder_fd,
                                          dst_dir_fd=top_fd)
                                changed = True
                            except OSError:
                                pass
                        else:
                            changed |= _gone(os.unlink, inner.name, folder_fd)
                finally:
                    os.close(folder_fd)
                changed |= _gone(os.rmdir, entry.name, top_fd)
            if not changed:
                return not os.listdir(top_fd)
    except OSError:
        return False
    finally:
        os.close(top_fd)


def _gone(remove, name, folder_fd):
    try:
        remove(name, dir_fd=folder_fd)
        return True
    except OSError:
        return False


def _removed(folder):
    try:
        os.rmdir(folder)
        return True
    except OSError:
        return False


def _not_dumpable():
    """Nothing this worker forks may ptrace it or read its memory (PR_SET_DUMPABLE 0)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main():
    job = json.load(sys.stdin)
    results = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdin = open(os.devnull)
    signal.signal(signal.SIGPROF, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized file write fails instead of killing us
    _not_dumpable()

    def emit(record):
        results.write(_dumps(record, allow_nan=True) + "\n")

    emit({"ready": True})
    work = os.path.realpath(os.getcwd())
    if job["programs"]:
        job["first_program"] = job["programs"][0][0]
    for number, program_spec in enumerate(job["programs"]):
        if not _run_forked(emit, job, program_spec, work) and number + 1 < len(job["programs"]):
            # what the program left cannot be deleted: a fresh worker (a fresh jail) runs the rest
            emit({"restart": True})
            return
    emit({"end": True})


if __name__ == "__main__":
    main()
