"""Each baseline's stage writes every output dvc.yaml declares for it, whatever subset of baselines
params.yaml `baselines.methods` samples: `make study` samples Student SFT alone, and on a fresh clone
the caches that only ICL and PersonaPrompt fill must still exist afterwards.

    .venv/bin/python -m pytest -q tests/test_baselines_outputs.py
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import pytest
import yaml

from stage_runs import REPO, full_params, stage


def baseline_stages(dataset: str) -> dict[str, list[str]]:
    """The outs of each baseline's stage of dvc.yaml for `dataset`, by the method its command
    samples (the stages that run stages/generate.py, less KASER's `generate`)."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    found = {}
    for name, stage in stages.items():
        words = shlex.split(stage["do"]["cmd"]) if "do" in stage else []
        if "stages/generate.py" in words and name != "generate":
            outs = [next(iter(o)) if isinstance(o, dict) else o for o in stage["do"]["outs"]]
            found[words[-1]] = [o.replace("${key}", dataset) for o in outs]
    return found


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
    stages = baseline_stages("toy")
    assert set(stages) == {"student_sft", "icl", "persona", "parastudent"}
    generate = stage("generate")
    for method in stages:
        if method not in sampled:       # a sampled one needs a model: the slow tests run it
            generate.main("toy", method)
    missing = [out for method, outs in stages.items() if method not in sampled
               for out in outs if not Path(out).exists()]
    assert not missing, f"declared by dvc.yaml's baseline stages, not written: {missing}"
    # each empty cache is the real one: a later run with ICL or PersonaPrompt reads and fills it
    ResponseCache(tmp_path / "reference.sqlite").close()
    caches = [out for outs in stages.values() for out in outs if out.endswith(".sqlite")]
    assert sorted(caches) == ["data/toy/baseline_cache/icl.sqlite", "data/toy/baseline_cache/persona.sqlite"]
    for cache_path in caches:
        assert cache_schema(Path(cache_path)) == cache_schema(tmp_path / "reference.sqlite")
        cache = ResponseCache(cache_path)
        cache.put("key", "local:smollm2", "icl-v1#0", "def f():\n    pass", 10, 5)
        assert cache.get("key") == "def f():\n    pass" and len(cache) == 1
        cache.close()
