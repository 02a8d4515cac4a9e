"""The commands README.md and docs/ document, run as written on a fresh copy of the repository.

The copy holds the working tree as git sees it (committed and uncommitted files, nothing ignored),
so its DVC cache and every pipeline output start empty, as on a fresh clone. Its params.yaml is
the repository's with the sizes cut to seconds of work (TINY) and the tiny model as the base; the
commands themselves are read from the Makefile, README.md and docs/ and run with only their sizes
changed. The tests run in order and build on each other, as a user's session would:

1. `dvc repro` with `baselines.methods: [student_sft]` (no ICL, no PersonaPrompt) and the
   documented ProgSnap2 dataset entry pointing at a small ProgSnap2 fixture;
2. `make study`, the Makefile's own recipe and configs/study.yaml, sizes overridden;
3. the documented `dvc exp run` lines: an ablation, a reward-weight change, `dvc exp show`;
4. the README's `kaser` lines: synth, ingest of each format (small release folders of
   tests/release_files.py), annotate, cluster, knowledge, simulate with a profile and with
   `--population`.

Every command line in a README.md or docs/ code block is either run here or says beside it, in a
`# not run by the tests: ...` comment, why not (test_every_documented_command_is_run_or_says_why).

    .venv/bin/python -m pytest -q -m slow tests/test_documented_commands.py
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from release_files import codeworkout, falconcode
from stage_runs import commented_dataset
from tiny_lm import tiny_model_folder

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NOT_RUN = "not run by the tests:"

# params.yaml keys (dotted) set in the copy: seconds of work, every stage still runs
TINY = {
    "splits.folds": 2,
    "knowledge.max_epochs": 2, "knowledge.patience": 1, "knowledge.hidden_size": 8,
    "knowledge.projection": 4,
    "annotate.repair_rounds": 1, "annotate.max_repairs": 5, "annotate.generated_inputs": 8,
    "sft.max_pairs": 4, "sft.batch_size": 2, "sft.max_length": 512,
    "grpo.max_pairs": 2, "grpo.num_generations": 2, "grpo.max_completion_length": 8,
    "generate.k": 2, "generate.max_new_tokens": 8, "generate.max_pairs": 2,
    "baselines.history": 2, "baselines.persona_history": 2, "baselines.persona_max_new_tokens": 8,
    "baselines.parastudent_max_pairs": 2, "baselines.parastudent_max_length": 512,
    "evaluate.k_values": [1, 2], "evaluate.max_codes_per_problem": 10,
    "report.tsne_max_points": 20, "sweep.k": 1,
}
# the sizes among configs/study.yaml's settings, and what `make study` runs with here
STUDY_SIZES = {"sft.max_pairs": 4, "grpo.max_pairs": 2, "grpo.epochs": 2, "generate.max_pairs": 2,
               "evaluate.max_codes_per_problem": 10}
SYNTHETIC_SIZE = {"students": 12, "problems": 4}


def set_key(params: dict, key: str, value) -> None:
    *path, last = key.split(".")
    node = params
    for part in path:
        node = node[part]
    assert last in node, f"{key} is not a params.yaml key"
    node[last] = value


def documented_progsnap2_entry() -> dict:
    """The commented-out ProgSnap2 dataset entry of params.yaml (`itap-python:`)."""
    entry = commented_dataset("itap-python")
    assert entry["source"] == "progsnap2", entry
    return entry


def progsnap2_fixture(root: Path) -> Path:
    """A small ProgSnap2 log: synthetic Python students' submissions as Submit events with a Score,
    no problem table (statements, signatures and KCs come from the codes, as for the ITAP sample)."""
    from kaser.data.synth import generate

    _, submissions = generate("python", students=10, problems=3, seed=7)
    rows = submissions.sort("student_id", "step")
    codes = {code: f"c{i}" for i, code in enumerate(dict.fromkeys(rows["code"]))}
    root.mkdir(parents=True)
    pl.DataFrame({
        "EventType": ["Submit"] * rows.height,
        "EventID": [f"e{i}" for i in range(rows.height)],
        "Order": rows["step"], "SubjectID": rows["student_id"], "ProblemID": rows["problem_id"],
        "ToolInstances": ["Python 3"] * rows.height,
        "CodeStateID": [codes[code] for code in rows["code"]], "Score": rows["score"],
    }).write_csv(root / "MainTable.csv")
    pl.DataFrame({"CodeStateID": list(codes.values()), "Code": list(codes)}).write_csv(
        root / "CodeState.csv")
    return root


def tiny_params(raw: Path) -> str:
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    for key, value in TINY.items():
        set_key(params, key, value)
    params["model"]["base"] = str(tiny_model_folder())
    for entry in params["datasets"].values():
        if entry["source"] == "synthetic":
            entry.update(SYNTHETIC_SIZE)
    params["datasets"]["course"] = documented_progsnap2_entry() | {"raw": str(raw)}
    params["baselines"]["methods"] = ["student_sft"]
    params["evaluate"]["methods"] = ["kaser", "student_sft"]
    return yaml.safe_dump(params, sort_keys=False)


class Copy:
    """The fresh copy and how to run a command in it: the test's venv first on PATH (as `make`
    does), the copy's own kaser package first on sys.path, a fixed git identity for experiments."""

    def __init__(self, root: Path):
        self.root = root
        self.env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                    "PYTHONPATH": str(root), "DVC_NO_ANALYTICS": "1",
                    "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.org",
                    "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.org"}

    def run(self, command: str | list[str], timeout: float = 900) -> str:
        argv = shlex.split(command) if isinstance(command, str) else command
        done = subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True, text=True,
                              timeout=timeout)
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{output[-6000:]}"
        return output

    def read_json(self, path: str) -> dict:
        return json.loads((self.root / path).read_text())


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Copy:
    root = tmp_path_factory.mktemp("fresh") / "repo"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.split(b"\0")):
        source, target = REPO / os.fsdecode(name), root / os.fsdecode(name)
        if source.is_file() or source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    assert not (root / ".dvc" / "cache").exists()
    (root / "params.yaml").write_text(tiny_params(progsnap2_fixture(root.parent / "raw-course")))
    copy = Copy(root)
    copy.run("git init -q")
    copy.run("git add -A")
    copy.run(["git", "commit", "-qm", "fresh copy, tiny sizes"])
    return copy


