"""The sandbox's first barrier: every worker in a jail of Linux namespaces (for kaser.code.isolation).

    argv = jail_command(["/usr/bin/java", "-version"], Jail(root=Path("mnt")), uid=None, python="/usr/bin/python3.11")

A worker starts as `unshare --user --map-root-user --mount --net --pid --ipc --uts --fork --kill-child`
(as root, under a fresh unprivileged user id first, via `setpriv`), so it holds privileges only over
namespaces of its own. A short Python script (SETUP below, one process) then builds its file
system and drops them:

- a new root: an empty tmpfs with the system's program folders bound read-only (/usr, and what a
  worker needs from /etc: the loader cache and the JDK's configuration), the job's own files
  read-only (`Jail.binds`), /dev/null, /dev/zero, /dev/urandom, and a /proc of its own pid namespace;
- the only writable places: /work (also seen as /tmp) and /dev/shm, two tmpfs of `writable_mb`
  and at most JAIL_INODES files and folders each (so what a program makes stays cheap to wipe
  and its kernel memory small), gone when the worker's last process ends, so no write outlives it;
- no network (an empty network namespace: not even loopback is up);
- then a nested user namespace in which the worker is uid 1000, with no capabilities at all, is
  chrooted there, no_new_privs is set, and the worker is exec'd: it cannot remount, chroot back
  out or ptrace anything outside it; and since it is pid 1 of its pid namespace, every process it or its children start
  dies with it (the kernel kills a pid namespace whose first process ends).
Pid 1 dies with `unshare` (`--kill-child`), and `unshare` with the supervisor: the parent-death
signal that kaser.code.isolation sets before exec survives the execs, and `setpriv --pdeathsig`
sets it again after the change of user id, which clears it. So `kill -9` of the supervisor ends
the whole jail at once.
The environment is whatever the caller passes (kaser.code.isolation.ENV: PATH, locale, HOME).

Where the kernel refuses user namespaces (some containers, hardened kernels), `probe()` says
why, and kaser.code.isolation refuses to run untrusted code unless asked to run it unjailed.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Files and folders each writable tmpfs of a jail may hold: a program needs a few, and one that
# makes hundreds of thousands costs seconds to wipe and about a KB of kernel memory each.
JAIL_INODES = 4096

# Runs as root of the new user namespace, inside its new mount namespace (nothing is seen outside),
# as `python -I -S -c SETUP ROOT WORK_MB SHM_MB [OUTSIDE INSIDE]... -- COMMAND...`: one process
# instead of a shell and a `mount` per step, since a worker starts for every batch.
SETUP = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC, NOATIME, RELATIME = 1, 2, 4, 8, 32, 4096, 16384, 1024, 1 << 21

def check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, "kaser jail: %s: %s" % (what, os.strerror(error)))

def mount(source, target, fstype=None, flags=0, data=None):
    code = lambda text: None if text is None else text.encode()
    check(libc.mount(code(source), code(target), code(fstype), flags, code(data)), "mount %s on %s" % (source, target))

def read_only(target):  # keep the flags the kernel locks in a user namespace
    flags = os.statvfs(target).f_flag
    mount(None, target, None, REMOUNT | BIND | RDONLY | (flags & (NOSUID | NODEV | NOEXEC | NOATIME))
          | (RELATIME if flags & 4096 else 0))

root, work_mb, shm_mb, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
INODES = @INODES@
binds, command = rest[:rest.index("--")], rest[rest.index("--") + 1:]
mount("kaser-root", root, "tmpfs", 0, "size=1m,mode=755")
for link in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
    if os.path.islink("/" + link):
        os.symlink(os.readlink("/" + link), root + "/" + link)
for source, inside in zip(binds[::2], binds[1::2]):
    target = root + inside
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "w").close()
    mount(source, target, None, BIND | REC)
    read_only(target)
for folder in ("work", "tmp", "dev/shm", "proc"):
    os.makedirs(root + "/" + folder, exist_ok=True)
for device in ("null", "zero", "urandom", "random"):
    open(root + "/dev/" + device, "w").close()
    mount("/dev/" + device, root + "/dev/" + device, None, BIND)
mount("kaser-work", root + "/work", "tmpfs", NOSUID | NODEV, "size=%sm,nr_inodes=%d,mode=1777" % (work_mb, INODES))
mount(root + "/work", root + "/tmp", None, BIND)
mount("kaser-shm", root + "/dev/shm", "tmpfs", NOSUID | NODEV, "size=%sm,nr_inodes=%d,mode=1777" % (shm_mb, INODES))
mount("proc", root + "/proc", "proc", NOSUID | NODEV | NOEXEC)
read_only(root)
check(libc.unshare(0x10000000), "unshare(CLONE_NEWUSER)")   # nested: uid 1000, no capabilities after exec
for name, text in (("setgroups", "deny"), ("uid_map", "1000 0 1"), ("gid_map", "1000 0 1")):
    with open("/proc/self/" + name, "w") as handle:
        handle.write(text)
os.chroot(root)
os.chdir("/work")
check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
os.execve(command[0], command, os.environ)
""".replace("@INODES@", str(JAIL_INODES))

JAIL_UID = 1000      # the worker's user id inside its jail


@dataclass(frozen=True)
class Jail:
    root: Path                                  # an empty folder to mount the jail's root on
    binds: tuple[tuple[str, str], ...] = ()     # (outside path, inside path), read-only
    writable_mb: int = 64                       # size of /work and of /dev/shm


def system_binds(program: str) -> list[tuple[str, str]]:
    """What every worker needs read-only: programs and libraries, the loader cache, JDK config,
    and the installation `program` (an absolute path) comes from when it is outside /usr."""
    binds = [("/usr", "/usr")]
    if not program.startswith("/usr/"):
        prefix = str(Path(program).parents[1])
        binds.append((prefix, prefix))
    for top in ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin"):
        if os.path.isdir(top) and not os.path.islink(top):
            binds.append((top, top))
    extra = ["/etc/ld.so.cache", *glob.glob("/etc/java-*"), *glob.glob("/etc/alternatives")]
    return binds + [(path, path) for path in extra if os.path.exists(path)]


def jail_command(argv: list[str], jail: Jail, uid: int | None, python: str) -> list[str]:
    """The command line that runs `argv` jailed (under user id `uid` first, when we are root);
    `python` (of our version, one `uid` may run) builds the jail."""
    prefix = ["setpriv", "--pdeathsig", "SIGKILL", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--"] \
        if uid is not None else []  # a new uid clears the parent-death signal: setpriv sets it again
    binds = [part for pair in [*system_binds(argv[0]), *jail.binds] for part in pair]
    return [*prefix, "unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--ipc", "--uts",
            "--fork", "--kill-child", "--propagation", "private", "--",
            python, "-I", "-S", "-c", SETUP, str(jail.root), str(jail.writable_mb), str(jail.writable_mb),
            *binds, "--", *argv]


@functools.cache
def probe(python: str, scratch: str, uid: int | None) -> str | None:
    """None when a jail works here (running `python` inside it), else the reason it does not."""
    for tool in ("unshare",) + (("setpriv",) if uid is not None else ()):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    root = Path(scratch) / "probe-root"
    root.mkdir(mode=0o755, exist_ok=True)
    check = [python, "-I", "-S", "-c", "import os; print(os.getuid(), os.listdir('/work'))"]
    try:
        run = subprocess.run(jail_command(check, Jail(root), uid, python), env={"PATH": "/usr/bin:/bin"}, cwd="/",
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        root.rmdir()
    if run.returncode == 0 and run.stdout.strip() == f"{JAIL_UID} []":
        return None
    return (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
