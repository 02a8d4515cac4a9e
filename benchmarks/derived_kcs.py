"""How well offline KCs recover the true KCs of the synthetic benchmark: micro F1 over problems.

    PYTHONPATH=. .venv/bin/python benchmarks/derived_kcs.py [--students 40] [--seed 0] [--share 0.5]
    PYTHONPATH=. .venv/bin/python benchmarks/derived_kcs.py --smoke   # Python, 3 students x 4 problems

For each language (Java skipped, with a note, where no JDK is installed) it generates a synthetic
population over the whole bank, or its first --problems (`kaser.data.synth.generate`), derives each problem's KCs from its
correct first submissions (`kaser.data.derived_kcs.derive_problem_kcs`, construct names mapped to the
bank's KC names by its CONSTRUCT_KCS table) and compares them with the bank's curated KCs
(true positives, false positives, false negatives summed over problems). Per-language precision,
recall and F1 are printed, and the most frequent misses and extras; the last line is
`kc_f1: <value>` over both languages, for tools that read it.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import polars as pl

from kaser.code.sandbox import java_available
from kaser.data.derived_kcs import MAX_KCS, SHARE, derive_problem_kcs
from kaser.data.synth import generate
from kaser.data.synth.bank import load_bank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--share", type=float, default=SHARE,
                        help="a construct is a KC when this share of correct submissions use it")
    parser.add_argument("--max-kcs", type=int, default=MAX_KCS, help="KCs per problem at most")
    parser.add_argument("--problems", type=int, default=None, help="the bank's first N problems (default all)")
    parser.add_argument("--smoke", action="store_true",
                        help="Python only, 3 students x 4 problems: seconds (a JVM alone takes longer)")
    args = parser.parse_args()
    languages = ("java", "python")
    if args.smoke:
        args.students, args.problems, languages = 3, 4, ("python",)
    total = Counter()
    for language in languages:
        if language == "java" and not java_available():
            print("java: skipped (no JDK on PATH)")
            continue
        start = time.perf_counter()
        problems, submissions = generate(language, args.students, args.problems or len(load_bank(language)),
                                         args.seed)
        counts, misses, extras = Counter(), Counter(), Counter()
        correct = submissions.filter(pl.col("correct"))
        items = [(pid, correct.filter(pl.col("problem_id") == pid)["code"].to_list() or [reference])
                 for pid, reference in problems.select("problem_id", "reference").iter_rows()]
        derived_kcs = derive_problem_kcs(items, language, args.share, args.max_kcs)
        for row in problems.iter_rows(named=True):
            derived = set(derived_kcs[row["problem_id"]])
            truth = set(row["kcs"])
            counts.update(tp=len(derived & truth), fp=len(derived - truth), fn=len(truth - derived))
            misses.update(truth - derived)
            extras.update(derived - truth)
        precision = counts["tp"] / max(1, counts["tp"] + counts["fp"])
        recall = counts["tp"] / max(1, counts["tp"] + counts["fn"])
        f1 = 2 * precision * recall / max(1e-9, precision + recall)
        print(f"{language}: {problems.height} problems, {submissions.height} submissions, "
              f"precision {precision:.3f}, recall {recall:.3f}, F1 {f1:.3f} "
              f"({time.perf_counter() - start:.1f} s)")
        print(f"  most missed: {misses.most_common(5)}")
        print(f"  most extra:  {extras.most_common(5)}")
        total.update(counts)
    precision = total["tp"] / max(1, total["tp"] + total["fp"])
    recall = total["tp"] / max(1, total["tp"] + total["fn"])
    print(f"kc_f1: {2 * precision * recall / max(1e-9, precision + recall):.3f}")


if __name__ == "__main__":
    main()
