"""Sampling on CPU with CTranslate2: the `generate.backend: ctranslate2` of kaser.predictor.sampling.

    completions = ct2_completions("models/base", "models/synthetic-python/grpo", prompts, params)

The base model with its LoRA adapter merged into the weights (peft `merge_and_unload`) is converted
to a CTranslate2 model in a temporary folder (a few seconds for the 135M model) and sampled with
the same prompt texts, tokens and decoding settings as the transformers backend: temperature,
top_k, top_p, repetition penalty, max new tokens, the model's end tokens; temperature 0 is greedy.
Prompts of the same token count share a call (up to `generate.batch_size`), each read once and
its K samples decoded with the others' (62.9 vs 54.4 tokens/s with every prompt a call of its
own, on an idle 2-core AVX-512 CPU, 8 KASER prompts 4 per problem and 8 history prompts: the
history prompts never share a length); a prompt of a length no other shares is a call of its
own, K copies of its last token decoded over the rest of the prompt as CTranslate2's
`static_prompt` (see `sample`). The calls are dealt in turn to `generate.workers`
generators decoding at the same time, one thread each on two cores (`seeded_generators`; 1.44x
the tokens/s of one generator on both threads, 12 Java student prompts x 5 samples on 2 idle
cores); worker w's random numbers start from `seed + w`.
CTranslate2 float32 sampled SmolLM2-135M 1.7x faster than transformers' `generate` on an idle
2-core AVX2 CPU (117 vs 68 tokens/s) and 2.2x on a loaded 2-core machine, but 0.67x
on this project's idle 2-core AVX-512 machine (85 vs 127 tokens/s, conversion
included), where torch's batched generate (8 prompts x 5 samples, left-padded) is fast; held to
AVX2 there (CT2_FORCE_CPU_ISA=AVX2, ATEN_CPU_CAPABILITY=avx2, MKL_ENABLE_INSTRUCTIONS=AVX2) both
slow down and the ratio stays 0.67x (69 vs 103 tokens/s), so the ISA alone does not explain it.
benchmarks/generate_speed.py prints the figure of the machine it runs on.

Departures from the transformers backend, and why:
1. Other random numbers: the same seed gives other samples than torch's sampler (and, as there,
   other samples for another batch size). The distribution sampled is the same. In a shared call
   CTranslate2 returns a prompt's K samples sorted by their log-probability, best first; the
   set of samples does not depend on that order.
2. The repetition penalty (CTRL's: positive logits divided by it, negative ones multiplied) counts
   the tokens CTranslate2's decoding loop has seen: the completion so far, not the prompt, the
   rule of every backend here (departure 2 of kaser/predictor/sampling.py);
   tests/test_ct2_backend.py checks it against greedy decoding written out, and the sampled
   distribution against this rule written out on the transformers model. The prompt stays out
   of that loop because feeding it through (`include_prompt_in_result`) would cost a step per
   prompt token; so only prompts of the same length share a call (see `sample`).
3. Runs in float32 whatever `dtype` says ("auto" is float32 on CPU too); int8 was slower on an
   AVX2-only CPU (68 vs 117 tokens/s).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tqdm import tqdm

from kaser import InputError


def ct2_completions(model_path, adapter, prompts: list[str], params, dtype: str = "auto",
                    desc: str = "sampling (ctranslate2)") -> list[list[tuple[str, bool]]]:
    """K (completion text, truncated) per prompt text (chat template applied); sample_completions
    makes them its Completions. Truncated: the budget ran out before an end token."""
    try:
        import ctranslate2
    except ImportError as err:
        raise InputError("backend ctranslate2 needs the ctranslate2 package: pip install ctranslate2 "
                         "(or set generate.backend: transformers)") from err
    folder = Path(tempfile.mkdtemp(prefix="kaser-ct2-"))
    try:
        tokenizer, end_tokens = convert(model_path, adapter, folder / "model")
        generators = seeded_generators(folder / "model", tokenizer, params.workers, params.seed)
        return sample(generators, tokenizer, end_tokens, prompts, params, desc)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def seeded_generators(model_dir, tokenizer, workers: int, seed: int) -> list:
    """`workers` CTranslate2 generators of the model in `model_dir`, each with its own decoding
    thread, whose random numbers start from `seed + w` (w = 0, 1, ...), sharing the CPU cores.

    CTranslate2 seeds a thread's random generator once, from `ctranslate2.set_random_seed`, the
    first time that thread samples. So each generator but the last samples one token before the
    global seed moves on to the next one's; which samples a prompt gets then does not depend on
    thread timing. A generator, once seeded, keeps its stream: make new ones to seed again. One
    worker needs no probe token and keeps CTranslate2's default thread count. Their queues have no
    bound (`max_queued_batches=-1`): `sample` submits every prompt before it waits for the first.
    """
    import os

    import ctranslate2

    if workers < 1:
        raise InputError(f"must be at least 1, not {workers}", file="params.yaml",
                         column="generate.workers")
    threads = 0 if workers == 1 else max(1, (os.cpu_count() or 1) // workers)
    probe = [tokenizer.convert_ids_to_tokens(tokenizer("x", add_special_tokens=False)["input_ids"])]
    generators = []
    for w in range(workers):
        ctranslate2.set_random_seed(seed + w)
        generators.append(ctranslate2.Generator(str(model_dir), device="cpu", compute_type="float32",
                                                intra_threads=threads, max_queued_batches=-1))
        if w < workers - 1:
            generators[-1].generate_batch(probe, max_length=1, sampling_topk=2,
                                          include_prompt_in_result=False)
    return generators


def convert(model_path, adapter, out: Path):
    """(tokenizer, end token ids): the base model with `adapter` merged, converted to CTranslate2 at `out`."""
    import torch
    from ctranslate2.converters import TransformersConverter

    from kaser.predictor.base_model import load_merged

    model, tokenizer = load_merged(model_path, adapter)
    end = model.generation_config.eos_token_id
    end_tokens = [end] if isinstance(end, int) else list(end or [tokenizer.eos_token_id])
    merged = out.parent / "merged"
    with torch.no_grad():
        model.save_pretrained(merged)
    tokenizer.save_pretrained(merged)
    del model
    TransformersConverter(str(merged), load_as_float16=False).convert(str(out), quantization="float32",
                                                                      force=True)
    shutil.rmtree(merged, ignore_errors=True)
    return tokenizer, end_tokens


def decoding_options(params, end_tokens: list[int]) -> dict:
    """generate_batch keyword arguments of the settings in `params` (a GenerateParams).

    >>> from kaser.config import settings
    >>> from kaser.predictor.sampling import GenerateParams
    >>> decoding_options(settings(GenerateParams, "generate", temperature=0), [2])["sampling_topk"]
    1
    """
    options = {"max_length": params.max_new_tokens, "repetition_penalty": params.repetition_penalty,
               "end_token": end_tokens, "include_prompt_in_result": False, "beam_size": 1}
    if params.temperature == 0:
        return {**options, "sampling_topk": 1}
    return {**options, "sampling_topk": params.top_k if params.top_k else 0,
            "sampling_topp": params.top_p, "sampling_temperature": params.temperature}


def calls(tokens: list[list[str]], batch_size: int) -> list[list[int]]:
    """The prompts (indices into `tokens`) that share a generate_batch call: those of the same
    token count, at most `batch_size` a call, in the order their first member comes; a prompt
    whose length no other shares has a call of its own.

    >>> calls([["a", "b"], ["c"], ["d", "e"], ["f", "g"], ["h"]], 2)
    [[0, 2], [3], [1, 4]]
    """
    by_length: dict[int, list[int]] = {}
    for index, own in enumerate(tokens):
        by_length.setdefault(len(own), []).append(index)
    return [members[start:start + max(1, batch_size)] for members in by_length.values()
            for start in range(0, len(members), max(1, batch_size))]


def sample(generators: list, tokenizer, end_tokens: list[int], prompts: list[str], params,
           desc: str = "sampling (ctranslate2)") -> list[list[tuple[str, bool]]]:
    """K (completion, truncated) per prompt, decoded from `sampled_ids`. A completion is truncated
    when it took all `max_new_tokens` steps without an end token (CTranslate2 leaves the end token
    out of the sequence)."""
    return [[(tokenizer.decode(ids, skip_special_tokens=True),
              len(ids) >= params.max_new_tokens and (not ids or ids[-1] not in end_tokens))
             for ids in own]
            for own in sampled_ids(generators, tokenizer, end_tokens, prompts, params, desc)]


def sampled_ids(generators: list, tokenizer, end_tokens: list[int], prompts: list[str], params,
                desc: str = "sampling (ctranslate2)") -> list[list[list[int]]]:
    """K completions per prompt as token ids, the end token left out.

    Prompts of the same token count share a call, up to `params.batch_size` of them (`calls`):
    CTranslate2 runs all but their last token through the model as one batch, copies each
    prompt's state K times (`num_hypotheses`) and decodes the K x prompts sequences together,
    from each prompt's last token, so a prompt is read once and the decoding steps are shared.
    Prompts of other lengths never share a call: CTranslate2 would run the shorter length as the
    batch's prompt and feed the rest of each longer one through its decoding loop, where the
    repetition penalty counts it, so a prompt's samples would depend on its batch mates. The
    student prompts of one problem have one length (the same statement, signature and KC
    names, and a mastery level of two decimals per KC); history prompts rarely share one.

    A prompt with a call of its own decodes K copies of its last token as one batch over the rest
    of the prompt, given as CTranslate2's `static_prompt` and dropped after the call (kept, as
    CTranslate2 does by default, every prompt's state would stay for the generator's lifetime:
    gigabytes for a few hundred prompts). For one prompt `num_hypotheses=K` does the same, but
    its decoding steps grow slower with the prompt's length (700-token prompt, 5 x 150 tokens,
    one thread: 42 s vs 27 s this way; 322 tokens: 17.7 vs 17.1 s).

    Calls of a few sequences leave most of a second core idle to one decoding thread; so the
    calls are dealt in turn to the `generators` (from `seeded_generators`), which decode at the
    same time, each its own share in order. Every call is queued at once (the generators' queues
    have no bound), so the progress bar counts prompts as they finish.
    """
    options = decoding_options(params, end_tokens)
    samples = params.k if options["sampling_topk"] != 1 else 1   # greedy: one decode, copied K times
    tokens = [tokenizer.convert_ids_to_tokens(tokenizer(prompt, add_special_tokens=False)["input_ids"])
              for prompt in prompts]
    if any(not own for own in tokens):
        raise InputError("an empty prompt cannot be sampled")
    pending = []
    for number, members in enumerate(calls(tokens, params.batch_size)):
        generator = generators[number % len(generators)]
        if len(members) == 1:
            own = tokens[members[0]]
            call = generator.generate_batch([own[-1:]] * samples, static_prompt=own[:-1] or None,
                                            cache_static_prompt=False, asynchronous=True, **options)
        else:
            call = generator.generate_batch([tokens[m] for m in members], num_hypotheses=samples,
                                            asynchronous=True, **options)
        pending.append((members, call))
    results: list[list[list[int]] | None] = [None] * len(prompts)
    with tqdm(total=len(prompts), desc=desc, unit="prompt") as progress:
        for members, outputs in pending:
            if len(members) == 1:
                sequences = [[output.result().sequences_ids[0] for output in outputs]]
            else:
                sequences = [output.result().sequences_ids for output in outputs]
            for index, own in zip(members, sequences):
                results[index] = own * params.k if samples == 1 else own
            progress.update(len(members))
    return results
