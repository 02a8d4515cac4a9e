"""Sampling student code: K completions per student-problem pair from a base model + LoRA adapter.

    python stages/generate.py synthetic-python kaser   # the DVC stage: data/<ds>/predictions/kaser.parquet

    predictions = predict("models/base", "models/synthetic-python/grpo", pairs, params, "kaser")

Five backends, one result (`sample_completions` -> K texts per prompt):
- `torch` (CPU default): our decoding loop over the transformers weights, the adapter merged;
  each prompt read once for its K samples, the samples of `batch_size` prompts decoded as one
  batch, with the transformers backend's decoding rule (kaser/predictor/torch_backend.py, with
  its departures).
- `transformers`: prompts sorted by length and generated in batches with LEFT padding and the KV
  cache, under `torch.inference_mode`; `num_return_sequences=K` per prompt, the repetition
  penalty on the completion only (departure 2). Deterministic for a given seed and batch size.
  Temperature 0 means greedy decoding.
- `vllm` (GPU, `pip install '.[gpu]'`): `vllm.LLM(enable_lora=True)` with
  `SamplingParams(n=K, ...)` and the adapter as a `LoRARequest`. Imported only when chosen.
- `ctranslate2` (CPU): the adapter merged, the model converted, the same prompts and decoding
  settings, the repetition penalty on the completion only (kaser/predictor/ct2_backend.py).
- `llama_cpp` (CPU, optional: `make install-llama`): kaser/predictor/llama_backend.py.
benchmarks/generate_speed.py times the CPU engines side by side on the pipeline's prompt mix.

The authors sample with temperature 0.7, top_k 40 (50 in their vLLM path), top_p 1,
repetition penalty 1.1, max 400 new tokens (eval_sft.py); params.yaml `generate` sets ours.
The code of a completion is what is inside a markdown fence when the model wrote one, the text
before a closing fence it never opened, else the whole text, stripped
(`kaser.predictor.rewards.completion_code`, the same rule as the rewards).

Completions that finish: each completion is a `Completion`, a str that knows whether
the token budget cut it off (no EOS within `max_new_tokens`; vLLM's finish_reason "length");
predictions carry it as the `truncated` column, and the evaluation counts such codes apart
instead of judging them as a student's syntax errors. `max_new_tokens: auto` (params.yaml)
takes the budget from the data: `completion_budget`, a high percentile of the token counts of
the real first submissions plus room for a markdown fence, at most a cap.

Departures from the authors' code, and why:
1. The budget follows the data (`auto`) instead of a fixed 400 tokens: a fixed 128 cuts off
   30-100% of the synthetic completions, and every GRPO completion on real CodeWorkout Java.
2. The repetition penalty counts the completion's tokens so far, not the prompt's (torch,
   transformers, ctranslate2 and llama_cpp alike). vLLM, which the authors sample with, and
   transformers' own `generate` count the prompt too, and so does TRL's sampling during GRPO.
   Our prompt shows the `def` line the code must start with, and a penalty on the prompt's
   tokens made Student SFT drop that line's colon: in the CPU study at d1d677e, 350 of its
   1,500 codes sampled that way did, and 56.5% parsed, against 82.4% of the same adapter's
   codes sampled with ctranslate2, whose penalty left the prompt out
   (reports/study-student-python/earlier/grpo-seed-2/README.md).
3. A completion that writes the prompt's own words (`kaser.code.syntax.prompt_words_in`: "kc",
   "mastery" in a name, a string or a comment) is drawn again, up to `redraws` times, each time
   with the next seed (`redraw_leaks`). No student writes them; the CPU default's adapters
   did in 1.4-2.8% of their codes (the intervention study's 13,500 samples), mostly by
   copying the prompt's "mastery level on ... is 0.39" into a comment. The evaluation reports
   the share that is left (`prompt_word_share`); GRPO's rewards pay such completions nothing.
4. No repetition penalty (`repetition_penalty: 1.0`; theirs 1.1). A penalty on every token the
   completion has written also falls on what code must repeat: a declared name, `;`, `}`.
   On the synthetic Java benchmark the CPU default's KASER adapter at 1.1 invented names for
   declared ones ("cannot find symbol") and left blocks open: 29.8% of 198 samples compiled,
   against 59.0% of 195 at 1.0 (same 40 pairs, same seed) and 80.5% of the real first
   submissions. The penalty stays a setting for paper-scale models.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
from tqdm import tqdm

from kaser import InputError
from kaser.predictor.base_model import stop_token_ids
from kaser.code.syntax import prompt_words_in
from kaser.predictor.rewards import completion_code
from kaser.predictor.prompt import pair_messages

BACKENDS = ("transformers", "vllm", "ctranslate2", "llama_cpp", "torch")
PREDICTION_SCHEMA = {"student_id": pl.String, "problem_id": pl.String, "sample": pl.Int64,
                     "code": pl.String, "method": pl.String, "truncated": pl.Boolean}
AUTO = "auto"
FENCE_TOKENS = 16   # room for the markdown fence and the EOS token around the code
HEADROOM = 1.25     # a predicted code may be longer than the student's: a quarter more room


class Completion(str):
    """A completion text that knows whether the token budget cut it off (None: not known).

    >>> text = Completion("def f(", truncated=True)
    >>> text == "def f(", text.truncated, Completion("x").truncated
    (True, True, None)
    """

    truncated: bool | None

    def __new__(cls, text: str, truncated: bool | None = None):
        self = super().__new__(cls, text)
        self.truncated = truncated
        return self


def completion_budget(token_counts: Sequence[int], percentile: float = 99.0, cap: int = 1024) -> int:
    """New tokens a completion may take: the `percentile` of the real codes' token counts times
    HEADROOM plus FENCE_TOKENS, at most `cap`.

    >>> completion_budget(list(range(1, 101)), percentile=90)   # 90th of 1..100 is 90: 90 x 1.25 + 16
    129
    >>> completion_budget([5000], cap=1024)
    1024
    """
    if not token_counts:
        raise InputError("no submissions to size the completion budget from (max_new_tokens: auto)")
    if not 0 < percentile <= 100:
        raise InputError(f"the budget percentile must be in (0, 100], not {percentile}")
    ordered = sorted(token_counts)
    rank = max(1, math.ceil(percentile / 100 * len(ordered)))   # nearest-rank percentile
    return int(min(cap, math.ceil(ordered[rank - 1] * HEADROOM) + FENCE_TOKENS))


def first_submission_codes(submissions: pl.DataFrame) -> list[str]:
    """The code of each student's first submission to each problem (what the model imitates).

    >>> first_submission_codes(pl.DataFrame({"student_id": ["a", "a", "b"], "problem_id": ["p"] * 3,
    ...                                      "step": [1, 0, 0], "code": ["late", "first", "b0"]}))
    ['first', 'b0']
    """
    return (submissions.sort("student_id", "problem_id", "step")
            .unique(["student_id", "problem_id"], keep="first", maintain_order=True)["code"].to_list())


def data_budget(tokenizer, submissions: pl.DataFrame, percentile: float, cap: int) -> int:
    """`completion_budget` of the dataset's real first submissions, counted with `tokenizer`."""
    codes = first_submission_codes(submissions)
    counts = [len(ids) for ids in tokenizer(codes, add_special_tokens=False)["input_ids"]] if codes else []
    return completion_budget(counts, percentile, cap)


