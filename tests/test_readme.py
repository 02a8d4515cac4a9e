"""The README and docs/*.md point only to things that exist, and the README stays a short front door.

    .venv/bin/python -m pytest -q tests/test_readme.py

What a page cites, and what must exist for it (a move or a rename updates the page):
- `kaser.…` names: importable modules, or attributes of them;
- paths under kaser/, stages/, tests/, benchmarks/, configs/, docs/, reports/ and the root files
  (Makefile, params.yaml, dvc.yaml, pyproject.toml): files or folders in the repository;
  paths with a placeholder (`data/<ds>/`, `{sft,grpo}`, `*`) and pipeline outputs under data/ and
  models/ are not checked;
- links `[text](target)`: the target, relative to the page, and its `#anchor` among the headings;
- `make <target>`: a target of the Makefile;
- `section.key` of params.yaml (`grpo.max_pairs`, `-S model.folds=...`): a key there;
- `kaser <subcommand> --flag`: a subcommand of kaser.cli.build_parser and a flag it accepts;
- `stage@dataset`: a stage of dvc.yaml and a dataset of params.yaml.
Only code is read for the last four (inline `code` and fenced blocks), so prose like "make the
model stop" is not taken for a make target.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README_PATH = ROOT / "README.md"
DOCS = ROOT / "docs"
README = README_PATH.read_text(encoding="utf-8")
PAGES = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
         for path in [README_PATH, *sorted(DOCS.glob("*.md"))]}
TOPICS = ["README.md", "design.md", "sandbox.md", "datasets.md", "llm-backends.md", "run-times.md",
          "reproducibility.md", "gpu-and-paper-scale.md", "experiments-and-studies.md",
          "departures.md"]
README_LIMIT = 10_000            # characters
README_SECTIONS = ["Two commands", "Results at a glance", "The pipeline", "Your own data", "Layout"]
RESULT_SOURCES = re.compile(r"^reports/(README\.md|(cpu-study|study-student-python)/README\.md|[\w-]+/headline\.json)$")

CHECKED_FOLDERS = ("kaser", "stages", "tests", "benchmarks", "configs", "docs", "reports")
ROOT_FILES = ("Makefile", "params.yaml", "dvc.yaml", "pyproject.toml")
PLACEHOLDER = re.compile(r"[<>{}*|]|\.\.\.")
FILE_ENDINGS = {"py", "md", "json", "yaml", "yml", "parquet", "csv", "png", "sqlite", "txt", "npz", "java"}


# ------------------------------------------------------------------ what a page cites

def code_of(text: str) -> str:
    """The page's code: fenced blocks, and inline spans, one per line."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return "\n".join(fenced + [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", rest)])


def kaser_names(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w/.])(kaser(?:\.\w+)+)", code_of(text)))


def repo_paths(text: str) -> set[str]:
    """Repository paths a page names anywhere, placeholders left out."""
    folders = "|".join(CHECKED_FOLDERS)
    found = set(re.findall(rf"(?<![\w./-])((?:{folders})/[^\s`()\[\]'\"]*)", text))
    found |= set(re.findall(rf"(?<![\w./-])({'|'.join(map(re.escape, ROOT_FILES))})(?![\w.])", text))
    return {path.rstrip(".,;:") for path in found if not PLACEHOLDER.search(path)}


def links(text: str) -> set[str]:
    return {target for target in re.findall(r"\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+:", target)}


def make_targets(text: str) -> set[str]:
    return set(re.findall(r"(?:^|[\s;&(])make ([\w-]+)", code_of(text), re.M))


def params_keys(text: str, sections: set[str]) -> set[str]:
    """`section.key[.key...]` for the params.yaml sections a page names (datasets entries are
    names a user chooses, so not checked)."""
    found = set()
    for match in re.finditer(r"(?<![\w./-])([a-z_]+)((?:\.[a-z_0-9]+)+)", code_of(text)):
        section, keys = match.group(1), match.group(2).split(".")[1:]
        if section in sections and section != "datasets" and keys[-1] not in FILE_ENDINGS:
            found.add(".".join([section, *keys]))
    return found


