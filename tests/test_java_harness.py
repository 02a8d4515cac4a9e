"""The Java harness as it ships: kaser/code/KaserHarness.java, package data read by java_harness.

    .venv/bin/python -m pytest -q tests/test_java_harness.py
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from kaser.code import java_harness

HARNESS_FILE = Path(java_harness.__file__).with_name(f"{java_harness.HARNESS_CLASS}.java")


def test_the_harness_source_is_the_java_file():
    assert java_harness.HARNESS_SOURCE.encode("utf-8") == HARNESS_FILE.read_bytes()


@pytest.mark.java
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac on PATH) to compile the harness")
def test_the_harness_compiles(tmp_path):
    run = subprocess.run(["javac", "-nowarn", "-Xlint:none", "-encoding", "UTF-8", "-d", str(tmp_path),
                          str(HARNESS_FILE)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / f"{java_harness.HARNESS_CLASS}.class").is_file()
