"""The `kaser` command: the same work as the DVC stages, on any folder.

    kaser synth --language java --students 200 --problems 30 --seed 1 --out DIR
    kaser ingest codeworkout ROOT --out DIR [--problems FILE] [--kc-file problem_kc.json]
    kaser ingest falconcode ROOT --out DIR
    kaser annotate DIR [--backend static|openai]
    kaser cluster DIR
    kaser knowledge DIR
    kaser simulate ...

Each subcommand is one function `name(args) -> None`; the table below maps command names to
them, imported only when used so `kaser --help` stays fast. This is the top floor: the commands
that take settings read them here from the --params file the user names (default params.yaml in
the working folder) and hand plain values to the library, as the DVC stages do through
stages/_runner.py. `kaser simulate --dataset NAME` looks for the pipeline's outputs where the
stages write them: data/NAME/, models/base/ and models/NAME/grpo/<first run>/.
Bad input raises `kaser.InputError`, printed here as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
from pathlib import Path

from kaser import InputError

# command -> "module:function"; the function takes the parsed argparse namespace.
COMMANDS = {
    "synth": "kaser.data.synth:synth_command",
    "ingest": "kaser.data.ingest:ingest_command",
    "annotate": "kaser.cli:annotate_command",
    "cluster": "kaser.cli:cluster_command",
    "knowledge": "kaser.cli:knowledge_command",
    "simulate": "kaser.cli:simulate_command",
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
                   help="default: annotate.backend of the --params file")
    p.add_argument("--params", default="params.yaml", help="where the annotate settings are read")

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


# ---------------------------------------------------------------- settings from --params

def read_params(path) -> dict:
    """The --params file (YAML) as a dict."""
    import yaml
    path = Path(path)
    if not path.is_file():
        raise InputError("params file not found (give --params FILE)", file=path)
    return yaml.safe_load(path.read_text()) or {}


def section(path, name: str, cls, params: dict | None = None):
    """Section `name` of the --params file as dataclass `cls`."""
    from kaser.config import from_dict
    params = read_params(path) if params is None else params
    if name not in params:
        raise InputError(f"no section '{name}'", file=path)
    return from_dict(cls, params[name] or {}, where=f"{path}:{name}")


# ---------------------------------------------------------------- commands that take settings

def annotate_command(args) -> None:
    """`kaser annotate DIR [--backend static|openai] [--params FILE]`."""
    from kaser.errors.annotate import (AnnotateConfig, annotate_folder, counts_line, quality_line,
                                       write_json)
    from kaser.llm import LLMConfig
    folder = Path(args.dir)
    cfg = section(args.params, "annotate", AnnotateConfig)
    if args.backend is not None:
        cfg = dataclasses.replace(cfg, backend=args.backend)
    llm = section(args.params, "llm", LLMConfig) if cfg.backend == "openai" else LLMConfig()
    annotations, quality, counts = annotate_folder(folder, cfg, folder / llm.cache_file, llm)
    annotations.write_parquet(folder / "annotations.parquet")
    print(f"wrote {folder}/annotations.parquet ({counts['backend']}, {counts['seconds']} s): {counts_line(counts)}")
    if quality is not None:
        write_json(folder / "annotation_quality.json", quality)
        print(quality_line(quality))
        print(f"wrote {folder}/annotation_quality.json")


def cluster_command(args) -> None:
    """`kaser cluster DIR`: cluster DIR/annotations.parquet, write the outputs beside it (openai
    summaries cached in DIR/<llm.cache_file>)."""
    from kaser.errors.cluster import (ClusterConfig, cluster_annotations, read_annotations,
                                      summariser, write_cluster_outputs)
    from kaser.llm import LLMConfig
    folder = Path(args.dir)
    cfg = section(args.params, "cluster", ClusterConfig)
    annotations = read_annotations(folder)
    llm = section(args.params, "llm", LLMConfig) if cfg.summary_backend == "openai" else LLMConfig()
    with summariser(cfg, llm, folder / llm.cache_file) as summarise:
        error_labels, errors, problem_errors = cluster_annotations(annotations, cfg, summarise)
    write_cluster_outputs(folder, error_labels, errors, problem_errors)
    print(f"{len(error_labels)} raw labels -> {error_labels['cluster'].n_unique()} clusters; "
          f"{len(problem_errors)} problems with an error list; wrote {folder}/error_labels.parquet, "
          "submission_errors.parquet, problem_errors.json")


@dataclasses.dataclass(frozen=True)
class SplitsSettings:
    folds: int
    seed: int


def knowledge_command(args) -> None:
    """`kaser knowledge DIR`: the knowledge stage on a folder; outputs go to the same folder."""
    from kaser.data.contracts import make_folds, read_dataset, write_folds
    from kaser.knowledge.tracing import KnowledgeConfig, run_folder
    cfg = section(args.params, "knowledge", KnowledgeConfig)
    folds_path = Path(args.dir) / "folds.json"
    if not folds_path.exists():   # `kaser ingest` and `kaser synth` write no folds
        splits = section(args.params, "splits", SplitsSettings)
        _, submissions = read_dataset(args.dir)
        write_folds(folds_path, make_folds(submissions, splits.folds, splits.seed))
        print(f"knowledge: no folds.json in {args.dir}; wrote one ({splits.folds} folds by student "
              f"and by problem, seed {splits.seed}, from the params' splits section)")
    run_folder(args.dir, args.dir, cfg)


def simulate_command(args) -> None:
    """`kaser simulate`: writes --out/simulation.json and --out/simulation.md."""
    from kaser.predictor.base_model import ModelParams, adapter_path
    from kaser.predictor.sampling import GenerateParams
    from kaser.simulate import (check_model_folders, dataset_population, parse_kcs, parse_mastery,
                                read_statement, simulate, simulation_markdown, simulation_record)

    statement = read_statement(args.problem)
    kcs = parse_kcs(args.kcs)
    if args.k < 1:
        raise InputError(f"-k must be at least 1, not {args.k}")
    params_file = read_params(args.params)
    params = dataclasses.replace(section(args.params, "generate", GenerateParams, params_file), k=args.k)
    if args.mastery is not None:
        profiles = [parse_mastery(args.mastery, kcs)]
    else:
        profiles = dataset_population(Path("data") / args.dataset, args.dataset, kcs,
                                      args.population, params.seed)
    model = section(args.params, "model", ModelParams, params_file)
    base, adapter = check_model_folders(Path("models") / "base",
                                        adapter_path(args.dataset, "grpo", *model.first_run), args.dataset)
    settings = None
    if "annotate" in params_file:
        from kaser.errors.annotate import AnnotateConfig
        settings = section(args.params, "annotate", AnnotateConfig, params_file).static_settings()
    results = simulate(statement, args.language, kcs, profiles, base, adapter, params,
                       model.dtype, settings=settings)
    simulation = simulation_record(statement, args.language, kcs, args.dataset, adapter, args.k,
                                   results, args.population is not None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "simulation.json").write_text(json.dumps(simulation, indent=1) + "\n")
    (out / "simulation.md").write_text(simulation_markdown(simulation))
    print(f"{len(profiles)} profile(s) x {args.k} samples -> {out}/simulation.json, simulation.md")


if __name__ == "__main__":
    main()
