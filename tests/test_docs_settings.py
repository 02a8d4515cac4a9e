"""A number that README.md or a guide in docs/ quotes for a setting is params.yaml's value.

    .venv/bin/python -m pytest -q tests/test_docs_settings.py

A page quotes a setting's value in one of four ways, each read here (`section.key` is a dotted
params.yaml key; datasets entries are names a user chooses, so not read):
1. `section.key: N` in code (an inline span or a fenced line): the default, as params.yaml writes it;
2. `section.key` N in prose (optionally `:`, `=`, "is", "at" or "of" between): "`sft.learning_rate` 1e-3";
3. N words (`section.key` ...): "SFT on 48 pairs (`sft.max_pairs`)";
4. on a line that sets `-S section.key=X`: "instead of N" or "params.yaml's N", the default the
   override departs from: "-S grpo.max_pairs=16   # 16 pairs instead of params.yaml's 2".
N is a number or a list of numbers ([0], [1, 5], []); words (`annotate.backend: openai`) and
true/false are instructions as often as defaults, so they are not read. The history of the runs
(reports/history.md) quotes the values of its time and is not read either.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())

KEY = r"([a-z_]+(?:\.[a-z_0-9]+)+)"
NUMBER = r"(-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?)(?![\w.]*[a-zA-Z%])"
LIST = r"(\[[\d.,\s e-]*\])"
QUOTES = [
    ("code", re.compile(rf"`{KEY}:\s*(?:{NUMBER}|{LIST})`")),
    ("code", re.compile(rf"^\s*(?:#\s*)?{KEY}:\s*(?:{NUMBER}|{LIST})\s*(?:#|$)", re.M)),
    ("prose", re.compile(rf"`{KEY}`(?::|=|\s+is|\s+at|\s+of)?\s+(?:{NUMBER}|{LIST})")),
    ("count", re.compile(rf"{NUMBER}(?:\s+[a-zA-Z-]+){{1,3}}\s+\(`{KEY}`")),
]
OVERRIDE = re.compile(rf"-S\s+'?{KEY}=")
DEFAULT_BESIDE = re.compile(rf"(?:instead of|params\.yaml's)\s+(?:{NUMBER}|{LIST})")


def setting(dotted: str):
    """params.yaml's value of `dotted`, or KeyError when it is no params.yaml key."""
    node = PARAMS
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise KeyError(dotted)
        node = node[key]
    return node


def as_value(text: str):
    """A quoted number or list of numbers as a value: '1,000' -> 1000.0, '1e-3' -> 0.001."""
    if text.startswith("["):
        return [float(item) for item in re.split(r"[,\s]+", text.strip("[] ")) if item]
    return float(text.replace(",", ""))


def same(quoted, actual) -> bool:
    if isinstance(quoted, list):
        return isinstance(actual, list) and len(quoted) == len(actual) and all(
            same(q, a) for q, a in zip(quoted, actual))
    if isinstance(actual, str):          # params.yaml writes 1.0e-3 as a float; '1e-3' loads as str
        try:
            actual = float(actual)
        except ValueError:
            return False
    return isinstance(actual, (int, float)) and not isinstance(actual, bool) and math.isclose(quoted, actual)


def quotes(text: str) -> list[tuple[str, str]]:
    """(dotted key, quoted value) of every setting a page quotes, in the four ways above."""
    found = []
    flat = re.sub(r"(?<=\S)\n(?=\S)", " ", text)          # a sentence broken over lines
    for kind, pattern in QUOTES:
        for match in pattern.finditer(flat if kind != "code" else text):
            groups = [g for g in match.groups() if g is not None]
            key, value = (groups[1], groups[0]) if kind == "count" else (groups[0], groups[1])
            found.append((key, value))
    for line in text.splitlines():
        keys = OVERRIDE.findall(line)
        beside = DEFAULT_BESIDE.findall(line.split("#", 1)[-1] if "#" in line else line)
        for key in keys[:1] if len(keys) == 1 else []:      # one override: the default is its key's
            found += [(key, next(g for g in value if g)) for value in beside]
    return [(key, value) for key, value in found if key.split(".")[0] in PARAMS
            and key.split(".")[0] != "datasets"]


def disagreements(text: str) -> list[str]:
    wrong = []
    for key, value in quotes(text):
        try:
            actual = setting(key)
        except KeyError:
            continue                     # tests/test_readme.py names keys that do not exist
        if not same(as_value(value), actual):
            wrong.append(f"{key}: the page says {value}, params.yaml has {actual!r}")
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_quoted_setting_is_params_yaml_s(page):
    wrong = disagreements(page.read_text(encoding="utf-8"))
    assert not wrong, f"{page.relative_to(ROOT)} quotes settings params.yaml does not have:\n" + "\n".join(wrong)


def test_the_pages_quote_enough_settings_to_check():
    everything = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    assert len({key for key, _ in quotes(everything)}) >= 8, quotes(everything)


def test_the_check_finds_a_wrong_number_in_each_form():
    max_pairs, lr = setting("grpo.max_pairs"), setting("sft.learning_rate")
    wrong = max_pairs + 2
    cases = {    # one right and one wrong quote of each form; only the wrong one is reported
        f"`grpo.max_pairs: {max_pairs}` and `grpo.max_pairs: {wrong}`": 1,
        f"at `sft.learning_rate` {lr} or `sft.learning_rate` 7e-3": 1,
        f"GRPO on {max_pairs} pairs (`grpo.max_pairs`), not on {wrong} pairs (`grpo.max_pairs`)": 1,
        f"dvc exp run -S grpo.max_pairs=16   # GRPO on 16 pairs instead of {wrong}": 1,
        f"dvc exp run -S grpo.max_pairs=16   # GRPO on 16 pairs instead of params.yaml's {max_pairs}": 0,
        "`model.folds: [0]`, `model.folds: [0, 1]`": 1,
        "`annotate.backend: openai` switches it on; `grpo.use_vllm: true` too": 0,   # words: not read
        "```yaml\nsft:\n  max_pairs: 3\n```": 0,                   # not a dotted key
    }
    for text, count in cases.items():
        assert len(disagreements(text)) == count, (text, disagreements(text))
