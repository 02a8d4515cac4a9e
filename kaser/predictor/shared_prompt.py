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

The positions and the attention mask are those of the full sequence: the rows of a prompt are
identical up to the completion (TRL left-pads the prompts; `prompt_groups` finds a prompt's rows
wherever they sit, since TRL shuffles a generated batch before it updates on it), the positions
continue from the cache, and the mask covers the prompt and the completion. The speed is
measured in benchmarks/grpo_update_speed.py.

    from kaser.predictor.shared_prompt import completion_logps, prompt_groups
"""

from __future__ import annotations


def prompt_groups(input_ids, attention_mask, prompt_length: int) -> list[list[int]]:
    """Row indices of `input_ids` by prompt: rows whose first `prompt_length` tokens and mask are
    the same, in the order each prompt first appears. The rows of a prompt need not be next to
    each other: TRL shuffles a generated batch before it updates on it.

    >>> import torch
    >>> ids = torch.tensor([[0, 5, 6, 1], [7, 8, 9, 2], [0, 5, 6, 3], [0, 5, 6, 4]])
    >>> prompt_groups(ids, torch.ones_like(ids), 3)
    [[0, 2, 3], [1]]
    """
    groups: dict[tuple, list[int]] = {}
    prompts = input_ids[:, :prompt_length].tolist()
    masks = attention_mask[:, :prompt_length].tolist()
    for row, (prompt, mask) in enumerate(zip(prompts, masks)):
        groups.setdefault((tuple(prompt), tuple(mask)), []).append(row)
    return list(groups.values())


def completion_logps(model, input_ids, attention_mask, logits_to_keep: int,
                     groups: list[list[int]], max_rows: int | None = None,
                     compute_entropy: bool = False):
    """(log-probs, entropies or None), each rows x `logits_to_keep`: what TRL's
    `GRPOTrainer._get_per_token_logps_and_entropies` returns for the last `logits_to_keep` tokens
    (the completion; 0 where the mask is 0), in the rows' order, computed with each prompt's rows
    (`groups`, from `prompt_groups`) through the model once per chunk of at most `max_rows`.

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
    logps, entropies, order = [], [], []
    for rows_of_prompt in groups:
        for start in range(0, len(rows_of_prompt), max_rows):
            chunk = rows_of_prompt[start:start + max_rows]
            index = torch.tensor(chunk, device=input_ids.device)
            cache = backbone(input_ids=input_ids[chunk[0]:chunk[0] + 1, :prefix],
                             attention_mask=attention_mask[chunk[0]:chunk[0] + 1, :prefix],
                             use_cache=True).cache
            cache.batch_repeat_interleave(len(chunk))
            rows = input_ids[index, prefix:]
            mask = attention_mask[index]
            # labels[:, 0] (the last prompt token) is never scored: the head predicts labels[:, 1:]
            labels = rows.masked_fill(mask[:, prefix:] == 0, -100)
            outputs = model(input_ids=rows, attention_mask=mask, cache=cache, labels=labels,
                            fused_lm_head=True)
            logps.append(outputs.log_probs)
            if compute_entropy:
                entropies.append(outputs.entropy)
            order += chunk
    back = torch.argsort(torch.tensor(order, device=input_ids.device))   # to the rows' order
    return (torch.cat(logps, dim=0)[back],
            torch.cat(entropies, dim=0)[back] if compute_entropy else None)
