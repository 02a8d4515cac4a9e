"""Starting, watching and stopping the processes that run student code (for kaser.code.sandbox).

Barriers, strongest first; which ones this machine allows is probed once per process and logged:
1. Running as root (as CI does): each batch runs under its own fresh, unprivileged user id in its
   own network namespace (`unshare --net --setuid`; `setpriv` when namespaces are not allowed),
   so it cannot read or delete our files, reach any network, or read our environment through
   /proc; afterwards every process of that user id is killed. RLIMIT_NPROC then really caps the
   batch's processes and threads (root ignores it).
2. Otherwise a user namespace with an empty network namespace when the kernel allows one; else
   nothing (a warning says so), and the worker keeps our user id.
3. Always: rlimits (CPU, processes, file size, no core dumps, and address space for Python
   workers; the JVM gets -Xmx instead, since RLIMIT_AS breaks it), a fresh working directory, a
   minimal environment (no API keys), and the in-process guards of the workers themselves
   (kaser/code/python_worker.py, kaser/code/java_harness.py).
Limits, honestly: without root, barrier 3 is all that stands between student code and files the
user owns; in-process guards stop student mistakes and mischief, not a determined attacker.
For paper-scale runs on real submissions, run as root in a container, as CI does.
"""

from __future__ import annotations

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

log = logging.getLogger("kaser.code.sandbox")

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "MALLOC_ARENA_MAX": "2"}


@dataclass(frozen=True)
class Isolation:
    name: str
    prefix: tuple[str, ...]     # command prefix; "{uid}" stands for the batch's user id
    own_uid: bool               # True: every batch runs under a fresh user id
    python: str = ""            # an interpreter of our version that the sandbox user may run

    def command(self, argv: list[str], uid: int | None) -> list[str]:
        return [a.replace("{uid}", str(uid)) for a in self.prefix] + argv


def candidates() -> list[Isolation]:
    found = []
    if os.geteuid() == 0:
        found += [Isolation("own user id, no network",
                            ("unshare", "--net", "--setuid", "{uid}", "--setgid", "{uid}", "--"), True),
                  Isolation("own user id", ("setpriv", "--reuid", "{uid}", "--regid", "{uid}", "--clear-groups", "--"),
                            True)]
    return found + [Isolation("user namespace, no network", ("unshare", "--user", "--net", "--"), False)]


@functools.cache
def isolation() -> Isolation:
    """The strongest isolation that works here, with a Python the sandbox user can run.

    Our own interpreter may sit where another user id cannot reach (pyenv under /root, say), so
    the system interpreter of the same version is tried too.
    """
    version = "%d.%d" % sys.version_info[:2]
    pythons = dict.fromkeys([sys.executable, os.path.realpath(sys.executable),
                             getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}"])
    check = ["-I", "-S", "-c", "import json, sys; print('%d.%d' % sys.version_info[:2])"]
    uid = fresh_uid()
    for candidate in candidates():
        for python in pythons:
            if not (shutil.which(candidate.prefix[0]) and os.path.exists(python)):
                continue
            run = subprocess.run(candidate.command([python, *check], uid), env=ENV, cwd="/",
                                 capture_output=True, text=True, timeout=60)
            if run.returncode == 0 and run.stdout.strip() == version:
                log.info("sandbox isolation: %s (worker Python %s)", candidate.name, python)
                return Isolation(candidate.name, candidate.prefix, candidate.own_uid, python)
    log.warning("sandbox: no separate user id or network namespace here; student code runs as this "
                "user with rlimits and in-process guards only (run as root in a container to isolate it)")
    return Isolation("rlimits only", (), False, sys.executable)


def scratch_folder(prefix: str) -> Path:
    """A new private folder, in memory (/dev/shm) where there is one: javac writes thousands of
    small files, which costs about a millisecond each on a busy disk and nothing on tmpfs."""
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=memory))


def fresh_uid() -> int:
    return random.SystemRandom().randrange(1 << 20, 1 << 30)


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


def rlimits(*, cpu_s: int, processes: int, file_bytes: int, memory_bytes: int | None, uid: int | None) -> dict:
    """rlimits for one worker. Under our own user id the process cap counts what we already run."""
    if uid is None and os.geteuid() != 0:
        processes += tasks_of(os.getuid())
    limits = {resource.RLIMIT_CPU: cpu_s, resource.RLIMIT_NPROC: processes,
              resource.RLIMIT_FSIZE: file_bytes, resource.RLIMIT_CORE: 0}
    if memory_bytes is not None:
        limits[resource.RLIMIT_AS] = memory_bytes
    return limits


def _apply(limits: dict) -> None:  # runs in the child, between fork and exec
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))


class Worker:
    """One sandboxed process writing JSON lines; read them as they come, kill it when silent."""

    def __init__(self, argv: list[str], *, stdin: Path | None, folder: Path, name: str, uid: int | None,
                 limits: dict):
        out, self.errors = folder / "private" / f"out-{name}.jsonl", folder / "private" / f"err-{name}.txt"
        with open(out, "wb") as sink, open(self.errors, "wb") as errors, open(stdin or os.devnull, "rb") as source:
            self.process = subprocess.Popen(
                isolation().command(argv, uid), stdin=source, stdout=sink, stderr=errors, cwd=folder / "work",
                env={**ENV, "HOME": str(folder / "work")}, start_new_session=True,
                preexec_fn=functools.partial(_apply, limits))
        self.reader = open(out, encoding="utf-8", errors="replace")
        self.pending, self.seen, self.killed = "", time.monotonic(), False

    def records(self) -> list[dict]:
        """The JSON objects written since the last call (garbage lines are skipped)."""
        chunk = self.reader.read()
        if not chunk:
            return []
        self.seen = time.monotonic()
        lines = (self.pending + chunk).split("\n")
        self.pending = lines.pop()
        found = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def finished(self, allowance: float) -> bool:
        """True once the process has ended; one silent for `allowance` seconds is killed first."""
        if self.process.poll() is not None:
            return True
        if time.monotonic() - self.seen > allowance:
            self.killed = True
            self.kill()
            return True
        return False

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()

    def close(self) -> None:
        self.kill()
        self.reader.close()

    def stderr_tail(self) -> str:
        return self.errors.read_text(errors="replace")[-2000:]


def kill_user(uid: int) -> None:
    """Kill every process of `uid` (root only): whatever a batch left running dies with it."""
    subprocess.run([isolation().python, "-I", "-S", "-c", "import os; os.kill(-1, 9)"], env=ENV, cwd="/",
                   user=uid, group=uid, extra_groups=[], capture_output=True)
