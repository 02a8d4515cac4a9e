"""The student prompt: problem + knowledge profile -> chat messages, the same for SFT, GRPO,
sampling and `kaser simulate` (paper §3.2, Table 14).

    messages = build_messages(statement, ["loops", "arrays"], [0.2, 0.9], "java",
                              signature="public int sum(int[] nums)")
    text = build_prompt_text(tokenizer, statement, ["loops", "arrays"], [0.2, 0.9], "java",
                             signature=None)   # None: no signature known, the authors' prompt
    pairs = student_pairs(problems, submissions, mastery, students)   # rows prompts are built from
    pairs = read_pairs("data/synthetic-python", "student", 0, "train")  # the same from a folder

A training run holds out one test fold of one split (kaser.predictor.base_model.ModelParams.runs): split
"student" holds out the test students of folds.json `by_student` (test pairs = their
submissions, training pairs = every other student's), split "problem" the test problems of
`by_problem` (test pairs = every student's submissions to them, training pairs = the
submissions to the other problems).

The wording is the authors' (umass-ml4ed/code_personalization, `grpo.py`,
`load_student_ability_dataset`): a system message, then the user message "Problem: {p}" and
"Student information:" with, per KC of the problem numbered from 1,
" KC {i}: {kc}. The student's mastery level on {kc} is {level}.", then
" Simulate the student written code:". The tokenizer's chat template renders it, with the
generation prompt (assistant turn) opened.

Departures from the authors' code, and why:
1. One prompt everywhere. The released SFT data loader words the user message "Question: ..."
   and leaves out the system message's last sentence (no markdown fences), while GRPO and
   sampling use "Problem: ..." with it; we use the GRPO wording for SFT as well, so the policy
   is trained on the prompt it is later sampled with.
2. Mastery is printed with two decimals ("0.42"). The released code prints the stored value as
   Python formats it and the stored format is not released; two decimals keep float noise
   (0.4213780164718628) out of the prompt.
3. The language is written "Java" / "Python"; the released code writes the dataset's language
   name as given ("java"), an earlier version hard-codes "Java".
4. The problem's starter signature, where known (problems.parquet `signature`:
   `kaser.data.signatures`), follows the statement as "Function signature: {signature}". A
   CodeWorkout student writes the body of a method whose header the editor already shows, and
   the tests call it by that name; the authors' prompt leaves it out, so a model has to guess
   the name from the statement, and most of our synthetic statements never say it (in the CPU
   study without it, reports/cpu-study/, about three quarters of the invalid predicted codes
   were invalid for the name alone). Showing it gives the model what the student saw. Where no signature is known the prompt is the authors'.
5. The level printed for a KC is the student's percentile on that KC among every row of the
   knowledge stage's mastery table (`prompt_levels`: the mid-rank share of rows below, in
   (0, 1)), not the LSTM's raw estimate. The raw estimates sit in a narrow band (in the CPU
   study a prompt's levels had an SD of 0.04 where the true mastery's was 0.13), so students
   who differ by a standard deviation read "0.58" and "0.62", which a small model cannot tell
   apart; a percentile keeps each KC's order across students and spreads it over [0, 1]. The
   table holds no outcome, so no test student's result reaches the prompt. A level given by
   hand (`kaser simulate --mastery`, the knowledge sweep, an intervention) reads the same way:
   0.1 is a student weaker on that KC than nine in ten of the dataset's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from kaser import InputError

LANGUAGE_NAMES = {"java": "Java", "python": "Python"}


def system_message(language: str) -> str:
    """The authors' system message for the knowledge-conditioned student simulator.

    >>> system_message("java")[:60]
    'You are a student code simulator. Given a programming proble'
    """
    if language not in LANGUAGE_NAMES:
        raise InputError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGE_NAMES)}")
    return ("You are a student code simulator. Given a programming problem and the student's "
            "mastery levels for specific knowledge components (KCs), generate "
            f"{LANGUAGE_NAMES[language]} code that reflects that understanding, including plausible "
            "student errors. Output only the code, with no explanations or comments. "
            "Do not wrap the code in markdown fences (no ```).")


def signature_line(signature: str | None) -> str:
    """What the prompt says of the starter signature (departure 4): a paragraph, or nothing.

    >>> signature_line("def add(a, b):"), signature_line(None)
    ('Function signature: def add(a, b):\\n\\n', '')
    """
    return f"Function signature: {signature.strip()}\n\n" if signature and signature.strip() else ""


def user_message(statement: str, kcs: Sequence[str], mastery_levels: Sequence[float], *,
                 signature: str | None) -> str:
    """Problem statement, its starter signature (None: unknown, left out) and the student's
    mastery of each of the problem's KCs.

    >>> user_message("Add a and b.", ["arithmetic"], [0.25], signature=None)
    "Problem: Add a and b.\\n\\nStudent information: KC 1: arithmetic. The student's mastery level on arithmetic is 0.25. Simulate the student written code:"
    >>> user_message("Add a and b.", [], [], signature="def add(a, b):")
    'Problem: Add a and b.\\n\\nFunction signature: def add(a, b):\\n\\nStudent information: Simulate the student written code:'
    """
    if len(kcs) != len(mastery_levels):
        raise InputError(f"{len(kcs)} KCs but {len(mastery_levels)} mastery levels")
    text = f"Problem: {statement}\n\n{signature_line(signature)}Student information:"
    for number, (kc, level) in enumerate(zip(kcs, mastery_levels), start=1):
        text += f" KC {number}: {kc}. The student's mastery level on {kc} is {float(level):.2f}."
    return text + " Simulate the student written code:"


def build_messages(statement: str, kcs: Sequence[str], mastery_levels: Sequence[float],
                   language: str, *, signature: str | None) -> list[dict[str, str]]:
    """The chat (system, user) that asks the model for this student's code."""
    return [{"role": "system", "content": system_message(language)},
            {"role": "user", "content": user_message(statement, kcs, mastery_levels,
                                                     signature=signature)}]


