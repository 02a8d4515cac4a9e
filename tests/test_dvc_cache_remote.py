"""The LLM response cache travels through a DVC remote: push from one clone, pull into another.

A team pays for annotation once: the stage declares data/<ds>/llm_cache.sqlite as a persistent
output, `dvc push` sends it to a remote, and `dvc pull` restores it byte for byte elsewhere.
The test builds a throwaway git + DVC repository with such a stage and a local folder remote.
"""

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

DVC = Path(sys.executable).with_name("dvc")

STAGE = """\
stages:
  annotate:
    cmd: python make_cache.py
    deps: [make_cache.py]
    outs:
      - llm_cache.sqlite:
          persist: true
"""

MAKE_CACHE = """\
import sqlite3
db = sqlite3.connect("llm_cache.sqlite")
db.execute("create table if not exists answers (key text primary key, answer text)")
db.execute("insert or replace into answers values ('abc', '{\\"errors\\": []}')")
db.commit()
db.close()
"""


def run(*args, cwd):
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.skipif(not DVC.exists() or shutil.which("git") is None, reason="needs dvc and git")
def test_cache_pushes_and_pulls_byte_identical(tmp_path):
    repo, remote = tmp_path / "repo", tmp_path / "remote"
    repo.mkdir()
    run("git", "init", "-q", cwd=repo)
    run("git", "config", "user.email", "t@example.org", cwd=repo)
    run("git", "config", "user.name", "t", cwd=repo)
    run(DVC, "init", "-q", cwd=repo)
    run(DVC, "remote", "add", "-d", "shared", remote, cwd=repo)
    (repo / "dvc.yaml").write_text(STAGE)
    (repo / "make_cache.py").write_text(MAKE_CACHE)
    run(DVC, "repro", "-q", cwd=repo)
    original = (repo / "llm_cache.sqlite").read_bytes()
    run(DVC, "push", "-q", cwd=repo)

    # a colleague's machine: same commit, no cache, no local DVC store
    (repo / "llm_cache.sqlite").unlink()
    shutil.rmtree(repo / ".dvc" / "cache")
    run(DVC, "pull", "-q", cwd=repo)
    assert (repo / "llm_cache.sqlite").read_bytes() == original
    answers = sqlite3.connect(repo / "llm_cache.sqlite").execute("select key from answers").fetchall()
    assert answers == [("abc",)]
    # nothing to do afterwards: the pulled cache is exactly what the lock file recorded
    assert "up to date" in run(DVC, "status", cwd=repo).lower() or \
        "unchanged" in run(DVC, "status", cwd=repo).lower()
