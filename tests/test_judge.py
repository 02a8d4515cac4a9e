"""The judge: static diagnoses mapped to cluster labels and restricted to candidates; LLM judge."""

import dataclasses
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from kaser import config
from kaser.errors.judge import JudgeParams, LLMJudge, StaticJudge, judge_name, judge_sources, reward_judge
from kaser.errors.static_annotator import StaticParams
from llm_settings import llm_settings
from hike_problem import CANDIDATES, CORRECT, PROBLEM, SYNTAX, WRONG_OPERATOR, dataset
ANNOTATOR = config.settings(StaticParams, "annotate", part=True)   # the pipeline's settings
RENAMED = CORRECT.replace("def can_hike", "def go_hiking")                  # another name
RENAMED_WRONG = WRONG_OPERATOR.replace("def can_hike", "def go_hiking")     # another name and a bug


@pytest.mark.parametrize("code, candidates, expected", [
    (CORRECT, CANDIDATES, set()),                                     # correct code: nothing
    (WRONG_OPERATOR, CANDIDATES, {"Incorrect logical operator"}),     # mapped to its cluster label
    (SYNTAX, CANDIDATES, {"Missing colon"}),                          # compiler-grounded
    (WRONG_OPERATOR, ["Off-by-one error"], set()),                    # not a candidate: dropped
])
def test_static_judge(tmp_path, code, candidates, expected):
    judge = StaticJudge(*dataset(tmp_path), ANNOTATOR)
    assert judge(PROBLEM.problem_id, code, candidates) == expected


@pytest.mark.parametrize("code, valid, clean, diagnosed", [
    (CORRECT, True, True, set()),
    # a correct code under another name: valid, not clean, the wrong name its one error
    (RENAMED, True, False, {"Wrong function name"}),
    # a renamed code with a bug: the bug is still diagnosed (mapped to its cluster label)
    (RENAMED_WRONG, True, False, {"Wrong function name", "Incorrect logical operator"}),
    # only a code that does not parse is invalid
    (SYNTAX, False, False, {"Missing colon"}),
])
def test_validity_means_the_code_parses_and_a_wrong_name_is_one_error(tmp_path, code, valid, clean,
                                                                      diagnosed):
    judge = StaticJudge(*dataset(tmp_path), ANNOTATOR)
    [verdict] = judge.verdicts(PROBLEM.problem_id, [code], CANDIDATES + ["Wrong function name"])
    assert (verdict.valid, verdict.clean, set(verdict.diagnosed)) == (valid, clean, diagnosed)
    assert set(verdict.errors) == diagnosed     # every diagnosis here is a candidate


def test_judge_many_diagnoses_each_code_once(tmp_path):
    judge = StaticJudge(*dataset(tmp_path), ANNOTATOR)
    first = judge.judge_many(PROBLEM.problem_id, [WRONG_OPERATOR, CORRECT, WRONG_OPERATOR], CANDIDATES)
    assert first == [{"Incorrect logical operator"}, set(), {"Incorrect logical operator"}]
    assert len(judge._found) == 2     # two distinct codes diagnosed, the repeat served from memory


def test_reward_judge_takes_its_settings_and_needs_the_cluster_outputs(tmp_path):
    dataset(tmp_path)
    with reward_judge(tmp_path, JudgeParams("static"), ANNOTATOR) as judge:
        assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    (tmp_path / "error_labels.parquet").unlink()
    with pytest.raises(Exception, match="error_labels.parquet"):
        with reward_judge(tmp_path, JudgeParams("static"), ANNOTATOR):
            pass


def test_unknown_backend_is_a_clear_error(tmp_path):
    dataset(tmp_path)
    with pytest.raises(Exception, match="unknown judge backend 'magic'"):
        with reward_judge(tmp_path, JudgeParams("magic"), ANNOTATOR):
            pass


# ---------------------------------------------------------------- what decides a judgement

def _other(value):
    """A different value of the same kind."""
    if isinstance(value, bool) or value is None:
        return not value if isinstance(value, bool) else 1
    return value * 2 + 1 if isinstance(value, (int, float)) else f"{value}-other"


