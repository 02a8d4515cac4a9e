"""One section of settings (a dict, e.g. from params.yaml) into a frozen dataclass.

Every part of kaser takes its settings as a `@dataclass(frozen=True)` whose field names equal the
keys of its params.yaml section; `from_dict` fills it and fails on unknown or missing keys, so a
typo is an error rather than a silently ignored setting. Who reads the file names it in `where`:
the stage runner (stages/_runner.py) for params.yaml, the `kaser` CLI for its --params file.

    cfg = from_dict(KnowledgeParams, params["knowledge"], where="params.yaml:knowledge")

params.yaml is the one home of every value: the settings classes have no defaults for its keys.
Code outside the pipeline (tests, benchmarks, studies, a library caller in a checkout) takes the
pipeline's values with a few changed through `settings`:

    cfg = settings(GenerateParams, "generate", k=2, max_new_tokens=8)
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml

from kaser import InputError

T = TypeVar("T")
# the repository's params.yaml (beside the kaser/ package folder, in a checkout)
PARAMS_FILE = Path(__file__).resolve().parents[1] / "params.yaml"


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


@functools.cache
def _repository_params() -> dict[str, Any]:
    if not PARAMS_FILE.is_file():
        raise InputError("not found: `settings` reads the repository's params.yaml; outside a "
                         "checkout pass params= (a dict of sections)", file=PARAMS_FILE)
    return load_settings(PARAMS_FILE.read_text()) or {}


def settings(cls: type[T], section: str, params: dict[str, Any] | None = None, *,
             part: bool = False, **overrides: Any) -> T:
    """Section `section` of `params` (default: the repository's params.yaml) as dataclass `cls`,
    with `overrides` in place of the file's values: the pipeline's settings, a few changed.

    `part=True` takes only `cls`'s fields from a section it shares (e.g. StaticParams from
    `annotate`). Unknown keys, in the section or among the overrides, fail as in `from_dict`.

    >>> @dataclasses.dataclass(frozen=True)
    ... class C:
    ...     a: int
    ...     b: str
    >>> settings(C, "s", {"s": {"a": 1, "b": "x"}}, b="y")
    C(a=1, b='y')
    >>> settings(C, "s", {"s": {"a": 1, "b": "x", "c": 3}}, part=True)
    C(a=1, b='x')
    >>> settings(C, "s", {"s": {"a": 1, "b": "x"}}, d=2)
    Traceback (most recent call last):
    kaser.InputError: params.yaml:s: unknown key(s) d; known: a, b
    >>> from kaser.predictor.sampling import GenerateParams
    >>> settings(GenerateParams, "generate", k=2).k
    2
    """
    params = _repository_params() if params is None else params
    if section not in params:
        raise InputError(f"no section '{section}'", file="params.yaml")
    values = dict(params[section] or {})
    if part:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in values.items() if k in names}
    return from_dict(cls, values | overrides, where=f"params.yaml:{section}")