@dataclass(frozen=True)
class GenerateParams:
    backend: str
    k: int
    temperature: float
    top_k: int
    top_p: float
    repetition_penalty: float
    max_new_tokens: int | str  # or a number of tokens; auto: completion_budget of the data
    budget_percentile: float  # with auto: percentile of the first submissions' token counts
    budget_cap: int  # with auto: never more new tokens than this
    batch_size: int
    workers: int  # ctranslate2: generators decoding at the same time
    max_pairs: int | None
    seed: int
    redraws: int  # draws again of a completion that writes the prompt's words


def sample_completions(model_path, adapter, prompts: list[str], params: GenerateParams,
                       dtype: str = "auto") -> list[list[Completion]]:
    """K completion texts for each prompt text (chat template already applied), each a
    `Completion` that says whether the budget cut it off; one that writes the prompt's words is
    drawn again (`redraw_leaks`, departure 3)."""
    if params.backend not in BACKENDS:
        raise InputError(f"unknown backend {params.backend!r}; choose one of {', '.join(BACKENDS)}")
    if params.k < 1:
        raise InputError(f"k must be at least 1, not {params.k}")
    if not isinstance(params.max_new_tokens, int):
        raise InputError(f"max_new_tokens {params.max_new_tokens!r} must be resolved to a number "
                         "first (resolve_budget)")
    if params.redraws < 0:
        raise InputError(f"redraws must be 0 or more, not {params.redraws}", file="params.yaml:generate")
    if not prompts:
        return []

    def draw(chosen: list[int], round_: int) -> list[list[Completion]]:
        return _draw(model_path, adapter, [prompts[i] for i in chosen],
                     dataclasses.replace(params, seed=params.seed + round_), dtype)

    # greedy decoding (temperature 0) gives the same completion under any seed
    rounds = params.redraws if params.temperature > 0 else 0
    return redraw_leaks(draw(list(range(len(prompts))), 0), draw, rounds)


