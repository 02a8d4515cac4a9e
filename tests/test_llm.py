"""Tests of the cached LLM client, the prompts and the openai backends (kaser.llm*).

The real `openai` client talks to the scripted server of fake_openai.py (the `server` and
`make_client` fixtures of conftest.py): markers inside the student code of a prompt (e.g.
RATE_LIMIT_ONCE, or a key of MALFORMED for a broken 200 answer) choose its behaviour, so each
test reads as data.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from kaser import InputError
from kaser.llm import (LLMClientParams, LLMParams, MalformedAnswer, Usage, cache_key, parse_json_answer,
                       request_key)
from kaser.errors.llm_prompts import (cluster_summary_messages, error_labelling_messages,
                               error_labelling_request, parse_cluster_summary,
                               parse_error_labels, parse_judge)
from kaser.errors.llm_tasks import (LLM_ANNOTATION_SCHEMA, annotate_llm, judge_llm,
                                   summarise_cluster_llm)
from fake_openai import KEY_ENV, MALFORMED, RETRY_AFTER_S, SECRET
from llm_settings import llm_settings


def dataset(codes: list[str], language: str = "java", correct: list[bool] | None = None):
    problems = pl.DataFrame({"problem_id": ["p1"], "language": [language],
                             "statement": ["Return the sum of the array."]})
    n = len(codes)
    submissions = pl.DataFrame({
        "student_id": [f"s{i}" for i in range(n)], "problem_id": ["p1"] * n,
        "step": list(range(n)), "code": codes,
        "correct": correct if correct is not None else [False] * n})
    return problems, submissions


# ---------------------------------------------------------------------------------------------
# annotate_llm end to end

def test_annotate_rows_statuses_and_skipped_correct(make_client, server):
    problems, submissions = dataset(
        ["int s = 0; // BUG:Off-by-one error", "return 0; // correct", "ALWAYS_MALFORMED"],
        correct=[False, True, False])
    table = annotate_llm(problems, submissions, make_client())
    assert table.schema == pl.Schema(LLM_ANNOTATION_SCHEMA)
    assert table["status"].to_list() == ["ok", "skipped-correct", "failed"]
    assert table["failure"][:2].to_list() == [None, None]
    assert table["failure"][2].startswith("malformed answer 3 times; last: not JSON")
    assert table["errors"].to_list() == [
        [{"category": "Logical", "label": "Off-by-one error",
          "evidence": "The loop stops one element early."}], [], []]
    # the correct submission was never sent; the malformed one was asked 1 + 2 times
    assert not any("// correct" in p for p in server.prompts())
    assert Counter(server.prompts()) == {
        "Problem: Return the sum of the array.\n\nCode:\nint s = 0; // BUG:Off-by-one error": 1,
        "Problem: Return the sum of the array.\n\nCode:\nALWAYS_MALFORMED": 3}
    assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}
    assert server.requests[0]["body"]["model"] == "o4-mini"


def test_annotate_language_aware_system_prompt(make_client, server):
    problems, submissions = dataset(["def f(xs): return 0"], language="python")
    annotate_llm(problems, submissions, make_client())
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert system.startswith("You are an expert Python programming instructor")
    assert "Indentation errors" in system and "Java" not in system


def test_annotate_unknown_problem_names_the_row(make_client):
    problems, submissions = dataset(["x", "y"])
    submissions = submissions.with_columns(pl.Series("problem_id", ["p1", "p9"]))
    with pytest.raises(InputError, match=r"submissions.parquet: column problem_id, row 1: unknown problem 'p9'"):
        annotate_llm(problems, submissions, make_client())


def test_cache_hit_on_rerun_makes_no_request(make_client, server, monkeypatch):
    problems, submissions = dataset([f"int x = {i}; // BUG:Wrong return value" for i in range(4)])
    first = annotate_llm(problems, submissions, make_client())
    assert len(server.requests) == 4
    # a fresh client on the same cache file, without any key: everything comes from the cache
    monkeypatch.delenv(KEY_ENV)
    client = make_client()
    again = annotate_llm(problems, submissions, client)
    assert len(server.requests) == 4
    assert again.equals(first)
    assert client.usage == Usage(prompts=4, cache_hits=4)


def test_identical_prompts_in_a_batch_are_asked_once(make_client, server):
    problems, submissions = dataset(["same code", "same code", "other code"])
    client = make_client()
    table = annotate_llm(problems, submissions, client)
    assert table["status"].to_list() == ["ok"] * 3
    assert len(server.requests) == 2
    assert (client.usage.answered, client.usage.cache_hits) == (2, 1)


def test_interrupted_run_resumes_without_asking_twice(make_client, server, tmp_path):
    codes = [f"int y = {i};" for i in range(6)]
    problems, submissions = dataset(codes)
    server.refuse_after = 3       # the key is revoked after 3 answers: the run stops
    with pytest.raises(InputError, match="HTTP 401"):
        annotate_llm(problems, submissions, make_client(max_concurrency=1))
    answered_first = server.prompts(status=200)
    assert len(answered_first) == 3
    assert len(server.requests) == 4  # the run stopped at the refusal; the queue was dropped
    # those 3 answers were committed the moment they arrived
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3

    server.refuse_after = None
    start = len(server.requests)
    table = annotate_llm(problems, submissions, make_client(max_concurrency=1))
    assert table["status"].to_list() == ["ok"] * 6
    asked_again = [r["prompt"] for r in server.requests[start:]]
    assert not set(asked_again) & set(answered_first)
    # every prompt was answered (and paid for) exactly once over both runs
    assert Counter(server.prompts(status=200)) == Counter(
        f"Problem: Return the sum of the array.\n\nCode:\n{code}" for code in codes)


# ---------------------------------------------------------------------------------------------
# retries

@pytest.mark.parametrize("marker, statuses", [
    ("RATE_LIMIT_ONCE", [429, 200]),    # rate limit, then an answer
    ("SERVER_ERROR_ONCE", [500, 200]),  # server error, then an answer
    ("MALFORMED_ONCE", [200, 200]),     # unterminated JSON, then a valid answer
])
def test_transient_trouble_is_retried(make_client, server, tmp_path, marker, statuses):
    client = make_client()
    reply = client.ask(error_labelling_request("P", "java", marker))
    assert reply.ok and reply.value[0]["label"] == "Off-by-one error"
    assert [r["status"] for r in server.requests] == statuses
    # only the valid answer is in the cache
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as db:
        (stored,) = db.execute("SELECT response FROM responses").fetchone()
    assert parse_error_labels(stored) == reply.value


def test_always_malformed_is_a_failure_not_cached(make_client, server):
    request = error_labelling_request("P", "java", "ALWAYS_MALFORMED")
    reply = make_client().ask(request)
    assert not reply.ok and reply.failure.startswith("malformed answer 3 times")
    # not cached: a rerun asks again
    make_client().ask(request)
    assert len(server.requests) == 6


def test_server_down_is_a_failure_after_the_retries(make_client, server):
    reply = make_client(max_retries=2).ask(error_labelling_request("P", "java", "SERVER_DOWN"))
    assert reply.failure == "HTTP 503 after 3 tries"
    assert [r["status"] for r in server.requests] == [503, 503, 503]


def test_an_interrupted_batch_starts_no_retry(make_client, server):
    # Ctrl-C sets the batch's stop event (ask_many); a worker waiting out a 30 s backoff quits
    client = make_client(backoff_s=30.0, max_retries=3)
    request = error_labelling_request("P", "java", "SERVER_DOWN")
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    start = time.monotonic()
    reply = client._from_server(request_key(client.cfg, request), request, stop)
    assert time.monotonic() - start < 10
    assert reply.failure == "stopped (interrupted) while retrying after InternalServerError"
    assert [r["status"] for r in server.requests] == [503]


def test_timeout_bounds_the_whole_request_body_included(make_client, server):
    # the body's first 16 bytes come one every 0.5 s: no single read waits 2 s, the whole takes 8 s
    client = make_client(timeout_s=2.0, max_retries=0)
    start = time.monotonic()
    reply = client.ask(error_labelling_request("P", "java", "TRICKLE_BODY"))
    assert time.monotonic() - start < 3.0
    assert reply.failure == "TimeoutError after 1 tries"


def test_retry_after_given_as_an_http_date_is_honoured(make_client, server):
    reply = make_client().ask(error_labelling_request("P", "java", "RATE_LIMIT_DATE_ONCE"))
    assert reply.ok and [r["status"] for r in server.requests] == [429, 200]
    waited = server.requests[1]["at"] - server.requests[0]["at"]
    assert RETRY_AFTER_S - 1.2 <= waited <= RETRY_AFTER_S + 1.0   # an HTTP date counts whole seconds


INTERRUPTED_RUN = """
import sys
from kaser.errors.llm_prompts import error_labelling_request
from llm_settings import llm_settings
from kaser.llm import ChatClient
cfg, settings = llm_settings(base_url=sys.argv[1], api_key_env=sys.argv[2], timeout_s=60.0, max_retries=0)
with ChatClient(cfg, settings, sys.argv[3], progress=False) as client:
    client.ask_many([error_labelling_request("P", "java", "TRICKLE_BODY")], desc=None)
