"""Datasets: the problems/submissions contracts, reading and writing a dataset folder, and folds.

    python stages/prepare.py synthetic-java          # the DVC stage (any source)
    problems, submissions = read_dataset("data/synthetic-java")

A dataset folder holds `problems.parquet` and `submissions.parquet` (columns in PROBLEM_SCHEMA and
SUBMISSION_SCHEMA; synthetic data adds SYNTHETIC_SCHEMA) and `folds.json`. A problem's `signature`
is its starter signature, the function header the student sees (`kaser.data.signatures`: the
Python `def` line or the Java method header), null where unknown; a problems table written
before the column existed reads with null signatures (rebuild it with `dvc repro` or
`kaser ingest` to fill them). `read_dataset` and `write_dataset` validate both tables, and bad
input stops with a `kaser.InputError` that names the file, the column and the first offending
row. Public releases are turned into such a folder by `kaser.data.ingest` (CodeWorkout,
FalconCode); the synthetic benchmark by `kaser.data.synth`.
No code or statement may hold a NUL byte or exceed MAX_CELL_CHARS characters; raw CSV files are
held to the same cap, cell by cell, before they are read (`kaser.data.strict_csv`).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.taxonomy import STANDARD_ERRORS

TEST_CASE = pl.Struct({"input": pl.String, "expected": pl.String})
PROBLEM_SCHEMA = {"problem_id": pl.String, "language": pl.String, "statement": pl.String,
                  "kcs": pl.List(pl.String), "tests": pl.List(TEST_CASE), "reference": pl.String,
                  "signature": pl.String}
SUBMISSION_SCHEMA = {"student_id": pl.String, "problem_id": pl.String, "step": pl.Int64,
                     "code": pl.String, "score": pl.Float64, "correct": pl.Boolean}
SYNTHETIC_SCHEMA = {"true_errors": pl.List(pl.String), "true_mastery": pl.List(pl.Float64)}
LANGUAGES = ("java", "python")
NULLABLE = ("tests", "reference", "signature")
ROW = "_row"   # 1-based data-row number in a raw file, carried along for error messages
# The most characters one text cell (a submission's code, a statement) may hold. Student programs
# run to a few thousand characters; a cell of a million is a corrupt file or an attack, and would
# swamp every prompt and similarity metric that reads it.
MAX_CELL_CHARS = 1_000_000


# ---------------------------------------------------------------------------- the contracts

def kc_vocabulary(problems: pl.DataFrame) -> list[str]:
    """All KCs of a dataset, sorted: the order of every mastery vector in the project.

    >>> kc_vocabulary(pl.DataFrame({"kcs": [["loops", "arithmetic"], ["arithmetic"]]}))
    ['arithmetic', 'loops']
    """
    return sorted({kc for kcs in problems["kcs"].to_list() for kc in kcs or ()})


def fail_if(df: pl.DataFrame, mask: pl.Expr, message: str, file, column: str) -> None:
    """InputError at the first row where `mask` holds (or is null): its file row when the frame
    carries one (raw files), else its 1-based position."""
    hit = df.select(mask.fill_null(True).arg_true().first()).item()
    if hit is not None:
        row = int(df[ROW][hit]) if ROW in df.columns else int(hit) + 1
        raise InputError(message, file=file, column=column, row=row)


def _conform(df: pl.DataFrame, schema: dict, optional: dict, file) -> pl.DataFrame:
    """Check columns and dtypes; return the columns in contract order with contract dtypes."""
    known = {**schema, **optional}
    for name in schema:
        if name not in df.columns:
            raise InputError(f"missing column; expected {', '.join(schema)}", file=file,
                             column=name)
    for name in df.columns:
        if name not in known:
            raise InputError(f"unknown column; expected {', '.join(known)}", file=file, column=name)
    for name in df.columns:
        dtype, want = df.schema[name], known[name]
        fits = (dtype == want
                or (name in NULLABLE and dtype == pl.Null)
                or (want == pl.Int64 and dtype.is_integer())
                or (want == pl.Float64 and dtype.is_float())
                or (isinstance(want, pl.List) and isinstance(dtype, pl.List)
                    and (dtype.inner == pl.Null or (want.inner == pl.Float64
                                                    and dtype.inner.is_float()))))
        if not fits:
            raise InputError(f"wrong type {dtype}; expected {want}", file=file, column=name)
    return df.select(pl.col(n).cast(known[n]) for n in known if n in df.columns)


def empty_text(name: str) -> pl.Expr:
    return pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")


def _fail_if_bad_text(df: pl.DataFrame, name: str, file) -> None:
    fail_if(df, pl.col(name).str.contains("\x00", literal=True), f"NUL byte in {name}", file, name)
    fail_if(df, pl.col(name).str.len_chars() > MAX_CELL_CHARS,
            f"{name} over the cap of {MAX_CELL_CHARS:,} characters (MAX_CELL_CHARS)", file, name)


_SIGNATURE_NAME = {"python": re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\("),
                   "java": re.compile(r"([A-Za-z_$][\w$]*)\s*\(")}


def signature_name(signature: str | None, language: str) -> str | None:
    """The function name a starter signature declares (kaser.data.signatures); None for None or
    a text without one.

    >>> signature_name("def count_vowels(s):", "python"), signature_name("public int[] fix45(int[] nums)", "java")
    ('count_vowels', 'fix45')
    """
    if not signature:
        return None
    match = _SIGNATURE_NAME[language].search(signature)
    return match.group(1) if match else None


def _fail_if_bad_signature(df: pl.DataFrame, file) -> None:
    """A signature is null, or one line that declares a function."""
    for row, (language, signature) in enumerate(df.select("language", "signature").iter_rows(), 1):
        if signature is None:
            continue
        if "\n" in signature or language not in LANGUAGES or signature_name(signature, language) is None:
            raise InputError(f"signature {signature[:80]!r} is not one line declaring a {language} "
                             "function (`def name(...):` or `type name(...)`; null when unknown)",
                             file=file, column="signature", row=row)


def validate_problems(df: pl.DataFrame, file="problems.parquet") -> pl.DataFrame:
    """Check a problems table against the contract; return it with contract column order/dtypes."""
    if "signature" not in df.columns:   # written before the column existed: unknown signatures
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("signature"))
    df = _conform(df, PROBLEM_SCHEMA, {}, file)
    for name in ("problem_id", "statement"):
        fail_if(df, empty_text(name), f"empty {name}", file, name)
    _fail_if_bad_text(df, "statement", file)
    fail_if(df, pl.int_range(pl.len()).over("problem_id") > 0, "duplicate problem_id", file,
             "problem_id")
    fail_if(df, ~pl.col("language").is_in(LANGUAGES),
             f"language must be one of {', '.join(LANGUAGES)}", file, "language")
    fail_if(df, pl.col("kcs").is_null() | pl.col("kcs").list.eval(
        pl.element().is_null() | (pl.element().str.strip_chars() == "")).list.any(),
        "kcs must be a list of non-empty names", file, "kcs")
    fail_if(df, pl.col("reference").is_not_null() & empty_text("reference"),
             "empty reference (use null when unknown)", file, "reference")
    _fail_if_bad_signature(df, file)
    for row, tests in enumerate(df["tests"].to_list(), start=1):
        for case in tests or ():
            try:
                args = json.loads(case["input"])
                json.loads(case["expected"])
            except (TypeError, ValueError):
                raise InputError("test input and expected must be JSON text", file=file,
                                 column="tests", row=row) from None
            if not isinstance(args, list):
                raise InputError("test input must be a JSON array of arguments", file=file,
                                 column="tests", row=row)
    return df


def validate_submissions(df: pl.DataFrame, problems: pl.DataFrame,
                         file="submissions.parquet") -> pl.DataFrame:
    """Check a submissions table against the contract and its problems; return it conformed."""
    df = _conform(df, SUBMISSION_SCHEMA, SYNTHETIC_SCHEMA, file)
    for name in ("student_id", "problem_id", "code"):
        fail_if(df, empty_text(name), f"empty {name}", file, name)
    _fail_if_bad_text(df, "code", file)
    fail_if(df, ~pl.col("problem_id").is_in(problems["problem_id"].implode()),
             "unknown problem_id (not in problems)", file, "problem_id")
    fail_if(df, pl.int_range(pl.len()).over("student_id", "problem_id") > 0,
             "duplicate (student_id, problem_id)", file, "problem_id")
    fail_if(df, ~pl.col("score").is_between(0.0, 1.0), "score must lie in [0, 1]", file, "score")
    fail_if(df, pl.col("correct") != (pl.col("score") == 1.0), "correct must equal (score == 1)",
             file, "correct")
    fail_if(df, (pl.col("step") < 0) | (pl.col("step") >= pl.len().over("student_id"))
             | (pl.int_range(pl.len()).over("student_id", "step") > 0),
             "steps of a student must be 0..n-1, each once", file, "step")
    if "true_errors" in df.columns:
        fail_if(df, pl.col("true_errors").is_null() | ~pl.col("true_errors").list.eval(
            pl.element().is_in(list(STANDARD_ERRORS))).list.all(),
            "true_errors must be standard labels (kaser.taxonomy)", file, "true_errors")
    if "true_mastery" in df.columns:
        size = len(kc_vocabulary(problems))
        mastery = pl.col("true_mastery")
        fail_if(df, (mastery.list.len() != size)
                 | ~mastery.list.eval(pl.element().is_between(0.0, 1.0)).list.all(),
            f"true_mastery must hold {size} values in [0, 1] (one per KC)", file, "true_mastery")
    return df


def read_table(path, columns: set[str], missing_hint: str) -> pl.DataFrame:
    """A stage's parquet output with at least `columns`; a missing file or column is one
    InputError naming it (`missing_hint` says which step writes the file)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"not found; {missing_hint}", file=path)
    table = pl.read_parquet(path)
    missing = set(columns) - set(table.columns)
    if missing:
        raise InputError(f"missing from {path.stem}", file=path, column=", ".join(sorted(missing)))
    return table


