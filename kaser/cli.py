"""The `kaser` command: the same work as the DVC stages, on any folder.

    kaser synth --language java --students 200 --problems 30 --seed 1 --out DIR
    kaser ingest codeworkout ROOT --out DIR [--problems FILE] [--kc-file problem_kc.json]
    kaser ingest falconcode ROOT --out DIR
    kaser annotate DIR [--backend static|openai] [--unsafe-no-isolation]
    kaser cluster DIR
    kaser knowledge DIR
    kaser simulate ...

Each subcommand is one function `name(args) -> None` in the module that does the work; the table
below maps command names to them, imported only when used so `kaser --help` stays fast.
Bad input raises `kaser.InputError`, printed here as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kaser import InputError

# command -> "module:function"; the function takes the parsed argparse namespace.
COMMANDS = {
    "synth": "kaser.data.synth:synth_command",
    "ingest": "kaser.data.ingest:ingest_command",
    "annotate": "kaser.errors.annotate:annotate_command",
    "cluster": "kaser.errors.cluster:cluster_command",
    "knowledge": "kaser.knowledge.tracing:knowledge_command",
    "simulate": "kaser.simulate:simulate_command",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kaser", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("synth", help="generate a synthetic student population with known truth")
    p.add_argument("--language", choices=["java", "python"], required=True)
    p.add_argument("--students", type=int, default=200)
    p.add_argument("--problems", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="folder for problems.parquet and submissions.parquet")

    p = sub.add_parser("ingest", help="convert a raw public dataset to problems/submissions parquet")
    p.add_argument("format", choices=["codeworkout", "falconcode"])
    p.add_argument("root", help="the raw dataset folder")
    p.add_argument("--out", required=True)
    p.add_argument("--problems", default=None,
                   help="CodeWorkout problem table (CSV or .xlsx); default ROOT/problems.csv")
    p.add_argument("--kc-file", default=None,
                   help="KCGen-KT problem_kc.json: problem text -> [[KC description, KC cluster], ...]")
    p.add_argument("--kc-level", choices=["description", "cluster"], default="description",
                   help="with --kc-file: use KC descriptions or KC cluster names")

    p = sub.add_parser("annotate", help="label the errors in every submission of a folder")
    p.add_argument("dir")
    p.add_argument("--backend", choices=["static", "openai"], default=None,
                   help="default: params.yaml annotate.backend")
    p.add_argument("--params", default="params.yaml", help="where the annotate settings are read")
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run student code even where the kernel refuses the sandbox's namespaces (unsafe)")

    p = sub.add_parser("cluster", help="cluster raw error labels into the error vocabulary")
    p.add_argument("dir")
    p.add_argument("--params", default="params.yaml")

    p = sub.add_parser("knowledge", help="train knowledge tracing (5 folds) and write mastery profiles")
    p.add_argument("dir")
    p.add_argument("--params", default="params.yaml")

    p = sub.add_parser("simulate", help="predict student code and errors for a new problem")
    p.add_argument("--problem", required=True, help="problem statement, or a path to a file holding it")
    p.add_argument("--language", choices=["java", "python"], required=True)
    p.add_argument("--kcs", required=True, help="comma-separated knowledge components of the problem")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--mastery", help='one profile, e.g. "loops=0.2,conditionals=0.8"')
    who.add_argument("--population", type=int, help="simulate a class of N students drawn from training data")
    p.add_argument("--dataset", default="synthetic-java", help="dataset whose trained adapter and profiles to use")
    p.add_argument("-k", type=int, default=5, help="samples per profile")
    p.add_argument("--out", required=True, help="folder for simulation.json and simulation.md")
    p.add_argument("--params", default="params.yaml")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    module_name, function_name = COMMANDS[args.command].split(":")
    try:
        command = getattr(importlib.import_module(module_name), function_name)
        command(args)
    except InputError as err:
        print(f"kaser {args.command}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
