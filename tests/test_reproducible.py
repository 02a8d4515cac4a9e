"""The synthetic datasets are the same bytes on every machine.

    .venv/bin/python -m pytest tests/test_reproducible.py            # fast part
    .venv/bin/python -m pytest -m slow tests/test_reproducible.py    # both default datasets, minutes

What could make them differ: numpy picks its exp kernel by CPU (AVX-512, AVX2 or plain) and the
kernels differ in the last bit, so kaser/data/synth/students.py computes the students' mastery
(`true_mastery`) with Decimal, not np.exp. A process can play an older CPU:
NPY_DISABLE_CPU_FEATURES switches numpy's kernels off and GLIBC_TUNABLES libm's AVX2/FMA variants. The slow test builds each default dataset twice with
`stages/prepare.py`: once plainly, once as such an older CPU, from another working directory,
with another hash seed, locale and TMPDIR, pinned to one core that busy processes keep loaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stage_runs import commented_dataset

REPO = Path(__file__).resolve().parents[1]
needs_jdk = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")


def _wider_kernels() -> list[str]:
    """numpy's CPU levels above its baseline that this machine has (switched off to play an older CPU)."""
    from numpy._core._multiarray_umath import __cpu_features__
    return [level for level in ("X86_V3", "X86_V4") if __cpu_features__.get(level)]


def _older_cpu(env: dict) -> dict:
    levels = _wider_kernels()
    if not levels:
        pytest.skip("numpy has no wider kernels to switch off on this CPU")
    return {**env, "NPY_DISABLE_CPU_FEATURES": " ".join(levels),
            "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA"}


def _env(**extra) -> dict:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": "0", **extra}


def _digest(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.md5(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir())}


DRAW = """
import hashlib, numpy as np
from kaser.data.synth.students import draw_students, error_chance
students = draw_students(200, [f"kc{i}" for i in range(20)], 30, np.random.default_rng([1, 11]))
chances = [error_chance("Logical", 1.0, m) for s in students for m in s.mastery]
print(hashlib.md5(repr([(s.mastery, s.learn_rate, s.order, s.style) for s in students]
                       + chances).encode()).hexdigest())
"""


def test_students_are_the_same_bits_with_other_cpu_kernels():
    def draw(env):
        run = subprocess.run([sys.executable, "-c", DRAW], env=env, capture_output=True, text=True,
                             cwd=REPO, timeout=300)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert draw(_env()) == draw(_older_cpu(_env()))


def _prepare(name: str, folder: Path, env: dict, *, one_core: bool = False) -> dict[str, str]:
    folder.mkdir(parents=True)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    if name not in params["datasets"]:
        params["datasets"][name] = commented_dataset(name)     # documented, off in the default
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    cpu = sorted(os.sched_getaffinity(0))[:1]
    run = subprocess.run([sys.executable, str(REPO / "stages" / "prepare.py"), name], cwd=folder, env=env,
                         capture_output=True, text=True, timeout=3600,
                         preexec_fn=(lambda: os.sched_setaffinity(0, cpu)) if one_core else None)
    assert run.returncode == 0, run.stderr[-3000:]
    return _digest(folder / "data" / name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["synthetic-python",
                                  pytest.param("synthetic-java", marks=[pytest.mark.java, needs_jdk])])
def test_prepare_gives_the_same_bytes_under_other_conditions(name, tmp_path):
    plain = _prepare(name, tmp_path / "plain", _env())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    other_env = _older_cpu(_env(PYTHONHASHSEED="12345", LC_ALL="C", LANG="C", TMPDIR=str(scratch),
                                TZ="Pacific/Chatham"))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(max(2, len(os.sched_getaffinity(0))))]
    try:
        other = _prepare(name, tmp_path / "elsewhere" / "deeper", other_env, one_core=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert set(plain) == {"problems.parquet", "submissions.parquet", "folds.json", "metadata.json"}
    assert plain == other
