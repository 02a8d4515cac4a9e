"""Hostile programs against kaser.code.sandbox, with the canaries that show what got out.

Plain Python (no pytest), so tests/test_sandbox_attacks.py can run the suite as root and, through
`setpriv`, as an ordinary user:

    PYTHONPATH=. python tests/sandbox_attacks.py [NAME ...]     # one JSON line per attack

Every attack runs as `add(a, b)` between a right and a wrong answer (the neighbours). It returns
a + b when it found nothing and "LEAK: <evidence>" (Java: -999) when it got something out, so a
contained attack mostly passes its own cases. Beside its statuses each line reports the canaries:
- neighbours_ok: the right answer passed and the wrong one failed (no forged neighbour verdict);
- leaked: the secret file's text or the parent's OPENAI_API_KEY appears in any result, or an
  attack said "LEAK";
- wrote_outside: a file the attack tried to create outside its jail exists, or the secret is gone;
- process_left: a process whose command line holds the attack's marker outlived the batch;
- connected: something connected to the TCP listener on 127.0.0.1;
- seconds: the whole batch's wall-clock time;
- children_peak_mb: the peak resident memory of the largest process ever ended below ours (javac,
  a worker); the attack's own only when it runs in a process of its own, as in `main`.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kaser.code.isolation import IsolationUnavailable
from kaser.code.sandbox import Limits, run_tests

LIMITS = Limits(case_timeout_s=1.0, writable_mb=16, workers=1)  # one worker: the neighbours share it
TESTS = [([1, 2], 3), ([5, 5], 10)]
NEIGHBOURS = {"python": ("def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"),
              "java": ("public int add(int a, int b) {\n    System.out.print(\"\");\n    return a + b;\n}",
                       "public int add(int a, int b) {\n    System.out.print(\"\");\n    return a - b;\n}")}


def run_beside(language: str, hostile: str, tests=TESTS, limits: Limits = LIMITS, neighbours=None):
    """Run `hostile` between a right and a wrong answer (`neighbours`, default NEIGHBOURS) in one
    batch; check that those two keep their verdicts and that the call came back within 30 s;
    return the hostile program's result."""
    right, wrong = neighbours or NEIGHBOURS[language]
    start = time.monotonic()
    first, result, last = run_tests(language, "add", [right, hostile, wrong], tests, limits)
    assert time.monotonic() - start < 30, "the sandbox took too long"
    assert [c.status for c in first.cases] == ["pass"] * len(tests)
    assert [c.status for c in last.cases] == ["fail"] * len(tests)
    return result


# Turns the Python worker's audit hook off: the attacks behind it test the jail, not the guard.
ESCAPE = """
    import gc, __main__
    for o in gc.get_objects():
        if isinstance(o, set) and ("os.system" in o or "os.remove" in o):
            o.clear()
    __main__._inside = lambda path, root: True
    __main__._named_path = lambda arg, folder_fd: "/"
"""


# Java: -999 when a note from an earlier program is in the working folder, else leave one
JAVA_NOTE = """
        java.nio.file.Path note = java.nio.file.Paths.get("note.txt");
        String me = String.valueOf(System.identityHashCode(getClass()));
        if (java.nio.file.Files.exists(note) && !new String(java.nio.file.Files.readAllBytes(note)).equals(me))
            return -999;
        java.nio.file.Files.write(note, me.getBytes());"""


@dataclass(frozen=True)
class Attack:
    name: str
    language: str
    body: str                   # the body of add(a, b); {secret}, {outside}, {port}, {marker} filled in
    escape: bool = False        # Python: disable the audit hook first
    copies: int = 1             # hostile programs between the neighbours
    whole: bool = False         # Java: `body` is the whole program, not the body of add's try


def py(name: str, body: str, escape: bool = True, copies: int = 1) -> Attack:
    return Attack(name, "python", body, escape, copies)


def java(name: str, body: str, copies: int = 1, whole: bool = False) -> Attack:
    return Attack(name, "java", body, copies=copies, whole=whole)


