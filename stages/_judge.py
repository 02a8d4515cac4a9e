"""The judge as the stages that use it open it (grpo, ablate, evaluate, sweep): its settings
from params.yaml through the stage runner, its LLM answers in the stage's own cache file.

    with open_judge(stage) as judge: ...      # kaser.errors.judge.reward_judge
    judge_name(stage)                         # what decides its answers (the evaluate cache key)

Such a stage's PARAMS declare `judge`, `annotate` (the static judge runs the annotator with
these settings) and `llm`, the settings that shape an answer (the openai judge; it also reads
`llm_client`, which no stage declares: _runner.py).
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

from _runner import Stage
from kaser.errors.annotate import AnnotateParams
from kaser.errors.judge import JudgeParams, judge_name as _judge_name, reward_judge
from kaser.llm import LLMClientParams, LLMParams, ResponseCache


def judge_settings(stage: Stage, backend: str | None = None):
    """(JudgeParams, the annotator's StaticParams, LLMParams or None) of params.yaml; `backend`
    replaces `judge.backend` (the evaluation's own judge, params.yaml evaluate.judge)."""
    cfg = stage.section("judge", JudgeParams)
    if backend is not None:
        cfg = dataclasses.replace(cfg, backend=backend)
    settings = stage.section("annotate", AnnotateParams).static_params()
    llm = stage.section("llm", LLMParams) if cfg.backend == "openai" else None
    return cfg, settings, llm


def llm_client(stage: Stage, backend: str | None = None) -> LLMClientParams | None:
    """params.yaml `llm_client` where the judge asks the LLM (backend openai), else None."""
    cfg = stage.section("judge", JudgeParams)
    if (backend or cfg.backend) != "openai":
        return None
    return stage.section("llm_client", LLMClientParams)


@contextmanager
def open_judge(stage: Stage, backend: str | None = None):
    """The judge of params.yaml `judge` (backend `backend` if given) over stage.data; its LLM
    answers (backend openai) go to the stage's own cache, stage.llm_cache, which exists
    afterwards either way (a persistent DVC output)."""
    cfg, settings, llm = judge_settings(stage, backend)
    keep_cache(stage)
    with reward_judge(stage.data, cfg, settings, llm, llm_client(stage, backend),
                      stage.llm_cache) as judge:
        yield judge


def keep_cache(stage: Stage) -> None:
    """The stage's LLM cache file exists (empty when nothing was asked): a DVC output."""
    ResponseCache(stage.llm_cache).close()


def judge_name(stage: Stage, backend: str | None = None) -> str:
    """What decides the judge's answers: settings, sources and the dataset files it reads."""
    inputs = [stage.data / name for name in ("problems.parquet", "submissions.parquet",
                                             "error_labels.parquet")]
    return _judge_name(*judge_settings(stage, backend), inputs=inputs)
