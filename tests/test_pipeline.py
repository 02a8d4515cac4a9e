"""dvc.yaml: a change reruns what it affects, and only that.

Promises of the pipeline, checked on the real dvc.yaml through DVC's own stage graph:
1. every kaser/ module a stage's script imports (directly or through other kaser modules, also
   inside functions; kaser.sources) is a dependency of that stage, itself or through its
   sub-package folder, so editing it reruns the stage; the code deps are exactly what `make
   dvc-deps` (stages/_dvc_deps.py) writes, and bytecode in those folders is no part of a hash;
2. a stage's params dependencies are exactly the keys its script's `PARAMS` declares (one home,
   written into dvc.yaml by `make dvc-deps`): a stage reads params.yaml only through
   stages/_runner.py, which refuses keys outside `PARAMS` (`llm_client`, which changes no output,
   excepted);
3. changing a params section reruns only the stages that read it and what follows them; in
   particular `grpo.*` reruns `grpo` (and its reward ablations, `ablate`) and later stages, never
   data preparation, annotation, knowledge tracing, SFT or the baselines;
4. each baseline is its own stage: a change to one baseline's setting reruns that baseline's
   stages (and the scores and report after them), never the other baselines' (DVC's own params
   status on a copy of dvc.yaml and params.yaml, as `dvc status` computes it).
"""

import ast
import shlex
import sys
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
STAGES = REPO / "stages"
if str(STAGES) not in sys.path:
    sys.path.insert(0, str(STAGES))

import _dvc_deps  # noqa: E402
from _dvc_deps import script_literals  # noqa: E402
from _runner import Stage, covered as key_covered, operational  # noqa: E402

from kaser import sources  # noqa: E402


@pytest.fixture(scope="module")
def graph():
    from dvc.repo import Repo

    repo = Repo(str(REPO))
    try:
        yield repo.index.graph
    finally:
        repo.close()


def import_closure(script: str) -> set[str]:
    return {p.relative_to(REPO).as_posix() for p in sources.import_closure(REPO / script, REPO)}


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


def test_dvc_yaml_code_deps_and_params_are_what_make_dvc_deps_writes():
    text = (REPO / "dvc.yaml").read_text()
    new, stale = _dvc_deps.rewrite(text)
    assert not stale, f"run `make dvc-deps`: the code deps or params of {stale} differ from their scripts"
    assert new == text


@pytest.mark.parametrize("old, new", [
    (" kaser/predictor,", ""),                                       # a package left out of a stage
    ("params: [cluster, llm]", "params: [cluster]"),                 # a key its PARAMS reads
    ("params: [model, sft]", "params: [model, sft, grpo]"),          # a key its PARAMS does not read
])
def test_make_dvc_deps_restores_what_the_scripts_say_and_keeps_the_hand_written_deps(old, new):
    text = (REPO / "dvc.yaml").read_text()
    broken = text.replace(old, new, 1)
    assert broken != text
    rewritten, stale = _dvc_deps.rewrite(broken)
    assert stale and rewritten == text
    assert '"data/${key}/mastery.parquet"' in rewritten      # a hand-written dep survives the rewrite


def test_code_folders_hash_without_their_bytecode(graph):
    # a stage depends on whole kaser sub-packages: Python's __pycache__ beside the sources must
    # not change their hash (.dvcignore), or importing a module would rerun the stages
    from dvc.repo import Repo
    with Repo(str(REPO)) as repo:
        assert repo.dvcignore.is_ignored_dir(str(REPO / "kaser" / "llm" / "__pycache__"))
        assert repo.dvcignore.is_ignored_file(str(REPO / "kaser" / "llm" / "client.cpython-311.pyc"))
        assert not repo.dvcignore.is_ignored_file(str(REPO / "kaser" / "llm" / "client.py"))
    folders = {dep for stage in graph.nodes for dep in declared(stage) if (REPO / dep).is_dir()}
    assert {"kaser/code", "kaser/errors", "kaser/llm", "kaser/predictor"} <= folders


