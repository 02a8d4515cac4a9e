"""Sampling with our own decoding loop over the transformers weights: `generate.backend: torch`.

    completions = torch_completions("models/base", "models/synthetic-python/grpo", prompts, params)

The same model (the LoRA adapter merged, float32), prompt texts, tokens and decoding rule as
the transformers backend (`generate` at one prompt a call, its penalty given as
`completion_penalty` of kaser.predictor.sampling): CTRL's repetition penalty on the
completion's tokens so far, not the prompt's (departure 2 there says why), then the
temperature, top-k and top-p, then a draw (temperature 0: the arg max after the penalty).
It runs where `load_model` puts the weights: the GPU of this process when there is one, else
the CPU, which is what it is built for (vLLM is the engine for a GPU). What differs from
`generate` is the work, not the rule:

- Each prompt is read once (all but its last token, through the transformers model), and its K
  samples attend to that one copy of its keys and values. `generate` with
  `num_return_sequences=K` copies the prompt K times before reading it, so it reads a
  1,000-token history prompt K times and keeps K copies of its cache.
- The samples of `generate.batch_size` prompts decode as one batch, each prompt's keys and values
  padded to the longest of them (prompts are taken in order of length, so the padding is small).

Departures from transformers' `generate`, and why:
1. Other random numbers: one torch generator seeded with `generate.seed` draws every token, in
   another order than `generate`'s, so the same seed gives other samples (the distribution is the
   same; tests/test_torch_backend.py compares both).
2. Other float sums: attention is computed in two parts (the shared prompt, the sample's own
   tokens) and joined in one softmax, so logits differ from `generate`'s in the last bits;
   greedy decoding gives `generate`'s tokens except where two logits nearly tie.
3. Llama-family models only (the layers of `transformers`' Llama and Qwen2: RMSNorm, rotary
   positions, grouped-query attention, a gated MLP); another architecture is refused.
4. A batch decodes until all of its samples have ended or reached the budget. A sample that
   has ended leaves the linear layers and the draw (most of the work), but its row stays in
   the attention, so that its prompt's keys stay shared among the samples still running.
"""

from __future__ import annotations

from tqdm import tqdm

from kaser import InputError

ARCHITECTURES = ("llama", "qwen2")


def torch_completions(model_path, adapter, prompts: list[str], params, dtype: str = "auto",
                      desc: str = "sampling (torch)") -> list[list[tuple[str, bool]]]:
    """K (completion text, truncated) per prompt text (chat template applied); sample_completions
    makes them its Completions. Truncated: the budget ran out before an end token. Runs in
    float32 whatever `dtype` says (the merged weights, as the other CPU engines)."""
    from kaser.predictor.base_model import load_merged, stop_token_ids

    model, tokenizer = load_merged(model_path, adapter)
    if model.config.model_type not in ARCHITECTURES:
        raise InputError(f"backend torch samples {', '.join(ARCHITECTURES)} models, not "
                         f"{model.config.model_type!r}; set generate.backend: transformers",
                         file=model_path)
    end = sorted(stop_token_ids(model, tokenizer))
    ids = [tokenizer(prompt, add_special_tokens=False)["input_ids"] for prompt in prompts]
    if any(not own for own in ids):
        raise InputError("an empty prompt cannot be sampled")
    return [[(tokenizer.decode(tokens, skip_special_tokens=True), truncated) for tokens, truncated in own]
            for own in sampled_ids(model, ids, end, params, desc)]


def sampled_ids(model, prompts: list[list[int]], end: list[int], params,
                desc: str = "sampling (torch)") -> list[list[tuple[list[int], bool]]]:
    """K (completion token ids without the end token, truncated) per prompt of token ids.

    Prompts are taken shortest first, `params.batch_size` a batch; a greedy decode
    (temperature 0 or top-k 1) is made once and copied K times."""
    import torch

    greedy = params.temperature == 0 or params.top_k == 1
    copies = 1 if greedy else params.k
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    generator = torch.Generator(device=_device(model)).manual_seed(params.seed)
    results: list = [None] * len(prompts)
    size = max(1, params.batch_size)
    with torch.inference_mode(), tqdm(total=len(prompts), desc=desc, unit="prompt") as progress:
        for start in range(0, len(order), size):
            batch = order[start:start + size]
            rows = _decode(model, [prompts[i] for i in batch], copies, end, params, generator, greedy)
            for n, i in enumerate(batch):
                own = rows[n * copies:(n + 1) * copies]
                results[i] = own * params.k if greedy else own
            progress.update(len(batch))
    return results