# Python: three copies whose forged case records fill the worker's result stream to 10 bytes
# short of RLIMIT_FSIZE as the sandbox sets it for this batch (16 MB + 14,000 bytes per case, 10
# cases), so the next program's first record cannot be written: the records are re-serialized
# by the worker exactly as computed here ({"p": i, ...}, json.dumps' separators).
FILL_THE_STREAM = """
    import os, json
    if a != 1:
        return a + b
    limit = (16 << 20) + 10 * (6 * 2000 + 2000)
    size = lambda record: len(json.dumps(record)) + 1
    before = size({"ready": True}) + size({"p": 0, "compiled": True, "diagnostics": []}) + size({"p": 0, "loaded": True})
    before += sum(size({"p": 0, "c": c, "status": "returned", "actual": v, "detail": "", "output": ""})
                  for c, v in ((0, "3"), (1, "10")))
    own = size({"p": 1, "compiled": True, "diagnostics": []}) + size({"p": 1, "loaded": True})
    share = (limit - 10 - before) // 3 - own
    frame = size({"p": 1, "c": 0, "status": ""})
    first = share // 2 - frame
    for c, n in ((0, first), (1, share - 2 * frame - first)):
        os.write(3, (json.dumps({"c": c, "status": "x" * n}) + "\\n").encode())
    return a + b
"""


def folded_strings(levels: int) -> str:
    """Java class members S0 .. S<levels>: string constants javac folds at compile time, each four
    times the one before, so S<levels> holds 16 x 4^levels characters."""
    return "static final String S0 = \"xxxxxxxxxxxxxxxx\";\n" + "".join(
        f"static final String S{i} = S{i - 1} + S{i - 1} + S{i - 1} + S{i - 1};\n" for i in range(1, levels + 1))


# Java, class members only (whole=True): 1 KB of source whose constant folding asks javac for a
# string of 16 x 4^13 characters (about 5 GB resident without a heap cap)
JAVAC_FOLDS = folded_strings(13) + "public int add(int a, int b) { return S13.length() > 0 ? a + b : -999; }"
# 38 KB of source that javac folds into 1,000 string constants of 48 KB: a 49 MB class file in
# the batch's scratch folder, which is memory (/dev/shm), outside the jail and its caps
JAVAC_WRITES = folded_strings(5) + "static final String T = S5 + S5 + S5;\n" + "".join(f"static final String T{k} = T + {k};\n" for k in range(1000)) + \
    "public int add(int a, int b) { return a + b; }"


