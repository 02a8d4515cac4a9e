"""`kaser simulate` and the knowledge sweep: clear errors on bad input, K samples per profile,
a population's error shares, Table 4 layout. Tiny random model; its text is never asserted on."""

import json

import polars as pl
import pytest
import yaml

from kaser import InputError, config
from kaser.cli import main
from kaser.predictor.sampling import GenerateParams
from kaser.simulate import (error_distribution, knowledge_sweep, parse_mastery, population_profiles,
                            sweep_levels, sweep_markdown)
from simulate_cli import PARAMS, STATEMENT, run

@pytest.mark.parametrize("argv, message", [
    # a KC the problem was not given
    (["--kcs", "loops", "--mastery", "loops=0.2,arrays=0.5"], "--mastery: 'arrays=0.5': KC 'arrays' is not in --kcs"),
    # a level outside [0, 1]
    (["--kcs", "loops", "--mastery", "loops=1.5"], "--mastery: 'loops=1.5': level 1.5 is outside [0, 1]"),
    # not kc=level
    (["--kcs", "loops", "--mastery", "loops:0.5"], "--mastery: 'loops:0.5' is not kc=level"),
    (["--kcs", "loops", "--mastery", "loops=high"], "--mastery: 'loops=high' is not kc=level"),
    # a KC of --kcs without a level
    (["--kcs", "loops,lists", "--mastery", "loops=0.5"], "--mastery: no level for KC(s) lists"),
    # a population over KCs the dataset never saw: the known ones are listed
    (["--kcs", "recursion", "--population", "3"], "unknown to the dataset; known: arithmetic, lists, loops"),
])
def test_bad_input_exits_2_with_one_line(simulate_workspace, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        run(*argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (simulate_workspace / "sim").exists()


@pytest.mark.parametrize("missing, message", [
    ("models/toy/grpo/student-0", "run `dvc repro grpo@toy` first"),
    ("models/base", "run `dvc repro base_model` first"),
])
def test_missing_model_says_which_stage_to_run(simulate_workspace, capsys, missing, message):
    (simulate_workspace / missing).unlink()
    with pytest.raises(SystemExit) as exit_:
        run("--kcs", "loops", "--mastery", "loops=0.5")
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_the_adapter_is_the_first_runs(simulate_workspace, capsys):
    # runs: problem-2, problem-0, student-2, student-0; only the first one's adapter counts
    (simulate_workspace / "params.yaml").write_text(yaml.safe_dump(
        PARAMS | {"model": PARAMS["model"] | {"folds": [2, 0], "splits": ["problem", "student"]}}))
    args = ["simulate", "--problem", STATEMENT, "--language", "python", "--dataset", "toy",
            "--kcs", "loops", "--mastery", "loops=0.5", "-k", "1", "--out", "sim"]
    with pytest.raises(SystemExit):
        main(args)
    assert "models/toy/grpo/problem-2: no trained KASER adapter" in capsys.readouterr().err
    from kaser.simulate import check_model_folders
    with pytest.raises(InputError, match="models/toy/grpo/problem-2: no trained KASER adapter"):
        check_model_folders("models/base", "models/toy/grpo/problem-2", "toy")
    with pytest.raises(InputError, match="models/nowhere: base model folder not found"):
        check_model_folders("models/nowhere", "models/toy/grpo/student-0", "toy")
    assert check_model_folders("models/base", "models/toy/grpo/student-0", "toy")[1].as_posix() == \
        "models/toy/grpo/student-0"


def test_one_profile_writes_k_samples_with_errors(simulate_workspace):
    statement_file = simulate_workspace / "statement.txt"
    statement_file.write_text(STATEMENT + "\n")
    main(["simulate", "--problem", str(statement_file), "--language", "python", "--dataset", "toy",
          "--kcs", "loops, lists", "--mastery", "lists=0.9,loops=0.2", "-k", "3", "--out", "sim"])
    simulation = json.loads((simulate_workspace / "sim" / "simulation.json").read_text())
    assert simulation["problem"]["statement"] == STATEMENT          # read from the file
    [result] = simulation["profiles"]
    assert result["profile"] == {"loops": 0.2, "lists": 0.9}
    assert len(result["samples"]) == 3
    for sample in result["samples"]:
        assert isinstance(sample["code"], str)
        assert all(e["category"] == "Syntax" for e in sample["errors"])   # no tests: syntax only
    assert "error_distribution" not in simulation
    markdown = (simulate_workspace / "sim" / "simulation.md").read_text()
    assert "| loops | 0.20 |" in markdown and markdown.count("```python") == 3
    assert "compiler / parser only" in markdown


def test_without_k_each_profile_gets_the_params_generate_k(simulate_workspace):
    run("--kcs", "loops", "--mastery", "loops=0.5")   # the toy params.yaml: generate.k 2
    simulation = json.loads((simulate_workspace / "sim" / "simulation.json").read_text())
    assert [len(r["samples"]) for r in simulation["profiles"]] == [PARAMS["generate"]["k"]] == [2]


def test_population_shares_are_in_0_1(simulate_workspace):
    run("--kcs", "loops,arithmetic", "--population", "4", "-k", "2")
    simulation = json.loads((simulate_workspace / "sim" / "simulation.json").read_text())
    assert len(simulation["profiles"]) == 4
    assert all(len(r["samples"]) == 2 for r in simulation["profiles"])
    # projected dataset rows (loops 0.3 / 0.7 / 0.95, arithmetic 0.1 / 0.5 / 0.9) in prompt
    # levels: each row's percentile among the three on its KC
    known = [{"loops": 0.17, "arithmetic": 0.17}, {"loops": 0.5, "arithmetic": 0.5},
             {"loops": 0.83, "arithmetic": 0.83}]
    assert all(r["profile"] in known for r in simulation["profiles"])
    assert all(0 < share <= 1 for share in simulation["error_distribution"].values())
    samples = [s for r in simulation["profiles"] for s in r["samples"]]
    for label, share in simulation["error_distribution"].items():   # share of the 8 codes
        assert share == sum(any(e["label"] == label for e in s["errors"]) for s in samples) / 8
    assert "Forecast error distribution (4 students)" in (simulate_workspace / "sim" / "simulation.md").read_text()


def test_population_draw_is_seeded_and_projected():
    rows = pl.DataFrame({"mastery": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]})
    first = population_profiles(rows, ["a", "b"], ["b", "a"], 5, seed=1)
    assert first == population_profiles(rows, ["a", "b"], ["b", "a"], 5, seed=1)
    assert {(p["a"], p["b"]) for p in first} <= {(0.1, 0.2), (0.3, 0.4), (0.5, 0.6)}
    with pytest.raises(InputError, match="--population must be at least 1"):
        population_profiles(rows, ["a", "b"], ["a"], 0, seed=1)


def test_error_distribution_counts_each_label_once_per_code():
    results = [{"samples": [{"errors": [{"label": "X"}, {"label": "X"}, {"label": "Y"}]},
                            {"errors": [{"label": "Y"}]}]},
               {"samples": [{"errors": []}, {"errors": [{"label": "Y"}]}]}]
    assert error_distribution(results) == {"Y": 0.75, "X": 0.25}


def test_mastery_given_twice_is_refused():
    with pytest.raises(InputError, match="KC 'a' given twice"):
        parse_mastery("a=0.1,a=0.2", ["a"])


def test_sweep_markdown_lays_out_table_4():
    problem = {"problem_id": "p1", "statement": "Sum.", "kcs": ["loops", "lists", "arithmetic"]}
    levels = sweep_levels(problem["kcs"])
    codes = {name: ["def f(xs):\n    return xs | 1", "x <"] for name in levels}
    errors = {name: [{"Wrong return value"}, set()] for name in levels}
    lines = sweep_markdown(problem, levels, codes, errors).splitlines()
    assert "| KC | low mastery | mixed mastery | high mastery |" in lines
    assert "| lists | 0.15 | 0.85 | 0.90 |" in lines
    code_row = next(line for line in lines if line.startswith("| predicted code 1 |"))
    assert code_row.count(" | ") == 3                           # the code's own | is escaped
    assert "return xs &#124; 1" in code_row and "<br>" in code_row
    assert "| errors 2 | none | none | none |" in lines


def sweep_dataset(data, signature=None):
    """One Python problem with tests, a correct submission and the cluster outputs, in `data`."""
    tests = [{"input": "[[1, 2]]", "expected": "3"}, {"input": "[[]]", "expected": "0"}]
    pl.DataFrame({"problem_id": ["p1"], "language": ["python"], "statement": [STATEMENT],
                  "kcs": [["loops", "lists"]], "tests": [tests], "reference": ["def f(xs):\n    return sum(xs)"],
                  "signature": [signature]},
                 schema_overrides={"tests": pl.List(pl.Struct({"input": pl.String, "expected": pl.String})),
                                   "signature": pl.String}
                 ).write_parquet(data / "problems.parquet")
    pl.DataFrame({"student_id": ["s1"], "problem_id": ["p1"], "step": [0], "code": ["def f(xs):\n    return sum(xs)"],
                  "score": [1.0], "correct": [True]}).write_parquet(data / "submissions.parquet")
    pl.DataFrame({"category": ["Syntax"], "label": ["Syntax error"], "count": [1], "cluster": [0],
                  "cluster_label": ["Syntax error"]}).write_parquet(data / "error_labels.parquet")
    (data / "problem_errors.json").write_text(json.dumps({"p1": ["Syntax error", "Wrong return value"]}))


def capture_prompts(monkeypatch, code="def f(xs):\n    return sum(xs)"):
    """Replace the sampler by one that records each prompt and answers `code` K times."""
    seen = []

    def sample(model_path, adapter, prompts, params, dtype="auto"):
        seen.extend(prompts)
        return [[code] * params.k for _ in prompts]
    monkeypatch.setattr("kaser.predictor.sampling.sample_completions", sample)
    return seen


def test_simulate_prompts_show_the_signature_given_or_the_references(simulate_workspace, monkeypatch):
    prompts = capture_prompts(monkeypatch)
    run("--kcs", "loops", "--mastery", "loops=0.5", "-k", "1", "--signature", "def total( xs ):")
    assert prompts and all("Function signature: def total( xs ):\n\nStudent information" in p
                           for p in prompts)
    simulation = json.loads((simulate_workspace / "sim" / "simulation.json").read_text())
    assert simulation["problem"]["signature"] == "def total( xs ):"
    assert "Starter signature (shown to the model): `def total( xs ):`" in \
        (simulate_workspace / "sim" / "simulation.md").read_text()
    prompts.clear()
    (simulate_workspace / "solution.py").write_text("def helper(x):\n    return x\ndef f(xs):\n    return helper(sum(xs))\n")
    run("--kcs", "loops", "--mastery", "loops=0.5", "-k", "1", "--reference", "solution.py")
    assert prompts and all("Function signature: def f(xs):" in p for p in prompts)
    prompts.clear()
    run("--kcs", "loops", "--mastery", "loops=0.5", "-k", "1")      # nothing known: none shown
    assert prompts and not any("Function signature" in p for p in prompts)


def test_a_signature_that_declares_no_function_is_refused(simulate_workspace, capsys):
    with pytest.raises(SystemExit) as exit_:
        run("--kcs", "loops", "--mastery", "loops=0.5", "--signature", "total")
    assert exit_.value.code == 2 and "--signature 'total' declares no python function" in capsys.readouterr().err


def test_knowledge_sweep_prompts_show_the_problems_signature(simulate_workspace, monkeypatch):
    data = simulate_workspace / "data" / "toy"
    sweep_dataset(data, signature="def f(xs):")
    prompts = capture_prompts(monkeypatch)
    from kaser.errors.judge import JudgeParams, reward_judge
    from kaser.errors.static_annotator import StaticParams
    with reward_judge(data, JudgeParams("static"), config.settings(StaticParams, "annotate", part=True)) as judge:
        markdown = knowledge_sweep(data, "p1", simulate_workspace / "models" / "base",
                                   simulate_workspace / "models/toy/grpo/student-0",
                                   config.settings(GenerateParams, "generate", k=1, max_new_tokens=8), judge, "float32")
    assert len(prompts) == 3 and all("Function signature: def f(xs):\n\n" in p for p in prompts)
    assert "none (correct)" in markdown     # the answered code is the reference: judged correct


def test_knowledge_sweep_judges_dataset_problem_with_its_tests(simulate_workspace):
    data = simulate_workspace / "data" / "toy"
    sweep_dataset(data)
    from kaser.errors.judge import JudgeParams, reward_judge
    from kaser.errors.static_annotator import StaticParams
    with reward_judge(data, JudgeParams("static"), config.settings(StaticParams, "annotate", part=True)) as judge:
        markdown = knowledge_sweep(data, "p1", simulate_workspace / "models" / "base",
                                   simulate_workspace / "models/toy/grpo/student-0",
                                   config.settings(GenerateParams, "generate", k=2, max_new_tokens=8), judge, "float32")
        assert "| loops | 0.15 | 0.20 | 0.90 |" in markdown
        assert markdown.count("| predicted code") == 2 and markdown.count("| errors") == 2
        with pytest.raises(InputError, match="unknown problem 'p9'"):
            knowledge_sweep(data, "p9", "models/base", "models/toy/grpo/student-0", config.settings(GenerateParams, "generate", k=1),
                            judge, "float32")