def datasets(copy: Copy) -> list[str]:
    return list(yaml.safe_load((copy.root / "params.yaml").read_text())["datasets"])


def bash_lines(path: Path) -> list[str]:
    """The command lines of the bash code blocks of `path`, continuation lines joined; a comment
    line right below a command belongs to it."""
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", path.read_text(), re.S):
        follows = False
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.strip()
            if line.startswith("#") and follows:
                lines[-1] += " " + line
            elif line and not line.startswith("#"):
                lines.append(line)
            follows = bool(line) and (follows or not line.startswith("#"))
    return lines


def command(line: str) -> str:
    """A documented line without its comment and its optional parts (`[--flag value]`,
    `[NAME ...]`); a YAML list such as `-S 'x=[0,1]'` stays."""
    return re.sub(r"\s+\[(--|[A-Z])[^\]]*\]", "", line.split("  #", 1)[0].split(" # ", 1)[0]).strip()


def tiny_study_config(path: Path) -> Path:
    """configs/study.yaml with the sizes of STUDY_SIZES, each setting otherwise as written."""
    config = yaml.safe_load((REPO / "configs" / "study.yaml").read_text())
    assert set(STUDY_SIZES) <= set(config["set"]), config["set"]
    config["set"] |= STUDY_SIZES
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def experiment_lines() -> list[str]:
    """The dvc lines of docs/experiments-and-studies.md that these tests run: all but those that
    say why not."""
    return [command(line) for line in bash_lines(REPO / "docs" / "experiments-and-studies.md")
            if line.startswith("dvc ") and NOT_RUN not in line]


def readme_kaser_lines() -> list[str]:
    """The README's `kaser ...` lines that these tests run: all of them."""
    return [command(line) for line in bash_lines(REPO / "README.md") if line.startswith("kaser ")]


def kaser_line(line: str, raws: dict[str, Path]) -> str:
    """A README `kaser` line at the copy's sizes: a smaller synthetic population, and for
    `kaser ingest <format> RAW/` a small release folder of that format."""
    line = re.sub(r"--students \d+", "--students 6", re.sub(r"--problems \d+", "--problems 3", line))
    for source, raw in raws.items():
        line = line.replace(f"ingest {source} RAW/", f"ingest {source} {raw}")
    assert "RAW/" not in line, f"no release folder for {line}"
    return line


