"""The package layout reads like the pipeline, and every import points down.

Floors, from the ground up (docs/design.md "Layout"): shared ground (InputError, config, taxonomy, the
LLM client, the embedder, the metrics, the method registry) <- code <- data <- {errors, knowledge}
<- {predictor, evaluation} <- simulate <- cli (the top floor, which reads a --params file and
calls the library with plain values, as the stage scripts do through stages/_runner.py). Packages on one floor stand side by side: neither
imports the other. A module may import its own package and anything on a lower floor, nothing else,
and no chain of imports may come back to where it started.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KASER = Path(__file__).resolve().parents[1] / "kaser"

# package (first name under kaser) -> floor; modules directly under kaser/ are listed by name
FLOORS = {
    "__init__": -1, "config": 0, "taxonomy": 0, "llm": 0, "embeddings": 0, "metrics": 0, "methods": 0,
    "sources": 0,
    "code": 1,
    "data": 2,
    "errors": 3, "knowledge": 3,
    "predictor": 4, "evaluation": 4,
    "simulate": 5, "cli": 6,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(KASER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    """kaser.errors.judge -> errors; kaser -> __init__; kaser.config -> config."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> set[str]:
    """The kaser modules `path` imports, at any depth of the file (lazy imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "kaser")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kaser":
            for alias in node.names:
                # `from kaser.code import sandbox` imports the module kaser.code.sandbox
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; write the absolute kaser.* name")
    return found


MODULES = {module_name(p): p for p in KASER.rglob("*.py")}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


def test_every_part_has_a_floor():
    assert {part_of(m) for m in MODULES} <= set(FLOORS), set(part_of(m) for m in MODULES) - set(FLOORS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    here = part_of(module)
    upward = [target for target in GRAPH[module]
              if part_of(target) != here and FLOORS[part_of(target)] >= FLOORS[here]]
    assert not upward, f"{module} (floor {FLOORS[here]}) imports {upward} from its own floor or above"


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH.get(module, ())):
            if target not in MODULES or target == module:
                continue
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])


def test_the_checker_sees_an_upward_import(tmp_path):
    # The rule must be able to fail: a code-floor module importing the predictor is caught.
    bad = tmp_path / "bad.py"
    bad.write_text("from kaser.predictor.rewards import error_reward\n")
    target = next(iter(imports(bad)))
    assert FLOORS[part_of(target)] > FLOORS["code"]


def test_design_md_names_the_same_floors():
    """docs/design.md "Layout" lists the floors ground first, `←` between floors, "beside"
    within one: the same packages on the same floors as FLOORS."""
    import re
    design = (KASER.parent / "docs" / "design.md").read_text(encoding="utf-8")
    layout = design.split("## Layout", 1)[1].split("\n## ", 1)[0].split("Packages on one floor")[0]
    floors = []
    for chunk in layout.split("←"):
        names = {re.sub(r"^kaser/|/$|\.py$", "", name) for name in re.findall(r"`([^`]+)`", chunk)}
        floors.append(names & set(FLOORS))
    assert all(len({FLOORS[n] for n in names}) == 1 for names in floors), floors   # one floor each
    levels = [FLOORS[next(iter(names))] for names in floors]
    assert levels == sorted(set(levels)), floors                                    # ground first, no floor twice
    assert set().union(*floors) == set(FLOORS) - {"__init__"}, set(FLOORS) - set().union(*floors)