def _decode(model, prompts: list[list[int]], copies: int, end: list[int], params, generator,
            greedy: bool) -> list[tuple[list[int], bool]]:
    """`copies` samples of each prompt, decoded as one batch (sample j of prompt p is row
    p * copies + j)."""
    import torch

    device = _device(model)
    prefix = _Prefix.read(model, prompts)
    rows = len(prompts) * copies
    owner = torch.arange(len(prompts), device=device).repeat_interleave(copies)
    budget = params.max_new_tokens
    cache = _Cache(model, rows, budget)
    token = torch.tensor([own[-1] for own in prompts], device=device).repeat_interleave(copies)
    out = torch.full((rows, budget), -1, dtype=torch.long, device=device)  # a live row: `step` ids its own
    live = torch.arange(rows, device=device)              # the rows that have not ended
    stop = torch.tensor(end, dtype=torch.long, device=device)
    for step in range(budget):
        position = prefix.lengths[owner[live]] + step     # from the last prompt token's position
        logits = _forward(model, prefix, cache, token, position, copies, step, live)
        if step:
            logits = _penalise(logits, out[live, :step], params.repetition_penalty)
        token = logits.argmax(dim=-1) if greedy else _draw(logits, params, generator)
        out[live, step] = token
        going = ~torch.isin(token, stop)
        live, token = live[going], token[going]
        if not len(live):
            break
    results = []
    for row in out.tolist():
        tokens = [t for t in row if t != -1]
        ended = bool(tokens) and tokens[-1] in end
        results.append((tokens[:-1] if ended else tokens, not ended))
    return results


def _penalise(logits, seen, penalty: float):
    """CTRL's rule on every id in `seen` (each row's completion so far), as transformers'
    RepetitionPenaltyLogitsProcessor."""
    import torch

    if penalty == 1.0:
        return logits
    scores = torch.gather(logits, 1, seen)
    scores = torch.where(scores < 0, scores * penalty, scores / penalty)
    return logits.scatter(1, seen, scores)


def _draw(logits, params, generator):
    """One token per row: temperature, top-k, top-p (transformers' warpers, in their order), then a draw."""
    import torch

    logits = logits / params.temperature
    if params.top_k and params.top_k < logits.shape[-1]:
        kth = torch.topk(logits, params.top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if params.top_p < 1.0:
        ordered, index = torch.sort(logits, descending=False, dim=-1)
        cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
        remove = cumulative <= (1 - params.top_p)
        remove[:, -1:] = False
        logits = logits.masked_fill(remove.scatter(1, index, remove), float("-inf"))
    return torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)[:, 0]


class _Prefix:
    """The prompts' keys and values (all but each prompt's last token), one copy per prompt,
    right-padded to the longest; `mask` is -inf over the padding."""

    def __init__(self, keys, values, lengths, mask):
        self.keys, self.values, self.lengths, self.mask = keys, values, lengths, mask

    @classmethod
    def read(cls, model, prompts: list[list[int]]) -> "_Prefix":
        import torch

        device = _device(model)
        lengths = torch.tensor([len(own) - 1 for own in prompts], device=device)
        width = max(1, int(lengths.max()))
        config = model.config
        heads, dim = config.num_key_value_heads, _head_dim(config)
        layers = config.num_hidden_layers
        keys = torch.zeros(layers, len(prompts), heads, width, dim, device=device)
        values = torch.zeros_like(keys)
        for p, own in enumerate(prompts):
            if len(own) < 2:
                continue
            cache = model.model(input_ids=torch.tensor([own[:-1]], device=device), use_cache=True).cache
            for layer in range(layers):
                keys[layer, p, :, :len(own) - 1] = cache.layers[layer].keys[0]
                values[layer, p, :, :len(own) - 1] = cache.layers[layer].values[0]
        mask = torch.zeros(len(prompts), width, device=device)
        mask[torch.arange(width, device=device)[None, :] >= lengths[:, None]] = float("-inf")
        return cls(keys, values, lengths, mask)


