"""DVC stage `prepare`: one dataset of params.yaml -> data/<name>/ problems, submissions, folds.

    python stages/prepare.py synthetic-python

Reads `datasets.<name>` (its `source` says which settings it takes: synthetic, codeworkout,
falconcode or progsnap2) and `splits`; generates or ingests the dataset (kaser.data.synth /
kaser.data.ingest / kaser.data.progsnap2), writes data/<name>/problems.parquet, submissions.parquet
(validated, byte-deterministic), folds.json and metadata.json (source, and for progsnap2 the
choices made from the data, the KC backend among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _runner import Stage, run
from kaser import InputError
from kaser.config import from_dict
from kaser.data.contracts import SplitsParams, dataset_counts, make_folds, write_dataset, write_folds
from kaser.data.ingest import ingest_codeworkout, ingest_falconcode
from kaser.llm import LLMClientParams, LLMParams
from kaser.data.progsnap2 import ingest_progsnap2, kc_client, write_metadata

# `llm` serves only a progsnap2 source with `kcs: openai` (KC descriptions by the LLM)
PARAMS = ("datasets.{dataset}", "splits", "llm")


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


SOURCES = {"synthetic": SyntheticSource, "codeworkout": CodeworkoutSource,
           "falconcode": FalconcodeSource, "progsnap2": Progsnap2Source}


def dataset_config(stage: Stage):
    name, where = stage.dataset, f"{stage.params_file}:datasets.{stage.dataset}"
    entry = stage.raw(f"datasets.{name}")
    if not isinstance(entry, dict):
        raise InputError(f"no dataset '{name}' under datasets", file=stage.params_file)
    source = entry.get("source")
    if source not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}, not {source!r}", file=where)
    return from_dict(SOURCES[source], entry, where=where)


def build(config, out: Path, llm=None, llm_client=None):
    """(problems, submissions, metadata) of a dataset config; `llm` and `llm_client` (LLMParams,
    LLMClientParams) serve the openai KC backend of a progsnap2 source, its answers cached in
    out/kc_llm_cache.sqlite."""
    metadata = {"source": config.source}
    if isinstance(config, SyntheticSource):
        from kaser.data.synth import generate
        return (*generate(config.language, config.students, config.problems, config.seed), metadata)
    if isinstance(config, CodeworkoutSource):
        return (*ingest_codeworkout(config.raw, config.problems, config.kc_file,
                                    kc_level=config.kc_level), metadata)
    if isinstance(config, Progsnap2Source):
        client = kc_client(config.kcs, out / "kc_llm_cache.sqlite", llm, llm_client)
        try:
            return ingest_progsnap2(config.raw, config.problems, events=config.events,
                                    score_threshold=config.score_threshold,
                                    language=config.language, kcs=config.kcs, llm=client)
        finally:
            if client is not None:
                client.close()
    return (*ingest_falconcode(config.raw), metadata)


def main(dataset: str) -> None:
    stage = Stage("prepare", dataset, PARAMS)
    config = dataset_config(stage)
    splits = stage.section("splits", SplitsParams)
    llm, client = None, None
    if isinstance(config, Progsnap2Source) and config.kcs == "openai":
        llm, client = stage.section("llm", LLMParams), stage.section("llm_client", LLMClientParams)
    out, name = stage.data, dataset
    problems, submissions, metadata = build(config, out, llm, client)
    write_dataset(out, problems, submissions)
    write_metadata(out, metadata)
    write_folds(out / "folds.json", make_folds(submissions, splits.folds, splits.seed))
    counts = ", ".join(f"{k} {v}" for k, v in dataset_counts(problems, submissions).items())
    print(f"prepare {name} ({config.source}) -> {out}: {counts}")


if __name__ == "__main__":
    run(main)
