"""The `llm` and `llm_client` settings of params.yaml for a test, with the keys it changes.

    cfg, client = llm_settings(base_url=server.url, backoff_s=0.001)   # LLMParams, LLMClientParams

LLMParams and LLMClientParams keep no defaults (params.yaml is the one home of every setting), so a
test names only what it changes; each override goes to the class that has the field, and a name
neither has is an error.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kaser.config import load_settings

PARAMS_FILE = Path(__file__).resolve().parents[1] / "params.yaml"


def llm_sections(**overrides) -> dict[str, dict]:
    """{"llm": ..., "llm_client": ...} of params.yaml with `overrides` laid over them."""
    from kaser.llm import LLMClientParams, LLMParams   # imported here: openai is slow to import
    params = load_settings(PARAMS_FILE.read_text())
    sections = {"llm": dict(params["llm"]), "llm_client": dict(params["llm_client"])}
    owners = {f.name: "llm" for f in dataclasses.fields(LLMParams)}
    owners |= {f.name: "llm_client" for f in dataclasses.fields(LLMClientParams)}
    unknown = sorted(set(overrides) - set(owners))
    if unknown:
        raise TypeError(f"no llm or llm_client setting {', '.join(unknown)}")
    for key, value in overrides.items():
        sections[owners[key]][key] = value
    return sections


def llm_settings(**overrides):
    """(LLMParams, LLMClientParams) of params.yaml with `overrides`."""
    from kaser.llm import LLMClientParams, LLMParams
    sections = llm_sections(**overrides)
    return LLMParams(**sections["llm"]), LLMClientParams(**sections["llm_client"])
