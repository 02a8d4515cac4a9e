"""The baselines stage writes every output dvc.yaml declares for it, whatever subset of baselines
params.yaml `baselines.methods` samples: `make study` samples Student SFT alone, and on a fresh clone
the cache that only ICL and PersonaPrompt fill must still exist afterwards.

    .venv/bin/python -m pytest -q tests/test_baselines_outputs.py
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import pytest
import yaml

from stage_runs import REPO, full_params, stage


def baselines_stage(dataset: str) -> tuple[list[str], list[str]]:
    """The baselines stage of dvc.yaml for `dataset`: the method of each command, its outs."""
    do = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["baselines"]["do"]
    methods = [shlex.split(cmd)[-1] for cmd in do["cmd"]]
    outs = [next(iter(o)) if isinstance(o, dict) else o for o in do["outs"]]
    return methods, [o.replace("${key}", dataset) for o in outs]


def cache_schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


@pytest.mark.parametrize("sampled", [
    [],                 # nothing sampled: every command only writes its empty outputs
    ["student_sft"],    # make study: ICL and PersonaPrompt, which fill the cache, are left out
])
def test_baselines_stage_writes_every_declared_output(tmp_path, monkeypatch, sampled):
    from kaser.llm import ResponseCache

    params = full_params({"baselines": {"methods": sampled}})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    methods, outs = baselines_stage("toy")
    generate = stage("generate")
    for method in methods:
        if method not in sampled:       # a sampled one needs a model: the slow test below runs it
            generate.main("toy", method)
    missing = [out for out in outs if Path(out).stem not in sampled and not Path(out).exists()]
    assert not missing, f"declared by dvc.yaml's baselines stage, not written: {missing}"
    # the empty cache is the real one: a later run with ICL reads and fills it
    cache_path = tmp_path / "data/toy" / params["baselines"]["cache_file"]
    ResponseCache(tmp_path / "reference.sqlite").close()
    assert cache_schema(cache_path) == cache_schema(tmp_path / "reference.sqlite")
    cache = ResponseCache(cache_path)
    cache.put("key", "local:smollm2", "icl-v1#0", "def f():\n    pass", 10, 5)
    assert cache.get("key") == "def f():\n    pass" and len(cache) == 1
    cache.close()
