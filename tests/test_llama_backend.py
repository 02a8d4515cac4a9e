"""The llama.cpp sampling backend against transformers' generate, on the tiny random model.

Skipped where llama-cpp-python is not installed (`make install-llama` builds it; it is optional).
Greedy decoding must give the same tokens (the repetition penalty counting the completion's tokens
only, as the transformers backend does) up to a near tie of two logits, where two float32 engines may part; sampled
decoding must give the same distribution, checked on the first
generated token and on the share of completions the budget cuts off.
"""

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from kaser import config
from kaser.predictor.base_model import load_tokenizer
from kaser.predictor.sampling import GenerateParams, sample_completions
from tiny_lm import QUESTIONS, chat_prompts, tiny_model_folder

pytest.importorskip("llama_cpp", reason="llama-cpp-python is optional: make install-llama")


def both(folder, params: GenerateParams):
    texts = chat_prompts(folder)
    return [sample_completions(folder, None, texts, replace(params, backend=backend), dtype="float32")
            for backend in ("transformers", "llama_cpp")]


NEAR_TIE = 0.02   # logits this close may swap between two float32 engines' sums


def penalised_logits(model, prompt: list[int], completion: list[int], penalty: float):
    """transformers' next-token logits after `prompt` + `completion`, with the CTRL repetition
    penalty on the completion's ids."""
    import torch
    with torch.no_grad():
        logits = model(torch.tensor([prompt + completion])).logits[0, -1]
    if completion:
        seen = torch.tensor(sorted(set(completion)))
        logits[seen] = torch.where(logits[seen] < 0, logits[seen] * penalty, logits[seen] / penalty)
    return logits


def test_greedy_decoding_gives_transformers_tokens_but_where_two_logits_tie():
    # a strong penalty, so that a token counted wrongly would change the argmax
    from kaser.predictor.base_model import load_model
    params = config.settings(GenerateParams, "generate", k=2, temperature=0, repetition_penalty=1.5, max_new_tokens=16, batch_size=3)
    folder = tiny_model_folder()
    theirs, ours = both(folder, params)
    assert all(len(set(own)) == 1 and len(own) == 2 for own in ours)   # one decode, copied K times
    model, tokenizer = load_model(folder, dtype="float32")
    same = 0
    for prompt, their, our in zip(chat_prompts(folder), theirs, ours):
        if their == our:
            same += 1
            continue
        a, b = (tokenizer(text[0], add_special_tokens=False)["input_ids"] for text in (their, our))
        n = next(i for i in range(min(len(a), len(b))) if a[i] != b[i])
        logits = penalised_logits(model, tokenizer(prompt, add_special_tokens=False)["input_ids"], a[:n],
                                  params.repetition_penalty)
        assert abs(float(logits[a[n]] - logits[b[n]])) < NEAR_TIE, f"token {n} differs by more than a tie"
    assert same >= len(QUESTIONS) - 1


def test_sampling_draws_the_same_distribution_as_transformers():
    folder = tiny_model_folder(ending=True)
    tokenizer = load_tokenizer(folder)
    params = config.settings(GenerateParams, "generate", k=60, temperature=0.7, top_k=40, top_p=1.0, repetition_penalty=1.1,
                            max_new_tokens=6, batch_size=2, seed=3)
    runs = both(folder, params)
    firsts = []
    for run in runs:
        first = [tokenizer(text, add_special_tokens=False)["input_ids"][:1] or [-1]
                 for own in run for text in own]
        firsts.append([ids[0] for ids in first])
    # the first token's distribution: the tokens seen 5 or more times, the rest pooled
    counts = {t: (firsts[0].count(t), firsts[1].count(t)) for t in set(firsts[0]) | set(firsts[1])}
    common = [c for c in counts.values() if sum(c) >= 5]
    rest = tuple(np.subtract((len(firsts[0]), len(firsts[1])), np.sum(common, axis=0)))
    table = np.array(common + ([rest] if sum(rest) else []))
    assert len(table) >= 3, "too few distinct first tokens to compare"
    assert stats.chi2_contingency(table).pvalue > 0.001
    cut = [sum(text.truncated for own in run for text in own) for run in runs]
    n = len(QUESTIONS) * params.k
    assert 0 < cut[1] < n   # some completions end, some are cut off
    _, p = stats.fisher_exact([[cut[0], n - cut[0]], [cut[1], n - cut[1]]])
    assert p > 0.001


def test_an_adapter_is_merged_before_sampling(random_adapter):
    params = config.settings(GenerateParams, "generate", k=1, temperature=0, repetition_penalty=1.1, max_new_tokens=8)
    texts = chat_prompts(tiny_model_folder())
    plain = sample_completions(tiny_model_folder(), None, texts, replace(params, backend="llama_cpp"))
    adapted = sample_completions(tiny_model_folder(), random_adapter, texts,
                                 replace(params, backend="llama_cpp"))
    reference = sample_completions(tiny_model_folder(), random_adapter, texts,
                                   replace(params, backend="transformers"), dtype="float32")
    assert adapted == reference
    assert adapted != plain
