"""The paper's evaluation (§4.3-4.4, Tables 1-3): judge every predicted code once, score each
method per student-problem pair and per problem, fold by fold, and test KASER against the rest.

    python stages/evaluate.py synthetic-python   # reports/<ds>/metrics.json + evaluation.json

Inputs are the generate stage's predictions, data/<ds>/predictions/<method>.parquet, one row per
sample: split ("student": a test-fold student's real pair; "problem": any student's pair on a
test-fold problem), fold, student_id, problem_id, sample (0..K-1), code, method; the rows of
every training run of params.yaml model.splits x model.folds. The ground truth is the cluster
stage's errors of the real submission (submission_errors.parquet).

- `judge_predictions` asks the judge only about (problem, code) pairs its cache does not hold,
  one batch per problem; the cache lives beside the predictions so a rerun judges nothing again.
- `pair_table` (split "student", else "problem": `per_pair_split`): CodeBLEU@K and IoU@K, best of the first K samples, IoU over all
  pairs and over pairs whose real code is incorrect (the authors' IoU); per-category true/false
  positives of the first sample (Table 2); knowledge alignment where the true mastery is known.
- `problem_table` (split "problem", else "student": `per_problem_split`): error coverage IoU, χ² distance, mean cosine distance of code
  embeddings and CodeBLEU^∁_max per test problem (Table 3).
- `summarise` (kaser.evaluation.summary): per-fold means, mean ± std over folds, paired t-tests of KASER vs
  every other method, as `metrics.json` (numbers only, for `dvc metrics show/diff`) and
  `evaluation.json`.

Departures from the paper and the authors' code, and why (the t-test's and the std's are
kaser.evaluation.summary's):
1. A method whose predictions hold only one split is scored on it for both kinds of metrics
   (per-pair metrics on unseen problems, or per-problem metrics on seen problems), with a note
   in evaluation.json, so that a run with model.splits [problem] or [student] reports every
   table; the paper's protocol (both splits) uses each split for its own metrics.
2. Table 2's precision / recall / F1 count every pair (micro over pairs, first sample): an error
   predicted for a student whose real code was correct is a false positive.
3. The two diversity metrics (mean cosine distance, CodeBLEU^∁_max) use at most
   `max_codes_per_problem` predicted codes per problem (a seeded draw), not all of them:
   CodeBLEU^∁_max needs n·(n−1) CodeBLEU scores and a CPU embeds some 20 codes a second, while
   a mean over 100 codes' pairs already estimates the mean over all pairs closely. The error
   metrics always use every code.
4. Knowledge alignment (ours; synthetic data only): a cluster label's KCs are the synthetic
   catalogue's KCs of its member labels (kaser.data.synth.mutations.CATALOGUE), kept to the problem's
   own KCs when they meet them; a KC is "low" below `mastery_threshold` of the true mastery. The
   predicted errors of a pair are those of all its K samples together. The same score of the
   real errors is reported as a reference.
5. In CodeBLEU^∁_max an empty predicted code counts 0, not 1: CodeBLEU gives an empty code 0
   against everything, so a method that writes nothing would look the most diverse (the same
   rule as the GRPO diversity reward, kaser.predictor.rewards).
6. Error match with the authors' semantics (kaser.metrics.sets.error_match): a pair
   whose real code is correct is matched only by a predicted code the judge finds free of every
   error, so IoU "all pairs" does not pay prose or stubs diagnosed outside the candidate list.
7. Two error scores, each labelled: `iou_incorrect@K` / `iou_all@K` follow the paper's text (the
   judge chooses from the problem's candidate list, IoU with the true labels); `error_recall@K`
   follows the authors' evaluation code (the judge shown the student's own errors, |found| /
   |true|, which is why their Table 2 precision is 1.00). With the static judge the latter is
   exact: the found errors are the code's diagnoses among the student's own labels. With the
   openai judge it uses the answer over the problem's list plus the static diagnoses, not a
   second LLM call per pair.
8. A prediction marked `truncated` (the token budget cut it off; the generate stage writes the
   column) is not judged: it gets no errors, is neither clean nor valid, so its error match is 0,
   and it is counted apart (`truncated_share`) rather than as a student's syntax error; the
   per-problem error metrics (coverage IoU, χ²) leave it out (coverage 0, χ² null when every
   code of a problem was cut off).
9. Validity (`valid_share`): the share of predicted codes that parse (Python) / compile (Java)
   on their own, i.e. the judge's static diagnosis has no Syntax-category error (a wrong
   function name is not one: kaser.errors.judge, departure 3), per pair (Table 1) and per
   problem (Table 3); the diversity metrics (cosine distance, CodeBLEU^∁_max) use valid codes
   only, so non-code cannot look diverse.
10. Not in the paper: whether a method follows the student (kaser.evaluation.following): per
   pair the pass rate of the first k samples (`pass_rate@k`, a sample passes when the judge
   finds it free of every error), the all-pairs IoU of a student-blind hedge (`iou_all_hedged@k`:
   the first k − 1 samples plus the reference solution, which matches every correct pair), the
   share of samples that write the prompt's words as code (`prompt_word_share`,
   kaser.code.syntax.prompt_words_in; what sampling's redraws left, kaser.predictor.sampling
   departure 3) and of samples without a `return` (`no_return_share`,
   beside the real code's `real_no_return`), and the knowledge stage's mastery estimate of the
   pair (`mastery_estimate`, the mean over the problem's KCs; null without mastery.parquet);
   over pairs, the AUC of the pass rate for the real outcome and its slope on the estimate
   within a problem, in evaluation.json `follows_student` and metrics.json. Per problem, the
   class-level view: `error_rate_rmse` (each error type's share of samples against its share
   of real codes) and `pass_rate_error`, over every sample, so per sample rather than best of K.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from tqdm import tqdm

from kaser import InputError, methods
from kaser.errors.cluster import join_submission_errors
from kaser.code.syntax import prompt_words_in
from kaser.errors.static_annotator import WRONG_NAME
from kaser.data.contracts import kc_vocabulary
from kaser.metrics.pair_metrics import CategoryCounts, best_of_k, category_counts, knowledge_alignment
from kaser.metrics.codebleu import max_codebleu_to_rest
from kaser.metrics.sets import error_match, error_recall
from kaser.metrics.problem_metrics import (chi2_distance, coverage_iou, error_rate_rmse,
                                           mean_cosine_distance, pass_rate_error)
from kaser.evaluation.following import student_following, truth_following
from kaser.evaluation.summary import PROBLEM_METRICS, MethodResult, summarise
from kaser.methods import REFERENCE_METHOD
from kaser.taxonomy import CATEGORIES

BASELINES = methods.names("baseline")
ABLATIONS = methods.names("ablation")
METHODS = tuple(methods.METHODS)
SPLITS = ("student", "problem")
PREDICTION_SCHEMA = {"split": pl.String, "fold": pl.Int64, "student_id": pl.String,
                     "problem_id": pl.String, "sample": pl.Int64, "code": pl.String,
                     "method": pl.String}
# optional: the generate stage marks a completion the token budget cut off (null: not known)
TRUNCATED = "truncated"
RETURN = re.compile(r"\breturn\b")   # a code that never says `return` hands nothing back

# judge(problem_id, codes) -> for each code a kaser.errors.judge.Verdict (errors: the candidate
# labels in it; clean; valid; diagnosed: every label found)
JudgeCodes = Callable[[str, Sequence[str]], Sequence]
EmbedCodes = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class EvaluateParams:
    methods: tuple[str, ...]
    k_values: tuple[int, ...]
    embedding_model: str
    embedding_batch_size: int
    max_codes_per_problem: int
    mastery_threshold: float
    significance: float
    seed: int
    judge: str  # the evaluation judge: static | openai (GRPO's is params `judge`)


@dataclass(frozen=True)
class Truth:
    """What the predictions are scored against, for one dataset."""

    pairs: pl.DataFrame                      # student_id, problem_id, code, correct, errors,
                                             # mastery_estimate[, true_mastery]
    language: dict[str, str]                 # problem_id -> "java" | "python"
    category_of: dict[str, str]              # cluster label -> Syntax | Runtime | Logical
    error_kcs: dict[str, dict[str, list[str]]] | None   # problem -> label -> KCs (synthetic only)
    kcs: list[str]                           # kc vocabulary: the order of true_mastery


def prediction_path(folder: Path, method: str) -> Path:
    """Where a method's predictions are: data/<ds>/ablations/ for the reward ablations (the
    ablate stage), data/<ds>/predictions/ for KASER and the baselines (generate, baseline_<method>)."""
    return Path(folder) / methods.METHODS[method].predictions_dir / f"{method}.parquet"


def read_predictions(folder: Path, method: str) -> pl.DataFrame:
    """One method's predictions, checked against the contract (columns, types, unique samples)."""
    path = prediction_path(folder, method)
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} in params evaluate.methods; "
                         f"known: {', '.join(METHODS)}")
    if not path.is_file():
        if method in ABLATIONS:
            raise InputError(f"no predictions for method {method!r}; the ablate stage writes them "
                             "when params.yaml ablations.rewards names its reward", file=path)
        raise InputError(f"no predictions for method {method!r}; they are written by the generate "
                         f"stage (python stages/generate.py {Path(folder).name} {method})", file=path)
    frame = pl.read_parquet(path)
    missing = [c for c in PREDICTION_SCHEMA if c not in frame.columns]
    if missing:
        raise InputError("missing from the predictions (rerun the generate stage)",
                         file=path, column=", ".join(missing))
    truncated = (pl.col(TRUNCATED).cast(pl.Boolean) if TRUNCATED in frame.columns
                 else pl.lit(None, dtype=pl.Boolean)).alias(TRUNCATED)
    frame = frame.select(*(pl.col(c).cast(t) for c, t in PREDICTION_SCHEMA.items()), truncated)
    checks = [(~pl.col("split").is_in(SPLITS), "split", f"split must be one of {SPLITS}"),
              (pl.col("code").is_null(), "code", "null code (write an empty string for no code)"),
              (pl.col("sample") < 0, "sample", "negative sample number"),
              (pl.col("method") != method, "method", f"method must be {method!r}"),
              (pl.struct("split", "student_id", "problem_id", "sample").is_duplicated(), "sample",
               "duplicate (split, student_id, problem_id, sample)")]
    for mask, column, message in checks:
        rows = frame.with_row_index("_row").filter(mask.fill_null(True))["_row"]
        if len(rows):
            raise InputError(message, file=path, column=column, row=int(rows[0]))
    return frame


