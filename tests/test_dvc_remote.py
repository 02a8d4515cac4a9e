"""The LLM response cache as a persistent DVC output: `dvc push` to a local remote, `dvc pull` back.

A throwaway git + DVC repository with one stage that writes llm_cache.sqlite through
kaser.llm.ResponseCache (as `stages/annotate.py` does), declared `persist: true` like the annotate
stage of dvc.yaml. The cache is pushed to a folder remote, deleted together with DVC's local
cache, and pulled back byte for byte. Uses the dvc of the virtual environment running the tests.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DVC = Path(sys.executable).with_name("dvc")

FILL_CACHE = textwrap.dedent("""
    from kaser.llm import ResponseCache
    cache = ResponseCache("llm_cache.sqlite")
    cache.put("key-1", "o4-mini", "error-labelling-v1", '{"errors": []}', 1000, 500)
    cache.close()
""")


def dvc(repo: Path, *args: str) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "GIT_TERMINAL_PROMPT": "0"}
    run = subprocess.run([str(DVC), *args], cwd=repo, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, f"dvc {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.skipif(not DVC.exists() or shutil.which("git") is None, reason="needs dvc in the venv and git")
def test_llm_cache_survives_push_and_pull(tmp_path):
    repo, remote = tmp_path / "repo", tmp_path / "remote"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    dvc(repo, "init", "-q")
    dvc(repo, "remote", "add", "-d", "shared", str(remote))
    (repo / "fill_cache.py").write_text(FILL_CACHE)
    dvc(repo, "stage", "add", "-n", "annotate", "--outs-persist", "llm_cache.sqlite",
        "-d", "fill_cache.py", f"{sys.executable} fill_cache.py")
    dvc(repo, "repro")
    cache = repo / "llm_cache.sqlite"
    before = sha256(cache)
    assert "persist: true" in (repo / "dvc.yaml").read_text()

    dvc(repo, "push")
    cache.unlink()
    shutil.rmtree(repo / ".dvc" / "cache")
    dvc(repo, "pull")

    assert sha256(cache) == before
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT response FROM responses WHERE key = 'key-1'").fetchone() == ('{"errors": []}',)
