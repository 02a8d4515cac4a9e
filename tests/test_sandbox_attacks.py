"""The hostile suite (tests/sandbox_attacks.py) as the CI user and as an ordinary user.

Each attack must be contained: its neighbours keep their verdicts, nothing of the secret file or
the parent's OPENAI_API_KEY comes back, nothing is written outside the jail, no process outlives
the batch, nothing reaches 127.0.0.1, and the batch ends within the cases' hard limits. As an
ordinary user (root drops to `nobody` for it) and as root of a user namespace of one id (the
attacks of ISSUE_43) the same holds, or every attack is refused with the one explicit line where
the kernel refuses namespaces.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sandbox_attacks import ATTACKS, LIMITS, NEIGHBOURS, TESTS, USERS, contained, program, python_as, run_attack
from stage_runs import full_params

from kaser.code import isolation, java_compiler
from kaser.code.sandbox import Limits, run_tests

needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
ISSUE_JAVA = {"reflection_on_harness_result_store", "eventhandler_processbuilder_thread", "dot_slash_proc_read",
              "file_list_any_folder", "leaves_a_locked_folder_and_a_file_for_the_next_program",
              "finalizer_exits_during_later_programs", "finalizer_holds_the_output_lock",
              "common_pool_worker_exits_during_later_programs", "thread_local_outlives_its_program",
              "declares_its_neighbours_classes", "loads_a_neighbours_class", "throws_thread_death_on_its_last_case",
              "javac_folds_constants_into_gigabytes", "javac_writes_a_class_file_of_megabytes"}


def marks(attack):
    if attack.language == "python":
        return ()
    return (pytest.mark.java, needs_jdk) + (() if attack.name in ISSUE_JAVA else (pytest.mark.slow,))


@pytest.mark.parametrize("attack", [pytest.param(a, marks=marks(a), id=f"{a.language}-{a.name}") for a in ATTACKS])
def test_attack_is_contained(attack):
    report = run_attack(attack)
    assert "refused" not in report, "this machine allows namespaces: the suite must run, not be refused"
    assert contained(report) == [], report


@pytest.mark.parametrize("language", ["python", pytest.param("java", marks=(pytest.mark.java, needs_jdk))])
def test_a_cleanup_that_takes_long_is_charged_to_the_program_that_left_the_mess(language):
    """Folders made until the time limit stops the program: with 3 s cases, its two cases make
    enough that wiping them outlasts the supervisor's patience (2 x 3 + 5 s) unless the jail caps
    them; either way the neighbour after it keeps its verdict."""
    attack = next(a for a in ATTACKS if a.name == "makes_folders_until_stopped" and a.language == language)
    report = run_attack(attack, Limits(case_timeout_s=3.0, writable_mb=16, workers=1))
    assert report["neighbours_ok"], report


@pytest.mark.java
@needs_jdk
def test_javac_folding_constants_stops_at_its_heap():
    """1 KB of source asks javac for gigabytes (5.2 GB resident without a cap): the program fails to
    compile on its own, its neighbours in the same javac run keep their verdicts, and no process
    below the batch holds more than javac's heap and a little."""
    run = subprocess.run([sys.executable, str(Path(__file__).with_name("sandbox_attacks.py")),
                          "javac_folds_constants_into_gigabytes"], cwd="/", capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}, timeout=600)
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["neighbours_ok"] and report["compiled"] is False, report
    assert report["children_peak_mb"] < 2 * java_compiler.JAVAC_HEAP_MB, report


@pytest.mark.java
@needs_jdk
def test_javac_writes_no_class_file_over_its_cap():
    """38 KB of source folded into a 49 MB class file: javac's file-size limit fails that program's
    compile, with javac's own message, and the programs beside it still compile and run."""
    attack = next(a for a in ATTACKS if a.name == "javac_writes_a_class_file_of_megabytes")
    right, wrong = NEIGHBOURS["java"]
    results = run_tests("java", "add", [right, program(attack, {}), wrong], TESTS, LIMITS)
    assert [[c.status for c in r.cases] for r in results] == [["pass", "pass"], [], ["fail", "fail"]]
    assert [d.message for d in results[1].diagnostics] == ["error while writing Sub1: File too large"]


def test_own_verdict_only_for_forged_records():
    """The fd-3 forger forges nothing for its neighbours; what it wrote counts for itself only."""
    report = run_attack(next(a for a in ATTACKS if a.name == "fd3_forges_neighbours"))
    assert report["neighbours_ok"] and report["compiled"] is True