ATTACKS = [
    # ---- getting out: guards, files, processes, environment, network
    py("fd3_forges_neighbours", """
    import os, json
    for p in range(-1, 8):
        for c in range(2):
            os.write(3, (json.dumps({"p": p, "c": c, "status": "returned", "actual": "3"}) + "\\n").encode())
        os.write(3, (json.dumps({"p": p, "compiled": False, "diagnostics": [[1, "SyntaxError: fabricated"]]}) + "\\n").encode())
        os.write(3, (json.dumps({"p": p, "loaded": False, "status": "exception", "exception": "X"}) + "\\n").encode())
    return "garbage"
""", escape=False),
    py("fills_the_result_stream_for_the_next_program", FILL_THE_STREAM, escape=False, copies=3),
    py("every_record_field_megabytes", """
    import os, json
    big = "x" * (1200 << 10)
    for c in range(2):
        os.write(3, (json.dumps({"c": c, "status": big, "exception": big, "actual": big}) + "\\n").encode())
    return a + b
""", escape=False, copies=6),
    py("makes_folders_until_stopped", """
    import os
    i, prefix = 0, os.urandom(4).hex()
    while True:
        os.mkdir("%s-%d" % (prefix, i))
        i += 1
""", escape=False),
    py("memory_files_hold_a_gigabyte", """
    import os
    chunk, held, files = b"m" * (1 << 20), 0, []
    while held < (1 << 30):
        fd = os.memfd_create("hold")
        files.append(fd)
        for _ in range(16):
            os.write(fd, chunk)
            held += len(chunk)
    return "LEAK: %d MB held in %d memory files" % (held >> 20, len(files))
""", escape=False),
    # a second posix holds the unpatched memfd_create: one memory file is enough to show it
    py("memory_files_through_a_second_posix", """
    import _imp, importlib.machinery
    posix = _imp.create_builtin(importlib.machinery.ModuleSpec("posix", None))
    return "LEAK: memory file %d from a second posix" % posix.memfd_create("hold")
""", escape=False),
    py("audit_global_replaced_reads_secret", """
    return "LEAK: " + open("{secret}").read()
"""),
    py("audit_denyset_cleared_runs_shell", """
    import os
    os.system("cat {secret} > {outside}/copied; echo pwned > {outside}/pwned; echo pwned > /tmp/kaser-pwned-{marker}")
    return a + b
"""),
    py("posixsubprocess_fork_exec", """
    import os, _posixsubprocess
    r, w = os.pipe()
    _posixsubprocess.fork_exec([b"/bin/sh", b"-c", b"echo pwned > {outside}/forked; sleep 30; : {marker}"],
        [b"/bin/sh"], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None,
        -1, None)
    return a + b
""", escape=False),
    # CPython raises no audit event for these: a FIFO can block a reader, a device node is no file
    py("makes_fifos_and_device_nodes", """
    import os
    made = []
    for make, path in ((os.mkfifo, "fifo"), (os.mknod, "node"), (os.mkfifo, "/dev/shm/fifo")):
        try:
            make(path)
            made.append(path)
        except PermissionError:
            pass
    return "LEAK: made " + repr(made) if made else a + b
""", escape=False),
    py("listdir_and_scandir_outside", """
    import os
    seen = os.listdir("{outside}") + [e.name for e in os.scandir("/")]
    return "LEAK: " + repr(seen) if "secret.txt" in seen or "root" in seen or "home" in seen else a + b
"""),
    py("deletes_and_writes_user_files", """
    import os
    for path in ("{secret}", "{outside}/pwned"):
        try:
            os.remove(path)
        except OSError:
            pass
    open("{outside}/pwned", "w").write("x")
    return a + b
"""),
    py("leaves_a_process_running", """
    import os
    os.system("setsid sh -c 'sleep 60; : {marker}' > /dev/null 2>&1 &")
    os.system("nohup sleep 61 {marker} > /dev/null 2>&1 &")
    return a + b
"""),
    py("reads_parent_environment", """
    import os
    found = dict(os.environ)
    for path in ("/proc/self/environ", "/proc/1/environ", "/proc/%d/environ" % os.getppid()):
        try:
            found[path] = open(path, "rb").read().decode(errors="replace")
        except OSError:
            pass
    text = repr(found)
    return "LEAK: " + text if "OPENAI" in text else a + b
"""),
    py("connects_to_localhost", """
    import socket
    socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"pwned")
    return "LEAK: connected"
"""),
    py("stalls_by_writing_a_byte_now_and_then", """
    import os, time
    for _ in range(1000):   # 200 s unless stopped
        for fd in (1, 2, 3):
            try:
                os.write(fd, b" ")
            except OSError:
                pass
        time.sleep(0.2)
    return a + b
"""),
    # ---- the worker, its neighbours and the machine's resources
    py("kills_its_worker", """
    import os, signal
    for pid in (os.getppid(), 1, -1):
        for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    return a + b
"""),
    py("writes_worker_memory", """
    try:
        with open("/proc/%d/mem" % __import__("os").getppid(), "r+b") as mem:
            return "LEAK: opened the worker's memory"
    except OSError:
        return a + b
"""),
    py("reopens_worker_result_stream", """
    import os, json
    forged = "".join(json.dumps({"p": p, "c": c, "status": "returned", "actual": "3"}) + "\\n"
                     for p in range(8) for c in range(2))
    opened = []
    for pid in ("1", str(os.getppid()), "self"):
        for fd in range(0, 64):
            try:
                with open("/proc/%s/fd/%d" % (pid, fd), "a") as stream:
                    stream.write(forged)
                opened.append((pid, fd))
            except OSError:
                pass
    return a + b
"""),
    py("fork_bomb", """
    import os
    for _ in range(100000):
        try:
            os.fork()
        except OSError:
            break
    return a + b
"""),
    py("fills_dev_shm_and_work", """
    written = 0
    for path in ("/dev/shm/fill", "fill", "/tmp/fill2"):
        try:
            with open(path, "wb") as out:
                for _ in range(64):
                    out.write(b"x" * (1 << 20)); out.flush(); written += 1 << 20
        except OSError:
            pass
    return "LEAK: wrote %d MiB" % (written >> 20) if written > 40 << 20 else a + b
"""),
    py("patches_shared_modules_for_neighbours", """
    import json, builtins
    json.loads = lambda text: [0, 0]
    builtins.print = None
    __import__("sys").modules["json"].dumps = lambda *x, **y: '"forged"'
    return a + b
""", escape=False),
    py("leaves_a_file_for_the_next_program", """
    import os
    me = str(os.getpid())
    for note in ("/tmp/kaser-note-{marker}", "/dev/shm/kaser-note-{marker}", "/work/kaser-note-{marker}"):
        if os.path.exists(note) and open(note).read() != me:
            return "LEAK: a file from an earlier program"
        open(note, "w").write(me)
    return a + b
""", copies=2),
    py("shapes_the_next_programs_folder", """
    import os
    parent = os.path.dirname(os.getcwd())
    for n in range(-2, 12):   # the folders the next programs would get, non-empty and mode 000
        folder = os.path.join(parent, "p%d" % n)
        try:
            os.makedirs(os.path.join(folder, "inner"), exist_ok=True)
            open(os.path.join(folder, "inner", "note"), "w").close()
            os.chmod(os.path.join(folder, "inner"), 0)
            os.chmod(folder, 0)
        except OSError:
            pass
    return a + b
"""),
    py("leaves_a_folder_tree_deeper_than_a_recursion_goes", """
    import os
    for _ in range(3000):
        os.mkdir("d")
        os.chdir("d")
    return a + b
"""),
    py("blocks_the_timer_and_writes", """
    import os, signal, time
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        os.write(3, b"{\\"ready\\": true}\\n")
        time.sleep(0.1)
"""),
    py("remounts_or_nests_namespaces", """
    import os
    rc = [os.system(c) for c in ("unshare -r true", "mount -o remount,rw /", "mount -t tmpfs x /usr",
                                  "chroot / true", "touch /usr/pwned-{marker}")]
    return "LEAK: %r" % rc if 0 in rc else a + b
"""),
    py("huge_record_line", """
    import os
    for _ in range(64):
        os.write(3, b"x" * (1 << 20))
    return a + b
"""),
    py("exits_quietly_mid_case", """
    import os
    os._exit(0)
""", escape=False),
    py("spins_forever", """
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass
""", escape=False),
    # ---- Java: getting out through reflection and the file system
    java("reflection_on_harness_result_store", """
        ClassLoader app = Thread.currentThread().getContextClassLoader();
        if (app == null) app = ClassLoader.getSystemClassLoader();
        Class<?> h = app.loadClass("KaserHarness");
        java.lang.reflect.Field f = h.getDeclaredField("results");
        f.setAccessible(true);
        java.io.Writer w = (java.io.Writer) f.get(null);
        for (int p = 0; p < 8; p++) for (int c = 0; c < 2; c++)
            w.write("{\\"p\\":" + p + ",\\"c\\":" + c + ",\\"status\\":\\"returned\\",\\"actual\\":\\"3\\"}\\n");
        w.flush();
        return -1;"""),
    java("eventhandler_processbuilder_thread", """
        Runnable r = java.beans.EventHandler.create(Runnable.class,
            new ProcessBuilder("sh", "-c", "echo pwned > {outside}/java; sleep 30; : {marker}"), "start");
        Thread t = new Thread(r); t.start(); t.join();
        Thread.sleep(300);
        return a + b;"""),
    java("dot_slash_proc_read", """
        String s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/./proc/self/status")));
        return s.contains("Uid") ? -999 : a + b;"""),
    java("file_list_any_folder", """
        String[] seen = new java.io.File("{outside}").list();
        String[] top = new java.io.File("/").list();
        return (seen != null && seen.length > 0) || (top != null && top.length > 0) ? -999 : a + b;"""),
    # ---- Java: the harness, its neighbours and the JVM
    java("reads_secret_and_environment", """
        String s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("{secret}")));
        String k = System.getenv("OPENAI_API_KEY");
        return s.isEmpty() && k == null ? a + b : -999;"""),
    java("connects_to_localhost", """
        new java.net.Socket("127.0.0.1", {port}).getOutputStream().write(1);
        return -999;"""),
    java("writes_records_to_stdout_descriptor", """
        java.io.FileOutputStream out = new java.io.FileOutputStream("/proc/self/fd/1");
        out.write("{\\"p\\":0,\\"c\\":0,\\"status\\":\\"returned\\",\\"actual\\":\\"-1\\"}\\n".getBytes());
        return -999;"""),
    java("replaces_system_out", """
        System.setOut(new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out)));
        System.out.println("{\\"p\\":0,\\"c\\":1,\\"status\\":\\"returned\\",\\"actual\\":\\"-1\\"}");
        return -999;"""),
    java("stops_the_harness_thread", """
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) g = g.getParent();
        Thread[] all = new Thread[64];
        int n = g.enumerate(all, true);
        for (int i = 0; i < n; i++) if (all[i] != Thread.currentThread()) all[i].stop();
        return -999;"""),
    java("unsafe_through_reflection", """
        java.lang.reflect.Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return -999;"""),
    java("changes_jvm_wide_defaults", """
        java.util.Locale.setDefault(java.util.Locale.GERMANY);
        System.setProperty("line.separator", "X");
        return -999;"""),
    java("leaves_a_spinning_thread", """
        Thread t = new Thread(() -> { while (true) { } });
        t.setDaemon(true); t.start();
        return a + b;"""),
    java("stalls_printing_forever", """
        while (true) { System.out.print("x"); Thread.sleep(100); }"""),
    java("leaves_a_locked_folder_and_a_file_for_the_next_program", JAVA_NOTE + """
        java.io.File locked = new java.io.File("locked");
        new java.io.File(locked, "inner").mkdirs();
        locked.setReadable(false, false); locked.setWritable(false, false); locked.setExecutable(false, false);
        return a + b;""", copies=2),
    java("leaves_a_file_for_the_next_program", JAVA_NOTE + """
        return a + b;""", copies=2),
    # ---- Java: one program's classes, and what it declares beside them, are its own
    java("declares_its_neighbours_classes", """public int add(int a, int b) { return a + b; }
}
class Sub0 { public int add(int a, int b) { return -999; } }
class Sub2 { public int add(int a, int b) { return -999; } }
class Sub3 { }
class Math { }
class Tail {""", whole=True),
    java("loads_a_neighbours_class", """
        for (String name : new String[]{"Sub0", "p0.Sub0", "Sub2", "p2.Sub2"}) {
            try { Class.forName(name); return -999; } catch (ClassNotFoundException e) { }
        }
        return a + b;"""),
    java("throws_thread_death_on_its_last_case", """
        if (a == 5) throw new ThreadDeath();
        return a + b;"""),
    # ---- Java: javac reads every program of a batch in one run, outside the jail
    java("javac_folds_constants_into_gigabytes", JAVAC_FOLDS, whole=True),
    java("javac_writes_a_class_file_of_megabytes", JAVAC_WRITES, whole=True),
    java("makes_folders_until_stopped", """
        String prefix = Long.toHexString(System.nanoTime());
        for (int i = 0; ; i++) new java.io.File(prefix + "-" + i).mkdir();"""),
    # ---- Java: student code that runs later, on a thread that is not the case thread
    java("finalizer_exits_during_later_programs", """
        class Bomb {
            @Override protected void finalize() throws Throwable {
                while (true) try { System.exit(7); } catch (SecurityException e) { }
            }
        }
        new Bomb();
        System.gc();
        Thread.sleep(50);
        return a + b;"""),
    java("finalizer_holds_the_output_lock", """
        class Hog {
            @Override protected void finalize() throws Throwable { synchronized (System.out) { Thread.sleep(60000); } }
        }
        new Hog();
        System.gc();
        Thread.sleep(50);
        return a + b;"""),
    java("cleaner_thread_exits_during_later_programs", """
        Runnable bomb = () -> { while (true) try { System.exit(7); } catch (SecurityException e) { } };
        java.lang.ref.Cleaner.create().register(new Object(), bomb);   // refused: it starts a thread
        System.gc();
        Thread.sleep(50);
        return a + b;"""),
    java("common_pool_worker_exits_during_later_programs", """
        java.util.concurrent.ForkJoinPool.commonPool().execute(() -> {
            while (true) try { System.exit(7); } catch (SecurityException e) { }
        });
        Thread.sleep(50);
        return a + b;"""),
    # -999 when the case thread still holds an earlier program's thread-local (no room for its own)
    java("thread_local_outlives_its_program", """
        class Keep { static final ThreadLocal<byte[]> HELD = new ThreadLocal<>(); }
        if (Keep.HELD.get() == null) {
            try { Keep.HELD.set(new byte[100 << 20]); } catch (OutOfMemoryError e) { return -999; }
        }
        return a + b;""", copies=2),
]


