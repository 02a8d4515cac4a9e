"""Test-less annotation on a real ProgSnap2 course log (default: the ITAP Python sample).

    PYTHONPATH=. .venv/bin/python benchmarks/testless_annotation.py [ROOT] [--language python]
    PYTHONPATH=. .venv/bin/python benchmarks/testless_annotation.py --smoke   # the first 3 students

Ingests ROOT (`kaser.data.progsnap2`, offline KCs) into a temporary folder and runs the static
annotator with params.yaml's `annotate` settings (backend static whatever params.yaml says: no
tests in the release, so each problem is tested differentially against its correct peers on
generated inputs). Prints the share of incorrect first submissions that get at least one error,
the share of correct ones that get any, and the annotation time; the last two lines are
`correct_with_errors: Y` and `incorrect_with_errors: X` (shares). The ITAP sample lies outside the
repository (../shared/data/itap_python_sample); without it, name another ProgSnap2 folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import polars as pl

from kaser.config import load_settings, settings
from kaser.data.contracts import write_dataset
from kaser.data.progsnap2 import ingest_progsnap2
from kaser.errors.annotate import AnnotateParams, annotate_folder

DEFAULT_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "itap_python_sample"
SMOKE_STUDENTS = 3


def annotate_settings(params: Path) -> AnnotateParams:
    """params.yaml's `annotate` section, backend static."""
    return settings(AnnotateParams, "annotate", load_settings(params.read_text(encoding="utf-8")),
                    backend="static")


def first_students(problems: pl.DataFrame, submissions: pl.DataFrame, count: int):
    """The submissions of the first `count` students (sorted ids) and the problems they tried."""
    students = sorted(submissions["student_id"].unique().to_list())[:count]
    submissions = submissions.filter(pl.col("student_id").is_in(students))
    return problems.filter(pl.col("problem_id").is_in(submissions["problem_id"].unique().to_list())), submissions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=str(DEFAULT_ROOT))
    parser.add_argument("--language", default=None)
    parser.add_argument("--params", default="params.yaml", help="where the annotate settings are read")
    parser.add_argument("--smoke", action="store_true",
                        help=f"only the first {SMOKE_STUDENTS} students' submissions: seconds")
    args = parser.parse_args()
    if not Path(args.root).is_dir():
        sys.exit(f"no ProgSnap2 folder at {args.root}: name one (MainTable.csv, CodeState.csv)")
    cfg = annotate_settings(Path(args.params))
    with tempfile.TemporaryDirectory() as folder:
        problems, submissions, _ = ingest_progsnap2(args.root, language=args.language)
        if args.smoke:
            problems, submissions = first_students(problems, submissions, SMOKE_STUDENTS)
            print(f"smoke size: the first {SMOKE_STUDENTS} students, {submissions.height} first submissions")
        write_dataset(folder, problems, submissions)
        _, _, counts = annotate_folder(Path(folder), cfg, Path(folder) / "llm_cache.sqlite")
    print(f"{counts['incorrect_with_errors']} of {counts['incorrect']} incorrect first submissions "
          f"got an error, {counts['correct_with_errors']} of {counts['correct']} correct ones got any "
          f"({counts['seconds']} s)")
    print(f"correct_with_errors: {counts['correct_share_with_errors']:.3f}")
    print(f"incorrect_with_errors: {counts['incorrect_share_with_errors']:.3f}")


if __name__ == "__main__":
    main()
