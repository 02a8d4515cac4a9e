"""Sampling: K samples per pair, left padding that changes nothing, seeded, code out of fences."""

import importlib.util
import math

import polars as pl
import pytest

from kaser import InputError, config
from kaser.predictor.base_model import load_model
from kaser.predictor.sampling import (Completion, GenerateParams, data_budget, generate_batched, prediction_rows,
                                     redraw_leaks, resolve_budget, sample_completions, stop_token_ids)
from kaser.predictor.prompt import build_prompt_text
from tiny_lm import tiny_model_folder

PROBLEMS = [("Add.", ["arithmetic"], [0.1]),
            ("A much longer statement that goes on and on about summing arrays.",
             ["loops", "arrays"], [0.5, 0.7]),
            ("Mid length statement here.", ["strings"], [1.0])]


@pytest.fixture(scope="module")
def model_and_prompts():
    model, tokenizer = load_model(tiny_model_folder(), dtype="float32")
    prompts = [build_prompt_text(tokenizer, s, kcs, m, "java", signature=None)
               for s, kcs, m in PROBLEMS]
    return model, tokenizer, prompts


def test_batched_greedy_equals_one_by_one(model_and_prompts):
    model, tokenizer, prompts = model_and_prompts
    greedy = dict(temperature=0, k=2, max_new_tokens=10)
    batched = generate_batched(model, tokenizer, prompts, config.settings(GenerateParams, "generate", batch_size=3, **greedy))
    single = generate_batched(model, tokenizer, prompts, config.settings(GenerateParams, "generate", batch_size=1, **greedy))
    assert batched == single
    assert len({texts[0] for texts in batched}) == 3   # the prompts do lead to different text
    assert all(len(texts) == 2 and texts[0] == texts[1] for texts in batched)


def test_sampling_gives_k_per_prompt_and_is_seeded(model_and_prompts):
    model, tokenizer, prompts = model_and_prompts
    params = config.settings(GenerateParams, "generate", k=3, max_new_tokens=6, batch_size=2, seed=1)
    first = generate_batched(model, tokenizer, prompts, params)
    assert [len(texts) for texts in first] == [3, 3, 3]
    assert len(set(first[1])) > 1                      # samples of one prompt differ
    assert generate_batched(model, tokenizer, prompts, params) == first


def test_right_padding_is_refused(model_and_prompts):
    model, tokenizer, prompts = model_and_prompts
    tokenizer.padding_side = "right"
    try:
        with pytest.raises(ValueError, match="left-padding"):
            generate_batched(model, tokenizer, prompts, config.settings(GenerateParams, "generate", k=1, max_new_tokens=2))
    finally:
        tokenizer.padding_side = "left"


def test_sample_completions_loads_the_model_and_checks_params():
    prompts = ["<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"]
    texts = sample_completions(tiny_model_folder(), None, prompts,
                               config.settings(GenerateParams, "generate", k=2, max_new_tokens=3), dtype="float32")
    assert len(texts) == 1 and len(texts[0]) == 2
    with pytest.raises(InputError, match="unknown backend 'tgi'"):
        sample_completions(tiny_model_folder(), None, prompts, config.settings(GenerateParams, "generate", backend="tgi"))


def test_vllm_backend_without_vllm_says_how_to_install():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here (the GPU extra)")
    with pytest.raises(InputError, match=r"pip install '\.\[gpu\]'"):
        sample_completions(tiny_model_folder(), None, ["x"], config.settings(GenerateParams, "generate", backend="vllm", max_new_tokens=4))


def test_prediction_rows_one_per_sample_with_code_out_of_fences():
    pairs = pl.DataFrame({"student_id": ["s1", "s2"], "problem_id": ["p1", "p1"]})
    completions = [["```java\nint x = 1;\n```\nDone.", "int y;"], ["  z();  \n", ""]]
    rows = prediction_rows(pairs, completions, "kaser")
    assert rows.columns == ["student_id", "problem_id", "sample", "code", "method", "truncated"]
    assert rows["sample"].to_list() == [0, 1, 0, 1]
    assert rows["code"].to_list() == ["int x = 1;", "int y;", "  z();", ""]
    assert set(rows["method"]) == {"kaser"}
    with pytest.raises(ValueError, match="1 completion lists for 2 pairs"):
        prediction_rows(pairs, completions[:1], "kaser")