def test_dvc_deps_check_exits_non_zero_when_stale(tmp_path, monkeypatch):
    stale = tmp_path / "dvc.yaml"
    stale.write_text((REPO / "dvc.yaml").read_text().replace(" kaser/config.py,", "", 1))
    monkeypatch.setattr(_dvc_deps, "DVC_FILE", stale)
    assert _dvc_deps.main(["--check"]) == 1
    assert _dvc_deps.main(["--write"]) == 0 and _dvc_deps.main(["--check"]) == 0


def test_dvc_yaml_is_short_enough_to_read():
    assert len((REPO / "dvc.yaml").read_text().splitlines()) <= 250


def test_every_stage_runs_with_a_fixed_hash_seed(graph):
    # CodeBLEU's data-flow match (the codebleu package's, which ours equals) orders sets of
    # strings, so a score can depend on the process's hash seed: every stage fixes it
    for stage in graph.nodes:
        for command in stage_commands(stage):
            assert shlex.split(command)[:2] == ["PYTHONHASHSEED=0", "python"], (stage.addressing, command)


def script_params(source: str, variant: str, dataset: str | None) -> tuple[str, ...]:
    """The params keys a stage script declares it reads (stages/_dvc_deps.py reads its PARAMS),
    `{dataset}` as the dataset name."""
    return tuple(key.format(dataset=dataset) for key in _dvc_deps.script_params(source, variant))


def undeclared(reads, declared) -> list[str]:
    """The keys of `reads` that the stage's dvc.yaml params do not cover (operational excepted)."""
    return [key for key in reads if not operational(key) and not key_covered(key, declared)]


def stage_invocations(stage):
    """(script, variant, dataset) per command of a stage: the variant of a script behind several
    stages is its second argument (stages/generate.py's method), else the stage's name."""
    for command in stage_commands(stage):
        words = shlex.split(command)
        scripts = [i for i, word in enumerate(words) if word.endswith(".py")]
        for i in scripts:
            args = words[i + 1:]
            variant = args[1] if len(args) > 1 else stage.addressing.split("@")[0]
            yield words[i], variant, args[0] if args else None


def test_a_stage_depends_on_exactly_the_params_its_script_reads(graph):
    missing, extra = {}, {}
    for stage in graph.nodes:
        declared_keys = params_read(stage)
        reads = set()
        for script, variant, dataset in stage_invocations(stage):
            reads.update(script_params((REPO / script).read_text(), variant, dataset))
        gaps = undeclared(sorted(reads), declared_keys)
        if gaps:
            missing[stage.addressing] = gaps
        if declared_keys - reads:
            extra[stage.addressing] = sorted(declared_keys - reads)
    assert not missing, f"params keys read but not in dvc.yaml params: {missing}"
    assert not extra, f"dvc.yaml params no script reads (each reruns the stage for nothing): {extra}"
    assert not any(key.startswith("llm_client") for stage in graph.nodes for key in params_read(stage))


FIXTURE = """
from _runner import Stage, run
_MODEL = ("model.dtype", "model.folds")
PARAMS = _MODEL + ("grpo", "judge", "llm", "llm_client.timeout_s", "datasets.{dataset}")
"""


def test_the_params_check_finds_a_key_read_but_not_declared():
    reads = script_params(FIXTURE, "grpo", "toy")
    assert reads == ("model.dtype", "model.folds", "grpo", "judge", "llm", "llm_client.timeout_s",
                     "datasets.toy")
    declared_keys = {"model.dtype", "model.folds", "grpo", "llm", "datasets.toy"}
    # `judge` is read but not declared; llm_client changes no output, so it need not be
    assert undeclared(reads, declared_keys) == ["judge"]
    assert undeclared(reads, declared_keys | {"judge"}) == []
    # a whole section covers its keys, a key does not cover its section
    assert undeclared(("model.dtype",), {"model"}) == []
    assert undeclared(("model",), {"model.dtype"}) == ["model"]
    variants = 'PARAMS = {"kaser": ("generate",), "icl": ("generate", "baselines")}'
    assert undeclared(script_params(variants, "icl", "toy"), {"generate"}) == ["baselines"]


