"""DVC stage `prepare`: one dataset of params.yaml -> data/<name>/ problems, submissions, folds.

    python stages/prepare.py synthetic-java

Reads `datasets.<name>` (its `source` says which settings it takes: synthetic, codeworkout or
falconcode) and `splits`; generates or ingests the dataset (kaser.data.synth / kaser.data.ingest), writes
data/<name>/problems.parquet, submissions.parquet (validated, byte-deterministic) and folds.json.
"""

from __future__ import annotations

from dataclasses import dataclass

from _runner import Stage, run
from kaser import InputError
from kaser.config import from_dict
from kaser.data.contracts import dataset_counts, make_folds, write_dataset, write_folds
from kaser.data.ingest import ingest_codeworkout, ingest_falconcode

PARAMS = ("datasets.{dataset}", "splits")


@dataclass(frozen=True)
class SyntheticSource:
    source: str
    raw: str              # the generator package, a DVC dependency
    language: str
    students: int
    problems: int
    seed: int


@dataclass(frozen=True)
class CodeworkoutSource:
    source: str
    raw: str                          # ProgSnap2 release folder (Data/MainTable.csv, ...)
    problems: str | None = None       # problem table (.csv or .xlsx); default raw/problems.csv
    kc_file: str | None = None        # KCGen-KT problem_kc.json; default: the concept columns
    kc_level: str = "description"     # with kc_file: "description" or "cluster" KCs


@dataclass(frozen=True)
class FalconcodeSource:
    source: str
    raw: str              # folder with the three falconcode_v1_*.csv tables


@dataclass(frozen=True)
class SplitsConfig:
    folds: int
    seed: int


SOURCES = {"synthetic": SyntheticSource, "codeworkout": CodeworkoutSource,
           "falconcode": FalconcodeSource}


def dataset_config(stage: Stage):
    name, where = stage.dataset, f"{stage.params_file}:datasets.{stage.dataset}"
    entry = stage.raw(f"datasets.{name}")
    if not isinstance(entry, dict):
        raise InputError(f"no dataset '{name}' under datasets", file=stage.params_file)
    source = entry.get("source")
    if source not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}, not {source!r}", file=where)
    return from_dict(SOURCES[source], entry, where=where)


def build(config):
    """(problems, submissions) of a dataset config."""
    if isinstance(config, SyntheticSource):
        from kaser.data.synth import generate
        return generate(config.language, config.students, config.problems, config.seed)
    if isinstance(config, CodeworkoutSource):
        return ingest_codeworkout(config.raw, config.problems, config.kc_file,
                                  kc_level=config.kc_level)
    return ingest_falconcode(config.raw)


def main(dataset: str) -> None:
    stage = Stage("prepare", dataset, PARAMS)
    config = dataset_config(stage)
    splits = stage.section("splits", SplitsConfig)
    problems, submissions = build(config)
    out, name = stage.data, dataset
    write_dataset(out, problems, submissions)
    write_folds(out / "folds.json", make_folds(submissions, splits.folds, splits.seed))
    counts = ", ".join(f"{k} {v}" for k, v in dataset_counts(problems, submissions).items())
    print(f"prepare {name} ({config.source}) -> {out}: {counts}")


if __name__ == "__main__":
    run(main)
