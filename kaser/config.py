"""One section of settings (a dict, e.g. from params.yaml) into a frozen dataclass.

Every part of kaser takes its settings as a `@dataclass(frozen=True)` whose field names equal the
keys of its params.yaml section; `from_dict` fills it and fails on unknown or missing keys, so a
typo is an error rather than a silently ignored setting. Who reads the file names it in `where`:
the stage runner (stages/_runner.py) for params.yaml, the `kaser` CLI for its --params file.

    cfg = from_dict(KnowledgeParams, params["knowledge"], where="params.yaml:knowledge")
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar


from kaser import InputError

T = TypeVar("T")


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
    try:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
    except InputError as err:   # a check of the dataclass itself, which knows no file
        if err.file is not None:
            raise
        raise InputError(str(err), file=where) from None