STATIC = JudgeParams("static")
OPENAI = JudgeParams("openai")
LLM, _ = llm_settings()    # params.yaml's `llm`
SETTING_CHANGES = (
    [(f"annotate.{f}", STATIC, replace(ANNOTATOR, **{f: _other(getattr(ANNOTATOR, f))}), None)
     for f in StaticParams.__dataclass_fields__]
    + [(f"llm.{f}", OPENAI, None, dataclasses.replace(LLM, **{f: _other(getattr(LLM, f))}))
       for f in (f.name for f in dataclasses.fields(LLM))]
    + [("judge.backend", OPENAI, None, LLM)])


@pytest.mark.parametrize("setting, cfg, settings, llm", SETTING_CHANGES, ids=[c[0] for c in SETTING_CHANGES])
def test_every_setting_that_decides_a_judgement_changes_the_judge_name(setting, cfg, settings, llm):
    base = judge_name(cfg, ANNOTATOR, LLM) if setting != "judge.backend" else judge_name(STATIC, ANNOTATOR)
    assert judge_name(cfg, settings, llm) != base, setting


@pytest.mark.parametrize("name", ["problems.parquet", "submissions.parquet", "error_labels.parquet"])
def test_a_change_to_any_dataset_file_the_judge_reads_changes_the_judge_name(tmp_path, name):
    dataset(tmp_path)
    inputs = [tmp_path / n for n in ("problems.parquet", "submissions.parquet", "error_labels.parquet")]
    before = judge_name(STATIC, ANNOTATOR, inputs=inputs)
    assert judge_name(STATIC, ANNOTATOR, inputs=inputs) == before
    frame = pl.read_parquet(tmp_path / name)
    frame.with_columns(pl.col(frame.columns[0]) + "x").write_parquet(tmp_path / name)   # another id
    assert judge_name(STATIC, ANNOTATOR, inputs=inputs) != before


def test_settings_that_cannot_change_a_judgement_keep_the_judge_name():
    # LLM settings do not make another answer of the static judge, nor annotator settings of the
    # LLM judge (the LLM's endpoint, patience and prices, `llm_client`, never reach judge_name)
    other = dataclasses.replace(LLM, model="other")
    assert judge_name(STATIC, ANNOTATOR, other) == judge_name(STATIC, ANNOTATOR)
    assert judge_name(OPENAI, replace(ANNOTATOR, seed=7), LLM) == judge_name(OPENAI, None, LLM)


JUDGED_FILES = ("kaser/errors/judge.py", "kaser/errors/static_annotator.py", "kaser/errors/repairs.py",
                "kaser/errors/code_shape.py", "kaser/errors/compile_errors.py",
                "kaser/errors/generated_tests.py", "kaser/code/sandbox.py", "kaser/code/isolation.py",
                "kaser/code/java_harness.py", "kaser/code/java_compiler.py",
                "kaser/code/python_worker.py", "kaser/code/syntax.py", "kaser/taxonomy.py",
                "kaser/errors/llm_tasks.py", "kaser/errors/llm_prompts.py", "kaser/llm/__init__.py",
                "kaser/llm/client.py", "kaser/llm/answers.py")


def test_the_judge_sources_are_every_file_it_runs():
    from kaser.errors.judge import PACKAGE
    sources = {path.relative_to(PACKAGE).as_posix() for path in judge_sources()}
    assert set(JUDGED_FILES) <= sources, set(JUDGED_FILES) - sources
    assert "kaser/evaluation/scoring.py" not in sources     # what uses the judge is not the judge


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    import shutil
    from kaser.errors.judge import PACKAGE
    root = tmp_path_factory.mktemp("copy")
    shutil.copytree(PACKAGE / "kaser", root / "kaser", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _sources_of_copy():
    from kaser.errors.judge import PACKAGE
    return [path.relative_to(PACKAGE).as_posix() for path in judge_sources()]


@pytest.fixture(scope="module")
def name_of_copy(package_copy):
    return judge_name(STATIC, ANNOTATOR, root=package_copy)


@pytest.mark.parametrize("source", _sources_of_copy())
def test_a_change_to_any_judge_source_changes_the_judge_name(package_copy, name_of_copy, source):
    path = package_copy / source
    text = path.read_text()
    path.write_text(text + "\n# changed\n")
    try:
        assert judge_name(STATIC, ANNOTATOR, root=package_copy) != name_of_copy, source
    finally:
        path.write_text(text)


# ---------------------------------------------------------------- the openai backend
# (make_client and server: the fake OpenAI-compatible server of conftest.py)

def test_llm_judge_keeps_listed_candidates_and_caches(tmp_path, make_client, server):
    problems, _, _ = dataset(tmp_path)
    judge = LLMJudge(problems, make_client())
    # the fake model answers with the first candidate and one label that is not on the list
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    assert judge.judge_many(PROBLEM.problem_id, [WRONG_OPERATOR, SYNTAX], CANDIDATES[1:]) == \
        [{"Missing colon"}, {"Missing colon"}]
    asked = len(server.requests)
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, CANDIDATES) == {"Incorrect logical operator"}
    assert len(server.requests) == asked == 3          # the repeat came from the SQLite cache
    assert judge(PROBLEM.problem_id, WRONG_OPERATOR, []) == set()   # nothing to choose from: no call
    assert len(server.requests) == 3