"""


def test_ctrl_c_while_an_answer_trickles_in_exits_without_waiting_for_it(server, tmp_path):
    """The body still has about 7.5 s to go when Ctrl-C comes; the run must end well before it
    would arrive (a per-read timeout once made it wait 6.4 s). The bound leaves room for the
    interpreter's own exit on a loaded machine (1.03 s once in CI with the suite beside it)."""
    root = Path(__file__).resolve().parents[1]
    run = subprocess.Popen([sys.executable, "-c", INTERRUPTED_RUN, server.url, KEY_ENV, str(tmp_path / "c.sqlite")],
                           env={**os.environ, KEY_ENV: SECRET,
                                "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while server.received == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)   # the answer is on its way
    run.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = run.communicate(timeout=30)
    assert time.monotonic() - start < 2.5, err[-2000:]
    assert run.returncode != 0 and "KeyboardInterrupt" in err


def test_rejected_prompt_is_a_failure_not_a_crash(make_client, server):
    # a 400 concerns this prompt (e.g. too long), not the setup: no retry, a failure row
    problems, submissions = dataset(["BAD_REQUEST", "fine"])
    table = annotate_llm(problems, submissions, make_client())
    assert table["status"].to_list() == ["failed", "ok"]
    assert Counter(r["status"] for r in server.requests) == {400: 1, 200: 1}


@pytest.mark.parametrize("marker", list(MALFORMED))
def test_malformed_server_answer_is_retried_then_a_failure_with_the_reason(make_client, server,
                                                                           tmp_path, marker):
    client = make_client()
    reply = client.ask(error_labelling_request("P", "java", marker))
    assert not reply.ok
    assert reply.failure.startswith("malformed answer 3 times; last: ")
    assert MALFORMED[marker][2] in reply.failure
    assert [r["status"] for r in server.requests] == [200, 200, 200]   # 1 + malformed_retries
    assert client.usage.failed == 1 and client.usage.requests == 3
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as db:          # nothing cached
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_annotate_keeps_one_failed_row_per_malformed_answer(make_client, server):
    problems, submissions = dataset([*MALFORMED, "fine code"])
    table = annotate_llm(problems, submissions, make_client(malformed_retries=0))
    assert table["status"].to_list() == ["failed"] * len(MALFORMED) + ["ok"]
    for failure, (_, _, reason) in zip(table["failure"], MALFORMED.values()):
        assert failure.startswith("malformed answer 1 times; last: ") and reason in failure
    assert table["failure"][-1] is None and table["errors"][-1][0]["label"] == "Off-by-one error"


def test_every_prompt_failing_is_one_error_not_a_table_of_failures(make_client, server):
    problems, submissions = dataset(["BODY_HTML", "USAGE_STRING", "ok code"],
                                    correct=[False, False, True])
    with pytest.raises(InputError, match=r"^all 2 prompts failed \(first: malformed answer 3 times; "
                                         r"last: server answer is not JSON: '<html>.*check the server "
                                         rf"at {re.escape(server.url)} and model 'o4-mini'"):
        annotate_llm(problems, submissions, make_client())
    assert len(server.requests) == 6


def test_missing_key_is_a_clear_error_only_when_a_call_is_needed(make_client, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(InputError, match=f"environment variable {KEY_ENV} is not set"):
        make_client().ask(error_labelling_request("P", "java", "x"))


def test_concurrency_bound_is_respected(make_client, server):
    server.delay = 0.1
    client = make_client(max_concurrency=3)
    replies = client.ask_many([error_labelling_request("P", "java", f"c{i}") for i in range(9)])
    assert all(r.ok for r in replies)
    assert server.max_in_flight == 3


# ---------------------------------------------------------------------------------------------
# the key and the cache key

def test_api_key_never_stored_or_logged(make_client, server, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    client = make_client()
    problems, submissions = dataset(["RATE_LIMIT_ONCE", "MALFORMED_ONCE", "ALWAYS_MALFORMED"])
    annotate_llm(problems, submissions, client)
    assert {r["auth"] for r in server.requests} == {f"Bearer {SECRET}"}  # the key was used
    client.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("llm_cache.sqlite*"))
    assert SECRET.encode() not in stored
    assert caplog.records and SECRET not in caplog.text
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    assert SECRET not in repr(client) + repr(client.cfg) + repr(client.client_cfg)


BASE, _ = llm_settings()
BASE_REQUEST = error_labelling_request("Return the sum.", "java", "int f() { return 1; }")


@pytest.mark.parametrize("cfg, key", [
    # params.yaml's `llm` as it was before `llm_client` was split off (o4-mini, JSON mode, the rest
    # unset): the key of every llm_cache.sqlite filled since, which must keep answering
    (LLMParams("o4-mini", True, None, None, None, None),
     "23fbc44a6f1ccfa000f7da77b3540d54e102fbf3bfdae322df59c1aad36b43ca"),
    # every decoding setting sent, and another model
    (LLMParams("gpt-4.1-mini", False, 0.0, "high", 4000, 7),
     "a4c512773d5ab8d9840273f9c2fdd6547b8cd5176d119d18f3e21e83143ea6a9"),
])
def test_cache_key_bytes_are_those_of_the_caches_already_filled(cfg, key):
    assert request_key(cfg, BASE_REQUEST) == key


def test_the_llm_section_is_exactly_what_the_cache_key_holds():
    # each `llm` field changes the key (above, one case each); no `llm_client` field can, since
    # request_key never sees them: the two classes share no field
    assert {f.name for f in dataclasses.fields(LLMParams)} == {
        "model", "json_mode", "temperature", "reasoning_effort", "max_completion_tokens", "seed"}
    assert not {f.name for f in dataclasses.fields(LLMParams)} & {
        f.name for f in dataclasses.fields(LLMClientParams)}


@pytest.mark.parametrize("cfg, request_, same", [
    # another model answers differently
    (dataclasses.replace(BASE, model="gpt-4.1-mini"), BASE_REQUEST, False),
    # a new version of the prompt template
    (BASE, dataclasses.replace(BASE_REQUEST, prompt_version="error-labelling/table9-v2"), False),
    # other messages (another submission)
    (BASE, error_labelling_request("Return the sum.", "java", "int f() { return 2; }"), False),
    # decoding: temperature, reasoning effort, token limit, seed, JSON mode
    (dataclasses.replace(BASE, temperature=0.0), BASE_REQUEST, False),
    (dataclasses.replace(BASE, reasoning_effort="high"), BASE_REQUEST, False),
    (dataclasses.replace(BASE, max_completion_tokens=4000), BASE_REQUEST, False),
    (dataclasses.replace(BASE, seed=7), BASE_REQUEST, False),
    (dataclasses.replace(BASE, json_mode=False), BASE_REQUEST, False),
    # the same settings and request: the same key
    (dataclasses.replace(BASE), BASE_REQUEST, True),
])
def test_cache_key_depends_on_what_shapes_the_answer(cfg, request_, same):
    assert (request_key(cfg, request_) == request_key(BASE, BASE_REQUEST)) is same


def test_cache_key_is_canonical():
    messages = [{"role": "user", "content": "hi"}]
    # key order inside messages and decoding does not matter; values do
    assert cache_key("m", "v1", messages, {"a": 1, "b": 2}) == \
        cache_key("m", "v1", [{"content": "hi", "role": "user"}], {"b": 2, "a": 1})
    assert cache_key("m", "v1", messages, {"a": 1}) != cache_key("m", "v1", messages, {"a": 2})


# ---------------------------------------------------------------------------------------------
# cost accounting

def test_cost_accounting_hand_computed(make_client, server):
    problems, submissions = dataset(["a", "b", "MALFORMED_ONCE", "correct"],
                                    correct=[False, False, False, True])
    client = make_client(price_per_mtok_in=1.10, price_per_mtok_out=4.40)
    annotate_llm(problems, submissions, client)
    # 4 responses (the malformed one is paid for too): 4 x 1000 in, 4 x 500 out
    # cost = 4000 * 1.10 / 1e6 + 2000 * 4.40 / 1e6 = 0.0044 + 0.0088 = 0.0132
    usage = client.usage
    assert (usage.prompts, usage.answered, usage.cache_hits, usage.failed) == (3, 3, 0, 0)
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (4, 4000, 2000)
    assert usage.cost_usd == pytest.approx(0.0132)
    # a rerun: 3 cache hits, no tokens, no cost
    rerun = make_client(price_per_mtok_in=1.10, price_per_mtok_out=4.40)
    annotate_llm(problems, submissions, rerun)
    assert rerun.usage == Usage(prompts=3, cache_hits=3)


def test_usage_line_is_printed(make_client, capsys):
    problems, submissions = dataset(["a"])
    client = make_client(price_per_mtok_in=2.0, price_per_mtok_out=8.0)
    client.progress = True
    annotate_llm(problems, submissions, client)
    # 1000 * 2.0 / 1e6 + 500 * 8.0 / 1e6 = 0.006
    assert ("annotate (llm) [o4-mini]: 1 prompts: 0 cache hits, 1 answered, 0 failed; "
            "1 requests, 1,000 prompt + 500 completion tokens, $0.0060") in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# judge and cluster summary

def test_judge_keeps_only_listed_labels(make_client, server):
    client = make_client()
    chosen = judge_llm("P", "java", "int f() {}", ["Missing return statement", "Off-by-one error"],
                       client)
    assert chosen == {"Missing return statement"}
    assert judge_llm("P", "java", "int f() {}", [], client) == set()  # nothing to choose: no call
    assert len(server.requests) == 1


def test_cluster_summary_ignores_member_order(make_client, server):
    client = make_client()
    labels = ["Off-by-one in loop over nums", "Off-by-one in loop over nums", "Loop bound off by one"]
    assert summarise_cluster_llm(labels, client) == "General Off-by-one in loop over nums"
    assert summarise_cluster_llm(list(reversed(labels)), client) == \
        "General Off-by-one in loop over nums"
    assert len(server.requests) == 1  # the second order is the same prompt: a cache hit


# ---------------------------------------------------------------------------------------------
# parsers (no server)

def judge_two(text: str) -> set[str]:
    return parse_judge(text, ["Off-by-one error", "Missing return statement"])


@pytest.mark.parametrize("parse, text, expected", [
    # error labelling: the template of Table 9, as asked
    (parse_error_labels,
     '{"errors": [{"Reasoning": "r", "Category": "Runtime", "Label": "Null dereference"}]}',
     [{"category": "Runtime", "label": "Null dereference", "evidence": "r"}]),
    # a fenced answer, lower-case keys, "syntax error" as category, extra spaces in the label
    (parse_error_labels,
     '```json\n{"errors": [{"reasoning": "r", "category": "syntax error", "label": "Missing  ;"}]}\n```',
     [{"category": "Syntax", "label": "Missing ;", "evidence": "r"}]),
    # no errors is a valid (if unexpected) answer
    (parse_error_labels, '{"errors": []}', []),
    # an unknown category
    (parse_error_labels, '{"errors": [{"Reasoning": "r", "Category": "Style", "Label": "x"}]}',
     MalformedAnswer),
    # a missing label
    (parse_error_labels, '{"errors": [{"Reasoning": "r", "Category": "Logical"}]}', MalformedAnswer),
    # an empty label
    (parse_error_labels, '{"errors": [{"Reasoning": "r", "Category": "Logical", "Label": "  "}]}',
     MalformedAnswer),
    # errors is not a list
    (parse_error_labels, '{"errors": "Off-by-one"}', MalformedAnswer),
    # not JSON
    (parse_error_labels, "The code has an off-by-one error.", MalformedAnswer),
    # cluster summary: as asked, and without the reasoning
    (parse_cluster_summary, '{"Reasoning": "r", "Label": "Off-by-one error"}', "Off-by-one error"),
    (parse_cluster_summary, '{"label": "Off-by-one error"}', "Off-by-one error"),
    # no label; not an object
    (parse_cluster_summary, '{"Reasoning": "r"}', MalformedAnswer),
    (parse_cluster_summary, '["Off-by-one error"]', MalformedAnswer),
    # judge: a listed label in other case and with a period; an unlisted one is dropped
    (judge_two, '{"errors": ["missing return statement.", "Made up"]}', {"Missing return statement"}),
    # none of the listed errors
    (judge_two, '{"errors": []}', set()),
    # errors is not a list
    (judge_two, '{"errors": "Off-by-one error"}', MalformedAnswer),
])
def test_parsers(parse, text, expected):
    if expected is MalformedAnswer:
        with pytest.raises(MalformedAnswer):
            parse(text)
    else:
        assert parse(text) == expected


def test_table9_prompt_text():
    system, user = error_labelling_messages("P.", "java", "code")
    assert system["content"].startswith(
        "You are an expert Java programming instructor and automated code reviewer.\n"
        "Given a Java programming problem and a student's buggy code solution, your task is to "
        "identify all errors present in the code. There is at least one error in the code.")
    assert "Semicolon errors" in system["content"] and "NullPointerExceptions" in system["content"]
    # the template in the prompt is itself valid JSON of the shape we parse
    template = system["content"].rsplit("\n", 1)[1]
    assert list(parse_json_answer(template, {"type": "object"})["errors"][0]) == \
        ["Reasoning", "Category", "Label"]
    assert user == {"role": "user", "content": "Problem: P.\n\nCode:\ncode"}
    with pytest.raises(ValueError):
        error_labelling_messages("P.", "c++", "code")


def test_cluster_summary_lists_counts_most_frequent_first():
    _, user = cluster_summary_messages(["b", "a", "b", "c", "a", "b"])
    assert user["content"].splitlines()[1:] == ["- b (3)", "- a (2)", "- c (1)"]