def test_refuses_without_namespaces_unless_unsafe(monkeypatch):
    """Where the kernel refuses the jail: one explicit refusal, and the unsafe fallback only on request."""
    monkeypatch.setattr(isolation, "_jail", lambda: "unshare: unshare failed: Operation not permitted")
    before = set(Path("/dev/shm").glob("kaser-sandbox-*"))
    with pytest.raises(isolation.IsolationUnavailable, match="refusing to run it.*--unsafe-no-isolation"):
        run_tests("python", "add", ["def add(a, b):\n    return a + b\n"], [([1, 2], 3)])
    assert set(Path("/dev/shm").glob("kaser-sandbox-*")) <= before   # a refusal leaves no scratch folder
    unsafe = run_tests("python", "add", ["def add(a, b):\n    return a + b\n"], [([1, 2], 3)],
                       Limits(unsafe_no_isolation=True))
    assert unsafe[0].cases[0].status == "pass"


# the attacks of issue 43 (a program's cost or classes reaching its neighbours), run as every user below
ISSUE_43 = ["fills_the_result_stream_for_the_next_program", "every_record_field_megabytes", "makes_folders_until_stopped",
            "memory_files_hold_a_gigabyte", "memory_files_through_a_second_posix", "makes_fifos_and_device_nodes",
            "listdir_and_scandir_outside", "declares_its_neighbours_classes", "loads_a_neighbours_class",
            "throws_thread_death_on_its_last_case", "javac_folds_constants_into_gigabytes",
            "javac_writes_a_class_file_of_megabytes"]


def _suite_as(command: list[str], names: list[str]) -> None:
    """Run the suite's `names` through `command` (a Python and what it runs under): every attack is
    contained, or every one refused with the one explicit line where the kernel refuses namespaces."""
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([*command, str(root / "tests" / "sandbox_attacks.py"), *names], cwd="/",
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": "/"},
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    reports = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    expected = {(a.language, a.name) for a in ATTACKS if a.name in names
                and (a.language == "python" or shutil.which("javac"))}
    assert {(r["language"], r["name"]) for r in reports} == expected
    refused = [r for r in reports if "refused" in r]
    if refused:   # the kernel refuses namespaces to this user: every attack refused, with the reason
        assert len(refused) == len(reports) and all("--unsafe-no-isolation" in r["refused"] for r in refused)
        assert run.stderr.count("refusing to run it") == 1, run.stderr[-2000:]
    for report in reports:
        assert contained(report) == [], report


@pytest.mark.slow
def test_hostile_suite_as_an_ordinary_user():
    command = python_as("ordinary user")
    if command is None:
        pytest.skip("no setpriv or system Python to run the suite as an ordinary user")
    _suite_as(command, [a.name for a in ATTACKS if a.language == "python" or a.name in ISSUE_JAVA])


@pytest.mark.parametrize("user", USERS)
def test_issue_43_attacks_as_an_ordinary_user_and_as_root_of_a_user_namespace(user):
    """Python and Java, beside the root run above: as `nobody` (or ourselves, when ordinary), and as
    root of a user namespace mapping one id (a rootless container: no fresh ids for the jail)."""
    command = python_as(user)
    if command is None:
        pytest.skip(f"cannot run Python as {user} here")
    _suite_as(command, ISSUE_43)


def test_annotate_refuses_without_namespaces_and_runs_when_told(monkeypatch, tmp_path, capsys):
    """`kaser annotate`: one line and exit 2 where the jail is refused; --unsafe-no-isolation or the
    annotate.unsafe_no_isolation param runs it anyway."""
    from kaser.cli import main
    from kaser.data.contracts import write_dataset
    from kaser.data.synth import generate
    folder = tmp_path / "data"
    write_dataset(folder, *generate("python", students=3, problems=1, seed=0))
    params = tmp_path / "params.yaml"
    annotate = {"backend": "static", "unsafe_no_isolation": False}   # the annotator that runs code
    params.write_text(yaml.safe_dump(full_params({"annotate": annotate})))
    monkeypatch.setattr(isolation, "_jail", lambda: "unshare: unshare failed: Operation not permitted")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["annotate", str(folder), "--params", str(params)])
    assert stop.value.code == 2
    err = capsys.readouterr().err   # progress bars, then the one line
    line = err[err.index("kaser annotate: error:"):].strip()
    assert "\n" not in line and "Traceback" not in err
    assert "refusing to run it" in line and "Operation not permitted" in line
    main(["annotate", str(folder), "--params", str(params), "--unsafe-no-isolation"])
    assert (folder / "annotations.parquet").exists()
    (folder / "annotations.parquet").unlink()
    params.write_text(yaml.safe_dump(full_params({"annotate": annotate | {"unsafe_no_isolation": True}})))
    main(["annotate", str(folder), "--params", str(params)])
    assert (folder / "annotations.parquet").exists()