def build_prompt_text(tokenizer, statement: str, kcs: Sequence[str],
                      mastery_levels: Sequence[float], language: str, *,
                      signature: str | None) -> str:
    """The prompt as the model reads it: the chat template applied, assistant turn opened."""
    messages = build_messages(statement, kcs, mastery_levels, language, signature=signature)
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def problem_mastery(kcs: Sequence[str], vocabulary: Sequence[str],
                    mastery: Sequence[float]) -> list[float]:
    """The entries of a full mastery vector (in `vocabulary` order) for the problem's `kcs`.

    >>> problem_mastery(["loops"], ["arrays", "loops"], [0.1, 0.7])
    [0.7]
    """
    if len(vocabulary) != len(mastery):
        raise InputError(f"mastery vector has {len(mastery)} values for {len(vocabulary)} KCs")
    index = {kc: i for i, kc in enumerate(vocabulary)}
    missing = [kc for kc in kcs if kc not in index]
    if missing:
        raise InputError(f"KC(s) {', '.join(missing)} not in the KC vocabulary")
    return [float(mastery[index[kc]]) for kc in kcs]


def prompt_levels(mastery: pl.DataFrame) -> pl.DataFrame:
    """The mastery table with each `mastery` entry replaced by its percentile among the table's
    rows on that KC (departure 5): (rows below + half the rows equal) / rows, rounded to 4 places.

    >>> table = pl.DataFrame({"mastery": [[0.50, 0.9], [0.52, 0.9], [0.51, 0.1], [0.60, 0.5]]})
    >>> prompt_levels(table)["mastery"].to_list()
    [[0.125, 0.75], [0.625, 0.75], [0.375, 0.125], [0.875, 0.375]]
    """
    if mastery.height == 0:
        return mastery
    vectors = np.asarray(mastery["mastery"].to_list(), dtype=float)
    if vectors.ndim != 2:
        raise InputError("mastery vectors of unequal length", file="mastery.parquet", column="mastery")
    ordered = np.sort(vectors, axis=0)
    below = np.stack([np.searchsorted(ordered[:, j], vectors[:, j], side="left")
                      for j in range(vectors.shape[1])], axis=1)
    upto = np.stack([np.searchsorted(ordered[:, j], vectors[:, j], side="right")
                     for j in range(vectors.shape[1])], axis=1)
    levels = np.round((below + upto) / (2.0 * len(vectors)), 4)
    return mastery.with_columns(pl.Series("mastery", levels.tolist(), dtype=pl.List(pl.Float64)))