class _Cache:
    """Each row's own keys and values, one slot per decoding step."""

    def __init__(self, model, rows: int, budget: int):
        import torch

        config = model.config
        shape = (config.num_hidden_layers, rows, config.num_key_value_heads, budget, _head_dim(config))
        self.keys = torch.zeros(shape, device=_device(model))
        self.values = torch.zeros_like(self.keys)


def _device(model):
    """Where the model's weights are; every tensor of a decode is made there."""
    return next(model.parameters()).device


def _head_dim(config) -> int:
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _forward(model, prefix: _Prefix, cache: _Cache, token, position, copies: int, step: int, live):
    """Next-token logits of the `live` rows, each its `token` at `position`: the transformers
    layers' own modules on those rows, attention over the prompt's shared keys and the row's own.
    The attention runs over every row (a row that ended attends to zeros; its output is dropped)
    so that the prompt's keys stay shared; the linear layers, most of the work, see live rows only."""
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    inner = model.model
    config = model.config
    rows, count = cache.keys.shape[1], len(live)
    everyone = count == rows
    prompts = rows // copies
    heads, kv_heads, dim = config.num_attention_heads, config.num_key_value_heads, _head_dim(config)
    group = heads // kv_heads
    hidden = inner.embed_tokens(token)                                   # live x hidden
    cos, sin = inner.rotary_emb(hidden, position[:, None])               # live x 1 x dim
    for number, layer in enumerate(inner.layers):
        attention = layer.self_attn
        scale = attention.scaling
        normed = layer.input_layernorm(hidden)
        query = attention.q_proj(normed).view(count, heads, 1, dim)
        key = attention.k_proj(normed).view(count, kv_heads, 1, dim)
        value = attention.v_proj(normed).view(count, kv_heads, 1, dim)
        query, key = apply_rotary_pos_emb(query, key, cos, sin)
        cache.keys[number, live, :, step] = key[:, :, 0]
        cache.values[number, live, :, step] = value[:, :, 0]
        if not everyone:
            query = query.new_zeros(rows, heads, 1, dim).index_copy_(0, live, query)
        # the shared prompt: prompts x kv heads x (copies x group) queries
        shared = (query.view(prompts, copies, kv_heads, group, dim).permute(0, 2, 1, 3, 4)
                  .reshape(prompts, kv_heads, copies * group, dim))
        on_prompt = shared @ prefix.keys[number].transpose(-1, -2) * scale + prefix.mask[:, None, None, :]
        on_prompt = (on_prompt.view(prompts, kv_heads, copies, group, -1).permute(0, 2, 1, 3, 4)
                     .reshape(rows, kv_heads, group, -1))
        own = query.view(rows, kv_heads, group, dim)
        own_keys = cache.keys[number, :, :, :step + 1]
        on_own = own @ own_keys.transpose(-1, -2) * scale                  # rows x kv x group x (step+1)
        weights = torch.cat([on_prompt, on_own], dim=-1).softmax(dim=-1)
        width = on_prompt.shape[-1]
        to_prompt = (weights[..., :width].reshape(prompts, copies, kv_heads, group, width)
                     .permute(0, 2, 1, 3, 4)
                     .reshape(prompts, kv_heads, copies * group, width))
        mixed = (to_prompt @ prefix.values[number]).view(prompts, kv_heads, copies, group, dim)
        mixed = mixed.permute(0, 2, 1, 3, 4).reshape(rows, kv_heads, group, dim)
        mixed = mixed + weights[..., width:] @ cache.values[number, :, :, :step + 1]
        if not everyone:
            mixed = mixed[live]
        hidden = hidden + attention.o_proj(mixed.reshape(count, heads * dim))
        hidden = hidden + layer.mlp(layer.post_attention_layernorm(hidden))
    return model.lm_head(inner.norm(hidden))