def program(attack: Attack, fill: dict) -> str:
    body = attack.body
    for key, value in fill.items():
        body = body.replace("{" + key + "}", str(value))
    if attack.whole:
        return body
    if attack.language == "python":
        return "def add(a, b):\n" + (ESCAPE if attack.escape else "") + "    try:\n" + "".join(
            "    " + line + "\n" for line in body.strip("\n").splitlines()) + \
            "    except Exception as error:\n        return a + b\n"
    return "public int add(int a, int b) throws Exception {\n    try {" + body + \
        "\n    } catch (Exception e) { return a + b; }\n}"


def processes_with(marker: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def run_attack(attack: Attack, limits: Limits = LIMITS) -> dict:
    """Run one attack between its neighbours and report the canaries (see the module docstring)."""
    outside = Path(tempfile.mkdtemp(prefix="kaser-attack-"))
    outside.chmod(0o777)   # an unjailed ordinary user could write here: only the jail stops it
    secret = outside / "secret.txt"
    token, key = "canary-" + secrets.token_hex(8), "sk-canary-" + secrets.token_hex(8)
    secret.write_text(token)
    secret.chmod(0o666)
    marker = "kaser" + secrets.token_hex(6)
    os.environ["OPENAI_API_KEY"] = key
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    fill = {"secret": secret, "outside": outside, "port": server.getsockname()[1], "marker": marker}
    right, wrong = NEIGHBOURS[attack.language]
    start = time.monotonic()
    report = {"name": attack.name, "language": attack.language}
    try:
        results = run_tests(attack.language, "add", [right, *[program(attack, fill)] * attack.copies, wrong],
                            TESTS, limits)
    except IsolationUnavailable as refusal:
        report.update(refused=str(refusal), seconds=time.monotonic() - start)
        return report
    finally:
        seconds = time.monotonic() - start
        time.sleep(0.2)
        left = processes_with(marker)
        try:
            server.accept()
            connected = True
        except BlockingIOError:
            connected = False
        server.close()
        written = [p.name for p in outside.iterdir() if p.name != "secret.txt"] + \
            [p for p in (f"/tmp/kaser-pwned-{marker}", f"/tmp/kaser-note-{marker}", f"/usr/pwned-{marker}",
                         f"/dev/shm/kaser-note-{marker}") if os.path.exists(p)]
        if not secret.exists():
            written.append("deleted secret.txt")
        shutil.rmtree(outside, ignore_errors=True)
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    text = json.dumps([[c.__dict__ for c in r.cases] for r in results])
    first, *hostile, last = results
    report.update(
        neighbours_ok=[c.status for c in first.cases] == ["pass"] * 2 and [c.status for c in last.cases] == ["fail"] * 2,
        statuses=[c.status for r in hostile for c in r.cases], compiled=hostile[0].compiled,
        leaked=token in text or key in text or "LEAK" in text or '"actual": "-999"' in text,
        wrote_outside=written, process_left=left,
        connected=connected, seconds=round(seconds, 2),
        children_peak_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10)
    return report


def contained(report: dict, limits: Limits = LIMITS) -> list[str]:
    """What went wrong in a report; [] when the attack was contained."""
    if "refused" in report:
        return []
    # the cases' hard limits plus JVM start-up on a loaded machine; the stalling attacks run 200 s or forever
    allowed = 3 * (2 * limits.case_timeout_s + 5) + 40
    problems = [name for name, bad in (
        ("a neighbour's verdict changed", not report["neighbours_ok"]),
        ("something leaked", report["leaked"]),
        (f"wrote outside: {report['wrote_outside']}", report["wrote_outside"]),
        (f"processes left: {report['process_left']}", report["process_left"]),
        ("connected to 127.0.0.1", report["connected"]),
        (f"ran {report['seconds']} s", report["seconds"] > allowed)) if bad]
    return problems


def rootless() -> bool:
    """True where `unshare --user --map-root-user` makes us root of a user namespace of one id."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode == 0


USERS = ("ordinary user", "root of a user namespace")


def python_as(user: str) -> list[str] | None:
    """How to run a Python of our version as one of USERS, or None where this machine cannot: as
    `nobody` through setpriv when we are root (ourselves when already ordinary), or as root of a
    user namespace mapping one id (a rootless container: no fresh ids for the jail)."""
    if user == "root of a user namespace":
        return ["unshare", "--user", "--map-root-user", sys.executable] if rootless() else None
    if os.geteuid() != 0:
        return [sys.executable]
    python = "/usr/bin/python%d.%d" % sys.version_info[:2]
    if shutil.which("setpriv") is None or not os.path.exists(python):
        return None
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--", python]


def main(names: list[str]) -> None:
    import logging
    logging.basicConfig(level=logging.WARNING)
    for attack in ATTACKS:
        if not names or attack.name in names:
            if attack.language == "java" and shutil.which("javac") is None:
                continue
            print(json.dumps(run_attack(attack)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
