"""DVC stage `prepare`: one dataset of params.yaml -> data/<name>/ problems, submissions, folds.

    python stages/prepare.py synthetic-java

Reads `datasets.<name>` (its `source` says which settings it takes: synthetic, codeworkout,
falconcode or progsnap2) and `splits`; generates or ingests the dataset (kaser.data.synth /
kaser.data.ingest / kaser.data.progsnap2), writes data/<name>/problems.parquet, submissions.parquet
(validated, byte-deterministic), folds.json and metadata.json (source, and for progsnap2 the
choices made from the data, the KC backend among them).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from kaser import InputError
from kaser.config import from_dict, load_section, read_params
from kaser.data.contracts import dataset_counts, make_folds, write_dataset, write_folds
from kaser.data.ingest import ingest_codeworkout, ingest_falconcode
from kaser.data.progsnap2 import ingest_progsnap2, kc_client, write_metadata

PARAMS = "params.yaml"


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
class Progsnap2Source:
    source: str
    raw: str                          # folder with MainTable.csv (or Data/MainTable.csv) and code states
    problems: str | None = None       # optional problem table (.csv/.xlsx): id, statement, optional kcs
    language: str | None = None       # python | java; null = from ToolInstances
    events: tuple | None = None       # event types that are submissions; null = submission-like ones present
    score_threshold: float = 1.0      # with a Score column: correct when score >= this
    kcs: str = "derived"              # KCs the table lacks: derived (syntax trees) | openai (params `llm`)


@dataclass(frozen=True)
class SplitsConfig:
    folds: int
    seed: int


SOURCES = {"synthetic": SyntheticSource, "codeworkout": CodeworkoutSource,
           "falconcode": FalconcodeSource, "progsnap2": Progsnap2Source}


def dataset_config(name: str, params_path: str = PARAMS):
    entry = (read_params(params_path).get("datasets") or {}).get(name)
    if not isinstance(entry, dict):
        raise InputError(f"no dataset '{name}' under datasets", file=params_path)
    source = entry.get("source")
    if source not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}, not {source!r}",
                         file=f"{params_path}:datasets.{name}")
    return from_dict(SOURCES[source], entry, where=f"{params_path}:datasets.{name}")


def build(config, out: Path = Path("data")):
    """(problems, submissions, metadata) of a dataset config."""
    metadata = {"source": config.source}
    if isinstance(config, SyntheticSource):
        from kaser.data.synth import generate
        return (*generate(config.language, config.students, config.problems, config.seed), metadata)
    if isinstance(config, CodeworkoutSource):
        return (*ingest_codeworkout(config.raw, config.problems, config.kc_file,
                                    kc_level=config.kc_level), metadata)
    if isinstance(config, Progsnap2Source):
        client = kc_client(config.kcs, out / "kc_llm_cache.sqlite", PARAMS)
        try:
            return ingest_progsnap2(config.raw, config.problems, events=config.events,
                                    score_threshold=config.score_threshold,
                                    language=config.language, kcs=config.kcs, llm=client)
        finally:
            if client is not None:
                client.close()
    return (*ingest_falconcode(config.raw), metadata)


def main(name: str) -> None:
    config = dataset_config(name)
    splits = load_section(PARAMS, "splits", SplitsConfig)
    out = Path("data") / name
    problems, submissions, metadata = build(config, out)
    write_dataset(out, problems, submissions)
    write_metadata(out, metadata)
    write_folds(out / "folds.json", make_folds(submissions, splits.folds, splits.seed))
    counts = ", ".join(f"{k} {v}" for k, v in dataset_counts(problems, submissions).items())
    print(f"prepare {name} ({config.source}) -> {out}: {counts}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python stages/prepare.py <dataset name from params.yaml>")
    try:
        main(sys.argv[1])
    except InputError as err:
        print(f"prepare: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
