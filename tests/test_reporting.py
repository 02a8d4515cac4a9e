"""The report: tables like the paper's (ours and the paper's printed numbers), the honest
KASER-vs-Student-SFT sentence, reward CSV, figures, and the README of every dataset."""

import copy

import numpy as np
import pytest
from marker_dataset import (CANDIDATES, KASER, PARAMS, hash_embed, marker_judge, predictions,
                            sft_rows, truth)

from kaser.evaluation.scoring import evaluate_dataset
from kaser.evaluation.figures import reward_rows, rewards_csv
from kaser.evaluation.report import (DatasetInputs, comparison_sentence, dataset_report, metric_table,
                             paper_dataset, readme, significant_over_baselines,
                             study_section, study_table, table1_columns, table2)


@pytest.fixture(scope="module")
def evaluation():
    _, result, _ = evaluate_dataset(
        truth(), {"kaser": predictions(KASER), "student_sft": predictions(sft_rows(), "student_sft")},
        CANDIDATES, marker_judge, "markers", PARAMS, hash_embed)
    return result


def row_of(table: str, model: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith(f"| {model} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_table1_rows_and_bold(evaluation):
    table = metric_table(evaluation, table1_columns(evaluation))
    header = table.splitlines()[0]
    assert "CodeBLEU@1 ↑" in header and "IoU@2 ↑" in header and "IoU@2 all pairs ↑" in header
    assert "KC alignment ↑" in header                 # synthetic truth: knowledge alignment shown
    kaser, sft = row_of(table, "KASER"), row_of(table, "Student SFT")
    # Student SFT writes only empty code: CodeBLEU 0 in both folds; KASER is better and bold
    assert sft[1] == "0.000 ± 0.000"
    assert kaser[1].startswith("**")
    # rows come in the paper's order: baselines first, KASER last
    assert table.index("| Student SFT |") < table.index("| KASER |")


@pytest.mark.parametrize("tests, expected", [
    # better than the only baseline, significant: star
    ({"student_sft": {"m": {"significant": True}}}, True),
    # not significant against one of two baselines: no star
    ({"student_sft": {"m": {"significant": True}}, "icl": {"m": {"significant": False}}}, False),
    # only an ablation is significant: ablations are not baselines, no baseline -> no star
    ({"kaser_no_div": {"m": {"significant": True}}}, False),
])
def test_star_needs_every_baseline(tests, expected):
    evaluation = {"methods": {name: {} for name in ["kaser", *tests]}, "t_tests": tests}
    assert significant_over_baselines(evaluation, "m") is expected


def test_star_is_rendered_on_kaser_only(evaluation):
    starred = copy.deepcopy(evaluation)
    starred["t_tests"]["student_sft"]["codebleu@1"]["significant"] = True
    table = metric_table(starred, table1_columns(starred))
    assert "\\*" in row_of(table, "KASER")[1] and "\\*" not in row_of(table, "KASER")[3]
    assert "\\*" not in "".join(row_of(table, "Student SFT"))


def test_table2_has_each_category_for_both_models(evaluation):
    table = table2(evaluation)
    for model in ("Student SFT", "KASER"):
        for category in ("Syntax", "Runtime", "Logical"):
            assert f"| {model} | {category} |" in table
    # KASER: Logical counted only in fold 0 (B hit, D invented): P 1/2, R 1, F1 2/3, std 0
    assert "| KASER | Logical | 0.500 ± 0.000 | 1.000 ± 0.000 | 0.667 ± 0.000 |" in table


def test_section_labels_the_papers_numbers(evaluation):
    report = dataset_report(DatasetInputs("synthetic-java", paper_dataset("synthetic", "java"), evaluation,
                                          "toy"), hash_embed)
    section = report.section
    assert "_paper (CodeWorkout (Java), Qwen2.5-Coder-7B), as printed, for reference:_" in section
    assert "| KASER | **0.524\\*** ± 0.013 | **0.599\\*** ± 0.022 |" in section   # paper Table 1
    assert "| Student SFT | Logical | 1.000 | 0.162 | 0.279 |" in section          # paper Table 2
    assert "| KASER | **0.088** ± 0.003 |" in section                             # paper Table 3
    assert "| ICL (32B) |" in section
    # inputs that are missing are named with the stage that writes them
    assert "knowledge_sweep.md is written by the knowledge sweep" in section
    assert "grpo_log.json is written by the grpo stage" in section
    assert "reports/synthetic-java/knowledge.json is written by the knowledge stage" in section


def test_python_dataset_is_shown_beside_falconcode():
    assert paper_dataset("synthetic", "python") == "FalconCode (Python)"
    assert paper_dataset("falconcode", "python") == "FalconCode (Python)"


def test_comparison_sentence_is_honest(evaluation):
    text = comparison_sentence("toy", evaluation)
    kaser = evaluation["methods"]["kaser"]["metrics"]
    sft = evaluation["methods"]["student_sft"]["metrics"]
    iou = "above" if kaser["iou_incorrect@2"]["mean"] > sft["iou_incorrect@2"]["mean"] else "below"
    assert f"KASER's IoU@2 ({kaser['iou_incorrect@2']['mean']:.3f}) is {iou} Student SFT's" in text
    assert "per-problem error-coverage IoU" in text and "paired t-test over" in text
    # a per-problem metric is compared on the problems both methods have (the t-test's means)
    coverage = evaluation["t_tests"]["student_sft"]["coverage_iou"]
    assert (f"error-coverage IoU ({coverage['reference_mean']:.3f}) is above Student SFT's "
            f"({coverage['other_mean']:.3f} on the {coverage['n_problems']} problems both have;") in text
    worse = copy.deepcopy(evaluation)
    worse["t_tests"]["student_sft"]["coverage_iou"]["reference_mean"] = -1.0
    assert "error-coverage IoU (-1.000) is below" in comparison_sentence("toy", worse)
    # without a t-test, each method's own mean
    del worse["t_tests"]["student_sft"]["coverage_iou"]
    worse["methods"]["kaser"]["metrics"]["coverage_iou"]["mean"] = -2.0
    assert "error-coverage IoU (-2.000) is below" in comparison_sentence("toy", worse)


LOG = [
    {"loss": 0.1, "reward": 1.2, "rewards/similarity_reward/mean": 0.5,
     "rewards/error_reward/mean": 0.4, "rewards/diversity_reward/mean": 0.3, "step": 1},
    {"loss": 0.0, "reward": 1.5, "rewards/similarity_reward/mean": 0.6,
     "rewards/error_reward/mean": 0.5, "rewards/diversity_reward/mean": 0.4, "step": 2},
    {"train_runtime": 12.0, "train_loss": 0.05, "step": 2},      # the run summary: no rewards
    {"group_rewards": [{"step": s, "group_id": g, "problem_id": "p", "reward": r}
                       for s, g, r in ((1, 0, 1.0), (1, 1, 1.4), (2, 0, 1.3), (2, 1, 1.7))]},
]


def test_rewards_csv_for_dvc_plots():
    text = rewards_csv(reward_rows(LOG))
    assert text.splitlines() == ["step,similarity_reward,error_reward,diversity_reward,reward",
                                 "1,0.5,0.4,0.3,1.2", "2,0.6,0.5,0.4,1.5"]
    assert rewards_csv([]) == "step,reward\n"


def test_report_with_every_input(evaluation):
    rng = np.random.default_rng(0)
    codes = {"kaser": [f"int a{i} = {i};" for i in range(8)],
             "student_sft": ["int a = 0;"] * 8, "Student code (real)": [f"x{i}" for i in range(8)]}
    inputs = DatasetInputs(
        "synthetic-java", "CodeWorkout (Java)", evaluation, "toy", tsne_codes=codes,
        annotation_quality={s: {"precision": 0.9, "recall": 0.8, "f1": 0.85, "tp": 9, "fp": 1, "fn": 2}
                            for s in ("overall", "Syntax", "Runtime", "Logical")},
        knowledge={"models": {"lstm": {"auc": 0.71, "auc_std": 0.01, "accuracy": 0.7,
                                       "accuracy_std": 0.02, "log_loss": 0.55, "log_loss_std": 0.01}},
                   "spearman": {"attempted_kcs": 0.5, "all_kcs": 0.4, "n_attempted_kcs": 10, "n_all_kcs": 30}},
        grpo_log={"student-0": LOG, "problem-0": LOG[:1]}, sweep="# Knowledge sweep\n\n| profile | code |\n| --- | --- |\n| low | x |",
        mastery_png=True)
    report = dataset_report(inputs, lambda texts: rng.normal(size=(len(texts), 5)), tsne_max_points=6)
    section = report.section
    assert "| overall | 0.900 | 0.800 | 0.850 | 9 | 1 | 2 |" in section
    assert "| lstm | 0.710 ± 0.010 |" in section and "Spearman" in section
    assert "#### Knowledge sweep" in section and "| low | x |" in section    # nested one level down
    assert "![t-SNE](synthetic-java/tsne.png)" in section
    assert "![mastery](synthetic-java/mastery.png)" in section
    assert "Not available" not in section
    assert set(report.figures) == {"tsne.png", "reward_curves.png"}
    # the reward curves are the first run's (both of its steps), named in the title and the text
    assert report.rewards_csv.splitlines()[1:] == ["1,0.5,0.4,0.3,1.2", "2,0.6,0.5,0.4,1.5"]
    assert report.figures["reward_curves.png"].axes[0].get_title().endswith("(run student-0)")
    assert "Training run student-0 (the first of params.yaml model.splits x model.folds)" in section
    # with too few batches for a plain slope, the within-pair one still shows: each pair rose 0.3
    assert "Mean reward per generated batch" not in section
    assert "Within a pair (vs its own visits): +0.3000 per batch" in section
    assert "[synthetic-java/grpo_groups.csv](synthetic-java/grpo_groups.csv)" in section
    assert report.groups_csv.splitlines() == ["step,group_id,problem_id,reward", "1,0,p,1.0", "1,1,p,1.4",
                                              "2,0,p,1.3", "2,1,p,1.7"]
    legend = [t.get_text() for t in report.figures["tsne.png"].axes[0].get_legend().get_texts()]
    assert legend == ["Student code (real) (6 codes)", "Student SFT (6 codes)", "KASER (6 codes)"]


def test_readme_lists_every_dataset():
    text = readme({"synthetic-java": "## synthetic-java\n\nTables.\n", "synthetic-python": None},
                  "run `dvc repro report@{dataset}`")
    assert text.startswith("# KASER results")
    assert "## synthetic-java\n\nTables." in text
    assert "## synthetic-python\n\n_Not built yet: run `dvc repro report@synthetic-python`._" in text
    assert "paper" in text and "not comparable" in text
    assert "CPU study" not in text


def test_readme_ends_with_the_committed_study():
    study = "## CPU study\n\nn = 300 pairs.\n"
    text = readme({"synthetic-java": "## synthetic-java\n\nTables.\n"}, "run it", study)
    assert text.index("## synthetic-java") < text.index("## CPU study")
    assert text.endswith(study)


def _report_stage():
    """stages/report.py as a module (stages/ is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "stages" / "report.py"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))   # its _runner, as `python stages/report.py` finds it
    spec = importlib.util.spec_from_file_location("stage_report", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_tsne_codes_of_the_asked_split_else_the_one_that_ran(tmp_path):
    import polars as pl
    (tmp_path / "predictions").mkdir()
    pl.DataFrame({"student_id": ["s1", "s2"], "problem_id": ["p1", "p1"], "code": ["real 1", "real 2"]}
                 ).write_parquet(tmp_path / "submissions.parquet")
    student_only = [row for row in KASER if row[0] == "student" and row[2] in ("s1", "s2") and row[3] == "p1"]
    for method in ("kaser", "student_sft"):
        predictions(student_only, method).write_parquet(tmp_path / "predictions" / f"{method}.parquet")
    tsne_codes = _report_stage()._tsne_codes
    # model.splits [student]: no problem-split rows, so the student split is drawn, not nothing
    codes = tsne_codes(tmp_path, "problem")
    assert codes["kaser"] == ["", "def add(a, b):\n    return a + b", "x = 1  # DIV", "y = 2  # COLON # OBO"]
    assert codes["Student code (real)"] == ["real 1", "real 2"]
    # both splits present: only the asked one
    both = [row for row in KASER if row[3] == "p1" and row[2] in ("s1", "s2")]
    predictions(both).write_parquet(tmp_path / "predictions" / "kaser.parquet")
    assert tsne_codes(tmp_path, "problem")["kaser"] == ["def add(a, b):\n    return a + b", "",
                                                         "x = 1  # COLON", "y = 2"]


def test_study_table_gives_n_interval_corrected_p_and_mde():
    # hand-made evaluation.json: one metric tested, CodeBLEU@5; KASER vs Student SFT
    evaluation = {
        "k_values": [1, 5], "correction": {"family_size": 3},
        "methods": {
            "kaser": {"metrics": {"codebleu@5": {"mean": 0.4, "ci95": {"n": 300, "mean": 0.4, "low": 0.35, "high": 0.45}}}},
            "student_sft": {"metrics": {"codebleu@5": {"mean": 0.3, "ci95": {"n": 300, "mean": 0.3, "low": 0.26, "high": 0.34}}}}},
        "t_tests": {"student_sft": {"codebleu@5": {
            "over": "pairs", "n": 300, "mean_difference": 0.1, "p_value": 0.004, "p_holm": 0.012,
            "significant": True, "mde": 0.031}}}}
    table = study_table(evaluation)
    lines = table.splitlines()
    assert len(lines) == 4    # header, rule, Student SFT, KASER (baselines first)
    sft = [c.strip() for c in lines[2].strip("|").split("|")]
    assert sft == ["CodeBLEU@5", "Student SFT", "300", "0.300 [0.260, 0.340]", "–", "+0.100 (pairs, n = 300)",
                   "–", "–", "0.004", "0.012\\*", "0.031"]
    kaser = [c.strip() for c in lines[3].strip("|").split("|")]
    assert kaser[:4] == ["CodeBLEU@5", "KASER", "300", "0.400 [0.350, 0.450]"] and kaser[4:] == ["–"] * 7
    # with the problem bootstrap (kaser.evaluation.summary departure 6) beside the pair-level CIs
    evaluation["methods"]["student_sft"]["metrics"]["codebleu@5"]["ci95"]["problem_bootstrap"] = {
        "n_problems": 6, "low": 0.2, "high": 0.41}
    evaluation["t_tests"]["student_sft"]["codebleu@5"] |= {"difference_ci95": (0.05, 0.15),
                                                           "difference_problem_ci95": (-0.02, 0.2)}
    sft = [c.strip() for c in study_table(evaluation).splitlines()[2].strip("|").split("|")]
    assert sft[4] == "[0.200, 0.410] (6 problems)" and sft[6:8] == ["[+0.050, +0.150]", "[-0.020, +0.200]"]
    assert "all 3 tests" in study_section(evaluation)


def test_study_section_is_in_every_dataset_section(evaluation):
    section = dataset_report(DatasetInputs("toy", "FalconCode (Python)", evaluation, "hash"),
                             hash_embed).section
    assert "### CPU study" in section
    # the fixture's K are 1 and 2: CodeBLEU@2 for both methods, with intervals over 6 pairs
    table = study_table(evaluation)
    assert row_of(table.replace("| CodeBLEU@2 | ", "| "), "KASER")[1] == "6"
    assert "p (Holm)" in table and "MDE" in table
