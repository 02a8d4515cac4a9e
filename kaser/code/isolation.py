"""Starting, watching and stopping the processes that run student code (for kaser.code.sandbox).

Barriers, strongest first; which ones this machine allows is probed once per process and logged:
1. A jail of Linux namespaces for every worker (kaser/code/namespaces.py), for root and ordinary
   users alike: a read-only file system with a private, size-capped /work and /dev/shm, a fresh
   user namespace without capabilities, no network, its own pid namespace (every process of a
   worker dies with it), and only the environment in ENV. As root each worker also runs under a
   fresh unprivileged user id of its own, so RLIMIT_NPROC really caps its processes (root ignores
   it), no worker's processes count against another's cap, and every process of that id is
   killed when the worker ends. Root of a user namespace that maps too
   few ids for that (a rootless container: `unshare --user --map-root-user`) runs the jail under
   its own id, as an ordinary user does: the jail's own user namespace holds it, and the process
   cap counts what that id already runs.
2. Always: rlimits (CPU, processes, file size, no core dumps, and address space for Python
   workers; the JVM gets -Xmx instead, since RLIMIT_AS breaks it), and the in-process guards of
   the workers themselves (kaser/code/python_worker.py, kaser/code/java_harness.py), which stop
   student mistakes and mischief but are not relied on against a determined attacker.

Limits on a worker as a whole, wherever it runs:
- Memory: RLIMIT_AS holds per process, and a worker may start many, so the supervisor also sums
  the resident memory of all of a worker's processes every MEMORY_CHECK_S (resident_bytes: the
  process tree below the worker, which in a jail is its whole pid namespace) and kills the worker
  beyond `memory_bytes`; the case it was on gets "memory". The cap holds to within what a worker
  can touch in one interval (a few hundred MB at the most), and is the same watchdog as root, as
  an ordinary user and in rootless containers. A cgroup would be a hard limit, but it needs a
  writable cgroup tree (root on cgroup v1, or a delegated cgroup v2 subtree), which ordinary users
  and most containers lack; we do not use one.
- Our death: every worker gets SIGKILL when the thread that started it ends, even by SIGKILL
  (PR_SET_PDEATHSIG, set again by setpriv after it changes the user id), and a jail's pid
  namespace dies with it; a reaper process per scratch folder removes the folder then.
Where the kernel refuses namespaces, `isolation()` says so once and raises IsolationUnavailable:
untrusted code does not run unless the caller asks for `unsafe=True` (`--unsafe-no-isolation`),
which falls back to weaker isolation (as root: own user id and no network via
`unshare --net --setuid`; otherwise rlimits and guards only), with a warning.
"""

from __future__ import annotations

import codecs
import ctypes
import functools
import json
import logging
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kaser import InputError
from kaser.code import namespaces

log = logging.getLogger("kaser.code.sandbox")

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "MALLOC_ARENA_MAX": "2"}
FRESH_UIDS = (1 << 20, 1 << 30)     # the range fresh_uid draws from, far from any real user's id
MEMORY_CHECK_S = 0.05               # how often the supervisor sums the resident memory of each jail
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Isolation:
    name: str
    prefix: tuple[str, ...]     # command prefix; "{uid}" stands for the worker's user id
    own_uid: bool               # True: every worker runs under a fresh user id
    python: str = ""            # an interpreter of our version that the sandbox user may run
    jailed: bool = False        # True: every worker runs in a namespace jail (kaser/code/namespaces.py)

    def command(self, argv: list[str], uid: int | None) -> list[str]:
        return [a.replace("{uid}", str(uid)) for a in self.prefix] + argv


def candidates() -> list[Isolation]:
    found = []
    if own_uids_possible():
        found += [Isolation("own user id, no network",
                            ("unshare", "--net", "--setuid", "{uid}", "--setgid", "{uid}", "--"), True),
                  Isolation("own user id", ("setpriv", "--pdeathsig", "SIGKILL", "--reuid", "{uid}", "--regid",
                                            "{uid}", "--clear-groups", "--"), True)]
    return found + [Isolation("user namespace, no network", ("unshare", "--user", "--net", "--"), False)]


class IsolationUnavailable(InputError):
    """The kernel refuses the namespaces that isolate untrusted code, and no one said run it anyway."""


def _pythons() -> list[str]:
    """Interpreters of our version, ours first; ours may sit where the sandbox user cannot reach."""
    version = "%d.%d" % sys.version_info[:2]
    found = [sys.executable, getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}"]
    return list(dict.fromkeys(os.path.realpath(p) for p in found if os.path.exists(p)))


@functools.cache
def _jail() -> Isolation | str:
    """The jailed isolation, or why the kernel refuses it."""
    uid = fresh_uid() if own_uids_possible() else None
    if uid is None and os.geteuid() == 0:
        log.info("sandbox: root of a user namespace without the ids %d-%d mapped: jails run under our own id",
                 *FRESH_UIDS)
    scratch = scratch_folder("kaser-probe-")
    scratch.chmod(0o755)
    reason = "no Python interpreter of our version"
    try:
        for python in _pythons():
            reason = namespaces.probe(python, str(scratch), uid)
            if reason is None:
                log.info("sandbox isolation: namespace jail (worker Python %s)", python)
                return Isolation("namespace jail", (), uid is not None, python, jailed=True)
    finally:
        remove_scratch(scratch)
    return reason