def student_pairs(problems: pl.DataFrame, submissions: pl.DataFrame, mastery: pl.DataFrame,
                  students: Iterable[str] | None = None) -> pl.DataFrame:
    """One row per submission of `students` (None: of everyone in `submissions`): what a prompt
    is built from, and the target code.

    `mastery` is the knowledge stage's table (student_id, problem_id, mastery over the sorted KC
    vocabulary of `problems`); each pair's levels are its `prompt_levels` (percentiles over the
    whole table, departure 5), picked out for its problem's KCs.
    Columns: student_id, problem_id, step, language, statement, signature (null: unknown), kcs,
    mastery (one level per KC of `kcs`), code. Ordered by student and step.
    """
    from kaser.data.contracts import kc_vocabulary

    vocabulary = kc_vocabulary(problems)
    chosen = (submissions if students is None
              else submissions.filter(pl.col("student_id").is_in(list(students))))
    joined = (chosen.select("student_id", "problem_id", "step", "code")
              .join(problems.select("problem_id", "language", "statement", "signature", "kcs"),
                    on="problem_id", how="left")
              .join(prompt_levels(mastery).select("student_id", "problem_id",
                                                  pl.col("mastery").alias("profile")),
                    on=["student_id", "problem_id"], how="left")
              .sort("student_id", "step"))
    if joined.height != chosen.height:
        raise InputError("several rows for one (student_id, problem_id)", file="mastery.parquet")
    for column, file in (("statement", "problems.parquet"), ("profile", "mastery.parquet")):
        missing = joined.filter(pl.col(column).is_null())
        if missing.height:
            first = missing.row(0, named=True)
            raise InputError(f"no row for student {first['student_id']}, problem "
                             f"{first['problem_id']} ({missing.height} pairs missing)", file=file)
    levels = [problem_mastery(kcs, vocabulary, profile)
              for kcs, profile in zip(joined["kcs"].to_list(), joined["profile"].to_list())]
    return (joined.drop("profile")
            .with_columns(pl.Series("mastery", levels, dtype=pl.List(pl.Float64)))
            .select("student_id", "problem_id", "step", "language", "statement", "signature",
                    "kcs", "mastery", "code"))


def pair_messages(pairs: pl.DataFrame) -> list[list[dict[str, str]]]:
    """The prompt messages of every row of a `student_pairs` table (its signature included)."""
    return [build_messages(row["statement"], row["kcs"], row["mastery"], row["language"],
                           signature=row["signature"])
            for row in pairs.iter_rows(named=True)]


# folds.json key of each split's test folds, and the submissions column its members are in
FOLD_KEYS = {"student": ("by_student", "student_id"), "problem": ("by_problem", "problem_id")}


def fold_members(folds: dict, split: str, fold: int, part: str) -> list[str]:
    """Students (split "student") or problems (split "problem") of test fold `fold` (part
    "test") or of all its other folds (part "train"), from folds.json.

    >>> fold_members({"by_student": [["a"], ["b", "c"]]}, "student", 1, "train")
    ['a']
    >>> fold_members({"by_problem": [["p2", "p1"], ["p3"]]}, "problem", 0, "test")
    ['p1', 'p2']
    """
    if split not in FOLD_KEYS:
        raise ValueError(f"split must be one of {', '.join(FOLD_KEYS)}, not {split!r}")
    key = FOLD_KEYS[split][0]
    by_fold = folds.get(key) or []
    if not 0 <= fold < len(by_fold):
        raise InputError(f"fold {fold} does not exist; folds.json has {len(by_fold)} folds {key} "
                         "(params.yaml model.folds names test folds from 0)", file="folds.json")
    if part == "test":
        return sorted(by_fold[fold])
    if part == "train":
        return sorted(m for number, members in enumerate(by_fold) if number != fold
                      for m in members)
    raise ValueError(f"part must be 'train' or 'test', not {part!r}")


def read_pairs(folder, split: str, fold: int, part: str) -> pl.DataFrame:
    """`student_pairs` of a dataset folder (problems, submissions, folds.json, mastery.parquet):
    the training ("train") or test ("test") pairs of the run holding out test fold `fold` of
    `split` ("student" or "problem")."""
    from kaser.data.contracts import read_dataset, read_folds, read_table

    folder = Path(folder)
    problems, submissions = read_dataset(folder)
    members = fold_members(read_folds(folder / "folds.json"), split, fold, part)
    mastery = read_table(folder / "mastery.parquet", {"student_id", "problem_id", "mastery"},
                         "run the knowledge stage first")
    chosen = submissions.filter(pl.col(FOLD_KEYS[split][1]).is_in(members))
    return student_pairs(problems, chosen, mastery)