def read_truth(problems: pl.DataFrame, submissions: pl.DataFrame, submission_errors: pl.DataFrame,
               error_labels: pl.DataFrame, mastery: pl.DataFrame | None = None) -> Truth:
    """Ground truth of every real pair: code, correctness, cluster-label errors, true mastery,
    and the knowledge stage's estimate (`mastery`: its table; None leaves `mastery_estimate` null)."""
    keep = [c for c in ("student_id", "problem_id", "code", "correct", "true_mastery")
            if c in submissions.columns]
    pairs = join_submission_errors(submissions.select(keep), submission_errors)
    pairs = pairs.join(mastery_estimates(problems, mastery), on=["student_id", "problem_id"], how="left")
    category_of: dict[str, str] = {}
    for row in error_labels.sort("category", "label").iter_rows(named=True):
        category_of.setdefault(row["cluster_label"], row["category"])
    error_kcs = (problem_error_kcs(problems, error_labels)
                 if "true_mastery" in submissions.columns else None)
    return Truth(pairs, dict(zip(problems["problem_id"], problems["language"])), category_of,
                 error_kcs, kc_vocabulary(problems))


def mastery_estimates(problems: pl.DataFrame, mastery: pl.DataFrame | None) -> pl.DataFrame:
    """student_id, problem_id, mastery_estimate: the mean of the knowledge stage's estimate over
    the problem's KCs (departure 10); empty without a table.

    >>> problems = pl.DataFrame({"problem_id": ["p", "q"], "kcs": [["b"], ["a", "b"]]})
    >>> table = pl.DataFrame({"student_id": ["s", "s"], "problem_id": ["p", "q"],
    ...                       "mastery": [[0.2, 0.6], [0.2, 0.6]]})   # vocabulary [a, b]
    >>> mastery_estimates(problems, table)["mastery_estimate"].to_list()
    [0.6, 0.4]
    """
    schema = {"student_id": pl.String, "problem_id": pl.String, "mastery_estimate": pl.Float64}
    if mastery is None:
        return pl.DataFrame(schema=schema)
    vocabulary = {kc: i for i, kc in enumerate(kc_vocabulary(problems))}
    kcs_of = dict(zip(problems["problem_id"].to_list(), problems["kcs"].to_list()))
    rows = [(student, problem, float(np.mean([vector[vocabulary[kc]] for kc in kcs_of[problem]]))
             if kcs_of.get(problem) else None)
            for student, problem, vector in mastery.select("student_id", "problem_id", "mastery").iter_rows()]
    return pl.DataFrame(rows, schema=schema, orient="row")