def cli_calls(text: str) -> set[tuple[str, str]]:
    """(subcommand, flag or "") for every `kaser <subcommand> ...` of a page's code; a flag
    counts up to a comment or the end of the command (backslash continuations joined)."""
    calls = set()
    for line in code_of(text).replace("\\\n", " ").splitlines():
        for match in re.finditer(r"(?:^|[\s;&(])kaser ([a-z][\w-]*)(.*)", line):
            command = match.group(2).split("#")[0]
            calls.add((match.group(1), ""))
            calls |= {(match.group(1), flag) for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", command)}
    return calls


def stage_targets(text: str) -> set[tuple[str, str]]:
    return set(re.findall(r"(?<![\w/.-])([a-z_]+)@([\w-]+)", code_of(text)))


# ------------------------------------------------------------------ what exists

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


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)}


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", (ROOT / "Makefile").read_text(), re.M))


PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
STAGES = set(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"])


def has_key(params: dict, dotted: str) -> bool:
    node = params
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def cli_options() -> dict[str, set[str]]:
    """Subcommand -> the flags it accepts, from the parser the `kaser` command builds."""
    from kaser.cli import build_parser
    subparsers = next(a for a in build_parser()._actions if a.choices and a.dest == "command")
    return {name: set(sub._option_string_actions) for name, sub in subparsers.choices.items()}


# ------------------------------------------------------------------ the checks, page by page

def missing_paths(page: str, text: str) -> list[str]:
    missing = [p for p in sorted(repo_paths(text)) if not (ROOT / p).exists()]
    for target in sorted(links(text)):
        file, _, anchor = target.partition("#")
        path = (ROOT / page).parent / file if file else ROOT / page
        if not path.exists():
            missing.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            missing.append(target)
    return missing


def missing_names(text: str) -> list[str]:
    missing = []
    for name in sorted(kaser_names(text)):
        try:
            resolve(name)
        except (ModuleNotFoundError, AttributeError):
            missing.append(name)
    return missing


def missing_targets(text: str) -> list[str]:
    return sorted(make_targets(text) - makefile_targets())


def missing_params(text: str) -> list[str]:
    return sorted(k for k in params_keys(text, set(PARAMS)) if not has_key(PARAMS, k))


def missing_cli(text: str) -> list[str]:
    options = cli_options()
    return sorted(f"kaser {sub} {flag}".strip() for sub, flag in cli_calls(text)
                  if sub not in options or (flag and flag not in options[sub]))


def missing_stages(text: str) -> list[str]:
    return sorted(f"{s}@{d}" for s, d in stage_targets(text)
                  if s not in STAGES or d not in PARAMS["datasets"])


CHECKS = {
    "paths": missing_paths,
    "kaser names": lambda page, text: missing_names(text),
    "make targets": lambda page, text: missing_targets(text),
    "params keys": lambda page, text: missing_params(text),
    "kaser subcommands and flags": lambda page, text: missing_cli(text),
    "stage@dataset": lambda page, text: missing_stages(text),
}


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("page", PAGES)
def test_page_cites_only_what_exists(page, check):
    missing = CHECKS[check](page, PAGES[page])
    assert not missing, f"{page} cites {check} that do not exist: {missing}"


def test_the_checks_find_what_does_not_exist():
    # one broken reference of each kind, beside one that exists, so no check passes vacuously
    text = """See [the design](design.md#no-such-heading), [sandbox](sandbox.md) and
`kaser/no_such_module.py`, `kaser/cli.py`, `kaser.no_such_thing`, `kaser.cli.build_parser`.

```bash
make repro && make no-such-target
dvc exp run -S grpo.no_such_key=1 -S grpo.max_pairs=16
kaser annotate DIR --no-such-flag   # --also-ignored in a comment
kaser no-such-command DIR
dvc repro knowledge@synthetic-python no_such_stage@synthetic-python
```
"""
    assert missing_paths("docs/x.md", text) == ["kaser/no_such_module.py", "design.md#no-such-heading"]
    assert missing_names(text) == ["kaser.no_such_thing"]
    assert missing_targets(text) == ["no-such-target"]
    assert missing_params(text) == ["grpo.no_such_key"]
    assert missing_cli(text) == ["kaser annotate --no-such-flag", "kaser no-such-command"]
    assert missing_stages(text) == ["no_such_stage@synthetic-python"]


def test_the_pages_cite_enough_to_check():
    everything = "\n".join(PAGES.values())
    assert len(kaser_names(README)) >= 10
    assert len(repo_paths(everything)) >= 30
    assert len(make_targets(everything)) >= 5
    assert len(params_keys(everything, set(PARAMS))) >= 30
    assert {sub for sub, _ in cli_calls(everything)} >= {"synth", "ingest", "annotate", "simulate"}


# ------------------------------------------------------------------ docs/ holds the topics

def test_docs_hold_every_topic_and_the_index_links_each_page():
    pages = {path.name for path in DOCS.glob("*.md")}
    assert set(TOPICS) <= pages, f"missing topic pages: {set(TOPICS) - pages}"
    index = PAGES["docs/README.md"]
    assert pages - {"README.md"} <= links(index), f"not in docs/README.md: {pages - {'README.md'} - links(index)}"


# ------------------------------------------------------------------ the README is a front door

def test_readme_is_short():
    assert len(README) <= README_LIMIT, f"README.md is {len(README)} characters, over {README_LIMIT}"


def test_readme_gives_the_two_commands_in_its_first_40_lines():
    head = "\n".join(README.splitlines()[:40])
    for command in ("make repro", "make test"):
        assert re.search(rf"{command}(?![\w-])", head), f"`{command}` is not in README's first 40 lines"


def test_readme_sections_come_in_order():
    headings = re.findall(r"^## (.+)$", README, re.M)
    positions = [next((i for i, h in enumerate(headings) if h.startswith(s)), None) for s in README_SECTIONS]
    assert None not in positions, f"README lacks a section: {dict(zip(README_SECTIONS, positions))}"
    assert positions == sorted(positions), f"README sections out of order: {headings}"


def section(text: str, title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"no section '## {title}'"
    return found.group(1)


def table_rows(text: str) -> list[list[str]]:
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]
    return [row for row in rows if not all(set(cell) <= set("-: ") for cell in row)]


def numbers(text: str) -> set[str]:
    text = re.sub(r"@\d+", "", text)      # IoU@5 names a metric, not a value
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def leaves(node):
    """The numbers of a JSON document, at any depth."""
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, list):
        for value in node:
            yield from leaves(value)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield node