def test_the_runner_refuses_a_key_the_script_does_not_declare(tmp_path):
    from kaser.errors.judge import JudgeParams
    (tmp_path / "params.yaml").write_text("judge:\n  backend: static\ngrpo: {}\n")
    stage = Stage("grpo", "toy", ("grpo",), params_file=tmp_path / "params.yaml")
    with pytest.raises(RuntimeError, match=r"reads params key 'judge\.backend'.*add it there"):
        stage.section("judge", JudgeParams)
    declared_stage = Stage("grpo", "toy", ("judge",), params_file=tmp_path / "params.yaml")
    assert declared_stage.section("judge", JudgeParams) == JudgeParams("static")
    # every field comes from the file: a key the section lacks is an error, not a default
    from kaser import InputError
    from kaser.predictor.grpo import GrpoParams
    with pytest.raises(InputError, match=r"params.yaml:grpo: missing key\(s\) num_generations"):
        Stage("grpo", "toy", ("grpo",), params_file=tmp_path / "params.yaml").section("grpo", GrpoParams)


def test_every_stage_script_runs_through_the_runner():
    for script in sorted(STAGES.glob("*.py")):
        if script.name.startswith("_"):
            continue
        tree = ast.parse(script.read_text())
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name) and node.func.id == "run"]
        assert calls, f"{script.name}: no run(main): the same usage line and InputError exit for all"
        text = script.read_text()
        assert "sys.argv" not in text and "params.yaml\"" not in text, script.name


def rerun_by(graph, section: str) -> set[str]:
    """Stages `dvc repro` reruns when any key under params section `section` changes."""
    readers = {stage for stage in graph.nodes
               if any(key == section or key.startswith(section + ".") for key in params_read(stage))}
    later = set().union(*(nx.ancestors(graph, stage) for stage in readers)) if readers else set()
    return {stage.addressing for stage in readers | later}


def test_a_small_float_set_by_dvc_exp_run_reaches_the_stage_as_a_number(tmp_path):
    """`dvc exp run -S grpo.learning_rate=1e-5` writes `1e-05` into params.yaml (DVC's own writer,
    used here on a copy of the real file); PyYAML's YAML 1.1 rules alone would read it as a string,
    which the optimizer then refused in the middle of a run."""
    import shutil

    from dvc.utils.serialize import modify_yaml

    from kaser.predictor.grpo import GrpoParams
    params = tmp_path / "params.yaml"
    shutil.copy(REPO / "params.yaml", params)
    with modify_yaml(params) as data:
        data["grpo"]["learning_rate"] = 1e-5        # the value as DVC parses the -S argument
    assert "learning_rate: 1e-05" in params.read_text()
    grpo = Stage("grpo", "toy", ("grpo",), params_file=params).section("grpo", GrpoParams)
    assert grpo.learning_rate == 1e-5 and isinstance(grpo.learning_rate, float)
    assert isinstance(grpo.num_generations, int) and isinstance(grpo.scale_rewards, str)


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


