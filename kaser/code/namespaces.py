"""The sandbox's first barrier: every worker in a jail of Linux namespaces (for kaser.code.isolation).

    argv = jail_command(["/usr/bin/python3.11", "-I", "-c", "..."], Jail(root=Path("mnt"), binds=(...)), uid=None)

A worker starts as `unshare --user --map-root-user --mount --net --pid --ipc --uts --fork --kill-child`
(as root, under a fresh unprivileged user id first, via `setpriv`), so it holds privileges only over
namespaces of its own. A short shell script (SETUP below) then builds its file system and drops them:

- a new root: an empty tmpfs with the system's program folders bound read-only (/usr, and what a
  worker needs from /etc: the loader cache and the JDK's configuration), the job's own files
  read-only (`Jail.binds`), /dev/null, /dev/zero, /dev/urandom, and a /proc of its own pid namespace;
- the only writable places: /work (also seen as /tmp) and /dev/shm, two tmpfs of `writable_mb`
  each, gone when the worker's last process ends, so no write outlives it;
- no network (an empty network namespace: not even loopback is up);
- then a nested user namespace in which the worker is uid 1000, with no capabilities at all, is
  chrooted there and the worker is exec'd: it cannot remount, chroot back out or ptrace anything
  outside it; and since it is pid 1 of its pid namespace, every process it or its children start
  dies with it (the kernel kills a pid namespace whose first process ends).
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

# Runs as root of the new user namespace, inside its new mount namespace (nothing is seen outside).
# $1 mount point of the new root, $2 $3 MiB of /work and /dev/shm, then pairs of (outside path,
# inside path) to bind read-only, "--", and the command.
SETUP = r"""
set -e; unset PWD OLDPWD
R=$1; WORK_MB=$2; SHM_MB=$3; shift 3
mount -t tmpfs -o size=1m,mode=755 kaser-root "$R"
for link in bin lib lib32 lib64 libx32 sbin; do
  if [ -L "/$link" ]; then ln -s "$(readlink "/$link")" "$R/$link"; fi
done
while [ "$1" != "--" ]; do
  if [ -d "$1" ]; then mkdir -p "$R$2"; else mkdir -p "$R${2%/*}"; : > "$R$2"; fi
  mount --rbind "$1" "$R$2"; mount -o remount,bind,ro "$R$2"; shift 2
done
shift
mkdir -p "$R/work" "$R/tmp" "$R/dev/shm" "$R/proc"
for dev in null zero urandom random; do : > "$R/dev/$dev"; mount --bind "/dev/$dev" "$R/dev/$dev"; done
mount -t tmpfs -o "size=${WORK_MB}m,mode=1777,nosuid,nodev" kaser-work "$R/work"
mount --bind "$R/work" "$R/tmp"
mount -t tmpfs -o "size=${SHM_MB}m,mode=1777,nosuid,nodev" kaser-shm "$R/dev/shm"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount -o remount,bind,ro "$R"
exec unshare --map-user=1000 --map-group=1000 --root="$R" --wd=/work -- "$@"
"""

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


def jail_command(argv: list[str], jail: Jail, uid: int | None) -> list[str]:
    """The command line that runs `argv` jailed (under user id `uid` first, when we are root)."""
    prefix = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--"] if uid is not None else []
    binds = [part for pair in [*system_binds(argv[0]), *jail.binds] for part in pair]
    return [*prefix, "unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--ipc", "--uts",
            "--fork", "--kill-child", "--propagation", "private", "--",
            "/bin/sh", "-c", SETUP, "kaser-jail", str(jail.root), str(jail.writable_mb), str(jail.writable_mb),
            *binds, "--", *argv]


@functools.cache
def probe(python: str, scratch: str, uid: int | None) -> str | None:
    """None when a jail works here (running `python` inside it), else the reason it does not."""
    for tool in ("unshare", "/bin/sh", "mount") + (("setpriv",) if uid is not None else ()):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    root = Path(scratch) / "probe-root"
    root.mkdir(mode=0o755, exist_ok=True)
    check = [python, "-I", "-S", "-c", "import os; print(os.getuid(), os.listdir('/work'))"]
    try:
        run = subprocess.run(jail_command(check, Jail(root), uid), env={"PATH": "/usr/bin:/bin"}, cwd="/",
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        root.rmdir()
    if run.returncode == 0 and run.stdout.strip() == f"{JAIL_UID} []":
        return None
    return (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
