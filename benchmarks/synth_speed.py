"""How fast the synthetic benchmark is generated: submissions per second, per language and overall.

    .venv/bin/python benchmarks/synth_speed.py [--students 100] [--problems 30] [--seed 0]
    .venv/bin/python benchmarks/synth_speed.py --smoke    # Python, 4 students x 2 problems: seconds

Generates one population per language (Java is skipped, with a note, where no JDK is installed)
and times `kaser.data.synth.generate`, which includes running every program in the sandbox. The last
line is `synth_submissions_per_s: <value>` over all languages, for tools that read it.
"""

from __future__ import annotations

import argparse
import time

from kaser.code.sandbox import java_available
from kaser.data.synth import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--problems", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="Python only, 4 students x 2 problems: seconds (a JVM alone takes longer)")
    args = parser.parse_args()
    languages = ("java", "python")
    if args.smoke:
        args.students, args.problems, languages = 4, 2, ("python",)

    total_submissions, total_seconds = 0, 0.0
    for language in languages:
        if language == "java" and not java_available():
            print("java: skipped (no JDK on PATH)")
            continue
        start = time.perf_counter()
        _, submissions = generate(language, args.students, args.problems, args.seed)
        seconds = time.perf_counter() - start
        total_submissions += len(submissions)
        total_seconds += seconds
        print(f"{language}: {len(submissions)} submissions in {seconds:.1f} s "
              f"= {len(submissions) / seconds:.1f} per s")
    print(f"synth_submissions_per_s: {total_submissions / total_seconds:.1f}")


if __name__ == "__main__":
    main()
