"""How fast the static annotator labels a dataset, and whether the LLM cache makes reruns free.

    .venv/bin/python benchmarks/annotate_speed.py [--students 60] [--problems 20] [--seed 0] [--no-tests]
        [--languages java,python]
    # the real-CodeWorkout proxy (~3,700 Java first submissions without tests):
    .venv/bin/python benchmarks/annotate_speed.py --students 125 --problems 30 --no-tests --languages java
    .venv/bin/python benchmarks/annotate_speed.py --smoke   # Python, 4 students x 2 problems: seconds

1. Generates a synthetic Java and Python population (not timed; Java is skipped, with a note,
   where no JDK is installed) and times `kaser.errors.static_annotator.annotate_submissions` on each:
   submissions annotated per second, with the F1 against the true errors beside it.
   With --no-tests the problems' tests are dropped first (as on real CodeWorkout), so the
   annotator tests against references on generated inputs; it then also prints the share of
   incorrect submissions that got an error and of correct ones that got any.
2. Runs the `openai` backend (`kaser.errors.llm_tasks.annotate_llm`) twice over the Python set against a
   fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py, the tests' one), each time with a
   new client on the same SQLite cache, and prints the second run's cache hit rate (must be 100%).
The last line is `annotate_submissions_per_s: <value>` over the languages run (static backend);
step 2 needs the Python set and is skipped without it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from kaser import config
from kaser.errors.annotate import annotation_counts, annotation_quality
from kaser.config import load_settings
from kaser.llm import ChatClient, LLMClientParams, LLMParams
from kaser.errors.llm_tasks import annotate_llm
from kaser.code.sandbox import java_available
from kaser.errors.static_annotator import StaticParams, annotate_submissions
from kaser.data.synth import generate


def static_speed(language: str, args) -> tuple[int, float, pl.DataFrame, pl.DataFrame]:
    problems, submissions = generate(language, args.students, args.problems, args.seed)
    if args.no_tests:
        problems = problems.with_columns(pl.lit(None, dtype=problems.schema["tests"]).alias("tests"))
    start = time.perf_counter()
    annotations = annotate_submissions(problems, submissions, config.settings(StaticParams, "annotate", part=True))
    seconds = time.perf_counter() - start
    quality = annotation_quality(annotations, submissions, language)
    counts = annotation_counts(annotations, submissions)
    print(f"{language}: {len(submissions)} submissions in {seconds:.1f} s = {len(submissions) / seconds:.1f} per s; "
          f"F1 {quality['overall']['f1']:.3f} (P {quality['overall']['precision']:.3f}, "
          f"R {quality['overall']['recall']:.3f}); incorrect with an error "
          f"{counts['incorrect_with_errors']}/{counts['incorrect']} ({_percent(counts['incorrect_share_with_errors'])}), "
          f"correct with any {counts['correct_with_errors']}/{counts['correct']} "
          f"({_percent(counts['correct_share_with_errors'])})" + (" [no tests]" if args.no_tests else ""))
    return len(submissions), seconds, problems, submissions


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"


def cache_hit_rate(problems: pl.DataFrame, submissions: pl.DataFrame) -> float:
    """Second-run cache hit rate of the openai backend against the fake server."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fake_openai import KEY_ENV, SECRET, FakeOpenAI

    fake = FakeOpenAI()
    fake.thread.start()
    os.environ[KEY_ENV] = SECRET
    params = load_settings((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    cfg = LLMParams(**params["llm"])
    client_cfg = LLMClientParams(**params["llm_client"] | {"base_url": fake.url, "api_key_env": KEY_ENV,
                                                          "max_concurrency": 8})
    try:
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "llm_cache.sqlite"
            for run in (1, 2):
                with ChatClient(cfg, client_cfg, cache, progress=False) as client:
                    start = time.perf_counter()
                    annotate_llm(problems, submissions, client)
                    usage = client.usage
                print(f"openai backend, run {run}: {usage.prompts} prompts, {usage.cache_hits} from the cache, "
                      f"{usage.requests} HTTP requests, {time.perf_counter() - start:.1f} s")
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
    return usage.cache_hits / usage.prompts if usage.prompts else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-tests", action="store_true", help="drop the tests: differential testing")
    parser.add_argument("--languages", default="java,python", help="comma-separated: java, python or both")
    parser.add_argument("--smoke", action="store_true",
                        help="Python only, 4 students x 2 problems: seconds (a JVM alone takes longer)")
    args = parser.parse_args()
    if args.smoke:
        args.students, args.problems, args.languages = 4, 2, "python"

    total, seconds, python_set = 0, 0.0, None
    for language in args.languages.split(","):
        if language == "java" and not java_available():
            print("java: skipped (no JDK on PATH)")
            continue
        count, spent, problems, submissions = static_speed(language, args)
        total, seconds = total + count, seconds + spent
        if language == "python":
            python_set = (problems, submissions)
    if python_set is not None:
        print(f"openai backend cache hit rate on the second run: {100 * cache_hit_rate(*python_set):.1f}%")
    print(f"static annotation: {total} submissions in {seconds:.1f} s")
    print(f"annotate_submissions_per_s: {total / seconds if seconds else 0.0:.1f}")


if __name__ == "__main__":
    main()
