"""The knowledge intervention: set one KC of a student's profile low or high and see whether the
simulator's errors move the way the data generator's do (docs/experiments-and-studies.md, "The
intervention study", for the protocol fixed before its run; `make study-intervention` runs it).

    targets = choose_targets(pairs, candidates, error_kcs, n=300, seed=0)   # one KC per pair
    low = set_level(targets, 0.1)                                           # the prompts' profile
    outcomes = sample_outcomes(judged, targets, error_kcs)                  # per sample: pass, tied
    generator = generator_response(targets, problems, submissions, levels)  # synthetic truth
    result = effects(outcomes, generator, low="0.1", high="0.9")

Per sample the outcomes are whether the judge finds it free of every error (`pass`) and whether
it has an error tied to the target KC (`tied`: a candidate label whose catalogued KCs include
it, kaser.evaluation.scoring.problem_error_kcs). A code cut off by the budget neither passes nor
has an error. Per pair the effect of the KC is rate(low) − rate(high) for tied errors and
pass(high) − pass(low) for passing, both positive when the simulator does what the generator
does; intervals are percentile bootstraps over problems (kaser.evaluation.following).

The generator's response is its own chance, from kaser.data.synth: an error type is drawn with
chance base · weight · (1 − m)^2.5, m the weakest true mastery among its KCs on the problem; the
pair's true mastery with the target KC set to the level gives the chance of at least one tied
error and of no error at all. These are chances of *drawing* an error, before the generator drops
one without a site in the code or that the tests cannot see, so they bound the real rates from
above; the direction and the size of the change are what the methods are held to. The generator
takes the level as a true mastery, the prompt as a percentile among the dataset's estimates
(kaser.predictor.prompt, departure 5): both say "weak" at 0.1 and "strong" at 0.9.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from kaser.data.contracts import kc_vocabulary
from kaser.evaluation.following import problem_bootstrap

OWN = "own"   # the condition that keeps the student's own profile


def tied_labels(label_kcs: Mapping[str, Sequence[str]], kc: str) -> set[str]:
    """The labels of one problem (label -> KCs) tied to `kc`.

    >>> sorted(tied_labels({"Off-by-one": ["for loops"], "Typo": ["syntax"]}, "for loops"))
    ['Off-by-one']
    """
    return {label for label, kcs in label_kcs.items() if kc in kcs}


def choose_targets(pairs: pl.DataFrame, candidates: Mapping[str, Sequence[str]],
                   error_kcs: Mapping[str, Mapping[str, Sequence[str]]], n: int, seed: int) -> pl.DataFrame:
    """A seeded draw of `n` pairs (a `student_pairs` table) whose problem has a KC that one of its
    candidate errors is tied to, each with one such KC drawn as `target_kc`; sorted by student
    and problem, so every condition samples the same batches in the same order.

    >>> pairs = pl.DataFrame({"student_id": ["a", "b"], "problem_id": ["p", "q"],
    ...                       "kcs": [["loops", "math"], ["strings"]], "mastery": [[0.2, 0.7], [0.5]]})
    >>> choose_targets(pairs, {"p": ["OBO"], "q": []}, {"p": {"OBO": ["loops"]}}, 5, 0)["target_kc"].to_list()
    ['loops']
    """
    options = []
    for row in pairs.select("student_id", "problem_id", "kcs").iter_rows(named=True):
        labels = {label: kcs for label, kcs in (error_kcs.get(row["problem_id"]) or {}).items()
                  if label in set(candidates.get(row["problem_id"]) or ())}
        kcs = [kc for kc in row["kcs"] or () if tied_labels(labels, kc)]
        options.append(kcs)
    rng = random.Random(seed)
    eligible = [i for i, kcs in enumerate(options) if kcs]
    chosen = sorted(rng.sample(eligible, min(n, len(eligible))))
    targets = [rng.choice(options[i]) for i in chosen]
    return (pairs[chosen].with_columns(pl.Series("target_kc", targets, dtype=pl.String))
            .sort("student_id", "problem_id"))


def set_level(targets: pl.DataFrame, level: float | None) -> pl.DataFrame:
    """The pairs with the target KC's prompt level set to `level` (None: the own profile).

    >>> t = pl.DataFrame({"kcs": [["loops", "math"]], "mastery": [[0.2, 0.7]], "target_kc": ["math"]})
    >>> set_level(t, 0.9)["mastery"].to_list()
    [[0.2, 0.9]]
    """
    if level is None:
        return targets
    levels = [[level if kc == target else m for kc, m in zip(kcs, mastery)]
              for kcs, mastery, target in targets.select("kcs", "mastery", "target_kc").iter_rows()]
    return targets.with_columns(pl.Series("mastery", levels, dtype=pl.List(pl.Float64)))


def sample_outcomes(judged: pl.DataFrame, targets: pl.DataFrame,
                    error_kcs: Mapping[str, Mapping[str, Sequence[str]]]) -> pl.DataFrame:
    """Per judged sample (columns student_id, problem_id, sample, errors, clean, truncated, plus
    any others, kept): `pass` and `tied` (an error tied to the pair's target KC)."""
    target = dict(zip(zip(targets["student_id"], targets["problem_id"]), targets["target_kc"]))
    tied = []
    for student, problem, errors, cut in judged.select("student_id", "problem_id", "errors",
                                                       "truncated").iter_rows():
        labels = tied_labels(error_kcs.get(problem) or {}, target[(student, problem)])
        tied.append(bool(not cut and set(errors or ()) & labels))
    cut = pl.col("truncated").fill_null(False)
    return judged.with_columns(pl.Series("tied", tied, dtype=pl.Boolean),
                               (pl.col("clean") & ~cut).alias("pass"))


def generator_response(targets: pl.DataFrame, problems: pl.DataFrame, submissions: pl.DataFrame,
                       levels: Mapping[str, float | None]) -> pl.DataFrame:
    """The synthetic generator's chances per pair and condition (levels: condition -> level,
    None for the own profile): student_id, problem_id, condition, tied_chance, pass_chance.
    Needs the synthetic `true_mastery` column of `submissions`."""
    from kaser.data.synth.mutations import CATALOGUE
    from kaser.data.synth.students import error_chance

    if "true_mastery" not in submissions.columns:
        raise ValueError("the generator's response needs synthetic data (submissions.true_mastery)")
    index = {kc: i for i, kc in enumerate(kc_vocabulary(problems))}
    kcs_of = dict(zip(problems["problem_id"].to_list(), problems["kcs"].to_list()))
    language_of = dict(zip(problems["problem_id"].to_list(), problems["language"].to_list()))
    truth = targets.join(submissions.select("student_id", "problem_id", "true_mastery"),
                         on=["student_id", "problem_id"], how="left")
    rows = []
    for student, problem, kc, true in truth.select("student_id", "problem_id", "target_kc",
                                                   "true_mastery").iter_rows():
        for condition, level in levels.items():
            mastery = np.asarray(true, dtype=float)
            if level is not None:
                mastery[index[kc]] = level
            no_tied, no_error = 1.0, 1.0
            for error in CATALOGUE.values():
                shared = [index[k] for k in error.kcs if k in kcs_of[problem]]
                if not shared or language_of[problem] not in error.operators:
                    continue
                chance = error_chance(error.category(language_of[problem]), error.weight,
                                      float(mastery[shared].min()))
                no_error *= 1.0 - chance
                if kc in error.kcs:
                    no_tied *= 1.0 - chance
            rows.append((student, problem, condition, 1.0 - no_tied, no_error))
    return pl.DataFrame(rows, schema={"student_id": pl.String, "problem_id": pl.String,
                                      "condition": pl.String, "tied_chance": pl.Float64,
                                      "pass_chance": pl.Float64}, orient="row")


def pair_effects(outcomes: pl.DataFrame, low: str, high: str) -> pl.DataFrame:
    """Per method and pair: tied_effect = tied rate at `low` − at `high`, pass_effect = pass rate
    at `high` − at `low` (rates over the pair's samples).

    >>> rows = pl.DataFrame({"method": ["m"] * 4, "student_id": ["s"] * 4, "problem_id": ["p"] * 4,
    ...     "condition": ["0.1", "0.1", "0.9", "0.9"], "tied": [True, True, False, True],
    ...     "pass": [False, False, True, False]})
    >>> pair_effects(rows, "0.1", "0.9").select("tied_effect", "pass_effect").row(0)
    (0.5, 0.5)
    """
    rates = (outcomes.group_by("method", "student_id", "problem_id", "condition")
             .agg(pl.col("tied").cast(pl.Float64).mean(), pl.col("pass").cast(pl.Float64).mean()))
    at = {name: rates.filter(pl.col("condition") == name).drop("condition") for name in (low, high)}
    both = at[low].join(at[high], on=["method", "student_id", "problem_id"], suffix="_high")
    return (both.select("method", "student_id", "problem_id",
                        (pl.col("tied") - pl.col("tied_high")).alias("tied_effect"),
                        (pl.col("pass_high") - pl.col("pass")).alias("pass_effect"))
            .sort("method", "student_id", "problem_id"))


def generator_effects(generator: pl.DataFrame, low: str, high: str) -> pl.DataFrame:
    """The generator's per-pair effects, as `pair_effects` with method "generator"."""
    rows = generator.rename({"tied_chance": "tied", "pass_chance": "pass"}).with_columns(
        pl.lit("generator").alias("method"))
    return pair_effects(rows, low, high)


def _mean(column: str):
    return lambda rows: float(rows[column].mean()) if rows.height else None


def effects(outcomes: pl.DataFrame, generator: pl.DataFrame | None, low: str, high: str,
            reference: str = "student_sft", seed: int = 0) -> dict:
    """Every method's mean effects with 95% intervals over problems, the generator's, and each
    method's difference from the generator and from `reference` on the same pairs:
    {method: {tied_effect, pass_effect, tied_minus_generator, ..., tied_minus_<reference>, n_pairs,
    n_problems}}, each entry {value, ci95_problems}."""
    per_pair = pair_effects(outcomes, low, high)
    if generator is not None:
        per_pair = pl.concat([per_pair, generator_effects(generator, low, high)
                              .join(per_pair.select("student_id", "problem_id").unique(),
                                    on=["student_id", "problem_id"])])
    result: dict = {}
    methods = sorted(per_pair["method"].unique().to_list())
    for method in methods:
        mine = per_pair.filter(pl.col("method") == method)
        entry: dict = {"n_pairs": mine.height, "n_problems": mine["problem_id"].n_unique()}
        for column in ("tied_effect", "pass_effect"):
            entry[column] = {"value": _mean(column)(mine),
                             "ci95_problems": problem_bootstrap(_mean(column), mine, seed=seed)}
        for other in ("generator", reference):
            if method == "generator" or other == method or other not in methods:
                continue
            joined = mine.join(per_pair.filter(pl.col("method") == other),
                               on=["student_id", "problem_id"], suffix="_other")
            for column in ("tied_effect", "pass_effect"):
                gap = joined.select("problem_id", (pl.col(column) - pl.col(f"{column}_other")).alias("gap"))
                entry[f"{column.split('_')[0]}_minus_{other}"] = {
                    "value": _mean("gap")(gap), "ci95_problems": problem_bootstrap(_mean("gap"), gap, seed=seed)}
        result[method] = entry
    return result


def mechanism_holds(result: Mapping, method: str, reference: str = "student_sft") -> dict[str, bool | None]:
    """The protocol's verdict per outcome: the method's effect has the generator's sign with its
    interval clear of 0, and its margin over `reference` has an interval above 0 (None where an
    interval is missing)."""
    verdict = {}
    generator = result.get("generator", {})
    for outcome in ("tied", "pass"):
        mine = result.get(method, {}).get(f"{outcome}_effect", {}).get("ci95_problems")
        truth = generator.get(f"{outcome}_effect", {}).get("value")
        margin = result.get(method, {}).get(f"{outcome}_minus_{reference}", {}).get("ci95_problems")
        if mine is None or truth is None or margin is None:
            verdict[outcome] = None
            continue
        same_sign = mine[0] > 0 if truth > 0 else mine[1] < 0
        verdict[outcome] = bool(same_sign and (margin[0] > 0 if truth > 0 else margin[1] < 0))
    return verdict