def redraw_leaks(drawn: list[list[Completion]], draw, redraws: int) -> list[list[Completion]]:
    """`drawn` (K completions per prompt) with each completion that writes the prompt's words
    replaced by the first clean one that `draw(prompt indices, round)` gives for its prompt, in
    the same slot, over at most `redraws` rounds; one still unclean after them is kept.

    >>> def draw(chosen, round_):
    ...     return [[Completion(f"x{round_}"), Completion("mastery = 1")] for _ in chosen]
    >>> redraw_leaks([[Completion("kc = 0"), Completion("y")]], draw, 2)
    [['x1', 'y']]
    >>> redraw_leaks([[Completion("kc = 0")]], draw, 0)
    [['kc = 0']]
    """
    drawn = [list(own) for own in drawn]
    for round_ in range(1, redraws + 1):
        leaks = {i: [j for j, text in enumerate(own) if prompt_words_in(completion_code(text))]
                 for i, own in enumerate(drawn)}
        chosen = [i for i, slots in leaks.items() if slots]
        if not chosen:
            break
        for i, fresh in zip(chosen, draw(chosen, round_)):
            clean = [text for text in fresh if not prompt_words_in(completion_code(text))]
            for slot, text in zip(leaks[i], clean):
                drawn[i][slot] = text
    return drawn


def _draw(model_path, adapter, prompts: list[str], params: GenerateParams,
          dtype: str) -> list[list[Completion]]:
    """One draw of K completions per prompt from the chosen backend."""
    if params.backend == "vllm":
        return _vllm_completions(model_path, adapter, prompts, params, dtype)
    if params.backend == "transformers":
        from kaser.predictor.base_model import load_model
        model, tokenizer = load_model(model_path, adapter=adapter, dtype=dtype)
        return generate_batched(model, tokenizer, prompts, params)
    if params.backend == "ctranslate2":
        from kaser.predictor.ct2_backend import ct2_completions as completions
    elif params.backend == "torch":
        from kaser.predictor.torch_backend import torch_completions as completions
    else:
        from kaser.predictor.llama_backend import llama_completions as completions
    return [[Completion(text, truncated=cut) for text, cut in own]
            for own in completions(model_path, adapter, prompts, params, dtype)]


def _decoding(params: GenerateParams) -> dict:
    if params.temperature == 0:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": params.temperature, "top_k": params.top_k,
            "top_p": params.top_p, "num_return_sequences": params.k}


