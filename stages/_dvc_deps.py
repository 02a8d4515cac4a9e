"""Write each dvc.yaml stage's code deps from the import graph, so no one keeps them by hand.

    make dvc-deps                              # python stages/_dvc_deps.py --write
    python stages/_dvc_deps.py --check         # exit 1 and name the stale stages

A stage's `deps:` in dvc.yaml is one flow list: first what a person wrote there (data files,
`${item.raw}`, reports a stage reads), then, after them, the stage script and every file it runs
(kaser.sources.import_closure: the kaser modules it imports at any depth, the stages/ helpers, the
data files those modules read). This script keeps the first part as it is and rewrites the second;
any entry under kaser/ or stages/ is taken for the second part. tests/test_pipeline.py fails while
dvc.yaml differs from what `--write` would make.
"""

from __future__ import annotations

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
_KEY = re.compile(r"^(?P<indent> *)(?P<key>cmd|deps):(?P<rest>.*)$")


def code_deps(command: str) -> list[str]:
    """The stage scripts a command runs and every file they run, repository-relative, sorted."""
    scripts = [word for word in shlex.split(command) if word.endswith(".py")]
    found = set(scripts)
    for script in scripts:
        found.update(p.relative_to(REPO).as_posix() for p in import_closure(REPO / script, REPO))
    return sorted(found)


def generated(entry: str) -> bool:
    return entry.startswith(("kaser/", "stages/"))


def _extent(lines: list[str], at: int, indent: int) -> int:
    """Index after the `deps:` value that starts on line `at` (block list or flow list)."""
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


def render(indent: str, entries: list[str]) -> list[str]:
    """`deps: [a, b, ...]` wrapped at WIDTH columns, continuation lines two spaces further in."""
    lines, line = [], f"{indent}deps: ["
    for i, entry in enumerate(entries):
        word = _quote(entry) + ("]" if i == len(entries) - 1 else ",")
        if len(line) + 1 + len(word) > WIDTH and not line.endswith("["):
            lines.append(line)
            line = f"{indent}  {word}"
        else:
            line += ("" if line.endswith("[") else " ") + word
    return lines + [line]


def rewrite(text: str) -> tuple[str, list[str]]:
    """dvc.yaml `text` with every stage's code deps regenerated, and the stages that changed."""
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
        if not (match and match["key"] == "deps"):
            out.append(line)
            i += 1
            continue
        end = _extent(lines, i, len(match["indent"]))
        old = yaml.safe_load("\n".join(lines[i:end]).lstrip())["deps"] or []
        if command is None:
            raise SystemExit(f"{DVC_FILE.name}: stage {stage}: deps before its cmd")
        entries = [e for e in old if not generated(e)] + code_deps(command)
        new = render(match["indent"], entries)
        if new != lines[i:end]:
            changed.append(stage)
        out += new
        i, command = end, None
    return "\n".join(out), changed


def main(argv: list[str]) -> int:
    if argv not in (["--write"], ["--check"]):
        print("usage: python stages/_dvc_deps.py --write | --check", file=sys.stderr)
        return 2
    text = DVC_FILE.read_text()
    new, changed = rewrite(text)
    if argv == ["--check"]:
        if changed:
            print(f"dvc.yaml: code deps of {', '.join(changed)} differ from their imports; "
                  "run `make dvc-deps`", file=sys.stderr)
        return 1 if changed else 0
    DVC_FILE.write_text(new)
    print(f"dvc.yaml: rewrote the code deps of {len(changed)} stage(s)"
          + (f": {', '.join(changed)}" if changed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
