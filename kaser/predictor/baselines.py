"""Running the history-based baselines (ICL, PersonaPrompt, ParaStudent): personas, then K codes
per test pair from the local base model or from any OpenAI-compatible endpoint.

    python stages/generate.py synthetic-python persona     # the DVC stage calls predict_baseline

    predictions = predict_baseline("icl", pairs, problems, submissions, params, generate,
                                   llm=llm, llm_client=llm_client,
                                   model_id="smollm2-135m-instruct-gguf",
                                   cache_path="data/synthetic-python/baseline_cache/icl.sqlite")

Backends (params.yaml `baselines.backend`):
- `local` (default): the base model in models/base, no adapter, sampled like KASER
  (`kaser.predictor.sampling.predict`, the `generate` settings). Personas are written greedily by the same
  model and stored in the SQLite cache of `kaser.llm` (`ResponseCache`), keyed by
  `cache_key("local:<model.base>", prompt version, messages, decoding)`: a rerun writes none.
- `openai`: `kaser.llm.ChatClient` with the `llm` and `llm_client` settings, except model / base_url /
  temperature from `baselines` (the paper prompts Qwen2.5-Coder 7B and 32B, e.g. behind
  `vllm serve`), plain-text answers (no JSON mode) and no fixed seed. Each of the K samples of a
  pair is its own request, the sample number in the prompt version, so the cache holds K answers
  rather than one answer K times. Every answer, personas included, is cached.
ParaStudent always runs locally: it needs its LoRA adapter, and it reads neither the backend
settings nor a cache.

What each baseline reads of `BaselineParams` (stages/generate.py declares the same per stage):
ICL `history`, PersonaPrompt `persona_history` and `persona_max_new_tokens`, ParaStudent
`history`; all three `max_code_chars`; ICL and PersonaPrompt the backend, `openai_*` and `llm`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl

from kaser import InputError
from kaser.predictor.history_prompts import (NO_HISTORY_PERSONA, PROMPT_VERSIONS, BaselineParams, icl_messages,
                             persona_messages, summary_chats, with_history)
from kaser.methods import METHODS as ALL_METHODS
from kaser.llm import (ChatClient, ChatRequest, LLMClientParams, LLMParams, MalformedAnswer,
                       ResponseCache, cache_key)
from kaser.predictor.sampling import GenerateParams, predict, prediction_rows

METHODS = tuple(m.name for m in ALL_METHODS.values() if m.prompt == "history")


def parse_text(text: str) -> str:
    """A plain-text answer, stripped; an empty one is asked again.

    >>> parse_text("  int x;\\n")
    'int x;'
    """
    if not text.strip():
        raise MalformedAnswer("empty answer")
    return text.strip()


def openai_config(llm: LLMParams, params: BaselineParams) -> LLMParams:
    """The `llm` settings as the baselines use them: their model, plain text, no seed.

    >>> from kaser.config import settings
    >>> llm = LLMParams("o4-mini", True, None, None, None, 3)
    >>> cfg = openai_config(llm, settings(BaselineParams, "baselines", openai_model="qwen-32b"))
    >>> cfg.model, cfg.json_mode, cfg.seed, cfg.temperature
    ('qwen-32b', False, None, 0.7)
    """
    # a fixed seed would make the K samples of a pair one answer K times
    return dataclasses.replace(llm, json_mode=False, seed=None,
                               model=params.openai_model or llm.model,
                               temperature=params.openai_temperature)


def openai_client_config(llm_client: LLMClientParams, params: BaselineParams) -> LLMClientParams:
    """The `llm_client` settings as the baselines use them: their server, if they name one."""
    return dataclasses.replace(llm_client, base_url=params.openai_base_url or llm_client.base_url)


def _answers(replies, desc: str) -> list[str]:
    failed = [reply.failure for reply in replies if not reply.ok]
    if failed:
        raise InputError(f"{len(failed)} of {len(replies)} {desc} prompts got no answer (first: "
                         f"{failed[0]}); run again: the answered ones are cached")
    return [reply.value for reply in replies]


def openai_samples(chats: Sequence[list[dict]], k: int, version: str, llm: LLMParams,
                   llm_client: LLMClientParams, params: BaselineParams,
                   cache_path) -> list[list[str]]:
    """K answers per chat through the cached ChatClient, with the settings as the baselines use
    them (`openai_config`, `openai_client_config`); sample s has version "<version>#s"."""
    requests = [ChatRequest(f"{version}#{sample}", tuple(chat), parse_text)
                for chat in chats for sample in range(k)]
    with ChatClient(openai_config(llm, params), openai_client_config(llm_client, params),
                    cache_path) as client:
        texts = _answers(client.ask_many(requests, desc=version), version)
    return [texts[i:i + k] for i in range(0, len(texts), k)]


def local_personas(chats: Sequence[list[dict]], model_path, model_id: str, cache_path,
                   max_new_tokens: int, generate: GenerateParams, dtype: str = "auto") -> list[str]:
    """Greedy personas from the local model with `generate`'s engine (`generate.backend`), each chat
    written once and then read from the cache (the engine is part of the key: two engines' float
    sums may part at a near tie)."""
    version = PROMPT_VERSIONS["summary"]
    decoding = {"do_sample": False, "max_new_tokens": max_new_tokens, "dtype": dtype,
                "repetition_penalty": generate.repetition_penalty, "backend": generate.backend}
    keys = [cache_key(f"local:{model_id}", version, chat, decoding) for chat in chats]
    cache = ResponseCache(cache_path)
    try:
        found = {key: cache.get(key) for key in set(keys)}
        missing = {key: chat for key, chat in zip(keys, chats) if found[key] is None}
        if missing:
            from kaser.predictor.base_model import load_tokenizer
            from kaser.predictor.sampling import sample_completions
            tokenizer = load_tokenizer(model_path)
            prompts = [tokenizer.apply_chat_template(chat, tokenize=False,
                                                     add_generation_prompt=True)
                       for chat in missing.values()]
            greedy = dataclasses.replace(generate, temperature=0.0, k=1,
                                         max_new_tokens=max_new_tokens)
            texts = sample_completions(model_path, None, prompts, greedy, dtype)
            for (key, prompt), (text,) in zip(zip(missing, prompts), texts):
                text = text.strip() or NO_HISTORY_PERSONA
                cache.put(key, f"local:{model_id}", version, text,
                          len(tokenizer(prompt, add_special_tokens=False)["input_ids"]),
                          len(tokenizer(text, add_special_tokens=False)["input_ids"]))
                found[key] = text
    finally:
        cache.close()
    return [found[key] for key in keys]


def student_personas(pairs: pl.DataFrame, params: BaselineParams, *, llm: LLMParams | None,
                     llm_client: LLMClientParams | None, model_path, model_id: str, cache_path,
                     generate: GenerateParams, dtype: str = "auto") -> list[str]:
    """One persona per row of a `with_history` table (NO_HISTORY_PERSONA where it has none)."""
    chats = summary_chats(pairs)
    asked = [chat for chat in chats if chat is not None]
    if not asked:
        written = []
    elif params.backend == "openai":
        written = [texts[0] for texts in openai_samples(
            asked, 1, PROMPT_VERSIONS["summary"], llm, llm_client, params, cache_path)]
    else:
        written = local_personas(asked, model_path, model_id, cache_path,
                                 params.persona_max_new_tokens, generate, dtype)
    answers = iter(written)
    return [NO_HISTORY_PERSONA if chat is None else next(answers) for chat in chats]


def predict_baseline(method: str, pairs: pl.DataFrame, problems: pl.DataFrame,
                     submissions: pl.DataFrame, params: BaselineParams, generate: GenerateParams,
                     *, llm: LLMParams | None, llm_client: LLMClientParams | None, model_id: str,
                     cache_path, model_path="models/base", adapter=None,
                     dtype: str = "auto") -> pl.DataFrame:
    """K predicted codes for every row of a `student_pairs` table by one history baseline, as
    `kaser.predictor.sampling.prediction_rows` (student_id, problem_id, sample, code, method).
    ParaStudent takes no `llm`, no `llm_client` and no `cache_path` (None)."""
    if method not in METHODS:
        raise InputError(f"unknown baseline {method!r}; choose one of {', '.join(METHODS)}")
    if method == "parastudent" and adapter is None:
        raise InputError("ParaStudent needs its adapter; run stages/parastudent.py first")
    if cache_path is not None:   # the stage's DVC output exists even if nothing is asked
        ResponseCache(cache_path).close()
    if method == "persona":
        history = with_history(pairs, problems, submissions, params.persona_history,
                               params.max_code_chars)
        personas = student_personas(history, params, llm=llm, llm_client=llm_client,
                                    model_path=model_path,
                                    model_id=model_id, cache_path=cache_path, generate=generate,
                                    dtype=dtype)
        chats = persona_messages(pairs, personas)
    else:   # ICL and ParaStudent: the same in-context prompt
        chats = icl_messages(with_history(pairs, problems, submissions, params.history,
                                          params.max_code_chars))
    if method != "parastudent" and params.backend == "openai":   # ParaStudent reads no backend
        completions = openai_samples(chats, generate.k, PROMPT_VERSIONS[method], llm, llm_client,
                                     params, cache_path)
        return prediction_rows(pairs, completions, method)
    return predict(model_path, adapter, pairs, generate, method, dtype, messages=chats)
