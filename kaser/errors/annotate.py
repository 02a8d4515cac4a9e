"""Error annotation of every submission of a dataset folder, and its quality on synthetic data.

    kaser annotate DIR [--backend static|openai] [--params FILE]   # kaser.cli reads FILE
    python stages/annotate.py synthetic-java        # the DVC stage, same work on data/<ds>/

Reads DIR/problems.parquet and DIR/submissions.parquet; writes DIR/annotations.parquet, one row
per submission (student_id, problem_id, errors: list of {category, label, evidence}, status),
and prints how many submissions got errors, split by correct / incorrect. On synthetic data
(`true_errors` present) it also scores the labels against the truth: precision / recall / F1,
micro over each submission's set of labels, overall, per category and per label, written to
DIR/annotation_quality.json (the stage writes reports/<ds>/annotation_quality.json). The callers
read the settings and choose the paths; the functions here take plain values.

Backends: `static` (kaser.errors.static_annotator: compilers, tests, repairs; offline) and `openai`
(kaser.errors.llm_tasks.annotate_llm: the paper's Table 9 prompt through the cached ChatClient, with
the `llm` settings the caller passes, answers cached in the file the caller names).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.data.contracts import read_dataset
from kaser.errors.static_annotator import StaticParams, annotate_submissions
from kaser.taxonomy import CATEGORIES, STANDARD_ERRORS

BACKENDS = ("static", "openai")


@dataclass(frozen=True)
class AnnotateParams:
    """The `annotate` settings (params.yaml `annotate`, one comment per key there)."""
    backend: str
    case_timeout_s: float
    repair_rounds: int
    max_repairs: int
    generated_inputs: int
    max_references: int
    seed: int
    unsafe_no_isolation: bool

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise InputError(f"backend must be one of {', '.join(BACKENDS)}, not {self.backend!r}")

    def static_params(self) -> StaticParams:
        names = {f.name for f in dataclasses.fields(StaticParams)}
        return StaticParams(**{k: v for k, v in dataclasses.asdict(self).items() if k in names})


def annotate(problems: pl.DataFrame, submissions: pl.DataFrame, cfg: AnnotateParams,
             cache_path: Path, llm=None, llm_client=None) -> pl.DataFrame:
    """annotations.parquet rows with the configured backend; `llm` and `llm_client`
    (kaser.llm.LLMParams, LLMClientParams) are the client's settings for backend `openai`.

    The LLM cache at `cache_path` always exists afterwards (empty for `static`), because the
    pipeline declares it as a persistent output.
    """
    from kaser.llm import ChatClient, ResponseCache
    if cfg.backend == "static":
        ResponseCache(cache_path).close()
        return annotate_submissions(problems, submissions, cfg.static_params())
    from kaser.errors.llm_tasks import annotate_llm
    with ChatClient(llm, llm_client, cache_path) as client:
        return annotate_llm(problems, submissions, client)


# ---------------------------------------------------------------- counts and quality

def _correct(submissions: pl.DataFrame) -> list[bool]:
    column = submissions["correct"] if "correct" in submissions.columns else submissions["score"] == 1.0
    return column.to_list()


def annotation_counts(annotations: pl.DataFrame, submissions: pl.DataFrame) -> dict:
    """How many submissions got at least one error, among correct and incorrect ones.

    >>> a = pl.DataFrame({"errors": [[{"label": "X"}], [], [{"label": "Y"}]]})
    >>> annotation_counts(a, pl.DataFrame({"correct": [False, False, True]}))["incorrect_with_errors"]
    1
    """
    has = (annotations["errors"].list.len() > 0).to_list()
    correct = _correct(submissions)
    wrong = [h for h, c in zip(has, correct) if not c]
    right = [h for h, c in zip(has, correct) if c]
    return {"submissions": len(has), "with_errors": sum(has),
            "incorrect": len(wrong), "incorrect_with_errors": sum(wrong),
            "incorrect_share_with_errors": sum(wrong) / len(wrong) if wrong else None,
            "correct": len(right), "correct_with_errors": sum(right),
            "correct_share_with_errors": sum(right) / len(right) if right else None}


def _scores(tp: int, fp: int, fn: int) -> dict:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "tp": tp, "fp": fp, "fn": fn}


def annotation_quality(annotations: pl.DataFrame, submissions: pl.DataFrame, language: str) -> dict:
    """Precision / recall / F1 of predicted label sets against `true_errors` (micro).

    Each submission contributes its distinct predicted labels and its true labels; a predicted
    label is a true positive when the truth has it. Per category, both sets keep only that
    category's labels (the truth's category from kaser.taxonomy, the prediction's own).

    >>> a = pl.DataFrame({"errors": [[{"category": "Logical", "label": "Off-by-one error"}], []]})
    >>> s = pl.DataFrame({"true_errors": [["Off-by-one error", "Missing semicolon"], []]})
    >>> annotation_quality(a, s, "java")["overall"]["f1"]
    0.6667
    """
    if "true_errors" not in submissions.columns:
        raise InputError("no true_errors column: quality needs synthetic data", file="submissions.parquet")
    counts = {key: Counter() for key in ("overall", *CATEGORIES)}
    per_label: dict[str, Counter] = {}
    for errors, truth in zip(annotations["errors"].to_list(), submissions["true_errors"].to_list()):
        predicted = {(e["category"], e["label"]) for e in errors or []}
        true = {(STANDARD_ERRORS.get(label, {}).get(language, "Logical"), label) for label in truth or []}
        for scope in counts:
            mine = {label for category, label in predicted if scope in ("overall", category)}
            theirs = {label for category, label in true if scope in ("overall", category)}
            counts[scope].update(tp=len(mine & theirs), fp=len(mine - theirs), fn=len(theirs - mine))
        for label in {label for _, label in predicted} | {label for _, label in true}:
            mine, theirs = label in {l for _, l in predicted}, label in {l for _, l in true}
            per_label.setdefault(label, Counter()).update(tp=mine and theirs, fp=mine and not theirs,
                                                          fn=theirs and not mine)
    report = {scope: _scores(c["tp"], c["fp"], c["fn"]) for scope, c in counts.items()}
    report["per_label"] = {label: _scores(c["tp"], c["fp"], c["fn"]) for label, c in sorted(per_label.items())}
    return report


# ---------------------------------------------------------------- the command

def annotate_folder(folder: Path, cfg: AnnotateParams, cache_path: Path, llm=None,
                    llm_client=None) -> tuple[pl.DataFrame, dict | None, dict]:
    """Annotate `folder` (problems.parquet + submissions.parquet) with `cfg` (and, for backend
    openai, the `llm` and `llm_client` settings and the answer cache at `cache_path`):
    (annotations, quality, counts)."""
    problems, submissions = read_dataset(folder)
    start = time.perf_counter()
    annotations = annotate(problems, submissions, cfg, cache_path, llm, llm_client)
    counts = annotation_counts(annotations, submissions) | {"seconds": round(time.perf_counter() - start, 1),
                                                            "backend": cfg.backend}
    quality = None
    if "true_errors" in submissions.columns:
        languages = problems["language"].unique().to_list()
        quality = annotation_quality(annotations, submissions, languages[0]) | {"counts": counts}
    return annotations, quality, counts


def counts_line(counts: dict) -> str:
    def share(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"
    return (f"{counts['with_errors']} of {counts['submissions']} submissions got errors: "
            f"{counts['incorrect_with_errors']} of {counts['incorrect']} incorrect "
            f"({share(counts['incorrect_share_with_errors'])}), {counts['correct_with_errors']} of "
            f"{counts['correct']} correct ({share(counts['correct_share_with_errors'])})")


def quality_line(quality: dict) -> str:
    parts = [f"{scope} F1 {quality[scope]['f1']:.3f} (P {quality[scope]['precision']:.3f}, "
             f"R {quality[scope]['recall']:.3f})" for scope in ("overall", *CATEGORIES)]
    return "annotation quality vs true_errors: " + "; ".join(parts)


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1) + "\n")