def problem_error_kcs(problems: pl.DataFrame, error_labels: pl.DataFrame
                      ) -> dict[str, dict[str, list[str]]]:
    """problem -> cluster label -> KCs (departure 4); labels with no catalogued member get none."""
    from kaser.data.synth.mutations import CATALOGUE
    label_kcs: dict[str, set[str]] = {}
    for row in error_labels.iter_rows(named=True):
        if row["label"] in CATALOGUE:
            label_kcs.setdefault(row["cluster_label"], set()).update(CATALOGUE[row["label"]].kcs)
    result = {}
    for problem, kcs in zip(problems["problem_id"].to_list(), problems["kcs"].to_list()):
        mine = set(kcs or ())
        result[problem] = {label: sorted(found & mine or found) for label, found in label_kcs.items()}
    return result


# ------------------------------------------------------------------------------ judging

def judge_key(judge_name: str, problem_id: str, candidates: Sequence[str]) -> str:
    """Cache key of one problem's judgements: what decides the answer besides the code."""
    text = json.dumps([judge_name, problem_id, list(candidates)])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


SOURCE = "_method"   # which method a row came from while all methods are judged together
JUDGED_SCHEMA = {"judge_key": pl.String, "code": pl.String, "errors": pl.List(pl.String),
                 "clean": pl.Boolean, "valid": pl.Boolean, "diagnosed": pl.List(pl.String)}