def read_dataset(folder) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(problems, submissions) of a dataset folder, validated."""
    tables = []
    for name in ("problems.parquet", "submissions.parquet"):
        path = Path(folder) / name
        if not path.is_file():
            raise InputError("not found (build it with `dvc repro` or `kaser ingest`)", file=path)
        tables.append(pl.read_parquet(path))
    problems = validate_problems(tables[0], Path(folder) / "problems.parquet")
    return problems, validate_submissions(tables[1], problems, Path(folder) / "submissions.parquet")


def write_dataset(folder, problems: pl.DataFrame, submissions: pl.DataFrame) -> None:
    """Validate and write both tables; the same content always gives the same bytes."""
    folder = Path(folder)
    problems = validate_problems(problems, folder / "problems.parquet").sort("problem_id")
    submissions = validate_submissions(submissions, problems, folder / "submissions.parquet")
    folder.mkdir(parents=True, exist_ok=True)
    problems.write_parquet(folder / "problems.parquet", compression="zstd")
    submissions.sort("student_id", "step").write_parquet(folder / "submissions.parquet",
                                                          compression="zstd")


def dataset_counts(problems: pl.DataFrame, submissions: pl.DataFrame) -> dict:
    return {"students": submissions["student_id"].n_unique(), "problems": problems.height,
            "kcs": len(kc_vocabulary(problems)), "first submissions": submissions.height,
            "share correct": round(float(submissions["correct"].mean() or 0.0), 3)}


# ---------------------------------------------------------------------------- folds

@dataclass(frozen=True)
class SplitsParams:
    """params.yaml `splits`: how many test folds `make_folds` makes, and its seed."""
    folds: int
    seed: int


def make_folds(submissions: pl.DataFrame, n_folds: int = 5, seed: int = 0) -> dict:
    """Test folds by student and by problem: disjoint, covering, sizes within one of each other."""
    rng = random.Random(seed)
    folds = {"seed": seed}
    for key, column in (("by_student", "student_id"), ("by_problem", "problem_id")):
        ids = sorted(submissions[column].unique().to_list())
        if len(ids) < n_folds:
            raise InputError(f"{len(ids)} distinct values cannot fill {n_folds} folds",
                             column=column)
        rng.shuffle(ids)
        folds[key] = [sorted(ids[i::n_folds]) for i in range(n_folds)]
    return folds


def write_folds(path, folds: dict) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(folds, indent=1) + "\n")


def read_folds(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise InputError("not found (build it with `dvc repro`)", file=path)
    folds = json.loads(path.read_text())
    for key in ("by_student", "by_problem"):
        ids = [i for fold in folds.get(key, []) for i in fold]
        if not ids or len(ids) != len(set(ids)):
            raise InputError(f"{key} must be non-empty, disjoint test folds", file=path)
    return folds
