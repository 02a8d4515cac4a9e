"""Error annotation, cluster summaries and judging by an LLM: the `openai` backends.

    kaser annotate DIR --backend openai        # annotate_llm over DIR's submissions
    kaser cluster DIR                          # summarise_cluster_llm, when the backend is openai
    (judge_llm is the `openai` judge of the GRPO error reward and of evaluation)

Each function takes plain values and a `kaser.llm.ChatClient` (cache, retries, concurrency and
cost accounting live there) and returns plain values.

Departures from the paper, and why:
1. Correct submissions (score 1) are not sent to the model: they get no errors and the status
   "skipped-correct". Table 9 tells the model "There is at least one error in the code", so asking
   it about a correct submission would invite made-up errors; the paper annotates buggy code.
2. A submission whose answer stays malformed after the retries (or that the server never answers)
   is kept as a row with no errors, status "failed" and the reason in `failure`, rather than
   stopping the run; a rerun asks again for exactly those rows (failures are not cached). When
   every prompt of a run fails, the server or the settings are wrong: annotate_llm raises
   kaser.InputError (one line, exit 2 from the CLI and the stage) instead of writing a table of
   failures.
3. When the judge gets no valid answer it returns the empty set and the failure is counted in
   `client.usage.failed` (and logged), so a long GRPO run is not stopped by one bad answer;
   callers that must not mistake a failure for "no errors" check that count. Likewise a cluster
   whose summary fails keeps its most frequent member label.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import polars as pl

from kaser import InputError
from kaser.llm import ChatClient
from kaser.errors.llm_prompts import cluster_summary_request, error_labelling_request, judge_request

log = logging.getLogger(__name__)

ERROR_STRUCT = pl.Struct({"category": pl.String, "label": pl.String, "evidence": pl.String})
ANNOTATION_SCHEMA = {"student_id": pl.String, "problem_id": pl.String,
                     "errors": pl.List(ERROR_STRUCT), "status": pl.String}
# the openai backend adds why a "failed" row got no answer (null on other rows)
LLM_ANNOTATION_SCHEMA = {**ANNOTATION_SCHEMA, "failure": pl.String}
STATUSES = ("ok", "failed", "skipped-correct")


def _require(frame: pl.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", file=name)


def annotate_llm(problems: pl.DataFrame, submissions: pl.DataFrame,
                 client: ChatClient) -> pl.DataFrame:
    """One row per submission, in input order: student_id, problem_id, errors, status, failure.

    errors is a list of {category: Syntax|Runtime|Logical, label, evidence (the model's
    reasoning)}; status is "ok", "failed" or "skipped-correct" (no call made); failure says why
    a "failed" row has no answer. InputError when every prompt sent failed.
    """
    _require(problems, ("problem_id", "language", "statement"), "problems.parquet")
    _require(submissions, ("student_id", "problem_id", "code"), "submissions.parquet")
    if "correct" not in submissions.columns and "score" not in submissions.columns:
        raise InputError("needs column correct or score", file="submissions.parquet")
    problem_of = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
    correct = (submissions["correct"] if "correct" in submissions.columns
               else submissions["score"] == 1.0).to_list()

    requests, asked = [], []
    for i, row in enumerate(submissions.iter_rows(named=True)):
        problem = problem_of.get(row["problem_id"])
        if problem is None:
            raise InputError(f"unknown problem {row['problem_id']!r}", file="submissions.parquet",
                             column="problem_id", row=i)
        if not correct[i]:
            requests.append(error_labelling_request(problem["statement"], problem["language"],
                                                    row["code"]))
            asked.append(i)
    replies = dict(zip(asked, client.ask_many(requests, desc="annotate (llm)")))

    if asked and not any(reply.ok for reply in replies.values()):
        raise InputError(f"all {len(asked)} prompts failed (first: {replies[asked[0]].failure}); "
                         f"check the server at {client.client_cfg.base_url or 'the OpenAI API'} "
                         f"and model {client.cfg.model!r}, then rerun (failures are not cached)")
    errors, statuses, failures = [], [], []
    for i in range(submissions.height):
        reply = replies.get(i)
        status = "skipped-correct" if reply is None else "ok" if reply.ok else "failed"
        statuses.append(status)
        errors.append(reply.value if status == "ok" else [])
        failures.append(reply.failure if status == "failed" else None)
    failed = statuses.count("failed")
    if failed:
        log.warning("annotate (llm): %d of %d submissions got no valid answer (status 'failed'); "
                    "rerun to ask again for those only", failed, len(statuses))
    return pl.DataFrame({"student_id": submissions["student_id"].cast(pl.String),
                         "problem_id": submissions["problem_id"].cast(pl.String),
                         "errors": errors, "status": statuses, "failure": failures},
                        schema=LLM_ANNOTATION_SCHEMA)


def judge_llm(problem_statement: str, language: str, code: str,
              candidate_errors: Sequence[str], client: ChatClient) -> set[str]:
    """The candidate errors that the model finds in `code` (a subset of `candidate_errors`)."""
    if not candidate_errors:
        return set()
    reply = client.ask(judge_request(problem_statement, language, code, candidate_errors))
    if not reply.ok:
        log.warning("judge (llm): no valid answer, counted as no errors: %s", reply.failure)
        return set()
    return reply.value


def summarise_cluster_llm(labels: list[str], client: ChatClient) -> str:
    """A representative, problem-independent label for one cluster of raw error labels.

    `labels` holds one entry per error (repeats carry the counts the model weighs). Without a
    valid answer, the most frequent label stands for the cluster.
    """
    reply = client.ask(cluster_summary_request(labels))
    if reply.ok:
        return reply.value
    fallback = max(sorted(set(labels)), key=labels.count)
    log.warning("cluster summary (llm): no valid answer, using the most frequent label %r: %s",
                fallback, reply.failure)
    return fallback