def resolve_budget(params: GenerateParams, tokenizer, submissions: pl.DataFrame) -> GenerateParams:
    """`params` with `max_new_tokens: auto` replaced by the data's budget (`data_budget`)."""
    if params.max_new_tokens != AUTO:
        if not isinstance(params.max_new_tokens, int) or params.max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be a positive number or {AUTO!r}, "
                             f"not {params.max_new_tokens!r}", file="params.yaml:generate")
        return params
    return dataclasses.replace(params, max_new_tokens=data_budget(
        tokenizer, submissions, params.budget_percentile, params.budget_cap))


def generate_batched(model, tokenizer, prompts: list[str], params: GenerateParams,
                     desc: str = "sampling") -> list[list[Completion]]:
    """K completions per prompt with transformers' generate, `params.batch_size` prompts a call;
    a completion with no stop token in its `max_new_tokens` is marked truncated."""
    import torch

    if tokenizer.padding_side != "left":
        raise ValueError("batched generation needs a left-padding tokenizer")
    torch.manual_seed(params.seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))   # less padding per batch
    results: list[list[str]] = [[] for _ in prompts]
    decoding = _decoding(params)
    copies = decoding.get("num_return_sequences", 1)
    stop = torch.tensor(sorted(stop_token_ids(model, tokenizer)), dtype=torch.long)
    with torch.inference_mode(), tqdm(total=len(prompts), desc=desc, unit="prompt") as bar:
        for start in range(0, len(order), params.batch_size):
            batch = order[start:start + params.batch_size]
            inputs = tokenizer([prompts[i] for i in batch], return_tensors="pt", padding=True,
                               add_special_tokens=False).to(model.device)
            width = inputs["input_ids"].shape[1]
            output = model.generate(**inputs, max_new_tokens=params.max_new_tokens, repetition_penalty=1.0,
                                    logits_processor=completion_penalty(params.repetition_penalty, width),
                                    pad_token_id=tokenizer.pad_token_id, use_cache=True,
                                    **decoding)
            generated = output[:, width:]
            texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
            finished = torch.isin(generated.cpu(), stop).any(dim=1).tolist()
            texts = [Completion(text, truncated=not done) for text, done in zip(texts, finished)]
            for row, i in enumerate(batch):
                own = texts[row * copies:(row + 1) * copies]
                results[i] = own * (params.k // copies) if copies == 1 else own
            bar.update(len(batch))
    return results


def completion_penalty(penalty: float, prompt_width: int):
    """transformers' logits processors for CTRL's repetition penalty on the completion only: the
    first `prompt_width` ids of each row (the left-padded prompt) are left out (departure 2).
    Passed to `generate` as `logits_processor`, it runs before the temperature and top-k."""
    from transformers import LogitsProcessorList, RepetitionPenaltyLogitsProcessor

    if penalty == 1.0:
        return LogitsProcessorList()
    return LogitsProcessorList([RepetitionPenaltyLogitsProcessor(float(penalty),
                                                                 prompt_ignore_length=prompt_width)])


def _vllm_completions(model_path, adapter, prompts: list[str], params: GenerateParams,
                      dtype: str) -> list[list[str]]:
    try:
        from vllm import LLM, SamplingParams
        from vllm.lora.request import LoRARequest
    except ImportError as err:
        raise InputError("backend vllm needs vLLM on a GPU machine: pip install '.[gpu]' "
                         "(or set generate.backend: transformers)") from err
    import json
    from pathlib import Path

    from kaser.predictor.base_model import weights_location

    lora_rank = None
    if adapter is not None:
        lora_rank = json.loads((Path(adapter) / "adapter_config.json").read_text())["r"]
    llm = LLM(model=weights_location(model_path), tokenizer=str(model_path),
              dtype="auto" if dtype == "auto" else dtype, seed=params.seed,
              enable_lora=adapter is not None, max_lora_rank=lora_rank or 16)
    sampling = SamplingParams(n=params.k, temperature=params.temperature,
                              top_k=params.top_k if params.temperature else -1, top_p=params.top_p,
                              repetition_penalty=params.repetition_penalty,
                              max_tokens=params.max_new_tokens, seed=params.seed)
    request = LoRARequest("student", 1, str(adapter)) if adapter is not None else None
    outputs = llm.generate(prompts, sampling, lora_request=request)
    return [[Completion(candidate.text, truncated=candidate.finish_reason == "length")
             for candidate in output.outputs] for output in outputs]


def prediction_rows(pairs: pl.DataFrame, completions: list[list[str]], method: str) -> pl.DataFrame:
    """One row per sample: student_id, problem_id, sample (0..K-1), code, method, truncated
    (null for a plain text whose end is not known).

    >>> pairs = pl.DataFrame({"student_id": ["s"], "problem_id": ["p"]})
    >>> rows = prediction_rows(pairs, [["```java\\nint x;\\n```", Completion("y = (", True)]], "kaser")
    >>> rows["code"].to_list(), rows["truncated"].to_list()
    (['int x;', 'y = ('], [None, True])
    """
    if len(completions) != pairs.height:
        raise ValueError(f"{len(completions)} completion lists for {pairs.height} pairs")
    rows = [{"student_id": student, "problem_id": problem, "sample": sample,
             "code": completion_code(text), "method": method,
             "truncated": getattr(text, "truncated", None)}
            for student, problem, texts in zip(pairs["student_id"].to_list(),
                                               pairs["problem_id"].to_list(), completions)
            for sample, text in enumerate(texts)]
    return pl.DataFrame(rows, schema=PREDICTION_SCHEMA)


def predict(model_path, adapter, pairs: pl.DataFrame, params: GenerateParams, method: str,
            dtype: str = "auto", messages: list[list[dict[str, str]]] | None = None) -> pl.DataFrame:
    """K samples for every row of a `student_pairs` table, as `prediction_rows`.

    The prompt of each row is its student prompt (`pair_messages`), or `messages[i]` when given
    (the in-context prompts of the ICL, PersonaPrompt and ParaStudent baselines).
    """
    from kaser.predictor.base_model import load_tokenizer
    if messages is None:
        messages = pair_messages(pairs)
    if len(messages) != pairs.height:
        raise ValueError(f"{len(messages)} prompts for {pairs.height} pairs")
    tokenizer = load_tokenizer(model_path)
    prompts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
               for chat in messages]
    return prediction_rows(pairs, sample_completions(model_path, adapter, prompts, params, dtype),
                           method)


