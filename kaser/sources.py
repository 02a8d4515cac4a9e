"""Which source files a Python file runs: its import closure within this repository.

    from kaser.sources import import_closure
    import_closure(Path("stages/sft.py"), root=Path("."))   # -> [kaser/__init__.py, ...]

Three readers need the same answer, so it is computed here once:
- the judge's cache key (kaser.errors.judge.judge_sources) hashes every file the judge can run;
- `make dvc-deps` (stages/_dvc_deps.py) writes each stage's code deps in dvc.yaml from it;
- tests/test_pipeline.py checks that dvc.yaml is current.

What counts as run by a file, found by reading its syntax tree (imports inside functions too):
1. every `kaser` module it imports, with the `__init__.py` of each package above it
   (`from kaser.x import y` also counts kaser/x/y.py where y is a module);
2. a sibling module it imports by bare name (a stage script's `from _runner import Stage` is
   stages/_runner.py);
3. the data files its module reads as `Path(__file__).with_name("<name>")` (a file or a folder): the Java harness, the paper's printed tables, the synthetic problem
   bank. That spelling is the convention a module follows so that this walker sees the file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = "kaser"
ROOT = Path(__file__).resolve().parents[1]   # the folder holding kaser/ (the repository)
_DATA_FILE = re.compile(r"""Path\(__file__\)(?:\.resolve\(\))?\.with_name\(\s*["']([^"']+)["']\s*\)""")


def module_files(root: Path, name: str) -> list[Path]:
    """Files under `root` that importing dotted `name` runs: the package __init__s above it and
    the module (or package) itself; nothing for a name that is not a file (a function, a class)."""
    parts = name.split(".")
    found = [root.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts))]
    found += [root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")]
    return [path for path in found if path.is_file()]


def _imported_names(tree: ast.AST) -> list[str]:
    """Dotted names of every import (kaser writes only absolute ones, tests/test_layers.py)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def data_files(path: Path, source: str) -> list[Path]:
    """The data files and folders module `path` (its text `source`) reads as
    `Path(__file__).with_name("...")`, so a change to one counts as a change to the module (a
    folder: see `expand`)."""
    targets = (path.with_name(name) for name in _DATA_FILE.findall(source))
    return [target for target in targets if target.exists()]


def expand(paths) -> list[Path]:
    """`paths` with every folder replaced by the files in it (caches left out), sorted."""
    found = set()
    for path in paths:
        if path.is_dir():
            found.update(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            found.add(path)
    return sorted(found)


def direct_sources(path: Path, root: Path = ROOT) -> set[Path]:
    """The files one Python file runs directly (rules 1-3 of the module docstring)."""
    source = path.read_text(encoding="utf-8")
    found = set(data_files(path, source))
    for name in _imported_names(ast.parse(source)):
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            found.update(module_files(root, name))
        elif "." not in name and (path.parent / f"{name}.py").is_file():
            found.add(path.parent / f"{name}.py")
    return found


def import_closure(start: Path, root: Path = ROOT) -> list[Path]:
    """Every file `start` runs, directly or through the files it runs, `start` itself excluded;
    sorted, as paths under `root`."""
    start = Path(root, start) if not Path(start).is_absolute() else Path(start)
    seen: set[Path] = set()
    todo = [start]
    while todo:
        path = todo.pop()
        if path.suffix != ".py":
            continue
        for found in direct_sources(path, root) - seen:
            seen.add(found)
            todo.append(found)
    seen.discard(start)
    return sorted(seen)