def isolation(unsafe: bool = False) -> Isolation:
    """The namespace jail where the kernel allows it; else, only when `unsafe`, the weaker fallbacks.

    Raises IsolationUnavailable (after one log line saying why) when there is no jail and `unsafe`
    is False: untrusted code is never run with less isolation than the caller asked for.
    """
    jail = _jail()
    if isinstance(jail, Isolation):
        return jail
    if not unsafe:
        message = (f"sandbox: the kernel refuses the namespaces that isolate untrusted code ({jail}); "
                   "refusing to run it. Run where user namespaces are allowed (sysctl "
                   "kernel.unprivileged_userns_clone=1, or a container with them), or accept the risk with "
                   "--unsafe-no-isolation (`kaser annotate`) / annotate.unsafe_no_isolation: true (params.yaml)")
        _say_once(message)
        raise IsolationUnavailable(message)
    _say_once(f"sandbox: UNSAFE: no namespace jail here ({jail}); running untrusted code without it, as asked")
    return _unjailed()


_said: set[str] = set()


def _say_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        log.warning(message)


@functools.cache
def _unjailed() -> Isolation:
    """The strongest isolation without a jail: own user id and no network as root, else rlimits only."""
    version = "%d.%d" % sys.version_info[:2]
    check = ["-I", "-S", "-c", "import json, sys; print('%d.%d' % sys.version_info[:2])"]
    uid = fresh_uid()
    for candidate in candidates():
        for python in _pythons():
            if not shutil.which(candidate.prefix[0]):
                continue
            run = subprocess.run(candidate.command([python, *check], uid), env=ENV, cwd="/",
                                 capture_output=True, text=True, timeout=60)
            if run.returncode == 0 and run.stdout.strip() == version:
                log.info("sandbox isolation: %s (worker Python %s)", candidate.name, python)
                return Isolation(candidate.name, candidate.prefix, candidate.own_uid, python)
    log.warning("sandbox: no separate user id or network namespace here; student code runs as this "
                "user with rlimits and in-process guards only")
    return Isolation("rlimits only", (), False, sys.executable)


_reapers: dict[Path, subprocess.Popen] = {}


def scratch_folder(prefix: str) -> Path:
    """A new private folder, in memory (/dev/shm) where there is one: javac writes thousands of
    small files, which costs about a millisecond each on a busy disk and nothing on tmpfs.

    Remove it with remove_scratch. Should we die first, even by SIGKILL, a reaper removes it: a
    shell in a session of its own that waits for the end of a pipe only we hold open.
    """
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=memory))
    _reapers[folder] = subprocess.Popen(["sh", "-c", 'read _; exec rm -rf -- "$0"', str(folder)],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, cwd="/", env=ENV, start_new_session=True)
    return folder


def remove_scratch(folder: Path) -> None:
    """Remove a scratch_folder and let its reaper go."""
    shutil.rmtree(folder, ignore_errors=True)
    reaper = _reapers.pop(folder, None)
    if reaper is not None:
        reaper.stdin.close()
        reaper.wait()


def fresh_uid() -> int:
    return random.SystemRandom().randrange(*FRESH_UIDS)


def own_uids_possible() -> bool:
    """True where workers can run under fresh user ids: as root of a user namespace that maps all
    of FRESH_UIDS (the host's does). Root of a rootless container may have only its own id
    mapped (`unshare --user --map-root-user`); there a jail runs under our id."""
    if os.geteuid() != 0:
        return False
    for name in ("uid_map", "gid_map"):
        try:
            ranges = [[int(n) for n in line.split()] for line in Path(f"/proc/self/{name}").read_text().splitlines()]
        except (OSError, ValueError):
            return False
        if not any(first <= FRESH_UIDS[0] and FRESH_UIDS[1] <= first + count for first, _, count in ranges):
            return False
    return True


def tasks_of(uid: int) -> int:
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


def rlimits(*, cpu_s: int, processes: int, file_bytes: int, memory_bytes: int | None, own_uid: bool,
            open_files: int) -> dict:
    """rlimits for one worker. Under our own user id (not `own_uid`) the process cap counts what
    we already run, and so what the other workers of that id run.
    `open_files` caps descriptors per process: each may hold a memory file (memfd) of up to
    `file_bytes`, which resident_bytes counts too."""
    if not own_uid:
        processes += tasks_of(os.getuid())
    limits = {resource.RLIMIT_CPU: cpu_s, resource.RLIMIT_NPROC: processes, resource.RLIMIT_NOFILE: open_files,
              resource.RLIMIT_FSIZE: file_bytes, resource.RLIMIT_CORE: 0}
    if memory_bytes is not None:
        limits[resource.RLIMIT_AS] = memory_bytes
    return limits


def start_child(limits: dict, parent: int) -> None:
    """Runs in a child between fork and exec (`parent`: our pid): it gets SIGKILL when the thread
    that started it ends (a jail's whole pid namespace with it: kaser/code/namespaces.py), and
    `limits` (rlimits)."""
    _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the supervisor died before the signal was set
        os._exit(1)
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))


