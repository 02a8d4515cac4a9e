"""One hostile submission added to a folder changes no other submission's labels (`kaser annotate`).

The hostile program forges result records for every program index and case, patches the modules
its neighbours would share, tries to kill its worker and everything else it can signal, and (Java)
reaches for the harness's result stream by reflection and through /proc/self/fd/1. Submissions
whose result records hold what the supervisor must survive (a lone surrogate, an exception that is
no type name, a 5,000-deep returned value, megabytes of output) each get a row of their own too.
"""

from __future__ import annotations

import re
import shutil

import polars as pl
import pytest
import yaml

from sandbox_attacks import folded_strings
from stage_runs import full_params

from kaser.cli import main
from kaser.data.contracts import write_dataset
from kaser.data.synth import generate

# the repository's params.yaml with the static annotator (what runs the programs), cut to fewer
# generated inputs and references
PARAMS = yaml.safe_dump(full_params({"annotate": {"backend": "static", "generated_inputs": 20,
                                                  "max_references": 3}}))

PYTHON_BODY = """
    import os, json, gc, signal, builtins
    for p in range(0, 120):
        for c in range(50):
            os.write(3, (json.dumps({"p": p, "c": c, "status": "returned", "actual": "null"}) + "\\n").encode())
        os.write(3, (json.dumps({"p": p, "compiled": False, "diagnostics": [[1, "SyntaxError: fabricated"]]}) + "\\n").encode())
    json.loads = lambda text: []
    builtins.len = lambda x: 0
    for o in gc.get_objects():
        if isinstance(o, set) and ("os.system" in o or "os.remove" in o):
            o.clear()
    os.system("kill -9 -1; kill -STOP 1")
    for pid in (os.getppid(), 1, -1):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return None
"""

JAVA_BODY = """
    try {
        Class<?> h = ClassLoader.getSystemClassLoader().loadClass("KaserHarness");
        java.lang.reflect.Field f = h.getDeclaredField("results");
        f.setAccessible(true);
        java.io.Writer w = (java.io.Writer) f.get(null);
        for (int p = 0; p < 120; p++) for (int c = 0; c < 50; c++)
            w.write("{\\"p\\":" + p + ",\\"c\\":" + c + ",\\"status\\":\\"returned\\",\\"actual\\":\\"null\\"}\\n");
        w.flush();
    } catch (Throwable t) { }
    try {
        java.io.FileOutputStream o = new java.io.FileOutputStream("/proc/self/fd/1");
        for (int p = 0; p < 120; p++) o.write(("{\\"p\\":" + p + ",\\"c\\":0,\\"status\\":\\"returned\\",\\"actual\\":\\"null\\"}\\n").getBytes());
    } catch (Throwable t) { }
    try {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) g = g.getParent();
        Thread[] all = new Thread[64];
        for (int i = 0, n = g.enumerate(all, true); i < n; i++) if (all[i] != Thread.currentThread()) all[i].stop();
    } catch (Throwable t) { }
    throw new RuntimeException("hostile");
}"""


# Python bodies whose result records the supervisor must survive (tests/test_sandbox_records.py)
RECORD_BODIES = {
    "lone-surrogate": """
    raise ValueError("bad \\ud800")
""",
    "exception-not-a-name": """
    import os, json
    for c in range(50):
        os.write(3, (json.dumps({"c": c, "status": "exception", "exception": 5}) + "\\n").encode())
    return None
""",
    "deeply-nested-return": """
    import sys
    sys.setrecursionlimit(20000)
    value = None
    for _ in range(5000):
        value = [value]
    return value
""",
    "megabytes-of-output": """
    import os, json
    for c in range(50):
        os.write(3, (json.dumps({"c": c, "status": "exception", "exception": "ValueError",
                                 "output": "o" * (3 << 20), "detail": "d" * (600 << 10)}) + "\\n").encode())
    return None
""",
}


# First in a dataset, so every program after it shares its javac run and its JVM: Java that closes
# its class and declares every other program's class (and a Math of its own), Java whose records
# would carry megabytes (its printed output and its exception's message), Java whose constant
# folding makes the first javac run over the whole dataset fail without blaming anyone, and a
# Python program whose own records carry megabytes in every field the worker passes on.
CLASS_INJECTION = """
    throw new RuntimeException("hostile");
}
}
""" + "".join(f"class Sub{i} {{ public static int answer() {{ return -999; }} }}\n" for i in range(1, 400)) + \
    "class Math { }\nclass Tail {"