def test_every_stage_has_the_same_usage_line_and_one_line_input_errors(capsys, monkeypatch):
    from _runner import run
    from kaser import InputError

    def main(dataset: str, method: str | None = None) -> None:
        raise InputError("not found; run the cluster stage first", file=f"data/{dataset}/x.parquet")

    monkeypatch.setattr(sys, "argv", ["stages/demo.py"])
    with pytest.raises(SystemExit) as exit_:
        run(main, [])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "usage: python stages/demo.py <dataset> [<method>]\n"
    with pytest.raises(SystemExit) as exit_:
        run(main, ["toy"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "demo: error: data/toy/x.parquet: not found; run the cluster stage first\n"


def test_generate_declares_the_params_of_every_sampled_method_of_the_registry():
    from kaser.methods import METHODS
    source = (REPO / "stages" / "generate.py").read_text()
    sampled = {m.name for m in METHODS.values() if m.role != "ablation"}
    assert set(script_literals(source)["PARAMS"]) == sampled
    for method in sampled:
        reads = script_params(source, method, "toy")
        # no method reads the whole baselines section; every baseline whether it is sampled
        assert "baselines" not in reads, (method, reads)
        assert ("baselines.methods" in reads) == (METHODS[method].role == "baseline"), (method, reads)
        # only ICL and PersonaPrompt can ask an endpoint, so only they read the backend and `llm`
        asks = method in ("icl", "persona")
        assert ("baselines.backend" in reads) == asks and ("llm" in reads) == asks


def producers(graph, dataset: str) -> dict[str, object]:
    """The stage that writes each sampled method's data/<ds>/predictions/<method>.parquet."""
    found = {}
    for stage in graph.nodes:
        for out in stage.outs:
            path = Path(out.def_path)
            if path.parent == Path("data", dataset, "predictions"):
                found[path.stem] = stage
    return found


@pytest.fixture(scope="module")
def locked_copy(tmp_path_factory):
    """A copy of dvc.yaml and params.yaml, DVC's graph of it, and each stage's params dependencies
    holding the values they ran with, as dvc.lock holds them after a `dvc repro`."""
    import yaml
    from dvc.repo import Repo

    root = tmp_path_factory.mktemp("locked")
    (root / "dvc.yaml").write_text((REPO / "dvc.yaml").read_text())
    (root / "params.yaml").write_text((REPO / "params.yaml").read_text())
    Repo.init(str(root), no_scm=True).close()
    repo = Repo(str(root))
    try:
        graph = repo.index.graph
        locked = [dep for stage in graph.nodes for dep in stage.deps
                  if type(dep).__name__ == "ParamsDependency"]
        for dep in locked:
            dep.save()
        yield root, graph, locked, yaml.safe_load((root / "params.yaml").read_text())
    finally:
        repo.close()


def changed_by(locked_copy, key: str, value) -> tuple[set[str], set[str]]:
    """What `dvc repro` reruns after params.yaml `key` is set to `value`: the stages whose params
    DVC itself finds changed, and every stage after them; and which sampled methods' predictions
    those stages write."""
    import copy
    import yaml

    root, graph, locked, params = locked_copy
    changed_params = copy.deepcopy(params)
    *path, last = key.split(".")
    section = changed_params
    for part in path:
        section = section[part]
    assert last in section, f"{key} is not a params.yaml key"
    assert section[last] != value, f"{key} is already {value!r} in params.yaml: pick another value"
    section[last] = value
    (root / "params.yaml").write_text(yaml.safe_dump(changed_params))
    try:
        changed = {dep.stage for dep in locked if dep.workspace_status()}
    finally:
        (root / "params.yaml").write_text(yaml.safe_dump(params))
    reruns = changed.union(*(nx.ancestors(graph, stage) for stage in changed))
    methods = {method for dataset in params["datasets"]
               for method, stage in producers(graph, dataset).items() if stage in reruns}
    return {stage.name for stage in reruns}, methods


@pytest.mark.parametrize("key, value, methods", [
    ("baselines.persona_history", 3, {"persona"}),              # PersonaPrompt's alone
    ("baselines.persona_max_new_tokens", 64, {"persona"}),
    ("baselines.history", 3, {"icl", "parastudent"}),           # the in-context prompt (and its tuning)
    ("baselines.openai_model", "qwen-7b", {"icl", "persona"}),  # the two that can ask an endpoint
    ("baselines.parastudent_max_pairs", 6, {"parastudent"}),    # through its adapter
    ("sft.learning_rate", 1.0e-4, {"student_sft", "parastudent", "kaser"}),   # the adapters they share
    ("grpo.learning_rate", 3.0e-4, {"kaser"}),                  # no baseline reads KASER's training
])
def test_a_baseline_setting_reruns_that_baseline_and_what_follows_only(locked_copy, key, value, methods):
    reruns, rerun_methods = changed_by(locked_copy, key, value)
    assert rerun_methods == methods, (key, sorted(reruns))
    if rerun_methods:        # what follows: the scores and the report
        assert {"evaluate@synthetic-python", "report@synthetic-python", "readme"} <= reruns