def test_a_completion_without_a_stop_token_is_marked_truncated(model_and_prompts):
    import torch
    model, tokenizer, prompts = model_and_prompts
    inputs = tokenizer(prompts[:1], return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        first = int(model.generate(**inputs, max_new_tokens=1, do_sample=False,
                                   pad_token_id=tokenizer.pad_token_id)[0, -1])
    one = config.settings(GenerateParams, "generate", temperature=0, k=1, max_new_tokens=1)
    [[cut]] = generate_batched(model, tokenizer, prompts[:1], one)
    assert cut.truncated is (first not in stop_token_ids(model, tokenizer))   # one token, no stop
    saved = model.generation_config.eos_token_id
    model.generation_config.eos_token_id = first   # now the greedy first token ends the completion
    try:
        [[done]] = generate_batched(model, tokenizer, prompts[:1],
                                    config.settings(GenerateParams, "generate", temperature=0, k=1, max_new_tokens=8))
    finally:
        model.generation_config.eos_token_id = saved
    assert done.truncated is False


def test_auto_budget_follows_the_first_submissions(model_and_prompts):
    _, tokenizer, _ = model_and_prompts
    submissions = pl.DataFrame({"student_id": ["a", "a", "b"], "problem_id": ["p", "p", "p"],
                                "step": [0, 1, 0],
                                "code": ["x = 1", "x = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9", "y = 22"]})
    firsts = [len(tokenizer(c, add_special_tokens=False)["input_ids"]) for c in ("x = 1", "y = 22")]
    expected = math.ceil(max(firsts) * 1.25) + 16
    assert data_budget(tokenizer, submissions, 100, 1024) == expected   # the later try ignored
    assert data_budget(tokenizer, submissions, 100, 5) == 5                     # capped
    auto = resolve_budget(config.settings(GenerateParams, "generate", max_new_tokens="auto", budget_percentile=100), tokenizer, submissions)
    assert auto.max_new_tokens == expected
    assert resolve_budget(config.settings(GenerateParams, "generate", max_new_tokens=7), tokenizer, submissions).max_new_tokens == 7
    with pytest.raises(InputError, match="max_new_tokens must be a positive number"):
        resolve_budget(config.settings(GenerateParams, "generate", max_new_tokens="lots"), tokenizer, submissions)
    with pytest.raises(InputError, match="must be resolved"):
        sample_completions(tiny_model_folder(), None, ["x"], config.settings(GenerateParams, "generate", max_new_tokens="auto"))


def test_prediction_rows_carry_truncation():
    pairs = pl.DataFrame({"student_id": ["s1"], "problem_id": ["p1"]})
    rows = prediction_rows(pairs, [[Completion("int x", True), Completion("int y;", False), "z"]], "kaser")
    assert rows["truncated"].to_list() == [True, False, None]


def test_redraw_replaces_only_leaking_slots_of_leaking_prompts():
    asked = []

    def draw(chosen, round_):
        asked.append((chosen, round_))
        fresh = {1: ["```python\nkc_total = 1\n```", "ok1"], 2: ["# mastery 0.4", "still kc"]}[round_]
        return [[Completion(text) for text in fresh] for _ in chosen]

    drawn = [[Completion("a"), Completion("b")],
             [Completion("x = 1  # KC 1: loops"), Completion("c")],
             [Completion("```python\nmastery = 2\n```"), Completion("kcs = []")]]
    out = redraw_leaks(drawn, draw, redraws=2)
    assert out[0] == ["a", "b"] and out[1] == ["ok1", "c"]
    assert out[2] == ["ok1", "kcs = []"]     # one clean text for two leaking slots; round 2 had none
    assert asked == [([1, 2], 1), ([2], 2)]  # only the prompts with a leak are drawn again
    assert drawn[1][0] == "x = 1  # KC 1: loops"   # the caller's lists are not changed


def test_negative_redraws_are_refused():
    with pytest.raises(InputError, match="redraws"):
        sample_completions(tiny_model_folder(), None, ["x"], config.settings(GenerateParams, "generate", redraws=-1, max_new_tokens=2))