def test_verdicts_say_whether_a_code_is_clean_and_valid(tmp_path):
    judge = StaticJudge(*dataset(tmp_path), ANNOTATOR)
    prose = "It returns True when we can go hiking."
    correct, wrong, syntax, text = judge.verdicts(PROBLEM.problem_id, [CORRECT, WRONG_OPERATOR, SYNTAX, prose],
                                                  ["Off-by-one error"])
    assert (correct.clean, correct.valid, correct.errors) == (True, True, frozenset())
    # the wrong operator is not a candidate here: no candidate error, yet not clean
    assert (wrong.clean, wrong.valid, wrong.errors) == (False, True, frozenset())
    assert wrong.diagnosed == {"Incorrect logical operator"}
    assert (syntax.clean, syntax.valid) == (False, False)
    assert (text.clean, text.valid, text.errors) == (False, False, frozenset())


def test_the_evaluation_may_use_another_backend_than_the_reward(tmp_path):
    # params judge.backend is the reward's; the evaluate and sweep stages open evaluate.judge
    import sys
    stages = str(Path(__file__).resolve().parents[1] / "stages")
    if stages not in sys.path:
        sys.path.insert(0, stages)
    from _judge import judge_settings
    from _runner import Stage

    params = tmp_path / "params.yaml"
    import yaml
    from stage_runs import full_params
    params.write_text(yaml.safe_dump(full_params({"judge": {"backend": "openai"},
                                                  "annotate": {"backend": "static"}})))
    stage = Stage("evaluate", "ds", ("judge", "annotate", "llm"), params_file=params)
    assert judge_settings(stage)[0].backend == "openai"
    assert judge_settings(stage, "static")[0].backend == "static"
    dataset(tmp_path)
    with pytest.raises(Exception, match="unknown judge backend 'magic'"):
        with reward_judge(tmp_path, JudgeParams("magic"), ANNOTATOR):
            pass


def test_llm_judge_verdicts_are_grounded_in_the_static_diagnosis(tmp_path, make_client, server):
    problems, submissions, error_labels = dataset(tmp_path)
    judge = LLMJudge(problems, make_client(), grounding=StaticJudge(problems, submissions, error_labels, ANNOTATOR))
    prose = "It returns True when we can go hiking."
    # the fake model names the first candidate for any code; the static diagnosis says prose
    # neither parses nor is correct
    [verdict] = judge.verdicts(PROBLEM.problem_id, [prose], CANDIDATES)
    assert verdict.errors == {"Incorrect logical operator"}
    assert (verdict.clean, verdict.valid) == (False, False)
    [nothing] = judge.verdicts(PROBLEM.problem_id, [CORRECT], [])   # no candidates: no LLM call
    assert (nothing.errors, nothing.clean, nothing.valid) == (frozenset(), True, True)


def test_the_sweep_says_does_not_parse_only_for_codes_that_do_not_parse(tmp_path):
    # the knowledge sweep's words for a verdict without candidate errors (kaser.simulate.errors_text)
    from kaser.simulate import errors_text
    judge = StaticJudge(*dataset(tmp_path), ANNOTATOR)
    renamed, broken = judge.verdicts(PROBLEM.problem_id, [RENAMED, SYNTAX], ["Off-by-one error"])
    assert errors_text(renamed) == "no candidate error, not correct: Wrong function name"
    assert errors_text(broken) == "no candidate error, not correct: Missing colon (does not parse/compile)"
