"""One home per setting: params.yaml holds every value, and no settings class holds a second one.

Every frozen dataclass named *Params in kaser/ and stages/ is found by walking the sources' syntax
trees, and every `stage.section("<section>", <Class>)` in stages/*.py (and every
`section(args.params, "<section>", <Class>)` of the CLI) says which params.yaml section it holds.
For each:
- a class named *Params is a frozen dataclass (one naming convention), and each one is either read
  from a section or listed below with the reason it has none;
- a class read whole has exactly the section's keys, and a `part=True` class a subset of them;
- no field has a default for a key its section holds: the value lives in params.yaml only, and
  tests and library callers take it from there with `kaser.config.settings` (overrides applied).
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

# settings classes no stage reads by `section`: the params.yaml section whose keys they carry
CARRIED = {"StaticParams": ("annotate", True)}   # AnnotateParams.static_params() hands them on
# classes named *Params that hold no params.yaml setting, and why
NOT_SETTINGS = {
    "BKTParams": "a BKT model's fitted parameters (kaser/knowledge/baselines.py), not settings",
}


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


def settings_classes() -> list[tuple[str, str]]:
    """(module, class name) of every class named *Params defined in kaser/ and stages/."""
    found = []
    for path in sorted((REPO / "kaser").rglob("*.py")) + sorted(STAGES.glob("*.py")):
        if path.parent == STAGES:
            module_name = path.stem
        else:
            module_name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Params"):
                found.append((module_name, node.name))
    return found


CLASSES = settings_classes()


def sections_of_classes() -> dict[type, set[tuple[str, bool]]]:
    """Each settings class -> the (section, part) it is read from, by the stages, CLI or CARRIED."""
    found: dict[type, set[tuple[str, bool]]] = {}
    for case in READS:
        module_name, section, name, part = case.values
        cls = class_of(importlib.import_module(module_name), name)
        found.setdefault(cls, set()).add((section, part))
    for module_name, name in CLASSES:
        if name in CARRIED:
            found.setdefault(getattr(importlib.import_module(module_name), name), set()).add(CARRIED[name])
    return found


def test_every_stage_that_reads_settings_is_found():
    scripts = {case.values[0] for case in READS}
    assert {"sft", "grpo", "generate", "evaluate", "prepare", "report", "kaser.cli"} <= scripts


def test_the_walk_finds_the_settings_classes():
    names = {name for _, name in CLASSES}
    assert {"GenerateParams", "GrpoParams", "StaticParams", "SweepParams", "EmbedderParams",
            "BKTParams", "LLMParams", "LLMClientParams"} <= names
    assert len(names) == len(CLASSES), "two classes share a name"


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
        if field.name in values and (field.default is not dataclasses.MISSING
                                     or field.default_factory is not dataclasses.MISSING):
            default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
            found.append(f"{cls.__name__}.{field.name} has a default ({default!r}) while params.yaml "
                         f"holds it ({values[field.name]!r}): params.yaml is its one home; build the "
                         "class with kaser.config.settings")
    return found


@pytest.mark.parametrize("module_name, name", CLASSES, ids=[name for _, name in CLASSES])
def test_a_settings_class_holds_no_second_home_of_a_setting(module_name, name):
    cls = getattr(importlib.import_module(module_name), name)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, name
    if name in NOT_SETTINGS:
        return
    sections = sections_of_classes().get(cls)
    assert sections, (f"{name} is read from no params.yaml section; read it in a stage, or list it "
                      "in CARRIED or NOT_SETTINGS")
    for section, part in sorted(sections):
        found = disagreements(cls, PARAMS[section] or {}, part)
        assert not found, f"params.yaml:{section}: " + "; ".join(found)


def test_every_params_section_has_a_settings_class():
    read = {section for sections in sections_of_classes().values() for section, _ in sections}
    # datasets: one entry per dataset, read by key (stages/prepare.py)
    assert set(PARAMS) - read == {"datasets"}


@dataclasses.dataclass(frozen=True)
class DemoParams:
    learning_rate: float
    steps: int


@dataclasses.dataclass(frozen=True)
class DefaultParams:
    learning_rate: float
    steps: int = 3
    subset: tuple = dataclasses.field(default_factory=tuple)


@pytest.mark.parametrize("cls, values, part, expected", [
    (DemoParams, {"learning_rate": 1e-7, "steps": 3}, False, []),                 # agrees
    (DemoParams, {"learning_rate": 1e-7}, False, ["keys only in the class ['steps']"]),  # the file lacks one
    (DemoParams, {"learning_rate": 1e-7, "steps": 3, "seed": 0}, False, ["only in params.yaml ['seed']"]),
    (DemoParams, {"learning_rate": 1e-7, "steps": 3, "seed": 0}, True, []),      # a part may be a subset
    (DefaultParams, {"learning_rate": 1e-7, "steps": 3, "subset": []}, False,    # two homes: default and file
     ["DefaultParams.steps has a default (3)", "DefaultParams.subset has a default (())"]),
    (DefaultParams, {"learning_rate": 1e-7, "seed": 0}, True,                    # a default the file does not hold
     ["keys only in the class ['steps', 'subset']"]),
])
def test_the_check_finds_each_kind_of_disagreement(cls, values, part, expected):
    found = disagreements(cls, values, part)
    assert len(found) == len(expected) and all(e in f for e, f in zip(expected, found)), found
