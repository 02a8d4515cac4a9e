"""ICL, PersonaPrompt and ParaStudent (kaser.predictor.history_prompts, kaser.predictor.baselines, their stages): history
selection, prompt contents, cached personas (local model and a fake OpenAI-compatible server on
127.0.0.1), in-context tuning examples, and a tiny-model run of the stages end to end."""

from __future__ import annotations

import json
import threading
import time

import polars as pl
import pytest
import yaml
from safetensors.torch import load_file

from kaser import InputError, config
from kaser.predictor.history_prompts import (NO_HISTORY_PERSONA, BaselineParams, icl_messages,
                             parastudent_examples, persona_messages, summary_chats, with_history)
from llm_settings import llm_settings
from kaser.predictor.baselines import local_personas, predict_baseline, student_personas
from kaser.predictor.sampling import GenerateParams
from fake_openai import KEY_ENV, SECRET, FakeOpenAI
from stage_runs import STAGE_PARAMS, full_params, make_workspace, stage
from tiny_lm import tiny_model_folder

PROBLEMS = pl.DataFrame({"problem_id": ["p0", "p1", "p2", "p3"],
                         "statement": ["Add a and b.", "Count the vowels.", "Reverse a string.",
                                       "Sum a list."],
                         "signature": ["def add(a, b):", None, "def reverse(s):", "def total(xs):"]})
SUBMISSIONS = pl.DataFrame({
    "student_id": ["s"] * 4 + ["t"] * 2,
    "problem_id": ["p0", "p1", "p2", "p3", "p2", "p0"],
    "step": [0, 1, 2, 3, 0, 1],
    "code": ["code-s0", "code-s1", "code-s2", "code-s3", "code-t0", "code-t1"]})


def pairs(student_steps, language="java"):
    """`student_pairs`-like rows (the columns the baselines read) for (student, step)s."""
    rows = SUBMISSIONS.join(PROBLEMS, on="problem_id").with_columns(language=pl.lit(language))
    wanted = pl.DataFrame({"student_id": [s for s, _ in student_steps],
                           "step": [n for _, n in student_steps]}, schema_overrides={"step": pl.Int64})
    return wanted.join(rows, on=["student_id", "step"], how="left", maintain_order="left")


def test_history_is_the_k_most_recent_earlier_submissions_oldest_first():
    table = with_history(pairs([("s", 3), ("s", 0), ("t", 1), ("s", 2)]), PROBLEMS, SUBMISSIONS, k=2)
    codes = [[item["code"] for item in history] for history in table["history"].to_list()]
    assert codes == [["code-s1", "code-s2"],   # k=2 most recent of steps 0-2, oldest first
                     [],                       # the first submission has no history
                     ["code-t0"],              # only the student's own submissions
                     ["code-s0", "code-s1"]]   # never the pair's own step or a later one
    assert table["history"][0][0]["statement"] == "Count the vowels."


def test_history_size_zero_and_code_budget():
    assert with_history(pairs([("s", 3)]), PROBLEMS, SUBMISSIONS, k=0)["history"].to_list() == [[]]
    cut = with_history(pairs([("s", 1)]), PROBLEMS, SUBMISSIONS, k=5, max_code_chars=4)
    assert cut["history"][0][0]["code"] == "code\n..."


def test_history_of_an_unknown_problem_is_an_input_error():
    bad = SUBMISSIONS.with_columns(problem_id=pl.lit("p9"))
    with pytest.raises(InputError, match="p9"):
        with_history(pairs([("s", 1)]), PROBLEMS, bad, k=5)


def test_icl_prompt_holds_each_earlier_problem_and_code_then_the_new_problem():
    [chat] = icl_messages(with_history(pairs([("s", 3)], "python"), PROBLEMS, SUBMISSIONS, k=5))
    assert [m["role"] for m in chat] == ["system", "user"]
    assert "Python code that this student would write" in chat[0]["content"]
    user = chat[1]["content"]
    positions = [user.index(text) for text in ("Add a and b.", "code-s0", "Count the vowels.",
                                               "code-s1", "Reverse a string.", "code-s2",
                                               "Problem: Sum a list.")]
    assert positions == sorted(positions)
    assert "code-s3" not in user   # the code to predict is never in its prompt
    # the new problem's starter signature follows it; earlier problems show the student's code
    assert user.endswith("Problem: Sum a list.\n\nFunction signature: def total(xs):\n\n"
                         "Simulate the student written code:")
    assert "def add(a, b):" not in user
    # a problem without a known signature gets the prompt without one
    [chat] = icl_messages(with_history(pairs([("s", 1)]), PROBLEMS, SUBMISSIONS, k=5))
    assert "Function signature" not in chat[1]["content"]