def source_numbers(path: Path) -> set[str]:
    """Every number a committed result file holds, as a page may write it (JSON floats at 1-4
    decimals)."""
    if path.suffix != ".json":
        return numbers(path.read_text(encoding="utf-8"))
    found = set()
    for value in leaves(json.loads(path.read_text())):
        found |= {str(value), *(f"{value:.{digits}f}" for digits in range(1, 5))}
        if float(value).is_integer():
            found.add(str(int(value)))
    return found


RESULTS = table_rows(section(README, "Results at a glance"))


def test_readme_has_a_results_at_a_glance_table_with_n_and_a_caveat():
    assert RESULTS and len(RESULTS) >= 4, "no results table in README 'Results at a glance'"
    header = [cell.lower() for cell in RESULTS[0]]
    assert {"n", "source"} <= set(header), f"the results table needs n and source columns: {header}"
    assert "reports/README.md" in links(section(README, "Results at a glance"))
    assert re.search(r"^Caveat", section(README, "Results at a glance"), re.M), "no caveat line"


@pytest.mark.parametrize("row", RESULTS[1:], ids=lambda row: row[0][:40])
def test_every_headline_number_is_in_the_committed_file_it_cites(row):
    header = [cell.lower() for cell in RESULTS[0]]
    source = re.findall(r"\]\(([^)]+)\)", row[header.index("source")]) or [row[header.index("source")]]
    assert RESULT_SOURCES.match(source[0]), f"{source[0]} is not one of the committed result files"
    path = ROOT / source[0]
    assert path.is_file(), f"{source[0]} does not exist"
    cited = numbers(" ".join(cell for name, cell in zip(header, row) if name != "source" and name != header[0]))
    assert cited, f"row {row[0]!r} gives no number"
    absent = sorted(cited - source_numbers(path))
    assert not absent, f"{row[0]!r}: {absent} not found in {source[0]}"


def test_the_number_check_finds_a_number_not_in_its_source(tmp_path):
    result = tmp_path / "headline.json"
    result.write_text(json.dumps({"kaser_codebleu@5": 0.41666, "n_test_pairs": 5}))
    assert {"0.417", "0.4167", "5"} <= source_numbers(result)
    assert "0.418" not in source_numbers(result)
    assert numbers("IoU@5, 0.106 vs 0.132, 1,000 pairs") == {"0.106", "0.132", "1000"}


def test_the_pipeline_table_lists_every_dvc_stage():
    listed = {re.sub(r"`", "", row[0]) for row in table_rows(section(README, "The pipeline"))[1:]}
    assert listed == STAGES, f"not in README: {STAGES - listed}; not in dvc.yaml: {listed - STAGES}"
