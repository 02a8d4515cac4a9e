"""Every `kaser.…` name the README points a reader to exists (a move or a rename updates it)."""

import importlib
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
NAMES = sorted(set(re.findall(r"`(kaser(?:\.\w+)+)`", README)))


def resolve(name: str):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            thing = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            thing = getattr(thing, attribute)
        return thing
    raise ModuleNotFoundError(name)


def test_the_readme_names_some_functions():
    assert len(NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_named_thing_exists(name):
    assert resolve(name) is not None