JAVA_RECORD_SIZE = """
    StringBuilder big = new StringBuilder();
    for (int i = 0; i < (1 << 20); i++) big.append('x');
    for (int i = 0; i < 4; i++) System.out.print(big);
    throw new RuntimeException(big.toString());
}"""
JAVAC_FOLDS = """
    throw new RuntimeException("hostile");
}
""" + folded_strings(13)
RECORD_SIZE = """
    import os, json
    big = "x" * (1200 << 10)
    for c in range(50):
        os.write(3, (json.dumps({"c": c, "status": big, "exception": big, "actual": big}) + "\\n").encode())
    return None
"""
FIRST_BODIES = {"python": {"record-size": RECORD_SIZE},
                "java": {"class-injection": CLASS_INJECTION, "record-size": JAVA_RECORD_SIZE, "javac-folds": JAVAC_FOLDS}}


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[
    pytest.mark.java, pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")])])
def test_programs_that_reach_for_the_others_first_in_the_dataset_change_no_other_label(language, tmp_path):
    problems, submissions = generate(language, students=12, problems=4, seed=4)
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    write_dataset(clean, problems, submissions)
    bodies = FIRST_BODIES[language]
    hostile = [hostile_row(submissions, language, body, f"hostile-{kind}") for kind, body in bodies.items()]
    write_dataset(dirty, problems, pl.concat([*hostile, submissions]))
    before = annotate(clean, tmp_path)
    after = annotate(dirty, tmp_path)
    assert sorted(after.filter(pl.col("student_id").str.starts_with("hostile"))["student_id"]) == \
        sorted(f"hostile-{kind}" for kind in bodies)
    assert after.filter(~pl.col("student_id").str.starts_with("hostile")).equals(before)
    assert before.height >= 40


# Java bodies whose code runs later, on a thread that is not the case thread (tests/sandbox_attacks.py)
LATER_JAVA_BODIES = {
    "finalizer-exits": """
    class Bomb {
        @Override protected void finalize() throws Throwable {
            while (true) try { System.exit(7); } catch (SecurityException e) { }
        }
    }
    new Bomb();
    System.gc();
    try { Thread.sleep(50); } catch (InterruptedException e) { }
    throw new RuntimeException("hostile");
}""",
    "finalizer-holds-the-output-lock": """
    class Hog {
        @Override protected void finalize() throws Throwable { synchronized (System.out) { Thread.sleep(60000); } }
    }
    new Hog();
    System.gc();
    try { Thread.sleep(50); } catch (InterruptedException e) { }
    throw new RuntimeException("hostile");
}""",
    "common-pool-worker-exits": """
    java.util.concurrent.ForkJoinPool.commonPool().execute(() -> {
        while (true) try { System.exit(7); } catch (SecurityException e) { }
    });
    try { Thread.sleep(50); } catch (InterruptedException e) { }
    throw new RuntimeException("hostile");
}""",
    "thread-local-holds-memory": """
    class Keep { static final ThreadLocal<byte[]> HELD = new ThreadLocal<>(); }
    if (Keep.HELD.get() == null) Keep.HELD.set(new byte[150 << 20]);
    throw new RuntimeException("hostile");
}""",
}


def hostile_row(submissions: pl.DataFrame, language: str, body: str | None = None,
                student: str = "hostile") -> pl.DataFrame:
    """A submission to the first problem whose body is the attack, under the problem's own signature."""
    model = submissions.row(0, named=True)
    code = model["code"]
    if language == "python":
        header = next(line for line in code.splitlines() if line.startswith("def "))
        hostile = header + "\n" + (body or PYTHON_BODY)
    else:
        header = re.match(r"[^{]*\{", code).group(0)
        hostile = header + (body or JAVA_BODY)
    return pl.DataFrame([{**model, "student_id": student, "step": 0, "code": hostile, "score": 0.0,
                          "correct": False, "true_errors": []}], schema=submissions.schema)


def annotate(folder, tmp_path) -> pl.DataFrame:
    params = tmp_path / "params.yaml"
    params.write_text(PARAMS)
    main(["annotate", str(folder), "--params", str(params)])
    return pl.read_parquet(folder / "annotations.parquet")


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=[
    pytest.mark.java, pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")])])
def test_one_hostile_submission_changes_no_other_label(language, tmp_path):
    problems, submissions = generate(language, students=12, problems=4, seed=4)
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    write_dataset(clean, problems, submissions)
    write_dataset(dirty, problems, pl.concat([submissions, hostile_row(submissions, language)]))
    before = annotate(clean, tmp_path)
    after = annotate(dirty, tmp_path)
    hostile = after.filter(pl.col("student_id") == "hostile")
    assert hostile.height == 1
    others = after.filter(pl.col("student_id") != "hostile")
    assert others.equals(before)   # same rows in the same order (the hostile one came last)
    assert before.height >= 40


def test_submissions_with_hostile_records_get_their_own_rows_and_change_no_other(tmp_path):
    problems, submissions = generate("python", students=12, problems=4, seed=4)
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    write_dataset(clean, problems, submissions)
    hostile = [hostile_row(submissions, "python", body, f"hostile-{kind}") for kind, body in RECORD_BODIES.items()]
    write_dataset(dirty, problems, pl.concat([submissions, *hostile]))
    before = annotate(clean, tmp_path)
    after = annotate(dirty, tmp_path)
    assert sorted(after.filter(pl.col("student_id").str.starts_with("hostile"))["student_id"]) == \
        sorted(f"hostile-{kind}" for kind in RECORD_BODIES)
    assert after.filter(~pl.col("student_id").str.starts_with("hostile")).equals(before)


@pytest.mark.java
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
def test_java_code_that_runs_after_its_program_changes_no_other_label(tmp_path):
    """Finalizers, a common-pool task and a thread-local outlive their program; the programs after
    them (the hostile rows come first, so they share a JVM with the rest) keep their labels."""
    problems, submissions = generate("java", students=12, problems=4, seed=4)
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    write_dataset(clean, problems, submissions)
    hostile = [hostile_row(submissions, "java", body, f"hostile-{kind}") for kind, body in LATER_JAVA_BODIES.items()]
    write_dataset(dirty, problems, pl.concat([*hostile, submissions]))
    before = annotate(clean, tmp_path)
    after = annotate(dirty, tmp_path)
    assert sorted(after.filter(pl.col("student_id").str.starts_with("hostile"))["student_id"]) == \
        sorted(f"hostile-{kind}" for kind in LATER_JAVA_BODIES)
    others = after.filter(~pl.col("student_id").str.starts_with("hostile"))
    assert others.equals(before)
