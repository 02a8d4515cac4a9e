"""One home per setting: params.yaml holds every value, and a settings class never disagrees.

Every `stage.section("<section>", <Class>)` in stages/*.py (and every `section(args.params,
"<section>", <Class>)` of the CLI) is found by reading the scripts' syntax trees. For each:
- the class is a frozen dataclass whose name ends in Params (one naming convention);
- a class read whole has exactly the section's keys, and a `part=True` class a subset of them;
- a default a class keeps for its tests and library callers equals params.yaml's value, so no
  one reading the class is told another number than the pipeline uses.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
STAGES = REPO / "stages"
if str(STAGES) not in sys.path:
    sys.path.insert(0, str(STAGES))

PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())


def section_reads(path: Path) -> list[tuple[str, str, bool]]:
    """(section, class name, part) of every settings read in one script."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                == "section"):
            continue
        strings = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        names = [a.id for a in node.args if isinstance(a, ast.Name) and a.id[0].isupper()]
        if strings and names:
            part = any(k.arg == "part" and getattr(k.value, "value", False) for k in node.keywords)
            found.append((strings[0].value, names[0], part))
    return found


def class_of(module, name: str):
    """The class `name` as `module` sees it: a module global, or imported inside a function."""
    if hasattr(module, name):
        return getattr(module, name)
    source = Path(module.__file__).read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return getattr(importlib.import_module(node.module), name)
    raise LookupError(f"{module.__name__}: no class {name}")


def reads():
    cases = []
    for path in sorted(STAGES.glob("*.py")) + [REPO / "kaser" / "cli.py"]:
        module_name = path.stem if path.parent == STAGES else "kaser.cli"
        for section, name, part in section_reads(path):
            cases.append(pytest.param(module_name, section, name, part,
                                      id=f"{path.name}:{section}:{name}"))
    return cases


READS = reads()


def test_every_stage_that_reads_settings_is_found():
    scripts = {case.values[0] for case in READS}
    assert {"sft", "grpo", "generate", "evaluate", "prepare", "report", "kaser.cli"} <= scripts


def disagreements(cls, values: dict, part: bool) -> list[str]:
    """How settings class `cls` departs from params.yaml section `values` (empty: it agrees)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    found = []
    if not cls.__name__.endswith("Params"):
        found.append(f"{cls.__name__}: settings classes are named *Params")
    only_class, only_file = set(fields) - set(values), set(values) - set(fields)
    if only_class or (only_file and not part):
        found.append(f"{cls.__name__}: keys only in the class {sorted(only_class)}, only in "
                     f"params.yaml {sorted(only_file) if not part else []}")
    for field in fields.values():
        if field.name not in values:
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            continue
        value = values[field.name]
        if (tuple(value) if isinstance(value, list) else value) != (
                tuple(default) if isinstance(default, list) else default):
            found.append(f"{cls.__name__}.{field.name} defaults to {default!r}, params.yaml has "
                         f"{value!r}")
    return found


@pytest.mark.parametrize("module_name, section, name, part", READS)
def test_a_settings_class_agrees_with_params_yaml(module_name, section, name, part):
    cls = class_of(importlib.import_module(module_name), name)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, name
    assert not disagreements(cls, PARAMS[section], part)


@dataclasses.dataclass(frozen=True)
class DemoParams:
    learning_rate: float = 1e-7
    steps: int = 3


@pytest.mark.parametrize("values, part, expected", [
    ({"learning_rate": 1e-7, "steps": 3}, False, []),                    # agrees
    ({"learning_rate": 1e-5, "steps": 3}, False, ["DemoParams.learning_rate defaults to 1e-07"]),
    ({"learning_rate": 1e-7}, False, ["keys only in the class ['steps']"]),   # a key the file lacks
    ({"learning_rate": 1e-7, "steps": 3, "seed": 0}, False, ["only in params.yaml ['seed']"]),
    ({"learning_rate": 1e-7, "steps": 3, "seed": 0}, True, []),          # a part may be a subset
])
def test_the_check_finds_each_kind_of_disagreement(values, part, expected):
    found = disagreements(DemoParams, values, part)
    assert len(found) == len(expected) and all(e in f for e, f in zip(expected, found)), found
