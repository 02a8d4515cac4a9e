"""One section of settings (a dict, e.g. from params.yaml) into a frozen dataclass.

Every part of kaser takes its settings as a `@dataclass(frozen=True)` whose field names equal the
keys of its params.yaml section; `from_dict` fills it and fails on unknown or missing keys, so a
typo is an error rather than a silently ignored setting. Who reads the file names it in `where`:
the stage runner (stages/_runner.py) for params.yaml, the `kaser` CLI for its --params file.

    cfg = from_dict(KnowledgeParams, params["knowledge"], where="params.yaml:knowledge")
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

import yaml

from kaser import InputError

T = TypeVar("T")


class _SettingsLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but a number with an exponent and no dot (1e-05) is a float.

    DVC writes a value set with `dvc exp run -S` back into params.yaml as Python prints it, so
    1e-5 lands there as `1e-05`: a float in YAML 1.2, which DVC speaks, and a string under PyYAML's
    YAML 1.1 rules, which need a dot. Integers and every other scalar resolve as before."""


_SettingsLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def load_settings(text: str) -> Any:
    """Settings YAML (params.yaml, a --params file, a `-S` value) as DVC reads it.

    >>> load_settings("lr: 1e-05\\nsteps: 5\\nname: 1e5x\\nold: 1.0e-4")
    {'lr': 1e-05, 'steps': 5, 'name': '1e5x', 'old': 0.0001}
    """
    return yaml.load(text, Loader=_SettingsLoader)


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