def test_persona_prompt_holds_the_persona_and_the_problem_only():
    table = with_history(pairs([("s", 3), ("s", 0)]), PROBLEMS, SUBMISSIONS, k=5)
    chats = persona_messages(table, ["Forgets return statements.", NO_HISTORY_PERSONA])
    user = chats[0][1]["content"]
    assert user.startswith("Student persona: Forgets return statements.")
    assert "Problem: Sum a list." in user and "code-s" not in user
    assert "Problem: Sum a list.\n\nFunction signature: def total(xs):" in user
    summaries = summary_chats(table)
    assert summaries[1] is None   # nothing to summarise: no LLM call
    assert "code-s2" in summaries[0][1]["content"] and "Sum a list" not in summaries[0][1]["content"]


def test_parastudent_examples_skip_pairs_without_history_and_draw_with_a_seed():
    table = with_history(pairs([("s", 0), ("s", 1), ("s", 2), ("s", 3), ("t", 0), ("t", 1)]),
                         PROBLEMS, SUBMISSIONS, k=5)
    examples = parastudent_examples(table, None, seed=0)
    assert [e["completion"][0]["content"] for e in examples] == ["code-s1\n", "code-s2\n", "code-s3\n",
                                                                  "code-t1\n"]
    assert examples[2]["prompt"] == icl_messages(table)[3]
    drawn = parastudent_examples(table, 2, seed=0)
    assert len(drawn) == 2 and drawn == parastudent_examples(table, 2, seed=0)
    with pytest.raises(InputError, match="no training pair"):
        parastudent_examples(table.filter(pl.col("step") == 0), None, seed=0)


# -- local backend: personas from the model, cached -------------------------------------------

GENERATE = config.settings(GenerateParams, "generate", k=2, max_new_tokens=6, batch_size=4, seed=0)


def test_local_personas_are_written_once_then_read_from_the_cache(tmp_path):
    table = with_history(pairs([("s", 3), ("s", 2), ("t", 1)]), PROBLEMS, SUBMISSIONS, k=5)
    chats = [chat for chat in summary_chats(table) if chat is not None]
    cache = tmp_path / "baseline_cache.sqlite"
    first = local_personas(chats, tiny_model_folder(), "tiny", cache, 6, GENERATE, "float32")
    assert len(first) == 3 and all(first)
    # a second call never loads the model: a folder that does not exist would fail to load
    again = local_personas(chats, tmp_path / "no-model", "tiny", cache, 6, GENERATE, "float32")
    assert again == first
    with pytest.raises(InputError, match="base model folder not found"):   # other model id: a miss
        local_personas(chats, tmp_path / "no-model", "other", cache, 6, GENERATE, "float32")


# -- openai backend: a fake OpenAI-compatible server ------------------------------------------

