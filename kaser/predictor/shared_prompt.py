"""GRPO's per-token log-probabilities with each prompt run through the model once per group.

A GRPO batch holds `num_generations` completions of each prompt, and TRL 1.16 scores every
completion by running the model over its whole sequence, prompt included: a study prompt is about
215 tokens and a completion about 65, so three quarters of every policy forward and backward is
the same prompt again. On a CPU that is most of an update. `completion_logps` runs the prompt once
(all but its last token, with the key/value cache kept in the autograd graph), repeats that cache
for the group's completions, and runs only the last prompt token and the completions through
TRL's own fused LM head (`add_fused_lm_head`, which GRPOTrainer has patched onto the model), so
the log-probabilities, entropies and gradients are TRL's up to floating-point rounding
(tests/test_grpo.py compares them).

The positions and the attention mask are those of the full sequence: the prompt rows of a run are
identical (TRL left-pads the prompts and keeps a prompt's completions next to each other), the
positions continue from the cache, and the mask covers the prompt and the completion. The speed
is measured in benchmarks/grpo_update_speed.py.

    from kaser.predictor.shared_prompt import completion_logps, prompt_runs
"""

from __future__ import annotations


def prompt_runs(input_ids, attention_mask, prompt_length: int) -> list[tuple[int, int]]:
    """[start, end) row ranges of `input_ids` whose first `prompt_length` tokens and mask are the
    same, consecutive rows only (a prompt's completions sit together in a GRPO batch).

    >>> import torch
    >>> ids = torch.tensor([[0, 5, 6, 1], [0, 5, 6, 2], [7, 8, 9, 3], [0, 5, 6, 4]])
    >>> prompt_runs(ids, torch.ones_like(ids), 3)
    [(0, 2), (2, 3), (3, 4)]
    """
    import torch

    runs = []
    start = 0
    for row in range(1, input_ids.size(0) + 1):
        if row == input_ids.size(0) or not (
                torch.equal(input_ids[row, :prompt_length], input_ids[start, :prompt_length])
                and torch.equal(attention_mask[row, :prompt_length],
                                attention_mask[start, :prompt_length])):
            runs.append((start, row))
            start = row
    return runs


def completion_logps(model, input_ids, attention_mask, logits_to_keep: int,
                     max_rows: int | None = None, compute_entropy: bool = False):
    """(log-probs, entropies or None), each rows x `logits_to_keep`: what TRL's
    `GRPOTrainer._get_per_token_logps_and_entropies` returns for the last `logits_to_keep` tokens
    (the completion; 0 where the mask is 0), computed with each run of identical prompts
    (`prompt_runs`) through the model once per chunk of at most `max_rows` completions.

    `model` is the policy as TRL calls it (a PeftModel or a causal LM with TRL's fused LM head,
    not wrapped for distributed training); the caller holds autocast and grad mode."""
    import torch

    prompt_length = input_ids.size(1) - logits_to_keep
    if prompt_length < 2:
        raise ValueError(f"a shared prompt needs at least 2 tokens, got {prompt_length}")
    language_model = model.get_base_model() if hasattr(model, "get_base_model") else model
    backbone = language_model.base_model     # the decoder, with the LoRA layers injected
    prefix = prompt_length - 1                # the last prompt token goes with the completions
    max_rows = max_rows or input_ids.size(0)
    logps, entropies = [], []
    for run_start, run_end in prompt_runs(input_ids, attention_mask, prompt_length):
        for start in range(run_start, run_end, max_rows):
            end = min(start + max_rows, run_end)
            cache = backbone(input_ids=input_ids[start:start + 1, :prefix],
                             attention_mask=attention_mask[start:start + 1, :prefix],
                             use_cache=True).cache
            cache.batch_repeat_interleave(end - start)
            rows = input_ids[start:end, prefix:]
            labels = rows.masked_fill(attention_mask[start:end, prefix:] == 0, -100)
            outputs = model(input_ids=rows, attention_mask=attention_mask[start:end], cache=cache,
                            labels=labels, fused_lm_head=True)
            logps.append(outputs.log_probs)
            if compute_entropy:
                entropies.append(outputs.entropy)
    return torch.cat(logps, dim=0), (torch.cat(entropies, dim=0) if compute_entropy else None)
