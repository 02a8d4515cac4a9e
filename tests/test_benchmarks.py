"""Every benchmark runs at its smoke size, so none can rot unnoticed.

    .venv/bin/python -m pytest -q tests/test_benchmarks.py             # the fast ones
    .venv/bin/python -m pytest -q -m slow tests/test_benchmarks.py     # the ones with a model

Each script in benchmarks/ runs as a subprocess with `--smoke` (seconds of work) and must exit 0
with a last stdout line `name: value`, the value a number.
"""

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
ITAP = ROOT.parent / "shared" / "data" / "itap_python_sample"
LAST_LINE = re.compile(r"^(\w+): (\S+)$")

slow = pytest.mark.slow   # more than ~10 s on 2 cores: loads a model
CASES = [   # script, arguments after --smoke, marks
    ("annotate_speed.py", [], []),
    ("code_endings.py", [], [slow]),          # ~6 s: tiny model, Student SFT twice on 2 pairs, then sampling
    ("derived_kcs.py", [], []),
    ("error_reward_gaming.py", [], []),
    ("error_reward_signal.py", [], []),
    ("generate_speed.py", [], [slow]),        # ~15 s: tiny model and population, both engines
    ("gpu_check.py", ["--out", "{tmp}/gpu_check.json"], [slow]),   # ~35 s: tiny model, SFT + GRPO on CPU
    ("grpo_learns.py", ["--own-sft", "4", "-S", "sft.learning_rate=1e-3"], [slow]),   # ~45 s: tiny model,
                                              # its own SFT, then GRPO, no-error GRPO and SFT arms
    ("grpo_update_speed.py", [], [slow]),     # ~15 s: tiny model, both forwards of 2 groups
    ("judge_speed.py", [], []),
    ("reward_speed.py", [], []),
    ("synth_speed.py", [], []),
    ("testless_annotation.py", [], [pytest.mark.skipif(
        not ITAP.is_dir(), reason=f"the ITAP ProgSnap2 sample it reads is not here ({ITAP})")]),
]
NOT_RUN = {   # files in benchmarks/ that are no benchmark of their own, and why
    "gpu_check.sh": "unpacks a carried folder of wheels on a GPU machine, then runs gpu_check.py (tested here)",
    "_overrides.py": "the -S parser of code_endings.py and grpo_learns.py (tested through both)",
}


def test_every_benchmark_has_a_smoke_run():
    listed = {script for script, _, _ in CASES} | set(NOT_RUN)
    present = {path.name for path in BENCHMARKS.iterdir() if path.is_file()}
    assert present == listed, f"not in CASES: {present - listed}; gone: {listed - present}"


@pytest.mark.parametrize("script, arguments", [pytest.param(s, a, marks=m, id=s) for s, a, m in CASES])
def test_benchmark_smoke_run_ends_with_its_figure(script, arguments, tmp_path):
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, str(BENCHMARKS / script), "--smoke",
               *(a.format(tmp=tmp_path) for a in arguments)]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, \
        f"{script} --smoke exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    lines = run.stdout.strip().splitlines()
    assert lines, f"{script} --smoke printed nothing"
    found = LAST_LINE.match(lines[-1])
    assert found, f"{script}: last line {lines[-1]!r} is not `name: value`"
    assert math.isfinite(float(found.group(2))), f"{script}: {found.group(2)!r} is not a finite number"


def test_generate_speed_refuses_to_time_a_random_model_unasked(tmp_path):
    run = subprocess.run([sys.executable, str(BENCHMARKS / "generate_speed.py"), "--model",
                          str(tmp_path / "no-model")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2
    assert "no-model is not there: run `dvc repro base_model` first" in run.stderr
    assert "speedup" not in run.stdout


@pytest.mark.parametrize("script, arguments, message", [
    ("code_endings.py", ["--endings", "newline,crlf"], "--endings 'newline,crlf': give some of stripped, newline"),
    ("code_endings.py", ["--adapter", "sft={tmp}"], "--adapter 'sft={tmp}': give NAME=PATH of a trained adapter"),
    ("code_endings.py", ["--endings", "newline", "--adapter", "sft={tmp}"],
     "--endings trains adapters and --adapter samples given ones: give one of them"),
    ("code_endings.py", ["-S", "grpo.beta=0.1"], "-S 'grpo.beta=0.1': give sft.<key>=<value> or generate.<key>=<value>"),
    ("grpo_learns.py", ["-S", "sft.max_pairs"], "-S 'sft.max_pairs': give grpo.<key>=<value> or sft.<key>=<value>"),
], ids=["unknown-ending", "not-an-adapter", "endings-and-adapter", "code-endings-setting", "grpo-learns-setting"])
def test_benchmark_argument_errors_name_the_argument(script, arguments, message, tmp_path):
    """Each stops before training or sampling, with exit status 1 and one line naming what was given."""
    run = subprocess.run([sys.executable, str(BENCHMARKS / script), *(a.format(tmp=tmp_path) for a in arguments)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr[-2000:]
    assert f"{script}: {message.format(tmp=tmp_path)}" in run.stderr
