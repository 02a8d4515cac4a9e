"""dvc.yaml: a change reruns what it affects, and only that.

Two promises of the pipeline are checked on the real dvc.yaml through DVC's own stage graph:
1. every kaser/ module a stage's script imports (directly or through other kaser modules, also
   inside functions) is a dependency of that stage, so editing it reruns the stage;
2. changing a params section reruns only the stages that read it and what follows them; in
   particular `grpo.*` reruns `grpo` (and its reward ablations, `ablate`) and later stages, never
   data preparation, annotation, knowledge tracing, SFT or the baselines.
"""

import ast
import shlex
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def graph():
    from dvc.repo import Repo

    repo = Repo(str(REPO))
    try:
        yield repo.index.graph
    finally:
        repo.close()


def module_files(name: str) -> list[str]:
    """Repository-relative files that importing a dotted kaser name runs: the module (or package)
    itself and the __init__.py of every package above it."""
    parts = name.split(".")
    candidates = [Path(*parts[:i], "__init__.py") for i in range(1, len(parts))]
    path = Path(*parts)
    candidates += [path.with_suffix(".py"), path / "__init__.py"]
    return [str(candidate) for candidate in candidates if (REPO / candidate).is_file()]


def kaser_imports(path: str) -> set[str]:
    """kaser/ files imported anywhere in one Python file (also `from kaser.x import module`)."""
    found = set()
    for node in ast.walk(ast.parse((REPO / path).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kaser"):
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == "kaser" or name.startswith("kaser."):
                found.update(module_files(name))
    return found


def import_closure(script: str) -> set[str]:
    seen: set[str] = set()
    todo = [script]
    while todo:
        for module in kaser_imports(todo.pop()) - seen:
            seen.add(module)
            todo.append(module)
    return seen


def stage_commands(stage) -> list[str]:
    return [stage.cmd] if isinstance(stage.cmd, str) else list(stage.cmd)


def stage_scripts(stage) -> list[str]:
    return sorted({word for command in stage_commands(stage) for word in shlex.split(command)
                   if word.endswith(".py")})


def declared(stage) -> set[str]:
    return {str(Path(dep.def_path)) for dep in stage.deps if hasattr(dep, "def_path")}


def covered(module: str, deps: set[str]) -> bool:
    return module in deps or any(module.startswith(dep.rstrip("/") + "/") for dep in deps)


def params_read(stage) -> set[str]:
    keys = set()
    for dep in stage.deps:
        if type(dep).__name__ == "ParamsDependency":
            keys.update(dep.params)
    return keys


def test_every_imported_kaser_module_is_a_stage_dependency(graph):
    missing = {}
    for stage in graph.nodes:
        deps = declared(stage)
        for script in stage_scripts(stage):
            assert script in deps, f"{stage.addressing}: its script {script} is not a dependency"
            gaps = sorted(m for m in import_closure(script) if not covered(m, deps))
            if gaps:
                missing[stage.addressing] = gaps
    assert not missing, f"modules imported but not in dvc.yaml deps: {missing}"


def test_every_stage_runs_with_a_fixed_hash_seed(graph):
    # CodeBLEU's data-flow match (the codebleu package's, which ours equals) orders sets of
    # strings, so a score can depend on the process's hash seed: every stage fixes it
    for stage in graph.nodes:
        for command in stage_commands(stage):
            assert shlex.split(command)[:2] == ["PYTHONHASHSEED=0", "python"], (stage.addressing, command)


def rerun_by(graph, section: str) -> set[str]:
    """Stages `dvc repro` reruns when any key under params section `section` changes."""
    readers = {stage for stage in graph.nodes
               if any(key == section or key.startswith(section + ".") for key in params_read(stage))}
    later = set().union(*(nx.ancestors(graph, stage) for stage in readers)) if readers else set()
    return {stage.addressing for stage in readers | later}


def test_a_grpo_param_reruns_only_grpo_and_later_stages(graph):
    names = {stage.addressing for stage in graph.nodes}
    datasets = sorted(name.split("@")[1] for name in names if name.startswith("grpo@"))
    assert datasets, "no grpo stage in dvc.yaml"
    reruns = rerun_by(graph, "grpo")
    for dataset in datasets:
        assert f"grpo@{dataset}" in reruns
        for earlier in ("prepare", "annotate", "cluster", "knowledge", "sft"):
            assert f"{earlier}@{dataset}" not in reruns
    assert "base_model" not in reruns
    kinds = {stage.split("@")[0] for stage in reruns}
    assert kinds <= {"grpo", "ablate", "generate", "evaluate", "sweep", "report", "readme"}, kinds


def test_a_knowledge_param_does_not_rerun_annotation(graph):
    reruns = {stage.split("@")[0] for stage in rerun_by(graph, "knowledge")}
    assert "knowledge" in reruns and "sft" in reruns
    assert not reruns & {"prepare", "annotate", "cluster", "base_model"}