def resident_bytes(pid: int) -> int:
    """Resident anonymous and shared memory of `pid` and of every process below it (in a jail,
    every process of its pid namespace), and the size of every memory file (memfd) they hold
    open, mapped or not. A page that forked processes share counts in each, so the sum errs on
    the high side; pages of files on disk are not counted (they can be dropped). Files in the
    jail's tmpfs are not counted here: their size is capped by the mount (namespaces.Jail)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith(("RssAnon:", "RssShmem:")):
                    total += int(line.split()[1]) << 10
            total += _memory_file_bytes(current)
            for children in Path(f"/proc/{current}/task").glob("*/children"):
                todo.extend(int(child) for child in children.read_text().split())
        except (OSError, ValueError):
            continue    # it ended while we looked
    return total


# A worker's line longer than this is cut (and so no JSON record): its records are capped far
# below it (python_worker._accept, KaserHarness), so only a flood of raw output gets that long.
MAX_LINE_CHARS = 16 << 20
# At most this much of a worker's stream is read per look, so a flood cannot stall the others.
MAX_READ_BYTES = 8 << 20


def _memory_file_bytes(pid: int) -> int:
    """Bytes held by the memory files (memfd) process `pid` has open (their allocated blocks)."""
    total = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:"):
                total += os.stat(f"/proc/{pid}/fd/{fd}").st_blocks * 512
        except OSError:
            continue
    return total


class Worker:
    """One sandboxed process writing JSON lines; read them as they come, kill it when it overruns.

    Its stdout is a pipe, not a file: no file-size limit applies to the result stream, so what
    one program's records weigh cannot make the write of a later program's record fail.

    `seen` is when the worker last made progress: the supervisor sets it on each record it accepts
    (bytes alone never do, so a program cannot keep itself alive by writing); `finished` kills a
    worker that made none for `allowance` seconds ("silent"), or whose processes together hold
    more than `memory_bytes` of resident memory ("memory"; see resident_bytes), and `killed` says
    why. With `jail`, the worker runs in a namespace jail whose /work is its working directory;
    without, in `work` under `mode`'s fallback.
    """

    def __init__(self, argv: list[str], *, stdin: Path | None, folder: Path, name: str, uid: int | None,
                 limits: dict, mode: Isolation, jail: namespaces.Jail | None = None, work: Path | None = None,
                 memory_bytes: int | None = None):
        self.errors = folder / "private" / f"err-{name}.txt"
        if jail is not None:
            command, cwd, home = namespaces.jail_command(argv, jail, uid, mode.python), "/", "/work"
        else:
            command, cwd, home = mode.command(argv, uid), work, str(work)
        self.reader, sink = os.pipe()
        try:
            with open(self.errors, "wb") as errors, open(stdin or os.devnull, "rb") as source:
                self.process = subprocess.Popen(
                    command, stdin=source, stdout=sink, stderr=errors, cwd=cwd,
                    env={**ENV, "HOME": home}, start_new_session=True,
                    preexec_fn=functools.partial(start_child, limits, os.getpid()))
        except BaseException:
            os.close(self.reader)
            raise
        finally:
            os.close(sink)
        os.set_blocking(self.reader, False)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending, self.seen, self.killed = "", time.monotonic(), ""
        self.memory_bytes, self.memory_checked = memory_bytes, 0.0

    def records(self) -> list[dict]:
        """The JSON objects written since the last call (garbage lines, and lines nested too deeply
        for the parser, are skipped); a line is cut at MAX_LINE_CHARS."""
        chunks, size = [], 0
        while size < MAX_READ_BYTES:
            try:
                chunk = os.read(self.reader, 1 << 16)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if not chunks:
            return []
        lines = (self.pending + self.decoder.decode(b"".join(chunks))).split("\n")
        self.pending = lines.pop()[:MAX_LINE_CHARS]
        found = []
        for line in lines:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def finished(self, allowance: float) -> bool:
        """True once the process has ended; one without progress for `allowance` s, or over its
        memory, is killed first."""
        if self.process.poll() is not None:
            return True
        now = time.monotonic()
        if now - self.seen > allowance:
            self.killed = "silent"
        elif self.memory_bytes is not None and now - self.memory_checked >= MEMORY_CHECK_S:
            self.memory_checked = now
            if resident_bytes(self.process.pid) > self.memory_bytes:
                self.killed = "memory"
        if self.killed:
            self.kill()
        return bool(self.killed)

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()

    def close(self) -> None:
        self.kill()
        if self.reader >= 0:
            os.close(self.reader)
            self.reader = -1

    def stderr_tail(self) -> str:
        return self.errors.read_text(errors="replace")[-2000:]


def kill_user(uid: int, python: str) -> None:
    """Kill every process of `uid` (root only): whatever a batch left running dies with it."""
    subprocess.run([python, "-I", "-S", "-c", "import os; os.kill(-1, 9)"], env=ENV, cwd="/",
                   user=uid, group=uid, extra_groups=[], capture_output=True)
