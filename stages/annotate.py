"""DVC stage `annotate@<dataset>`: the errors in every submission of one dataset.

    python stages/annotate.py synthetic-java

Reads params.yaml `annotate` (backend static|openai, static-annotator limits) and, for the openai
backend, `llm`; data/<ds>/problems.parquet and submissions.parquet. Writes
data/<ds>/annotations.parquet, data/<ds>/llm_cache.sqlite (empty with the static backend; a
persistent output either way) and reports/<ds>/annotation_quality.json (precision / recall / F1
against the true errors on synthetic data; counts only on real data). See kaser.errors.annotate.
Bad input, or an LLM run where every prompt failed: one line, exit 2; Ctrl-C: one line, exit 130
(answers received so far stay in the cache, so a rerun resumes).
"""

import json
import sys
from pathlib import Path

from kaser import InputError
from kaser.errors.annotate import annotate_folder, counts_line, quality_line


def main(dataset: str) -> None:
    folder = Path("data") / dataset
    annotations, quality, counts = annotate_folder(folder)
    annotations.write_parquet(folder / "annotations.parquet")
    print(counts_line(counts))
    if quality is not None:
        print(quality_line(quality))
    report = Path("reports") / dataset / "annotation_quality.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(quality if quality is not None else {"counts": counts}, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python stages/annotate.py <dataset name from params.yaml>")
    try:
        main(sys.argv[1])
    except InputError as err:
        print(f"annotate: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print("annotate: interrupted; run it again to resume (LLM answers received so far are "
              "cached)", file=sys.stderr)
        raise SystemExit(130) from None
