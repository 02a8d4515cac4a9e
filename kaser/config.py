"""Reading one section of params.yaml into a frozen dataclass.

Every stage declares a `@dataclass(frozen=True)` whose field names equal the keys of its
params.yaml section; `load_section` fills it and fails on unknown or missing keys, so a typo in
params.yaml is an error rather than a silently ignored setting.

    cfg = load_section("params.yaml", "knowledge", KnowledgeConfig)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import yaml

from kaser import InputError

T = TypeVar("T")


def read_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise InputError("params file not found (run from the repository root)", file=path)
    with path.open() as f:
        return yaml.safe_load(f) or {}


def from_dict(cls: type[T], values: dict[str, Any], *, where: str) -> T:
    """Build dataclass `cls` from `values`; unknown keys and missing required keys fail.

    >>> @dataclasses.dataclass(frozen=True)
    ... class C:
    ...     a: int
    ...     b: str = "x"
    >>> from_dict(C, {"a": 1}, where="s")
    C(a=1, b='x')
    >>> from_dict(C, {"a": 1, "c": 2}, where="params.yaml:s")
    Traceback (most recent call last):
    kaser.InputError: params.yaml:s: unknown key(s) c; known: a, b
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(fields)}", file=where)
    missing = [n for n, f in fields.items() if n not in values
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise InputError(f"missing key(s) {', '.join(missing)}", file=where)
    # YAML lists become tuples so the frozen config stays hashable and immutable.
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def load_section(path: str | Path, section: str, cls: type[T]) -> T:
    params = read_params(path)
    if section not in params:
        raise InputError(f"no section '{section}'", file=path)
    return from_dict(cls, params[section] or {}, where=f"{path}:{section}")
