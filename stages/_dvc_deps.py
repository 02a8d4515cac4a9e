"""Write each dvc.yaml stage's code deps and params from the code, so no one keeps them by hand.

    make dvc-deps                              # python stages/_dvc_deps.py --write
    python stages/_dvc_deps.py --check         # exit 1 and name the stale stages

- `deps:` is one flow list: first what a person wrote there (data files, `${item.raw}`, reports a
  stage reads), then the code the stage runs: its script, the stages/ helpers it imports, and the
  kaser sub-packages (kaser/code, kaser/errors, ...) and top-level kaser modules its import closure
  touches (kaser.sources.import_closure: imports at any depth, inside functions too, and the data
  files modules read). A sub-package is named whole, not module by module: the list stays short
  enough to read, and a module added to a package is covered before anyone reruns this script;
  the price is that editing one module reruns the stages that import a sibling of it (.dvcignore
  keeps __pycache__ out of the folders' hashes). This script keeps the first part as it is and
  rewrites the second; any entry under kaser/ or stages/ is taken for the second part.
- `params:` is the script's module-level `PARAMS` (read from its syntax tree, `{dataset}` written
  as `${key}`; for a script behind several stages, the entry of its variant: the command's second
  argument, else the stage name), so a stage lists what it reads once, in its script.
tests/test_pipeline.py fails while dvc.yaml differs from what `--write` would make.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from kaser.sources import import_closure  # noqa: E402

DVC_FILE = REPO / "dvc.yaml"
WIDTH = 120
_KEY = re.compile(r"^(?P<indent> *)(?P<key>cmd|deps|params):(?P<rest>.*)$")


def code_unit(path: str) -> str:
    """The dep that covers repository file `path`: its kaser sub-package, else the file.

    >>> code_unit("kaser/data/synth/bank.py"), code_unit("kaser/config.py"), code_unit("stages/_runner.py")
    ('kaser/data', 'kaser/config.py', 'stages/_runner.py')
    """
    parts = path.split("/")
    return "/".join(parts[:2]) if parts[0] == "kaser" and len(parts) > 2 else path


def code_deps(command: str) -> list[str]:
    """The stage scripts a command runs and the code units (`code_unit`) of every file they run,
    repository-relative, sorted."""
    scripts = [word for word in shlex.split(command) if word.endswith(".py")]
    found = set(scripts)
    for script in scripts:
        found.update(code_unit(p.relative_to(REPO).as_posix()) for p in import_closure(REPO / script, REPO))
    return sorted(found)


def generated(entry: str) -> bool:
    return entry.startswith(("kaser/", "stages/"))


def _literal(node, names: dict):
    """A literal of strings, tuples, lists and dicts, with names of earlier such literals and
    `+` of tuples (how the stage scripts write their PARAMS)."""
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, names) + _literal(node.right, names)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_literal(item, names) for item in node.elts)
    if isinstance(node, ast.Dict):
        return {_literal(k, names): _literal(v, names) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def script_literals(source: str) -> dict:
    """The module-level names of a script bound to literals (see `_literal`)."""
    names: dict = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = _literal(node.value, names)
            except (ValueError, KeyError, TypeError):
                continue
    return names


def script_params(source: str, variant: str) -> tuple[str, ...]:
    """The params keys a stage script declares it reads (its module-level PARAMS): a tuple, or a
    dict whose entry `variant` applies; `{dataset}` stands for the dataset name."""
    names = script_literals(source)
    if "PARAMS" not in names:
        raise SystemExit("a stage script without a module-level PARAMS literal: what params keys "
                         "does it read?")
    reads = names["PARAMS"]
    return tuple(reads[variant] if isinstance(reads, dict) else reads)


def invocations(command: str, stage: str) -> list[tuple[str, str]]:
    """(script, variant) per script a command runs: the variant of a script behind several stages
    is its second argument (stages/generate.py's method), else the stage's name."""
    words = shlex.split(command)
    return [(word, words[i + 2] if len(words) > i + 2 else stage)
            for i, word in enumerate(words) if word.endswith(".py")]


def params_of(command: str, stage: str) -> list[str]:
    """The stage's dvc.yaml params: the PARAMS of the scripts it runs, in their order."""
    keys: list[str] = []
    for script, variant in invocations(command, stage):
        for key in script_params((REPO / script).read_text(), variant):
            key = key.replace("{dataset}", "${key}")
            if key not in keys:
                keys.append(key)
    return keys


def _extent(lines: list[str], at: int, indent: int) -> int:
    """Index after the `deps:` or `params:` value that starts on line `at` (block or flow list)."""
    rest = lines[at].split(":", 1)[1].split("#", 1)[0].strip()
    end = at + 1
    if rest.startswith("["):
        while "]" not in lines[end - 1].split("#", 1)[0]:
            end += 1
        return end
    while end < len(lines) and (not lines[end].strip()
                                or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    while not lines[end - 1].strip():    # blank lines after the list belong to the next key
        end -= 1
    return end


def _quote(entry: str) -> str:
    return f'"{entry}"' if re.search(r"[{}\[\],#:&*!|>'\"%@`]", entry) else entry


def render(indent: str, entries: list[str], key: str = "deps") -> list[str]:
    """`deps: [a, b, ...]` wrapped at WIDTH columns, continuation lines two spaces further in."""
    lines, line = [], f"{indent}{key}: ["
    for i, entry in enumerate(entries):
        word = _quote(entry) + ("]" if i == len(entries) - 1 else ",")
        if len(line) + 1 + len(word) > WIDTH and not line.endswith("["):
            lines.append(line)
            line = f"{indent}  {word}"
        else:
            line += ("" if line.endswith("[") else " ") + word
    return lines + [line]


def rewrite(text: str) -> tuple[str, list[str]]:
    """dvc.yaml `text` with every stage's code deps and params regenerated, and the stages that
    changed."""
    lines = text.split("\n")
    out, changed, command, stage, i = [], [], None, None, 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^  [\w-]+:\s*(#.*)?$", line):
            stage = line.split(":", 1)[0].strip()
        match = _KEY.match(line)
        if match and match["key"] == "cmd":   # one command, or a block list of them
            command = match["rest"].strip()
            for item in lines[i + 1:]:
                if not item.strip().startswith("- "):
                    break
                command += " " + item.strip()[2:]
        if not (match and match["key"] in ("deps", "params")):
            out.append(line)
            i += 1
            continue
        if command is None:
            raise SystemExit(f"{DVC_FILE.name}: stage {stage}: {match['key']} before its cmd")
        end = _extent(lines, i, len(match["indent"]))
        if match["key"] == "deps":
            old = yaml.safe_load("\n".join(lines[i:end]).lstrip())["deps"] or []
            new = render(match["indent"], [e for e in old if not generated(e)] + code_deps(command))
        else:
            new = render(match["indent"], params_of(command, stage), "params")
        if new != lines[i:end] and stage not in changed:
            changed.append(stage)
        out += new
        i = end
    return "\n".join(out), changed


def main(argv: list[str]) -> int:
    if argv not in (["--write"], ["--check"]):
        print("usage: python stages/_dvc_deps.py --write | --check", file=sys.stderr)
        return 2
    text = DVC_FILE.read_text()
    new, changed = rewrite(text)
    if argv == ["--check"]:
        if changed:
            print(f"dvc.yaml: the code deps or params of {', '.join(changed)} differ from their "
                  "scripts; run `make dvc-deps`", file=sys.stderr)
        return 1 if changed else 0
    DVC_FILE.write_text(new)
    print(f"dvc.yaml: rewrote the code deps and params of {len(changed)} stage(s)"
          + (f": {', '.join(changed)}" if changed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
