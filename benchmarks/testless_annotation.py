"""Test-less annotation on a real ProgSnap2 course log (default: the ITAP Python sample).

    PYTHONPATH=. .venv/bin/python benchmarks/testless_annotation.py [ROOT] [--language python]

Ingests ROOT (`kaser.data.progsnap2`, offline KCs) into a temporary folder and runs the static
annotator (`kaser annotate --backend static`: no tests in the release, so each problem is tested
differentially against its correct peers on generated inputs). Prints the share of incorrect
first submissions that get at least one error, the share of correct ones that get any, and the
annotation time; the last line is `incorrect_with_errors: X correct_with_errors: Y seconds: Z`.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kaser.errors.annotate import annotate_folder
from kaser.data.contracts import write_dataset
from kaser.data.progsnap2 import ingest_progsnap2

DEFAULT_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "itap_python_sample"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=str(DEFAULT_ROOT))
    parser.add_argument("--language", default=None)
    parser.add_argument("--params", default="params.yaml", help="where the annotate settings are read")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        problems, submissions, _ = ingest_progsnap2(args.root, language=args.language)
        write_dataset(folder, problems, submissions)
        _, _, counts = annotate_folder(Path(folder), "static", args.params)
    print(f"{counts['incorrect_with_errors']} of {counts['incorrect']} incorrect first submissions "
          f"got an error, {counts['correct_with_errors']} of {counts['correct']} correct ones got any "
          f"({counts['seconds']} s)")
    print(f"incorrect_with_errors: {counts['incorrect_share_with_errors']:.3f} "
          f"correct_with_errors: {counts['correct_share_with_errors']:.3f} seconds: {counts['seconds']}")


if __name__ == "__main__":
    main()
