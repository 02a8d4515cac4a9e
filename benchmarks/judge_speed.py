"""How fast the evaluation judge (static backend) answers: codes judged per second, one code at a
time vs every code of a problem in one call, as the evaluate stage calls it.

    .venv/bin/python benchmarks/judge_speed.py [--language java] [--problems 6] [--codes 25]
    .venv/bin/python benchmarks/judge_speed.py --smoke    # Python, 2 problems x 4 codes: seconds

Generates a synthetic population (not timed) and takes, per problem, `--codes` distinct
submissions of that problem as the "predicted codes" (the evaluate stage judges 5 methods x K=5
samples of a test pair's problem together: 25 codes). Then, side by side in one run:
1. one `StaticJudge.verdicts` call per code (the first `--single` codes of each problem, a fresh
   judge so nothing is cached): one compile / interpreter batch per code;
2. one call per problem with all its codes (a fresh judge): what `kaser.evaluation.scoring.
   judge_predictions` does, one sandbox batch per repair round for the whole problem;
3. the same calls again on the judge of 2: every code answered from its cache (the evaluate stage
   keeps the answers in data/<ds>/judged_predictions.parquet, keyed by code, across methods and
   reruns).
Each line gives codes/s; the last line is `judge_codes_per_s: X`, the batched rate of 2.
Java needs a JDK (`javac`, `java`); without one it says so and stops.
"""

from __future__ import annotations

import argparse
import sys
import time

import polars as pl

from kaser import config
from kaser.code.sandbox import java_available
from kaser.data.synth import generate
from kaser.errors.judge import StaticJudge
from kaser.errors.static_annotator import StaticParams

NO_CLUSTERS = pl.DataFrame(schema={"category": pl.String, "label": pl.String, "cluster_label": pl.String})


def codes_per_problem(submissions: pl.DataFrame, count: int) -> dict[str, list[str]]:
    """Up to `count` distinct codes of each problem, in submission order."""
    return {problem: list(dict.fromkeys(group.sort("student_id", "step")["code"].to_list()))[:count]
            for (problem,), group in submissions.group_by("problem_id", maintain_order=True)}


def planned(problems, submissions, settings, codes) -> StaticJudge:
    """A fresh judge whose problems' test plans (tests, or reference answers on generated
    inputs) are built already: built once per evaluate run, not part of judging a code."""
    judge = StaticJudge(problems, submissions, NO_CLUSTERS, settings)
    for problem in codes:
        judge.test_plan(problem)
    return judge


def timed(judge: StaticJudge, calls: list[tuple[str, list[str]]]) -> tuple[int, float]:
    start = time.perf_counter()
    codes = sum(len(judge.verdicts(problem, batch, [])) for problem, batch in calls)
    return codes, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", default="java", choices=("java", "python"))
    parser.add_argument("--problems", type=int, default=6)
    parser.add_argument("--codes", type=int, default=25, help="codes judged per problem")
    parser.add_argument("--single", type=int, default=5, help="codes per problem judged one at a time")
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="Python, 2 problems x 4 codes of 6 students: seconds (a JVM alone takes longer)")
    args = parser.parse_args()
    if args.smoke:
        args.language, args.problems, args.codes, args.single, args.students = "python", 2, 4, 1, 6
    if args.language == "java" and not java_available():
        sys.exit("no JDK found (javac, java): run with --language python or install one")
    problems, submissions = generate(args.language, args.students, args.problems, args.seed)
    codes = codes_per_problem(submissions, args.codes)
    settings = config.settings(StaticParams, "annotate", part=True)
    print(f"{args.language}: {len(codes)} problems x up to {args.codes} codes "
          f"({sum(map(len, codes.values()))} codes), static judge, default annotate settings")

    single = [(problem, [code]) for problem, batch in codes.items() for code in batch[:args.single]]
    n, seconds = timed(planned(problems, submissions, settings, codes), single)
    one_rate = n / seconds
    print(f"one code per call: {n} codes in {seconds:.1f} s = {one_rate:.2f} codes/s")

    judge = planned(problems, submissions, settings, codes)
    batched = list(codes.items())
    n, seconds = timed(judge, batched)
    batch_rate = n / seconds
    print(f"one call per problem: {n} codes in {seconds:.1f} s = {batch_rate:.2f} codes/s "
          f"({batch_rate / one_rate:.1f}x one per call)")
    n, seconds = timed(judge, batched)
    print(f"again, answered from the cache: {n} codes in {seconds:.3f} s = {n / seconds:.0f} codes/s")
    print(f"judge_codes_per_s: {batch_rate:.2f}")


if __name__ == "__main__":
    main()
