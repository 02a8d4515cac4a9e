"""Sampling on CPU with llama.cpp: the `generate.backend: llama_cpp` of kaser.predictor.sampling.

    completions = llama_completions("models/base", "models/synthetic-python/grpo", prompts, params)

The base model with its LoRA adapter merged (peft `merge_and_unload`) is written as a float32 GGUF
file (`write_gguf`) in a temporary folder and decoded through llama-cpp-python's C API. The
prompts are the transformers backend's token ids (its tokenizer, not llama.cpp's), and each
completion's ids are decoded by that tokenizer too, so both backends see the same tokens.

A call takes `params.batch_size` prompts. Each prompt goes through the model once, as sequence
j*K; its cache is then copied to its other K - 1 sequences (`llama_memory_seq_cp`), and each
decoding step is one `llama_decode` of one token for every unfinished sequence of the call. Every
sequence has its own sampler chain, in transformers' order: the repetition penalty over the
completion's tokens so far, the prompt left out as in the other backends (CTRL's: a positive logit
divided by it, a negative one multiplied; departure 2 of kaser/predictor/sampling.py), temperature,
top-k, top-p, then a draw from the sequence's own random stream;
temperature 0 is the penalty then the most likely token, once per prompt, copied K times (as the
transformers backend does).

Departures from the transformers backend, and why:
1. Other random numbers: sequence s of prompt i draws from its own stream, seeded
   `seed + i * K + s`, so a prompt's samples do not depend on its batch mates or the batch size.
   The distribution sampled is the same (tests/test_llama_backend.py compares both).
2. float32 weights whatever `dtype` says, the KV cache in float16 (llama.cpp's default): greedy
   outputs can part where two tokens' logits nearly tie.
3. Llama-architecture models only (SmolLM2, the CPU default): `write_gguf` knows that
   architecture's tensor names and refuses any other. Paper scale samples with vLLM on a GPU.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
from pathlib import Path

from tqdm import tqdm

from kaser import InputError

# llama.cpp's token types (gguf.TokenType): a normal token, a control token, one added by the user
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4
# the parts of a Llama decoder layer: transformers' module name -> GGUF tensor name
LAYER_TENSORS = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
                 "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                 "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
                 "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def llama_completions(model_path, adapter, prompts: list[str], params, dtype: str = "auto",
                      desc: str = "sampling (llama.cpp)") -> list[list[tuple[str, bool]]]:
    """K (completion text, truncated) per prompt text (chat template applied); sample_completions
    makes them its Completions. Truncated: the budget ran out before a stop token."""
    llama = _import_llama()
    from kaser.predictor.base_model import load_merged, stop_token_ids

    model, tokenizer = load_merged(model_path, adapter)
    stop = stop_token_ids(model, tokenizer)
    folder = Path(tempfile.mkdtemp(prefix="kaser-gguf-"))
    try:
        write_gguf(model, tokenizer, folder / "model.gguf")
        del model
        ids = [tokenizer(prompt, add_special_tokens=False)["input_ids"] for prompt in prompts]
        if any(not own for own in ids):
            raise InputError("an empty prompt cannot be sampled")
        with Decoder(llama, folder / "model.gguf", ids, params) as decoder:
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))   # like lengths together
            results: list[list[tuple[str, bool]]] = [[] for _ in ids]
            with tqdm(total=len(ids), desc=desc, unit="prompt") as bar:
                for start in range(0, len(order), params.batch_size):
                    chosen = order[start:start + params.batch_size]
                    for i, outputs in zip(chosen, decoder.sample(chosen, stop)):
                        results[i] = [(tokenizer.decode(out, skip_special_tokens=True), cut)
                                      for out, cut in outputs]
                    bar.update(len(chosen))
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _import_llama():
    try:
        import llama_cpp
    except ImportError as err:
        raise InputError("backend llama_cpp needs the llama-cpp-python package: make install-llama "
                         "(or set generate.backend: transformers)") from err
    return llama_cpp


class Decoder:
    """One llama.cpp model and context for the prompts `ids`, K sequences a prompt and
    `params.batch_size` prompts a call; `sample` decodes one call."""

    def __init__(self, llama, gguf: Path, ids: list[list[int]], params):
        self.llama, self.params = llama, params
        self.samples = params.k if params.temperature != 0 else 1
        self.ids = ids
        sequences = min(params.batch_size, len(ids)) * self.samples
        per_sequence = max(len(own) for own in ids) + params.max_new_tokens + 1
        llama.llama_log_set(_QUIET, ctypes.c_void_p())
        llama.llama_backend_init()
        self.model = llama.llama_model_load_from_file(str(gguf).encode(),
                                                      llama.llama_model_default_params())
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {gguf}")
        context = llama.llama_context_default_params()
        context.n_ctx = sequences * per_sequence
        context.n_batch = context.n_ubatch = max(512, sequences)
        context.n_seq_max = sequences
        context.n_threads = context.n_threads_batch = len(os.sched_getaffinity(0))
        context.type_k = context.type_v = llama.GGML_TYPE_F32   # float16 parts from transformers
        self.ctx = llama.llama_init_from_model(self.model, context)
        if not self.ctx:
            raise RuntimeError(f"llama.cpp could not make a context of {context.n_ctx} tokens")
        self.memory = llama.llama_get_memory(self.ctx)
        self.vocab = llama.llama_vocab_n_tokens(llama.llama_model_get_vocab(self.model))
        self.n_batch = context.n_batch
        self.batch = llama.llama_batch_init(self.n_batch, 0, 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.llama.llama_batch_free(self.batch)
        self.llama.llama_free(self.ctx)
        self.llama.llama_model_free(self.model)

    def chain(self, seed: int):
        """A sampler chain for one sequence; its penalty window is the completion's tokens, which
        the chain accepts as it draws them (the prompt's are never accepted)."""
        llama, p = self.llama, self.params
        chain = llama.llama_sampler_chain_init(llama.llama_sampler_chain_default_params())
        llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_penalties(
            self.vocab, p.max_new_tokens, p.repetition_penalty, 0.0, 0.0))
        if p.temperature == 0:
            llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_greedy())
        else:
            llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_temp(p.temperature))
            llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_top_k(p.top_k or 0))
            llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_top_p(p.top_p, 1))
            llama.llama_sampler_chain_add(chain, llama.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        return chain

    def decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        """One llama_decode of (token, position, sequence, wants logits) entries."""
        batch = self.batch
        for n, (token, position, sequence, logits) in enumerate(entries):
            batch.token[n], batch.pos[n], batch.n_seq_id[n] = token, position, 1
            batch.seq_id[n][0], batch.logits[n] = sequence, logits
        batch.n_tokens = len(entries)
        status = self.llama.llama_decode(self.ctx, batch)
        if status != 0:
            raise RuntimeError(f"llama_decode failed ({status}) on {len(entries)} tokens")

    def sample(self, prompts: list[int], stop: set[int]) -> list[list[tuple[list[int], bool]]]:
        """For each prompt index: K (generated ids before the stop token, truncated)."""
        llama, k, budget = self.llama, self.samples, self.params.max_new_tokens
        llama.llama_memory_clear(self.memory, True)
        chains, out, live = {}, {}, []   # by sequence; live: (sequence, position, last token)
        try:
            for j, i in enumerate(prompts):
                prompt = self.ids[i]
                first = j * k
                for start in range(0, len(prompt), self.n_batch):
                    chunk = prompt[start:start + self.n_batch]
                    self.decode([(t, start + n, first, start + n == len(prompt) - 1)
                                 for n, t in enumerate(chunk)])
                for s in range(k):
                    sequence = first + s
                    if s:
                        llama.llama_memory_seq_cp(self.memory, first, sequence, -1, -1)
                    chains[sequence] = self.chain(self.params.seed + i * self.params.k + s)
                    token = llama.llama_sampler_sample(chains[sequence], self.ctx, -1)
                    out[sequence] = [token]
                    if token not in stop and budget > 1:
                        live.append((sequence, len(prompt), token))
            while live:
                self.decode([(token, position, sequence, True) for sequence, position, token in live])
                still = []
                for n, (sequence, position, _) in enumerate(live):
                    token = llama.llama_sampler_sample(chains[sequence], self.ctx, n)
                    out[sequence].append(token)
                    if token not in stop and len(out[sequence]) < budget:
                        still.append((sequence, position + 1, token))
                live = still
        finally:
            for chain in chains.values():
                llama.llama_sampler_free(chain)
        results = []
        for j in range(len(prompts)):
            own = []
            for s in range(k):
                ids = out[j * k + s]
                ended = ids[-1] in stop
                own.append((ids[:-1] if ended else ids, not ended))
            results.append(own * (self.params.k // k))
        return results


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def _QUIET(level, text, user_data):   # llama.cpp's log lines would bury the progress bar
    return None


def write_gguf(model, tokenizer, path: Path) -> None:
    """A transformers Llama model (float32) and its tokenizer as a float32 GGUF file for llama.cpp."""
    import gguf
    import numpy as np

    config = model.config
    if config.model_type != "llama":
        raise InputError(f"backend llama_cpp writes Llama models only, not {config.model_type!r} "
                         "(set generate.backend: torch or transformers)", file="params.yaml:generate")
    if getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
        raise InputError("backend llama_cpp: a Llama model with biases is not supported",
                         file="params.yaml:generate")
    rope = getattr(config, "rope_parameters", None) or {}   # transformers 5: rope_scaling is this too
    if rope.get("rope_type", "default") != "default":
        raise InputError("backend llama_cpp: a scaled rotary embedding is not supported",
                         file="params.yaml:generate")
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0))))
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocabulary(tokenizer, config.vocab_size)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    for name, value in (("bos", tokenizer.bos_token_id), ("eos", tokenizer.eos_token_id),
                        ("pad", tokenizer.pad_token_id)):
        if value is not None:
            getattr(writer, f"add_{name}_token_id")(value)
    state = {name: tensor.detach().float().numpy() for name, tensor in model.state_dict().items()}
    writer.add_tensor("token_embd.weight", state["model.embed_tokens.weight"])
    writer.add_tensor("output_norm.weight", state["model.norm.weight"])
    if not config.tie_word_embeddings:
        writer.add_tensor("output.weight", state["lm_head.weight"])
    for layer in range(config.num_hidden_layers):
        for part, name in LAYER_TENSORS.items():
            weight = state[f"model.layers.{layer}.{part}.weight"]
            if name in ("attn_q", "attn_k"):
                weight = interleave_rotary(weight, heads if name == "attn_q" else kv_heads)
            writer.add_tensor(f"blk.{layer}.{name}.weight", np.ascontiguousarray(weight))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def interleave_rotary(weight, heads: int):
    """A q/k projection's rows from transformers' rotary layout (each head's first half of
    dimensions, then its second half) to llama.cpp's (the two halves' dimensions in pairs).

    >>> import numpy as np
    >>> interleave_rotary(np.arange(8).reshape(8, 1), heads=2).ravel().tolist()
    [0, 2, 1, 3, 4, 6, 5, 7]
    """
    rows = weight.shape[0]
    return (weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:])
            .swapaxes(1, 2).reshape(weight.shape))


def vocabulary(tokenizer, size: int) -> tuple[list[str], list[int], list[str]]:
    """(token strings by id, their llama.cpp types, BPE merges "a b") of a byte-level BPE
    tokenizer, padded to the model's vocabulary size."""
    by_id = {i: token for token, i in tokenizer.get_vocab().items()}
    special = set(tokenizer.all_special_ids)
    added = set(tokenizer.get_added_vocab().values())
    tokens, types = [], []
    for i in range(size):
        tokens.append(by_id.get(i, f"[PAD{i}]"))
        types.append(CONTROL if i in special else USER_DEFINED if i in added or i not in by_id
                     else NORMAL)
    model = json.loads(tokenizer.backend_tokenizer.to_str())["model"]
    if model.get("type") != "BPE":
        raise InputError(f"backend llama_cpp needs a BPE tokenizer, not {model.get('type')!r}",
                         file="params.yaml:generate")
    merges = [merge if isinstance(merge, str) else " ".join(merge) for merge in model["merges"]]
    return tokens, types, merges