def held_out_pairs(folder, split: str, fold: int, params: GenerateParams) -> pl.DataFrame:
    """The test pairs one run samples: the seeded draw of at most `params.max_pairs` pairs of
    test fold `fold` of `split`; every method of the run gets the same draw."""
    from kaser.predictor.sft import sample_pairs
    from kaser.predictor.prompt import read_pairs
    return sample_pairs(read_pairs(folder, split, fold, "test"), params.max_pairs, params.seed)


def tag_run(predictions: pl.DataFrame, split: str, fold: int) -> pl.DataFrame:
    """Predictions with the run they belong to (the evaluation's `split` and `fold` columns).

    >>> tag_run(pl.DataFrame({"code": ["x"]}), "student", 0).row(0)
    ('x', 'student', 0)
    """
    return predictions.with_columns(split=pl.lit(split), fold=pl.lit(fold, dtype=pl.Int64))


def predict_runs(folder, runs, params: GenerateParams, predict_run) -> pl.DataFrame:
    """One method's predictions for every training run (split, fold) in `runs`, in one table:
    `predict_run(split, fold, pairs)` samples that run's `held_out_pairs`, and each run's rows
    are tagged with it (`tag_run`)."""
    frames = []
    for split, fold in runs:
        pairs = held_out_pairs(folder, split, fold, params)
        frames.append(tag_run(predict_run(split, fold, pairs), split, fold))
        print(f"{split} fold {fold}: {pairs.height} pairs x {params.k} samples")
    return pl.concat(frames)