@pytest.mark.slow
def test_documented_commands_on_a_fresh_copy(fresh):
    """One test, not several: the steps build on each other as a user's session does."""
    # 1. dvc repro on an empty cache: Student SFT is the only baseline, a ProgSnap2 dataset entry
    fresh.run("dvc repro")
    for name in datasets(fresh):
        data = fresh.root / "data" / name
        for cached in ("icl", "persona"):                                   # declared, though unused
            assert (data / "baseline_cache" / f"{cached}.sqlite").is_file(), (name, cached)
        assert pl.read_parquet(data / "predictions" / "icl.parquet").height == 0
        assert pl.read_parquet(data / "predictions" / "student_sft.parquet").height > 0
        evaluation = fresh.read_json(f"reports/{name}/evaluation.json")
        assert set(evaluation["methods"]) == {"kaser", "student_sft"}
    assert fresh.read_json("data/course/metadata.json")["source"] == "progsnap2"
    assert "course" in (fresh.root / "reports" / "README.md").read_text()
    status = fresh.run("dvc status")           # every declared output exists; nothing reruns
    assert "up to date" in status, status

    # 2. make study, then make study-seed: the Makefile's recipes and settings, sizes cut, on the
    # test's venv (-o: no reinstall). The committed results they copy are removed first, so what
    # is found afterwards was copied by this run.
    venv = Path(sys.prefix)
    study = fresh.root / "reports" / "study-student-python"
    copied = ("pair_scores.csv", "grpo_groups.csv", "predictions_kaser.parquet")
    for name in copied:
        (study / name).unlink()
    shutil.rmtree(study / "grpo-seed-1", ignore_errors=True)
    make = ["make", "-o", str(venv / ".kaser-installed"), f"VENV={venv}",
            f"STUDY_CONFIG={tiny_study_config(fresh.root.parent / 'study.yaml')}"]
    params = (fresh.root / "params.yaml").read_bytes()
    output = fresh.run([*make, "study"])
    assert "study end" in output, output[-3000:]
    evaluation = fresh.read_json("reports/synthetic-python/evaluation.json")
    assert set(evaluation["methods"]) == {"kaser", "student_sft"}
    assert evaluation["methods"]["kaser"]["per_pair_split"] == "student"
    assert all((study / name).is_file() for name in copied)
    assert (fresh.root / "params.yaml").read_bytes() == params      # the study's values are not left there
    output = fresh.run([*make, "study-seed"])
    assert "study-seed end" in output, output[-3000:]
    assert (fresh.root / "params.yaml").read_bytes() == params
    assert "grpo.seed=1" in output
    assert all((study / "grpo-seed-1" / name).is_file() for name in copied)

    # 3. docs/experiments-and-studies.md's dvc lines, each from the copy's own params.yaml
    lines = experiment_lines()
    assert any("ablations.rewards" in line for line in lines), lines
    for line in lines:
        fresh.run("git checkout -- params.yaml")
        fresh.run(line)
        if "ablations.rewards" in line:
            evaluation = fresh.read_json("reports/synthetic-python/evaluation.json")
            assert {"kaser_no_sim", "kaser_no_err", "kaser_no_div"} <= set(evaluation["methods"])
    assert "study-student-python" in fresh.run("dvc exp list")

    # 4. the README's kaser lines, after the pipeline has trained the adapters they use
    fresh.run("git checkout -- params.yaml")
    fresh.run("dvc repro")
    (fresh.root / "task.txt").write_text("Write a method that returns the sum of the even numbers "
                                         "in an array.")
    lines = readme_kaser_lines()
    assert any("--population" in line for line in lines), lines
    raws = {"progsnap2": fresh.root.parent / "raw-course",
            "codeworkout": codeworkout(fresh.root.parent / "raw-codeworkout"),
            "falconcode": falconcode(fresh.root.parent / "raw-falconcode")}
    for line in lines:
        fresh.run(kaser_line(line, raws))
    assert (fresh.root / "scratch" / "java" / "mastery.parquet").is_file()
    for name in ("course", "cw", "falcon"):
        assert (fresh.root / "scratch" / name / "problems.parquet").is_file(), name
    for out in ("scratch/sim", "scratch/class"):
        assert fresh.read_json(f"{out}/simulation.json")
        assert (fresh.root / out / "simulation.md").is_file()


def run_elsewhere(line: str) -> bool:
    """A line that names the test file that runs it (a pytest line, or `tests/test_x.py` in its
    comment), where that file exists."""
    named = re.findall(r"tests/test_\w+\.py", line)
    return bool(named) and all((REPO / name).is_file() for name in named)


def test_every_documented_command_is_run_or_says_why():
    """Each command line of a bash block in README.md or docs/ is run by the test above, names
    the test that runs it, or says `not run by the tests: <why>` beside it."""
    run_here = {"make study", "make study-seed", *experiment_lines(), *readme_kaser_lines()}
    silent = [f"{path.relative_to(REPO)}: {line}" for path in DOCUMENTS for line in bash_lines(path)
              if command(line) not in run_here and not run_elsewhere(line) and NOT_RUN not in line]
    assert not silent, "documented, but no test runs it and no reason is given:\n" + "\n".join(silent)


def test_the_coverage_check_sees_a_silent_line():
    assert command("kaser cluster scratch/java [--params p.yaml]   # the vocabulary") == \
        "kaser cluster scratch/java"
    assert command("dvc exp run -S 'grpo.reward_weights=[0,1,1]'   # w/o R_sim") == \
        "dvc exp run -S 'grpo.reward_weights=[0,1,1]'"
    assert not run_elsewhere("dvc push   # after annotating")
    assert run_elsewhere(".venv/bin/python -m pytest -q tests/test_dvc_remote.py")
    assert not run_elsewhere("# see tests/test_no_such_file.py")
