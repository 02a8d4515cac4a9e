"""The CPU study's DVC experiment: configs/study.yaml turned into `dvc exp run -S` settings, run in
the workspace, with params.yaml put back as it was found afterwards (also when the run fails).

    make study                                            # what the Makefile runs
    python studies/cpu_study.py                           # the same experiment, by hand
    python studies/cpu_study.py --name NAME --set grpo.seed=1   # study-seed: one setting changed
    python studies/cpu_study.py --dry-run                 # print the dvc command, run nothing

`dvc exp run` writes its `-S` values into the workspace's params.yaml and leaves them there; this
script saves params.yaml's bytes first and writes them back when the run ends. The run's outputs
and dvc.lock stay as the study left them (so `make study` can copy them and `make study-seed`
reruns only GRPO and what follows); `dvc checkout` after `git checkout dvc.lock` restores the
default's. The experiment itself is kept by DVC (`dvc exp show`, `dvc exp apply`).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

CONFIG = Path("configs") / "study.yaml"
PARAMS = Path("params.yaml")


def load(path: Path) -> dict:
    """configs/study.yaml: `experiment` (name), `target` (stage) and `set` (dotted key -> value)."""
    config = yaml.safe_load(Path(path).read_text())
    missing = {"experiment", "target", "set"} - set(config or {})
    if missing:
        sys.exit(f"{path}: missing {sorted(missing)}; see {CONFIG}")
    return config


def setting(key: str, value: object) -> str:
    """`key=value` as `dvc exp run -S` reads it (YAML flow style).

    >>> setting("model.splits", ["student"]), setting("grpo.learning_rate", 1e-05)
    ('model.splits=[student]', 'grpo.learning_rate=1.0e-05')
    """
    text = yaml.safe_dump(value, default_flow_style=True)
    return f"{key}={text.removesuffix(chr(10) + '...' + chr(10)).removesuffix(chr(10))}"


def settings(config: dict, overrides: list[str] = ()) -> list[str]:
    """The `key=value` settings of `config`, each `KEY=VALUE` of `overrides` in its key's place
    (or after them, for a key the config does not set)."""
    values = dict(config["set"])
    for override in overrides:
        key, _, value = override.partition("=")
        values[key] = yaml.safe_load(value)
    return [setting(key, value) for key, value in values.items()]


def exp_run_command(config: dict, name: str | None = None, overrides: list[str] = ()) -> list[str]:
    """The `dvc exp run` words of the study (or of a rerun named `name` with `overrides`)."""
    flags = [word for s in settings(config, overrides) for word in ("-S", s)]
    return ["dvc", "exp", "run", "-n", name or config["experiment"], *flags, config["target"]]


def run_keeping_params(command: list[str], params: Path = PARAMS) -> int:
    """Run `command`, then write params.yaml back byte for byte; the command's exit status."""
    saved = params.read_bytes()
    try:
        return subprocess.run(command).returncode
    finally:
        if params.read_bytes() != saved:
            params.write_bytes(saved)
            print(f"cpu_study: {params} put back as it was before the run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=CONFIG, help="the study's settings")
    parser.add_argument("--name", help="experiment name (default: the config's `experiment`)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting laid over the config's, e.g. grpo.seed=1")
    parser.add_argument("--dry-run", action="store_true", help="print the dvc command only")
    args = parser.parse_args(argv)
    command = exp_run_command(load(args.config), args.name, args.overrides)
    print(shlex.join(command), flush=True)
    return 0 if args.dry_run else run_keeping_params(command)


if __name__ == "__main__":
    sys.exit(main())
