"""Embeddings: the bundled MiniLM loads offline and gives unit vectors that reflect meaning; the
hidden-state embedder works with any causal LM; the on-disk cache returns what it stored."""

from __future__ import annotations

import numpy as np
import pytest

from kaser.embeddings import (EmbeddingCache, bundled_model_path, embed, embed_hidden_state,
                              text_key)


def test_minilm_embeds_offline_into_unit_vectors_that_follow_meaning():
    texts = ["for (int i = 0; i < nums.length; i++) total += nums[i];",
             "for i in range(len(nums)): total += nums[i]",
             "Missing semicolon at the end of the statement",
             "Missing semicolon at the end of the statement"]
    vectors = embed(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[2], vectors[3])           # one string, one vector
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2        # two loops are closer than a loop and an error
    assert embed([]).shape == (0, 384)


@pytest.fixture(scope="module")
def tiny_causal_lm(tmp_path_factory):
    """A 2-layer GPT-2 with random weights and MiniLM's tokenizer, saved like any HF model."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=2, n_head=2, n_positions=64)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_hidden_state_embedding_of_a_causal_lm_ignores_padding(tiny_causal_lm):
    short, long = "return a + b;", "int total = 0; for (int x : nums) { total += x; } return total;"
    together = embed_hidden_state([short, long, short], tiny_causal_lm, batch_size=4, device="cpu")
    alone = embed_hidden_state([short], tiny_causal_lm, device="cpu")
    assert together.shape == (3, 16) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together[0], alone[0], atol=1e-5)    # padding beside a longer text changes nothing
    assert not np.allclose(together[0], together[1])


def test_cache_returns_stored_vectors_and_keeps_only_what_is_asked(tmp_path):
    path = tmp_path / "code_embeddings.npz"
    stored = EmbeddingCache("all-MiniLM-L6-v2")
    planted = np.full(384, 0.5, dtype=np.float32)            # no model would produce this vector
    stored.vectors[text_key("sentence-transformers", "all-MiniLM-L6-v2", "x = 1")] = planted
    stored.vectors[text_key("sentence-transformers", "all-MiniLM-L6-v2", "old code")] = planted
    stored.write(path, keep=["x = 1"])

    cache = EmbeddingCache.read(path, "all-MiniLM-L6-v2")
    assert len(cache.vectors) == 1                          # "old code" was pruned
    vectors = cache.embed(["x = 1", "y = 2"])
    assert np.array_equal(vectors[0], planted)              # from the file, not recomputed
    assert np.linalg.norm(vectors[1]) == pytest.approx(1.0, abs=1e-5)
    # another model or backend does not see these vectors
    assert EmbeddingCache.read(path, "other-model").vectors.keys().isdisjoint(
        {text_key("sentence-transformers", "other-model", "x = 1")})
    assert text_key("hidden-state", "all-MiniLM-L6-v2", "x = 1") not in cache.vectors