class TextServer(FakeOpenAI):
    """Answers plain text: a numbered persona to a summary prompt, numbered code otherwise."""

    def respond(self, path, body, auth):
        with self.lock:
            self.requests.append({"prompt": body["messages"][-1]["content"], "body": body,
                                  "status": 200})
            number = len(self.requests)
        persona = body["messages"][-1]["content"].endswith("Describe this student's persona:")
        content = f"Persona {number}: forgets edge cases." if persona else f"```\nint x = {number};\n```"
        return 200, {"id": "t", "object": "chat.completion", "created": int(time.time()),
                     "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


@pytest.fixture
def text_server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    fake = TextServer()
    threading.Thread(target=fake.httpd.serve_forever, kwargs={"poll_interval": 0.01},
                     daemon=True).start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


def openai_setup(server):
    llm, client = llm_settings(model="o4-mini", base_url=server.url, api_key_env=KEY_ENV,
                               backoff_s=0.001, max_retries=1, seed=7)
    return llm, client, config.settings(BaselineParams, "baselines", backend="openai", openai_model="qwen-32b")


def test_openai_personas_cost_nothing_the_second_time(text_server, tmp_path):
    llm, client, params = openai_setup(text_server)
    table = with_history(pairs([("s", 3), ("s", 0), ("t", 1)]), PROBLEMS, SUBMISSIONS, k=5)
    run = dict(llm=llm, llm_client=client, model_path=tmp_path / "no-model", model_id="tiny",
               cache_path=tmp_path / "cache.sqlite", generate=GENERATE)
    personas = student_personas(table, params, **run)
    assert len(text_server.requests) == 2          # the pair without history asks nothing
    assert personas[1] == NO_HISTORY_PERSONA and personas[0] != personas[2]
    assert student_personas(table, params, **run) == personas
    assert len(text_server.requests) == 2          # all from the cache


@pytest.mark.parametrize("method", ["icl", "persona"])
def test_openai_baseline_gives_k_distinct_cached_samples_per_pair(text_server, tmp_path, method):
    llm, client, params = openai_setup(text_server)
    test_pairs = pairs([("s", 3), ("t", 1)])
    run = dict(llm=llm, llm_client=client, model_id="tiny", cache_path=tmp_path / "cache.sqlite",
               model_path=tmp_path / "no-model")
    predictions = predict_baseline(method, test_pairs, PROBLEMS, SUBMISSIONS, params, GENERATE, **run)
    assert predictions.columns == ["student_id", "problem_id", "sample", "code", "method", "truncated"]
    assert predictions["truncated"].null_count() == 4    # an endpoint's answer: its end is not known
    assert predictions["sample"].to_list() == [0, 1, 0, 1]
    assert predictions["code"].n_unique() == 4 and predictions["code"][0].startswith("int x = ")
    asked = len(text_server.requests)
    assert asked == 4 + (2 if method == "persona" else 0)
    body = text_server.requests[-1]["body"]
    assert body["model"] == "qwen-32b" and body["temperature"] == 0.7
    assert "response_format" not in body and "seed" not in body   # plain text, samples differ
    again = predict_baseline(method, test_pairs, PROBLEMS, SUBMISSIONS, params, GENERATE, **run)
    assert again.equals(predictions) and len(text_server.requests) == asked


def test_parastudent_needs_its_adapter(tmp_path):
    with pytest.raises(InputError, match="parastudent.py"):
        predict_baseline("parastudent", pairs([("s", 3)]), PROBLEMS, SUBMISSIONS, config.settings(BaselineParams, "baselines"),
                         GENERATE, llm=None, llm_client=None, model_id="tiny", cache_path=tmp_path / "c")


# -- the stages on a tiny model ----------------------------------------------------------------

@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A repository root: params.yaml, models/base (tiny), data/toy (a small synthetic dataset)."""
    monkeypatch.chdir(make_workspace(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_stages_train_parastudent_and_write_every_baseline(workspace):
    stage("parastudent").main("toy")
    adapter = load_file(workspace / "models/toy/parastudent/student-0/adapter_model.safetensors")
    lora_b = [t for name, t in adapter.items() if "lora_B" in name]
    assert len(lora_b) == 2 * 4 and all(t.abs().sum() > 0 for t in lora_b)   # B starts at zero
    logs = json.loads((workspace / "reports/toy/parastudent_log.json").read_text())
    assert list(logs) == ["student-0"]                                   # one run: the default
    assert [entry["step"] for entry in logs["student-0"] if "loss" in entry] == [1]   # 2 pairs, batch 2

    written = {}
    for method in ("icl", "persona", "parastudent"):
        stage("generate").main("toy", method)
        written[method] = pl.read_parquet(workspace / f"data/toy/predictions/{method}.parquet")
    for method, table in written.items():
        assert table.schema == pl.Schema({"student_id": pl.String, "problem_id": pl.String,
                                          "sample": pl.Int64, "code": pl.String,
                                          "method": pl.String, "truncated": pl.Boolean,
                                          "split": pl.String, "fold": pl.Int64}), method
        assert table.height == 3 * 2 and set(table["method"]) == {method}
        assert table["sample"].to_list() == [0, 1] * 3
        assert set(table["split"]) == {"student"} and set(table["fold"]) == {0}
    keys = [t.select("student_id", "problem_id").unique().sort("student_id", "problem_id")
            for t in written.values()]
    assert all(k.equals(keys[0]) for k in keys)   # every method on the same test pairs
    assert (workspace / "data/toy/baseline_cache/persona.sqlite").is_file()   # the personas


@pytest.mark.slow
def test_stages_train_and_sample_one_run_per_split_and_fold(workspace):
    from kaser.data.contracts import read_folds
    from kaser.predictor.sft import sample_pairs
    from kaser.predictor.prompt import read_pairs

    params = STAGE_PARAMS | {"model": {"base": "tiny", "dtype": "float32", "folds": [1, 0],
                                       "splits": ["student", "problem"]}}
    (workspace / "params.yaml").write_text(yaml.safe_dump(full_params(params)))
    runs = [("student", 1), ("student", 0), ("problem", 1), ("problem", 0)]
    stage("sft").main("toy")
    logs = json.loads((workspace / "reports/toy/sft_log.json").read_text())
    assert list(logs) == [f"{split}-{fold}" for split, fold in runs]     # in run order
    weights = [load_file(workspace / f"models/toy/sft/{split}-{fold}/adapter_model.safetensors")
               for split, fold in runs]
    assert all(any("lora_B" in name and t.abs().sum() > 0 for name, t in w.items()) for w in weights)

    folds = read_folds(workspace / "data/toy/folds.json")
    for method in ("student_sft", "icl"):
        stage("generate").main("toy", method)
        table = pl.read_parquet(workspace / f"data/toy/predictions/{method}.parquet")
        assert table.select("split", "fold").unique(maintain_order=True).rows() == runs
        for split, fold in runs:
            rows = table.filter((pl.col("split") == split) & (pl.col("fold") == fold))
            # the run's test pairs, the same seeded draw as for one run; K = 2 samples each
            expected = sample_pairs(read_pairs(workspace / "data/toy", split, fold, "test"), 3, 0)
            assert (rows.filter(pl.col("sample") == 0).select("student_id", "problem_id").sort(pl.all())
                    .equals(expected.select("student_id", "problem_id").sort(pl.all())))
            assert rows.height == 3 * 2
            held_out = folds["by_student"][fold] if split == "student" else folds["by_problem"][fold]
            column = "student_id" if split == "student" else "problem_id"
            assert set(rows[column]) <= set(held_out)