def judge_predictions(predictions: pl.DataFrame, candidates: Mapping[str, Sequence[str]],
                      judge: JudgeCodes, judge_name: str, cache: pl.DataFrame | None = None
                      ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(predictions with `errors`, `clean`, `valid` and `diagnosed` columns, the cache grown by
    what was judged now).

    Each distinct (problem, code) is judged once, in one `judge` call per problem; the cache
    (judge_key, code, verdict) answers what an earlier run judged with the same candidates.
    Truncated predictions are not judged (departure 8). A cache without the verdict columns
    (labels only) is dropped.
    """
    if cache is None or not set(JUDGED_SCHEMA) <= set(cache.columns):
        cache = pl.DataFrame(schema=JUDGED_SCHEMA)
    cache = cache.select(list(JUDGED_SCHEMA))
    if TRUNCATED not in predictions.columns:
        predictions = predictions.with_columns(pl.lit(None, dtype=pl.Boolean).alias(TRUNCATED))
    keys = {p: judge_key(judge_name, p, candidates.get(p, ())) for p in predictions["problem_id"].unique()}
    keyed = predictions.with_columns(pl.col("problem_id").replace_strict(keys).alias("judge_key"))
    cut = pl.col(TRUNCATED).fill_null(False)
    todo = (keyed.filter(~cut).select("problem_id", "judge_key", "code").unique()
            .join(cache, on=["judge_key", "code"], how="anti").sort("problem_id", "code"))
    fresh = []
    groups = todo.group_by("problem_id", "judge_key", maintain_order=True).agg("code")
    for problem, key, codes in tqdm(groups.iter_rows(), total=groups.height, desc="judging",
                                    unit="problem", disable=not groups.height):
        found = list(judge(problem, codes))
        if len(found) != len(codes):
            raise ValueError(f"judge returned {len(found)} answers for {len(codes)} codes of {problem}")
        fresh.append(pl.DataFrame({"judge_key": [key] * len(codes), "code": codes,
                                   "errors": [sorted(v.errors) for v in found],
                                   "clean": [bool(v.clean) for v in found],
                                   "valid": [bool(v.valid) for v in found],
                                   "diagnosed": [sorted(v.diagnosed) for v in found]},
                                  schema=JUDGED_SCHEMA))
    cache = pl.concat([cache, *fresh]).unique(["judge_key", "code"], keep="last")
    judged = keyed.join(cache, on=["judge_key", "code"], how="left").drop("judge_key")
    judged = judged.with_columns(   # departure 8: a truncated code has no verdict of its own
        pl.when(cut).then(pl.lit([], dtype=pl.List(pl.String))).otherwise("errors").alias("errors"),
        pl.when(cut).then(False).otherwise("clean").alias("clean"),
        pl.when(cut).then(False).otherwise("valid").alias("valid"),
        pl.when(cut).then(pl.lit([], dtype=pl.List(pl.String))).otherwise("diagnosed").alias("diagnosed"))
    return judged.sort("split", "fold", "student_id", "problem_id", "sample"), cache.sort("judge_key", "code")


# ------------------------------------------------------------------------------ per pair

def _samples(judged: pl.DataFrame, split: str) -> pl.DataFrame:
    """One row per predicted pair of a split: fold, student_id, problem_id, codes, sample_errors."""
    return (judged.filter(pl.col("split") == split).sort("sample")
            .group_by("fold", "student_id", "problem_id", maintain_order=True)
            .agg(pl.col("code").alias("codes"), pl.col("errors").alias("sample_errors"),
                 pl.col("clean").alias("sample_clean"), pl.col("valid").alias("sample_valid"),
                 pl.col("diagnosed").alias("sample_diagnosed"),
                 pl.col(TRUNCATED).alias("sample_truncated"))
            .sort("fold", "student_id", "problem_id"))


def _with_truth(samples: pl.DataFrame, truth: Truth, split: str) -> pl.DataFrame:
    joined = samples.join(truth.pairs.rename({"code": "real_code", "errors": "real_errors"}),
                          on=["student_id", "problem_id"], how="left")
    unknown = joined.filter(pl.col("real_code").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"split {split}: student {first['student_id']}, problem {first['problem_id']} "
                         "has no real submission", file="predictions", column="student_id")
    return joined


def per_pair_split(judged: pl.DataFrame) -> str:
    """The split per-pair metrics are computed on: "student" (unseen students, the paper's
    protocol) when such predictions exist, else "problem" (a run of model.splits [problem] only;
    departure 1, the report says which).

    >>> per_pair_split(pl.DataFrame({"split": ["problem", "student"]}))
    'student'
    >>> per_pair_split(pl.DataFrame({"split": ["problem"]}))
    'problem'
    """
    return "student" if (judged["split"] == "student").any() or judged.is_empty() else "problem"


def pair_table(judged: pl.DataFrame, truth: Truth, k_values: Sequence[int],
               mastery_threshold: float = 0.5) -> pl.DataFrame:
    """Per-pair scores on the split `per_pair_split` picks: fold, student_id, problem_id, correct,
    codebleu@k, iou_all@k, iou_incorrect@k (null for correct real code), error_recall@k (the
    authors' score; null without true errors), valid_share, wrong_name_share (samples the judge
    diagnosed "Wrong function name") and truncated_share (null when not recorded) of the pair's
    samples, real_valid (1.0 when the real code has no Syntax-category error, so its mean is the
    real codes' validity on the same pairs), knowledge_alignment (null where undefined),
    and <category>_tp / _fp / _fn of the first sample."""
    rows = []
    split = per_pair_split(judged)
    pairs = _with_truth(_samples(judged, split), truth, split)
    kc_index = {kc: i for i, kc in enumerate(truth.kcs)}
    for pair in tqdm(pairs.iter_rows(named=True), total=pairs.height, desc="per-pair metrics",
                     unit="pair"):
        language, real_errors = truth.language[pair["problem_id"]], set(pair["real_errors"])
        sample_errors = [set(e) for e in pair["sample_errors"]]
        if len(pair["codes"]) < max(k_values):
            raise InputError(f"student {pair['student_id']}, problem {pair['problem_id']}: "
                             f"{len(pair['codes'])} samples, but evaluate.k_values asks for "
                             f"{max(k_values)}; generate more samples or lower k_values",
                             file="predictions", column="sample")
        row = {key: pair[key] for key in ("fold", "student_id", "problem_id", "correct")}
        matches = [error_match(errors, real_errors, clean, pair["correct"])
                   for errors, clean in zip(sample_errors, pair["sample_clean"])]
        for k in k_values:
            scores = best_of_k(pair["real_code"], real_errors, pair["codes"], sample_errors, k, language,
                               sample_clean=pair["sample_clean"], truth_correct=pair["correct"])
            row[f"codebleu@{k}"], row[f"iou_all@{k}"] = scores.codebleu, scores.iou
            row[f"iou_incorrect@{k}"] = None if pair["correct"] else scores.iou
            recalls = [error_recall(found, real_errors) for found in pair["sample_diagnosed"][:k]]
            row[f"error_recall@{k}"] = (None if pair["correct"] or recalls[0] is None
                                        else max(recalls))
            # departure 10: what passes, and what a hedge with the reference solution would score
            row[f"pass_rate@{k}"] = float(np.mean(pair["sample_clean"][:k]))
            row[f"iou_all_hedged@{k}"] = 1.0 if pair["correct"] else max(matches[:k - 1], default=0.0)
        row["mastery_estimate"] = pair.get("mastery_estimate")
        row["prompt_word_share"] = float(np.mean([bool(prompt_words_in(c)) for c in pair["codes"]]))
        row["no_return_share"] = float(np.mean([not RETURN.search(c) for c in pair["codes"]]))
        row["real_no_return"] = float(not RETURN.search(pair["real_code"]))
        row["valid_share"] = float(np.mean(pair["sample_valid"]))
        row["wrong_name_share"] = float(np.mean([WRONG_NAME in (found or ())
                                                 for found in pair["sample_diagnosed"]]))
        row["real_valid"] = float(not any(truth.category_of.get(e) == "Syntax" for e in real_errors))
        known = [t for t in pair["sample_truncated"] if t is not None]
        row["truncated_share"] = float(np.mean(known)) if known else None
        row["knowledge_alignment"] = _alignment(set().union(*sample_errors), pair, truth, kc_index,
                                                mastery_threshold)
        counts = category_counts(sample_errors[0], real_errors, truth.category_of)
        for category in CATEGORIES:
            hit = counts.get(category, CategoryCounts(0, 0, 0))
            row |= {f"{category.lower()}_tp": hit.true_positive,
                    f"{category.lower()}_fp": hit.false_positive,
                    f"{category.lower()}_fn": hit.false_negative}
        rows.append(row)
    schema = {"fold": pl.Int64, "student_id": pl.String, "problem_id": pl.String, "correct": pl.Boolean}
    schema |= {f"{name}@{k}": pl.Float64 for name in ("codebleu", "iou_all", "iou_incorrect")
               for k in k_values}
    schema |= {f"error_recall@{k}": pl.Float64 for k in k_values}
    schema |= {f"{name}@{k}": pl.Float64 for k in k_values for name in ("pass_rate", "iou_all_hedged")}
    schema |= dict.fromkeys(("mastery_estimate", "prompt_word_share", "no_return_share",
                             "real_no_return"), pl.Float64)
    schema |= {"valid_share": pl.Float64, "wrong_name_share": pl.Float64, "real_valid": pl.Float64,
               "truncated_share": pl.Float64}
    schema |= {"knowledge_alignment": pl.Float64}
    schema |= {f"{c.lower()}_{n}": pl.Int64 for c in CATEGORIES for n in ("tp", "fp", "fn")}
    return pl.DataFrame(rows, schema=schema)


def _alignment(predicted: set[str], pair: dict, truth: Truth, kc_index: dict[str, int],
               threshold: float) -> float | None:
    if truth.error_kcs is None or pair.get("true_mastery") is None:
        return None
    mastery = {kc: pair["true_mastery"][i] for kc, i in kc_index.items()}
    return knowledge_alignment(predicted, truth.error_kcs.get(pair["problem_id"], {}), mastery,
                               threshold)


def truth_alignment(truth: Truth, pairs: pl.DataFrame, threshold: float = 0.5) -> float | None:
    """Knowledge alignment of the real errors of `pairs` (student_id, problem_id): the reference."""
    if truth.error_kcs is None:
        return None
    kc_index = {kc: i for i, kc in enumerate(truth.kcs)}
    real = pairs.select("student_id", "problem_id").join(truth.pairs, on=["student_id", "problem_id"])
    values = [_alignment(set(row["errors"]), row, truth, kc_index, threshold)
              for row in real.iter_rows(named=True)]
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


# ------------------------------------------------------------------------------ per problem

def per_problem_split(judged: pl.DataFrame) -> str:
    """The split per-problem metrics are computed on: "problem" (unseen problems, the paper's
    protocol) when such predictions exist, else "student" (seen problems, unseen students: the
    CPU default trains student-split models only; departure 1, the report says which).

    >>> per_problem_split(pl.DataFrame({"split": ["student", "problem"]}))
    'problem'
    >>> per_problem_split(pl.DataFrame({"split": ["student"]}))
    'student'
    """
    return "problem" if (judged["split"] == "problem").any() else "student"


def problem_table(judged: pl.DataFrame, truth: Truth, embed: EmbedCodes,
                  max_codes_per_problem: int = 100, seed: int = 0) -> pl.DataFrame:
    """Per test problem: fold, problem_id, n_real, n_predicted, coverage_iou, chi2_distance,
    cosine_distance and codebleu_complement_max over the valid predicted codes (null with fewer
    than 2), problem_valid_share, error_rate_rmse and pass_rate_error (departure 10), on the
    split `per_problem_split` picks."""
    split = per_problem_split(judged)
    pairs = _with_truth(_samples(judged, split), truth, split)
    rows = []
    groups = pairs.group_by("fold", "problem_id", maintain_order=True).agg(
        "real_errors", "correct", pl.col("codes").explode(), pl.col("sample_errors").explode(),
        pl.col("sample_valid").explode(), pl.col("sample_clean").explode(),
        pl.col("sample_truncated").explode())
    for row in tqdm(groups.sort("fold", "problem_id").iter_rows(named=True), total=groups.height,
                    desc="per-problem metrics", unit="problem"):
        finished = [not t for t in row["sample_truncated"]]   # departure 8: cut-off codes apart
        predicted = [set(e) for e, keep in zip(row["sample_errors"], finished) if keep]
        clean = [c for c, keep in zip(row["sample_clean"], finished) if keep]
        real = [set(e) for e in row["real_errors"]]
        codes = [code for code, valid in zip(row["codes"], row["sample_valid"]) if valid]
        diverse = len(codes) >= 2
        drawn = (random.Random(f"{seed}:{row['problem_id']}").sample(codes, max_codes_per_problem)
                 if len(codes) > max_codes_per_problem else codes)
        rows.append({
            "fold": row["fold"], "problem_id": row["problem_id"],
            "n_real": len(real), "n_predicted": len(row["codes"]),
            "coverage_iou": coverage_iou(predicted, real, clean) if predicted else 0.0,
            "chi2_distance": chi2_distance(predicted, real) if predicted else None,
            "cosine_distance": mean_cosine_distance(embed(drawn)) if diverse else None,
            "codebleu_complement_max": (codebleu_diversity(drawn, truth.language[row["problem_id"]])
                                        if diverse else None),
            "problem_valid_share": float(np.mean(row["sample_valid"])),
            # departure 10: the class-level view, over every sample (a cut-off one has no error)
            "error_rate_rmse": error_rate_rmse([set(e) for e in row["sample_errors"]], real),
            "pass_rate_error": pass_rate_error(row["sample_clean"], row["correct"]),
        })
    schema = {"fold": pl.Int64, "problem_id": pl.String, "n_real": pl.Int64,
              "n_predicted": pl.Int64} | dict.fromkeys(PROBLEM_METRICS, pl.Float64)
    return pl.DataFrame(rows, schema=schema)


def codebleu_diversity(codes: Sequence[str], language: str) -> float:
    """CodeBLEU^∁_max with departure 5: mean over codes of 1 − max CodeBLEU to the others, an
    empty code counting 0.

    >>> codebleu_diversity(["", "  "], "python")   # plain 1 − max would give 1 to each
    0.0
    """
    closest = max_codebleu_to_rest(list(codes), language)
    return float(np.mean([1.0 - c if code.strip() else 0.0 for code, c in zip(codes, closest)]))


# ------------------------------------------------------------------------------ one method, a dataset

def evaluate_method(judged: pl.DataFrame, truth: Truth, params: EvaluateParams,
                    embed: EmbedCodes) -> MethodResult:
    """Per-pair and per-problem tables of one method's judged predictions."""
    return MethodResult(pair_table(judged, truth, params.k_values, params.mastery_threshold),
                        problem_table(judged, truth, embed, params.max_codes_per_problem, params.seed),
                        tuple(params.k_values), per_problem_split(judged), per_pair_split(judged))


def evaluate_dataset(truth: Truth, predictions: Mapping[str, pl.DataFrame],
                     candidates: Mapping[str, Sequence[str]], judge: JudgeCodes, judge_name: str,
                     params: EvaluateParams, embed: EmbedCodes, cache: pl.DataFrame | None = None,
                     tables: dict[str, MethodResult] | None = None) -> tuple[dict, dict, pl.DataFrame]:
    """Judge, score and summarise every method: (metrics.json, evaluation.json, judged cache);
    `tables`, when given, receives each method's per-pair and per-problem tables."""
    if not predictions:
        raise InputError("params.yaml evaluate.methods is empty: nothing to evaluate")
    # every method's codes of a problem go to the judge together: one annotator run per problem
    tagged = [frame.with_columns(pl.lit(method).alias(SOURCE)) for method, frame in predictions.items()]
    judged_all, cache = judge_predictions(pl.concat(tagged), candidates, judge, judge_name, cache)
    results = {method: evaluate_method(judged_all.filter(pl.col(SOURCE) == method).drop(SOURCE),
                                       truth, params, embed)
               for method in predictions}
    if tables is not None:
        tables.update(results)
    first = results.get(REFERENCE_METHOD) or next(iter(results.values()))
    reference = {"knowledge_alignment_of_real_errors":
                 truth_alignment(truth, first.pairs, params.mastery_threshold)}
    metrics, evaluation = summarise(results, params.significance, params.k_values, reference)
    evaluation["judge"] = judge_name
    evaluation["follows_student"] = following = {
        "methods": {m: student_following(r.pairs, params.k_values, params.seed) for m, r in results.items()},
        "truth": truth_following(first.pairs, params.seed)}
    for method, scores in following["methods"].items():   # the point values, for dvc metrics diff
        metrics[method] |= {name: entry["value"] for name, entry in scores.items()
                            if isinstance(entry, dict) and entry["value"] is not None}
    return metrics, evaluation, cache if cache is not None else pl.DataFrame(schema=JUDGED_SCHEMA)


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, allow_nan=False) + "\n")
