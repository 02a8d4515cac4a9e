"""DVC stages `report@<dataset>` and `readme`: tables like the paper's, figures, reports/README.md.

    python stages/report.py synthetic-python   # one dataset: reports/synthetic-python/{tsne.png,
                                             #   reward_curves.png, grpo_rewards.csv,
                                             #   grpo_groups.csv} and its
                                             #   README section reports/sections/synthetic-python.md
    python stages/report.py                  # reports/README.md from the sections of every
                                             #   dataset in params.yaml `datasets`, and a
                                             #   table of the committed studies' folders

reports/<ds>/headline.json is the dataset's <= 20 headline numbers, the DVC metrics file
(kaser.evaluation.headline): `dvc metrics show`, `dvc exp show --only-changed`.

Reads params.yaml `report`, `evaluate.embedding_model` and `.embedding_batch_size`, and per dataset
reports/<ds>/evaluation.json (evaluate stage, required), data/<ds>/predictions/ (t-SNE codes),
and where present reports/<ds>/{annotation_quality.json, knowledge.json, mastery.png,
grpo_log.json (the first run's reward curves), knowledge_sweep.md}; a missing one is named in
the README with the stage that writes it. See kaser.evaluation.report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from _runner import Stage, run
from kaser import InputError
from kaser.evaluation.scoring import prediction_path
from kaser.evaluation.headline import headline_metrics
from kaser.evaluation.report import (REAL_GROUP, STUDIES, TSNE_GROUPS, DatasetInputs, dataset_report,
                             paper_dataset, readme)

PARAMS = {"report": ("report", "evaluate.embedding_model", "evaluate.embedding_batch_size",
                     "datasets.{dataset}"),
          "readme": ("datasets",)}
SECTIONS = Path("reports") / "sections"


@dataclass(frozen=True)
class ReportParams:
    """params.yaml `report`."""
    tsne_split: str
    tsne_max_points: int
    seed: int


@dataclass(frozen=True)
class EmbedderParams:
    """The params.yaml `evaluate` keys the t-SNE reads: the code embedder the evaluation used."""
    embedding_model: str
    embedding_batch_size: int


def _json(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def _tsne_codes(folder: Path, split: str) -> dict[str, list[str]]:
    """Predicted codes of KASER and Student SFT on `split` (the other split when no run held
    out `split`, e.g. params.yaml model.splits [student]), and the real codes of the same pairs."""
    codes, pairs = {}, []
    frames = {method: pl.read_parquet(prediction_path(folder, method)) for method in TSNE_GROUPS
              if prediction_path(folder, method).is_file()}
    if frames and not any((frame["split"] == split).any() for frame in frames.values()):
        split = next(iter(frames.values()))["split"].first() or split
        print(f"report: t-SNE of the {split} split (no predictions on report.tsne_split)")
    for method, frame in frames.items():
        frame = frame.filter(pl.col("split") == split)
        codes[method] = frame["code"].to_list()
        pairs.append(frame.select("student_id", "problem_id"))
    if pairs:
        real = pl.read_parquet(folder / "submissions.parquet").join(
            pl.concat(pairs).unique(), on=["student_id", "problem_id"])
        codes[REAL_GROUP] = real.sort("student_id", "problem_id")["code"].to_list()
    return codes


def _embedder(folder: Path, evaluate: EmbedderParams):
    """Embeddings from the evaluate and knowledge stages' caches (read only), the rest fresh."""
    from kaser.embeddings import EmbeddingCache
    cache = EmbeddingCache.read(folder / "prediction_embeddings.npz", evaluate.embedding_model)
    cache.vectors.update(EmbeddingCache.read(folder / "code_embeddings.npz", evaluate.embedding_model).vectors)
    return lambda codes: cache.embed(codes, evaluate.embedding_batch_size)


def dataset_files(name: str) -> None:
    stage = Stage("report", name, PARAMS["report"])
    params = stage.section("report", ReportParams)
    evaluate = stage.section("evaluate", EmbedderParams, part=True)
    settings = stage.raw(f"datasets.{name}")
    if settings is None:
        raise InputError(f"no dataset {name!r} in {stage.params_file} datasets")
    folder, reports = stage.data, stage.reports
    evaluation = _json(reports / "evaluation.json")
    if evaluation is None:
        raise InputError(f"not found; run the evaluate stage (python stages/evaluate.py {name})",
                         file=reports / "evaluation.json")
    sweep = reports / "knowledge_sweep.md"
    inputs = DatasetInputs(
        dataset=name, paper_name=paper_dataset(settings.get("source", "synthetic"), settings.get("language")),
        evaluation=evaluation, embedding_model=evaluate.embedding_model,
        tsne_codes=_tsne_codes(folder, params.tsne_split),
        annotation_quality=_json(reports / "annotation_quality.json"),
        knowledge=_json(reports / "knowledge.json"), grpo_log=_json(reports / "grpo_log.json"),
        sweep=sweep.read_text() if sweep.is_file() else None,
        mastery_png=(reports / "mastery.png").is_file())
    report = dataset_report(inputs, _embedder(folder, evaluate), params.tsne_max_points, params.seed)
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "grpo_rewards.csv").write_text(report.rewards_csv)
    (reports / "grpo_groups.csv").write_text(report.groups_csv)
    for file_name, figure in report.figures.items():
        figure.savefig(reports / file_name, dpi=120)
    headline = headline_metrics(evaluation, inputs.annotation_quality, inputs.knowledge)
    (reports / "headline.json").write_text(json.dumps(headline, indent=1) + "\n")
    SECTIONS.mkdir(parents=True, exist_ok=True)
    (SECTIONS / f"{name}.md").write_text(report.section)
    print(f"report: wrote {reports}/tsne.png, reward_curves.png, grpo_rewards.csv, grpo_groups.csv, "
          f"headline.json, {SECTIONS}/{name}.md")


def readme_file() -> None:
    names = list(Stage("readme", None, PARAMS["readme"]).raw("datasets") or {})
    sections = {name: (SECTIONS / f"{name}.md").read_text() if (SECTIONS / f"{name}.md").is_file()
                else None for name in names}
    text = readme(sections, "run `dvc repro report@{dataset}` (python stages/report.py {dataset})",
                  STUDIES)
    Path("reports").mkdir(exist_ok=True)
    Path("reports/README.md").write_text(text)
    print(f"report: wrote reports/README.md ({len(names)} datasets)")


def main(dataset: str | None = None) -> None:
    dataset_files(dataset) if dataset is not None else readme_file()


if __name__ == "__main__":
    run(main)
