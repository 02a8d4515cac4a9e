"""Java side of the sandbox: wrapping CodeWorkout-style methods in classes, and the harness
that one JVM uses to run every program of a batch (javac's diagnostics: kaser/code/java_compiler.py).

Students write methods without a class (`public int luckySum(int a, int b, int c) {...}`).
Program i becomes `Sub<i>.java` in a package of its own, `p<i>`: line 1 holds `package p<i>;`,
the imports (java.util.* plus any `import` lines the student wrote, which are blanked where they
stood) and `public class Sub<i> {`, then the student's lines unchanged, then `}`. So javac's line
L is the student's line L - 1. What a program declares after closing its class (a top-level
`class Math`, a `class Sub1`) is in its own package: no other program's names change, and its
class files go to a folder of its own (classes/<i>/p<i>/), the only one its class loader reads.

The harness is the Java program KaserHarness.java beside this module (package data), read into
HARNESS_SOURCE, compiled once per process (kaser.code.java_compiler.harness_classes, for
kaser.code.sandbox) and run as `java KaserHarness JOB CLASSES WORK`; JOB is a text file of lines

    timeout_ms 2000 | output_chars 2000 | stack_bytes 16777216 | first_case 0 | stop_after_timeout 0|1
    wipe_work 0|1                            (1: empty the working folder before each program, whatever
                                              modes a program left; it is the JVM's own. Where it cannot,
                                              the harness says "restart", and a fresh jail runs the rest)
    program <index> <class> <entry method>   (one per compiled program, in order)
    test <JSON array of arguments>           (the cases of the program above it)

and the harness prints JSON lines like kaser/code/python_worker.py does ("ready", one line per
case, "restart" when the JVM is no longer clean, so a fresh JVM takes over, "end"). Each program
gets its own class loader (so static state dies with it), an empty working folder and a case thread
of its own, in a thread group of its own (so its thread-locals die with it); cases run one at a time
on that thread with a limit on its CPU time (wall-clock time only as a backstop, for a case that
waits), which is stopped and replaced when a case runs out of time (and with stop_after_timeout 1
the program's later cases are not run: the supervisor marks them). Student code that could run
after its program, on a thread the harness does not own, sends the rest of the batch to a fresh
JVM: a case that leaves threads running or starts one outside the case group (the common
ForkJoinPool's workers), and a program with a class file that names `finalize` (the JVM's Finalizer
thread runs finalizers whenever it likes). System.exit counts only on the case threads. Several
students share a JVM, so what keeps one from the harness and the others is the SecurityManager (JDK
17-23, `-Djava.security.manager=allow`) with a policy: every class but a student's holds all
permissions, a student's classes may only read and write in the working folder and read system
properties, and the standard access check (every frame on the stack, and the context a thread or
proxy inherited from the code that made it) applies it, so a student's own threads, proxies
(java.beans.EventHandler) and callbacks hold no more than the student. Refused: System.exit
(reported as status "exit"), processes, sockets, reading or listing files outside the working
folder (paths normalized first: /./proc is /proc), class loaders (so no reflection on
KaserHarness), setAccessible, replacing System.out, the environment, changing system properties or
locale, and touching threads outside the case threads' group. Tested by tests/sandbox_attacks.py.
On JDK 24+, where the SecurityManager no longer exists, the harness says so ("guarded": false) and
only the namespace jail applies: programs of one JVM could then reach each other's verdicts, which
is why the sandbox warns.
"""

from __future__ import annotations

import re
from pathlib import Path

HARNESS_CLASS = "KaserHarness"
_IMPORTS = "import java.util.*;"
_IMPORT_LINE = re.compile(r"^\s*(import\s+(static\s+)?[\w.]+(\.\*)?\s*;|package\s+[\w.]+\s*;)\s*$")


def class_name(index: int) -> str:
    return f"Sub{index}"


def package_name(index: int) -> str:
    return f"p{index}"


def qualified_name(index: int) -> str:
    """The class the harness loads for program `index`: `p3.Sub3`."""
    return f"{package_name(index)}.{class_name(index)}"


def wrap_program(index: int, code: str) -> str:
    """The Java source of program `index`: student line L sits on file line L + 1.

    >>> print(wrap_program(3, "import java.util.List;\\nint f() { return 1; }"), end="")
    package p3; import java.util.*; import java.util.List; public class Sub3 {
    <BLANKLINE>
    int f() { return 1; }
    }
    """
    lines = code.split("\n")
    hoisted = []
    for number, line in enumerate(lines):
        if _IMPORT_LINE.match(line):
            if line.strip().startswith("import"):
                hoisted.append(line.strip())
            lines[number] = ""
    header = " ".join([f"package {package_name(index)};", _IMPORTS, *hoisted, f"public class {class_name(index)} {{"])
    return "\n".join([header, *lines, "}"]) + "\n"


# read as bytes so that no newline translation touches the Java text
HARNESS_SOURCE = Path(__file__).with_name("KaserHarness.java").read_bytes().decode("utf-8")
