"""The report: tables laid out like the paper's Tables 1-3, with its printed numbers beside ours,
and the figures (kaser.evaluation.figures: t-SNE of predicted code, GRPO reward curves) for every dataset.

    python stages/report.py synthetic-python   # reports/synthetic-python/{tsne,reward_curves}.png,
                                             # grpo_rewards.csv, reports/sections/synthetic-python.md
    python stages/report.py                  # reports/README.md from every dataset's section

Our numbers come from reports/<ds>/evaluation.json (the evaluate stage); the paper's (arXiv
2601.06633, Qwen2.5-Coder-7B-Instruct on CodeWorkout and FalconCode) are in paper_tables.yaml as printed,
for reference only: our default runs a small model on synthetic data, so only the direction of
a difference (KASER vs Student SFT) is comparable, never the size of a number.

Bold marks the best mean of a column; * marks KASER where a paired t-test (evaluation.json says
over what) finds it better than every baseline present at Holm-corrected p < 0.05; ablations are
not baselines. The "CPU study" part of each section (`study_section`) gives, for CodeBLEU@K,
IoU@K (largest K) and coverage IoU, n, means with 95% CIs, raw and Holm-corrected p of KASER vs
each method and the minimal detectable effect at that n (docs/experiments-and-studies.md, "The CPU study", runs it at size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from kaser.evaluation.scoring import ABLATIONS, BASELINES, METHODS, REFERENCE_METHOD
from kaser.evaluation.summary import PROBLEM_METRICS, slope_interval, within_slope_interval
from kaser.methods import label
from kaser.evaluation.figures import (draw_codes, first_run_log, group_rows, groups_csv, message_figure,
                                     reward_figure, reward_rows, rewards_csv, tsne_figure, tsne_points)
from kaser.taxonomy import CATEGORIES

PAPER_MODEL = "Qwen2.5-Coder-7B"
TSNE_GROUPS = {name: label(name) for name in ("student_sft", REFERENCE_METHOD)}
REAL_GROUP = "Student code (real)"
# where each optional input of a dataset's section comes from, said when it is missing
PRODUCERS = {
    "annotation": "reports/{dataset}/annotation_quality.json is written by the annotate stage",
    "knowledge": "reports/{dataset}/knowledge.json is written by the knowledge stage "
                 "(python stages/knowledge.py {dataset})",
    "mastery_png": "reports/{dataset}/mastery.png is written by the knowledge stage",
    "tsne_png": "the t-SNE plot needs predictions of KASER and Student SFT (generate stage)",
    "rewards_png": "reports/{dataset}/grpo_log.json is written by the grpo stage "
                   "(python stages/grpo.py {dataset})",
    "sweep": "reports/{dataset}/knowledge_sweep.md is written by the knowledge sweep of the "
             "generate stage (one problem, three mastery profiles); rerun the report after it",
}
# (column title, metric in evaluation.json, decimals) of Table 3
TABLE3_COLUMNS = (("Cos Dis ↑", "cosine_distance", 3), ("CodeBLEU^∁_max ↑", "codebleu_complement_max", 3),
                  ("IoU ↑", "coverage_iou", 3), ("χ² Dist ↓", "chi2_distance", 2))
# beside Table 3 (ours, not in the paper): share of predicted codes that parse (Python) / compile (Java)
TABLE3_VALIDITY = (("valid ↑", "problem_valid_share", 3),)

# --- the paper's printed numbers: (mean, std, "*" where printed significant), in paper_tables.yaml --
PAPER_TABLES_FILE = Path(__file__).with_name("paper_tables.yaml")


def _paper_tables(path: Path = PAPER_TABLES_FILE) -> tuple[dict, dict, dict]:
    """Tables 1, 2 and 3 as printed: dataset -> model -> cells (Table 2: model -> category -> cell),
    each cell a tuple."""
    tables = yaml.safe_load(path.read_text(encoding="utf-8"))
    by_dataset = {name: {dataset: {model: tuple(tuple(cell) for cell in row) for model, row in rows.items()}
                         for dataset, rows in tables[name].items()} for name in ("table1", "table3")}
    table2 = {model: {category: tuple(cell) for category, cell in cells.items()}
              for model, cells in tables["table2"].items()}
    return by_dataset["table1"], table2, by_dataset["table3"]


# Table 1 columns: CodeBLEU@1, CodeBLEU@5, IoU@1, IoU@5. Table 2 (CodeWorkout only, K = 1):
# category -> (precision, recall, F1). Table 3 columns: Cos Dis, CodeBLEU^∁_max, IoU, χ² Dist.
PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE3 = _paper_tables()
PAPER_DATASETS = {"java": "CodeWorkout (Java)", "python": "FalconCode (Python)",
                  "codeworkout": "CodeWorkout (Java)", "falconcode": "FalconCode (Python)"}


def paper_dataset(source: str, language: str | None) -> str:
    """The paper's dataset to show beside ours: the same release, or for synthetic data the one
    in the same language.

    >>> paper_dataset("synthetic", "python"), paper_dataset("codeworkout", None)
    ('FalconCode (Python)', 'CodeWorkout (Java)')
    """
    return PAPER_DATASETS.get(source) or PAPER_DATASETS.get(language or "java", "CodeWorkout (Java)")


# --- markdown ------------------------------------------------------------------------------------

def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """
    >>> print(markdown_table(["a", "b"], [["1", "2"]]))
    | a | b |
    | --- | --- |
    | 1 | 2 |
    """
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def cell(mean: float | None, std: float | None = None, decimals: int = 3, bold: bool = False,
         star: bool = False) -> str:
    """
    >>> cell(0.5234, 0.0131, bold=True, star=True)
    '**0.523\\\\*** ± 0.013'
    >>> cell(None)
    '–'
    """
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    text = f"{mean:.{decimals}f}" + ("\\*" if star else "")
    text = f"**{text}**" if bold else text
    return text if std is None else f"{text} ± {std:.{decimals}f}"


def _best(values: Sequence[float | None], higher: bool) -> float | None:
    present = [v for v in values if v is not None]
    return (max(present) if higher else min(present)) if present else None


def method_order(methods: Sequence[str]) -> list[str]:
    """Baselines first, then ablations, then KASER (the paper's row order)."""
    order = [*BASELINES, *ABLATIONS, REFERENCE_METHOD]
    return [m for m in order if m in methods] + [m for m in methods if m not in METHODS]


def significant_over_baselines(evaluation: Mapping, metric: str) -> bool:
    """KASER is better than every baseline present, each t-test at Holm-corrected p < significance."""
    tests = evaluation.get("t_tests", {})
    baselines = [m for m in BASELINES if m in evaluation["methods"]]
    return bool(baselines) and all(tests.get(m, {}).get(metric, {}).get("significant", False)
                                   for m in baselines)


def metric_table(evaluation: Mapping, columns: Sequence[tuple[str, str, int]],
                 source: str = "metrics") -> str:
    """Rows = methods, one column per (title, metric, decimals): mean ± std, best bold, KASER *.
    `source` is the methods' key the cells come from: "metrics" (each method over its own units)
    or "common_problem_metrics" (per-problem metrics over the problems every method with a value
    has; kaser.evaluation.summary departure 7), falling back to "metrics" where absent."""
    methods = method_order(list(evaluation["methods"]))
    rows, higher = [], evaluation.get("higher_is_better", {})

    def stat(method, metric):
        entry = evaluation["methods"][method]
        return (entry.get(source) or {}).get(metric) if source in entry else entry["metrics"].get(metric)

    best = {metric: _best([(stat(m, metric) or {}).get("mean") for m in methods],
                          higher.get(metric, True)) for _, metric, _ in columns}
    for method in methods:
        row = [label(method)]
        for _, metric, decimals in columns:
            value = stat(method, metric)
            if value is None:
                row.append("–")
                continue
            row.append(cell(value["mean"], value["std"], decimals,
                            bold=len(methods) > 1 and value["mean"] == best[metric],
                            star=method == REFERENCE_METHOD and significant_over_baselines(evaluation, metric)))
        rows.append(row)
    return markdown_table(["Model", *(title for title, _, _ in columns)], rows)


def table1_columns(evaluation: Mapping) -> list[tuple[str, str, int]]:
    ks = evaluation["k_values"]
    columns = [(f"CodeBLEU@{k} ↑", f"codebleu@{k}", 3) for k in ks]
    columns += [(f"IoU@{k} ↑", f"iou_incorrect@{k}", 3) for k in ks]
    columns += [(f"IoU@{k} all pairs ↑", f"iou_all@{k}", 3) for k in ks]
    columns += [(f"Recall@{k} (authors') ↑", f"error_recall@{k}", 3) for k in ks]
    if any("knowledge_alignment" in m["metrics"] for m in evaluation["methods"].values()):
        columns.append(("KC alignment ↑", "knowledge_alignment", 3))
    columns += [("valid ↑", "valid_share", 3), ("truncated ↓", "truncated_share", 3)]
    return columns


def table2(evaluation: Mapping) -> str:
    """Per-category precision / recall / F1 at K = 1, for Student SFT and KASER."""
    rows = []
    for method in ("student_sft", REFERENCE_METHOD):
        metrics = evaluation["methods"].get(method, {}).get("metrics")
        if metrics is None:
            continue
        for category in CATEGORIES:
            values = [metrics.get(f"{category.lower()}_{score}") for score in ("precision", "recall", "f1")]
            rows.append([label(method), category,
                         *(cell(v["mean"], v["std"]) if v else "–" for v in values)])
    if not rows:
        return "_Neither Student SFT nor KASER was evaluated._"
    return markdown_table(["Model", "Error type", "Precision", "Recall", "F1"], rows)


def paper_table(table: Mapping[str, Sequence[tuple]], titles: Sequence[str],
                higher: Sequence[bool], decimals: Sequence[int]) -> str:
    """One dataset's rows of the paper's Table 1 or 3 as printed: best bold, printed stars."""
    best = [_best([row[i][0] for row in table.values()], higher[i]) for i in range(len(titles))]
    rows = [[name, *(cell(v[0], v[1], decimals[i], bold=v[0] == best[i], star=len(v) > 2)
                     for i, v in enumerate(values))] for name, values in table.items()]
    return markdown_table(["Model", *titles], rows)


def paper_label(paper_name: str) -> str:
    return f"paper ({paper_name}, {PAPER_MODEL}), as printed, for reference"


def comparison_sentence(dataset: str, evaluation: Mapping) -> str:
    """Whether KASER's IoU@K (largest K) and per-problem coverage IoU are above Student SFT's:
    the means the paired t-test compared (for a per-problem metric over the problems both have a
    value for), else each method's own mean."""
    methods = evaluation["methods"]
    if REFERENCE_METHOD not in methods or "student_sft" not in methods:
        return (f"On {dataset}, KASER and Student SFT were not both evaluated, so the paper's claim "
                "(KASER above Student SFT) is not checked here.")
    k = max(evaluation["k_values"])
    parts = []
    for metric, name in ((f"iou_incorrect@{k}", f"IoU@{k}"), ("coverage_iou", "per-problem error-coverage IoU")):
        mine = methods[REFERENCE_METHOD]["metrics"].get(metric)
        theirs = methods["student_sft"]["metrics"].get(metric)
        if mine is None or theirs is None:
            parts.append(f"{name} could not be compared (no values)")
            continue
        test = evaluation.get("t_tests", {}).get("student_sft", {}).get(metric)
        mine_mean, theirs_mean, where = mine["mean"], theirs["mean"], ""
        if test is not None and test.get("reference_mean") is not None:
            mine_mean, theirs_mean = test["reference_mean"], test["other_mean"]
            if metric in PROBLEM_METRICS and test.get("n_problems") is not None:
                where = f" on the {test['n_problems']} problems both have"
        verdict = ("above" if mine_mean > theirs_mean
                   else "equal to" if mine_mean == theirs_mean else "below")
        if test is None:
            p = "no t-test"
        elif test.get("p_value") is None:
            p = f"no t-test: no differences over {test['over']} (n = {test['n']})"
        else:
            p = (f"paired t-test over {test['over']}, n = {test['n']}, p = {test['p_value']:.3g}"
                 + (f", Holm-corrected {test['p_holm']:.3g}" if test.get("p_holm") is not None else ""))
        parts.append(f"KASER's {name} ({mine_mean:.3f}) is {verdict} Student SFT's "
                     f"({theirs_mean:.3f}{where}; {p})")
    return f"On {dataset}: " + "; ".join(parts) + "."


def common_problems_note(evaluation: Mapping) -> str:
    """How many problems each Table 3 column compares: those every method with a value has
    (kaser.evaluation.summary, departure 7), of the test problems evaluated.

    >>> common_problems_note({"methods": {"kaser": {"n_problems": 6, "common_problem_metrics": {
    ...     "cosine_distance": {"n_problems": 2}, "coverage_iou": {"n_problems": 6}}}}})
    'Each column is over the problems every method with a value has (Cos Dis: 2, IoU: 6 of 6 test problems).'
    """
    counts = {}
    for title, metric, _ in TABLE3_COLUMNS + TABLE3_VALIDITY:
        found = [m.get("common_problem_metrics", {}).get(metric, {}).get("n_problems")
                 for m in evaluation["methods"].values()]
        found = [n for n in found if n is not None]
        if found:
            counts[title.rsplit(" ", 1)[0]] = max(found)
    total = max((m.get("n_problems", 0) for m in evaluation["methods"].values()), default=0)
    if not counts:
        return ""
    return ("Each column is over the problems every method with a value has ("
            + ", ".join(f"{title}: {n}" for title, n in counts.items()) + f" of {total} test problems).")


STUDY_COMMAND = "make study"   # configs/study.yaml: docs/experiments-and-studies.md "The CPU study"


def study_metrics(k_values: Sequence[int]) -> list[tuple[str, str]]:
    """(title, metric) of the CPU study table: the largest K's CodeBLEU and IoU, and Table 3's IoU."""
    k = max(k_values)
    return [(f"CodeBLEU@{k}", f"codebleu@{k}"), (f"IoU@{k} (incorrect pairs)", f"iou_incorrect@{k}"),
            (f"IoU@{k} (all pairs)", f"iou_all@{k}"), ("Coverage IoU (per problem)", "coverage_iou")]


def _interval(value: Mapping | None) -> str:
    ci = (value or {}).get("ci95")
    if ci is None:
        return cell((value or {}).get("mean"))
    return f"{ci['mean']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}]"


def _bounds(bounds) -> str:
    return "–" if not bounds else f"[{bounds[0]:+.3f}, {bounds[1]:+.3f}]"


def study_table(evaluation: Mapping) -> str:
    """Per metric and method: n, mean [95% CI], the 95% CI over problems (per-pair metrics:
    resample problems, then pairs), and for each other method KASER − it with its CI over
    pairs and over problems, raw and Holm-corrected p and the minimal detectable effect
    (kaser.evaluation.summary)."""
    methods = method_order(list(evaluation["methods"]))
    tests = evaluation.get("t_tests", {})
    rows = []
    for title, metric in study_metrics(evaluation["k_values"]):
        for method in methods:
            value = evaluation["methods"][method]["metrics"].get(metric)
            if value is None:
                continue
            ci = value.get("ci95") or {}
            by_problem = ci.get("problem_bootstrap")
            test = tests.get(method, {}).get(metric) if method != REFERENCE_METHOD else None
            p = (lambda key: "–" if test is None or test.get(key) is None else f"{test[key]:.3g}")
            rows.append([title, label(method), str(ci.get("n", "–")), _interval(value),
                         "–" if not by_problem else
                         f"[{by_problem['low']:.3f}, {by_problem['high']:.3f}] ({by_problem['n_problems']} problems)",
                         "–" if test is None else f"{test['mean_difference']:+.3f} ({test['over']}, n = {test['n']})",
                         "–" if test is None else _bounds(test.get("difference_ci95")),
                         "–" if test is None else _bounds(test.get("difference_problem_ci95")),
                         p("p_value"), p("p_holm") + ("\\*" if test and test.get("significant") else ""),
                         p("mde")])
    if not rows:
        return "_No CodeBLEU or IoU values in evaluation.json._"
    return markdown_table(["Metric", "Model", "n", "mean [95% CI]", "95% CI over problems",
                           "KASER − model", "its 95% CI", "its 95% CI over problems",
                           "p", "p (Holm)", "MDE"], rows)


def _point(entry: Mapping | None, signed: bool = False) -> str:
    if not entry or entry.get("value") is None:
        return "–"
    value = f"{entry['value']:+.3f}" if signed else f"{entry['value']:.3f}"
    bounds = entry.get("ci95_problems")
    return value + (f" [{bounds[0]:.3f}, {bounds[1]:.3f}]" if bounds else "")


def following_table(evaluation: Mapping) -> str:
    """evaluation.json `follows_student` (kaser.evaluation.following): per method, the pass rate,
    the AUC of the pass rate for the real outcome, its slope on the mastery estimate within a
    problem, all-pairs IoU beside a student-blind hedge, and the shares of samples with the
    prompt's words, without a return, and valid (they parse / compile); a last row gives the
    real codes' values."""
    following = evaluation.get("follows_student")
    if not following:
        return "_Not in evaluation.json: rerun the evaluate stage._"
    k = max(evaluation["k_values"])
    truth = following.get("truth", {})
    metrics = evaluation["methods"]
    rows = []
    for method in method_order(list(following["methods"])):
        scores = following["methods"][method]
        iou_all = (metrics.get(method, {}).get("metrics", {}).get(f"iou_all@{k}") or {}).get("mean")
        rows.append([label(method), _point(scores.get("pass_rate@1")), _point(scores.get("pass_auc@1")),
                     _point(scores.get(f"pass_auc@{k}")), _point(scores.get("pass_slope@1"), True),
                     cell(iou_all), _point(scores.get(f"iou_all_hedged@{k}")),
                     _point(scores.get("prompt_word_share")), _point(scores.get("no_return_share")),
                     _point(scores.get("valid_share"))])
    rows.append(["Real codes", _point(truth.get("real_pass_rate")), _point(truth.get("mastery_auc")),
                 "–", _point(truth.get("real_pass_slope"), True), "–", "–", "0.000",
                 _point(truth.get("real_no_return_share")), _point(truth.get("real_valid_share"))])
    return markdown_table(["Model", "pass rate (K = 1)", "pass AUC@1 ↑", f"pass AUC@{k} ↑",
                           "pass slope / SD mastery", f"IoU@{k} all pairs", f"… of a hedge",
                           "prompt words ↓", "no return", "valid"], rows)


def study_section(evaluation: Mapping) -> str:
    """The "CPU study" part of a dataset's section: how much the run can tell."""
    correction = evaluation.get("correction", {})
    return "\n\n".join([
        f"Run by `{STUDY_COMMAND}` at the study's size (docs/experiments-and-studies.md, \"The CPU study\"); on any other run "
        "the same numbers say how much that run can tell. Mean [95% CI]: "
        f"{evaluation.get('ci95', 't-interval over pairs / problems')}. 95% CI over problems: "
        "resample the test problems, then the pairs within each, so that pairs of one problem do "
        "not count as independent evidence about new problems (per-pair metrics). "
        "KASER − model: mean paired "
        "difference (over pairs, problems or folds, as the test ran; a per-problem metric over the "
        "problems both have a value for), with its t-interval and its CI over problems. "
        "p: two-sided paired t-test; "
        f"p (Holm): corrected over all {correction.get('family_size', '?')} tests of KASER in this "
        "evaluation (every metric x method), \\* below 0.05 with KASER better. MDE: the smallest "
        "true difference the test would detect with power 0.8 at alpha 0.05 and this n, from the "
        "observed SD of the differences; a difference below it is not evidence either way.",
        study_table(evaluation)])


# --- knowledge and annotation tables --------------------------------------------------------------

def annotation_table(quality: Mapping) -> str:
    """Annotator precision / recall / F1 against the synthetic truth (annotation_quality.json)."""
    rows = [[scope, *(f"{quality[scope][s]:.3f}" for s in ("precision", "recall", "f1")),
             *(str(quality[scope].get(n, "–")) for n in ("tp", "fp", "fn"))]
            for scope in ("overall", *CATEGORIES) if scope in quality]
    return markdown_table(["Scope", "Precision", "Recall", "F1", "TP", "FP", "FN"], rows)


def knowledge_table(knowledge: Mapping) -> str:
    """Next-attempt correctness of the knowledge tracer and its baselines (knowledge.json)."""
    rows = []
    for name, values in knowledge.get("models", {}).items():
        rows.append([name, *(cell(values.get(m), values.get(f"{m}_std"))
                             for m in ("auc", "accuracy", "log_loss"))])
    table = markdown_table(["Model", "AUC ↑", "Accuracy ↑", "Log-loss ↓"], rows)
    spearman = knowledge.get("spearman")
    if spearman:
        table += (f"\n\nSpearman correlation of estimated vs true mastery: "
                  f"{spearman['attempted_kcs']:.3f} on the attempted problem's KCs "
                  f"(n = {spearman['n_attempted_kcs']}), {spearman['all_kcs']:.3f} on all KCs.")
    return table


# --- the README ----------------------------------------------------------------------------------

def dataset_section(dataset: str, evaluation: Mapping, paper_name: str, extras: Mapping[str, str | None],
                    producers: Mapping[str, str]) -> str:
    """One dataset's part of reports/README.md. `extras` holds markdown already rendered (or None
    when its input is missing, then `producers` says which stage writes it): annotation,
    knowledge, mastery_png, tsne_png, rewards_png, sweep."""
    k_titles = [f"CodeBLEU@{k} ↑" for k in (1, 5)] + [f"IoU@{k} ↑" for k in (1, 5)]
    methods = evaluation["methods"]
    folds = sorted({f for m in methods.values() for f in m["folds"]})
    setting = (f"Methods: {', '.join(label(m) for m in method_order(list(methods)))}; "
               f"folds evaluated: {', '.join(map(str, folds)) or 'none'}; K ∈ {evaluation['k_values']}; "
               + "; ".join(f"{label(m)}: {v['n_pairs']} pairs "
                           f"({v['n_incorrect_pairs']} incorrect), {v['n_problems']} problems"
                           for m, v in methods.items()) + ".")
    notes = "".join(f"\n- {note}" for note in evaluation.get("notes", []))
    reference = evaluation.get("reference", {}).get("knowledge_alignment_of_real_errors")
    parts = [
        f"## {dataset}", setting + notes,
        f"### Table 1: per student-problem pair (code similarity, error match)",
        "Two error scores. IoU@K (the paper's text): the judge chooses from the problem's candidate "
        "list and the found errors are compared with the student's by IoU, over pairs whose real "
        "code is incorrect; “all pairs” counts every pair, where a correct real code is matched "
        "only by a predicted code the judge finds free of every error (not by prose or a stub "
        "diagnosed outside the list). Recall@K (the authors' evaluation code): the judge is "
        "shown the student's own errors and scores |found| / |true|, over incorrect pairs; a "
        "recall cannot be lowered by predicting extra errors, which is why the authors' Table 2 "
        "precision is 1.00, so the two columns answer different questions. valid: share of "
        "predicted codes that parse (Python) / compile (Java); truncated: share cut off by the "
        "token budget (not judged, error match 0; – where not recorded)." + (f" KC alignment: share of predicted errors tied to a KC "
                                              f"the student has low true mastery on (real errors: "
                                              f"{reference:.3f})." if reference is not None else ""),
        metric_table(evaluation, table1_columns(evaluation)),
        f"_{paper_label(paper_name)}:_",
        paper_table(PAPER_TABLE1[paper_name], k_titles, [True] * 4, [3] * 4),
        "### Table 2: error match by error type (K = 1)", table2(evaluation),
        f"_{paper_label('CodeWorkout (Java)')} (the paper's Table 2 has CodeWorkout only):_",
        markdown_table(["Model", "Error type", "Precision", "Recall", "F1"],
                       [[m, c, *(f"{v:.3f}" for v in values)]
                        for m, cats in PAPER_TABLE2.items() for c, values in cats.items()]),
        "### Table 3: per problem (code diversity, error coverage)",
        "Cos Dis and CodeBLEU^∁_max are computed over the valid predicted codes only (those that "
        "parse / compile), so non-code cannot look diverse; valid: their share. "
        + common_problems_note(evaluation),
        metric_table(evaluation, TABLE3_COLUMNS + TABLE3_VALIDITY, "common_problem_metrics"),
        f"_{paper_label(paper_name)}:_",
        paper_table(PAPER_TABLE3[paper_name], [t for t, _, _ in TABLE3_COLUMNS],
                    [True, True, True, False], [d for _, _, d in TABLE3_COLUMNS]),
        "### Does it follow the student?",
        "A simulator that ignores the student can score on all-pairs IoU by writing one correct code "
        "among its K, so these scores ask whether its samples pass *for the students who pass*. "
        "pass AUC: how well a pair's predicted pass rate (share of its samples the judge finds free "
        "of every error) ranks the real outcome (0.5: blind to the student; the real codes' row: "
        "the AUC of the mastery estimate itself). pass slope: the change in that rate per SD of the "
        "knowledge stage's mastery estimate within a problem (the real codes' row is the target). "
        "… of a hedge: the all-pairs IoU of the same method's first K − 1 samples plus the "
        "reference solution, a student-blind hedge. prompt words: share of samples that write "
        "`kc` or `mastery` as code, after up to params.yaml `generate.redraws` draws again. "
        "valid: share of samples that parse (Python) / compile (Java), beside the real codes' "
        "share without a Syntax-category error. "
        "Brackets: 95% intervals over problems (bootstrap).",
        following_table(evaluation),
        "### KASER vs Student SFT", comparison_sentence(dataset, evaluation),
        "### CPU study: confidence intervals, corrected tests, detectable effects",
        study_section(evaluation),
    ]
    for key, title in (("annotation", "Annotation quality (static annotator vs true errors)"),
                       ("knowledge", "Knowledge tracing (next-attempt correctness, by student fold)"),
                       ("mastery_png", "Mastery of one test student"),
                       ("tsne_png", "Code diversity: t-SNE of predicted code"),
                       ("rewards_png", "GRPO reward per step"),
                       ("sweep", "Knowledge sweep (like the paper's Table 4)")):
        parts += [f"### {title}", extras.get(key) or f"_Not available: {producers[key]}._"]
    return "\n\n".join(parts) + "\n"


# The end of reports/README.md: where the committed study runs are. A link, not their text, so
# the readme stage depends on no hand-written file.
STUDIES = """## Studies

Committed runs, each in a folder of its own that no `dvc repro` writes, with its files and a
README that says how it ran; the history of the runs is [history.md](history.md).

| study | command | results |
| --- | --- | --- |
| CPU study: KASER vs Student SFT on unseen students | `make study` | [study-student-python/README.md](study-student-python/README.md) |
| the intervention study: one KC of the profile at 0.1 and at 0.9 | `make study-intervention` | [study-intervention/README.md](study-intervention/README.md) |
| does GRPO's error reward rise, with controls | `benchmarks/grpo_learns.py` | [grpo-learns/README.md](grpo-learns/README.md) |
| where GRPO's error reward carries signal | `benchmarks/error_reward_signal.py` | [error-reward-signal/README.md](error-reward-signal/README.md) |
| does predicted Java compile (synthetic Java, 40 pairs) | `dvc repro` on synthetic Java | [java-compile/README.md](java-compile/README.md) |
| where does a sampled code end: Student SFT's reply stripped vs ending in a line break | `benchmarks/code_endings.py` | [code-endings/README.md](code-endings/README.md) |
| the CPU study before issue 20 (unseen problems) | | [cpu-study/README.md](cpu-study/README.md) |
"""


def readme(sections: Mapping[str, str | None], producer: str, study: str | None = None) -> str:
    """reports/README.md: a short guide, then each dataset's section (or where it comes from),
    then `study` (the stage gives STUDIES, the table of committed study runs) if given."""
    head = [
        "# KASER results",
        "Written by the report stage (`python stages/report.py`, run by `dvc repro`); do not edit "
        "by hand. Numbers are means ± std over the evaluated folds (reports/<dataset>/evaluation.json "
        "holds per-fold values, t-tests and each metric's direction; metrics.json the means, for "
        "`dvc metrics show`).",
        "**Bold**: best mean of a column. \\*: KASER better than every baseline present "
        "(paired t-test, Holm-corrected p < 0.05 over every test of KASER; over folds with ≥ 3 "
        "folds, else over pairs or problems). "
        f"Rows labelled “paper” are the numbers printed in arXiv 2601.06633 ({PAPER_MODEL}-Instruct "
        "on CodeWorkout / FalconCode): a reference for the direction of differences only; our "
        "default runs a small model on synthetic data, so absolute values are not comparable.",
    ]
    body = [text if text else f"## {name}\n\n_Not built yet: {producer.format(dataset=name)}._\n"
            for name, text in sections.items()]
    if study:
        body.append(study)
    return "\n\n".join(head) + "\n\n" + "\n".join(body)


def demote_headings(markdown: str, levels: int = 2) -> str:
    """Push every markdown heading down `levels` levels, to nest a document in a section.

    >>> demote_headings("# A\\ntext\\n## B", 2)
    '### A\\ntext\\n#### B'
    """
    return "\n".join("#" * levels + line if line.startswith("#") else line
                     for line in markdown.split("\n"))


@dataclass
class DatasetInputs:
    """Everything one dataset's section is made of, read by stages/report.py (None: missing)."""

    dataset: str
    paper_name: str                               # paper_dataset(...)
    evaluation: dict                              # reports/<ds>/evaluation.json
    embedding_model: str
    tsne_codes: dict[str, list[str]] = field(default_factory=dict)   # method or REAL_GROUP -> codes
    annotation_quality: dict | None = None
    knowledge: dict | None = None
    grpo_log: dict | list | None = None          # reports/<ds>/grpo_log.json: {"<split>-<fold>": log}
    sweep: str | None = None                      # knowledge_sweep.md as written
    mastery_png: bool = False                     # reports/<ds>/mastery.png exists


@dataclass
class DatasetReport:
    section: str                                  # markdown for reports/README.md
    rewards_csv: str                              # grpo_rewards.csv (header only without a log)
    figures: dict                                 # file name in reports/<ds>/ -> matplotlib figure
    groups_csv: str = ""                          # grpo_groups.csv ("" without per-group rewards)


def reward_trend(rows: Sequence[Mapping], groups: Sequence[Mapping]) -> list[str]:
    """Does GRPO's training reward rise? The slope of the mean reward per generated batch, and,
    where the log has each batch's groups, the slope within a pair: each group's reward against
    the batch it came in, with an intercept per pair (its dataset row), so that the spread
    between the pairs a batch happens to hold drops out. Both with 95% t intervals, a sentence
    each.

    >>> rows = [{"step": s, "reward": r} for s, r in ((1, 0.5), (3, 1.4), (5, 0.8), (7, 1.7))]
    >>> groups = [{"step": s, "group_id": g, "reward": r} for s, g, r in
    ...           ((1, 0, 0.4), (1, 1, 0.6), (3, 2, 1.4), (3, 3, 1.4), (5, 0, 0.7), (5, 1, 0.9),
    ...            (7, 2, 1.6), (7, 3, 1.8))]
    >>> for sentence in reward_trend(rows, groups):
    ...     print(sentence)
    Mean reward per generated batch: slope +0.3000 per batch, 95% CI [-0.6127, +1.2127], n 4 batches.
    Within a pair (vs its own visits): +0.1500 per batch, 95% CI [+0.0850, +0.2150], n 8 groups of 4 pairs.
    """
    batch = {step: index for index, step in enumerate(sorted({int(r["step"]) for r in rows}))}
    lines = []
    plain = slope_interval([r["reward"] for r in sorted(rows, key=lambda r: r["step"])])
    if plain:
        lines.append(f"Mean reward per generated batch: slope {plain['slope']:+.4f} per batch, 95% CI "
                     f"[{plain['interval'][0]:+.4f}, {plain['interval'][1]:+.4f}], n {plain['n']} batches.")
    known = [g for g in groups if int(g["step"]) in batch]
    within = within_slope_interval([g["reward"] for g in known], [batch[int(g["step"])] for g in known],
                                   [g["group_id"] for g in known]) if known else None
    if within:
        lines.append(f"Within a pair (vs its own visits): {within['slope']:+.4f} per batch, "
                     f"95% CI [{within['interval'][0]:+.4f}, {within['interval'][1]:+.4f}], "
                     f"n {within['n']} groups of {within['units']} pairs.")
    return lines


def dataset_report(inputs: DatasetInputs, embed: Callable[[Sequence[str]], np.ndarray],
                   tsne_max_points: int = 300, seed: int = 0) -> DatasetReport:
    """A dataset's README section, reward CSV and figures (t-SNE, reward curves)."""
    name = inputs.dataset
    run, log = first_run_log(inputs.grpo_log)   # the curves of the first training run
    rows, reward_groups = reward_rows(log), group_rows(log)
    rewards = (reward_figure(rows, name, run) if rows else
               message_figure(f"{name}: GRPO reward per step", "no GRPO log (run the grpo stage)"))
    groups = {label: draw_codes(inputs.tsne_codes.get(key, []), tsne_max_points, seed)
              for key, label in ((REAL_GROUP, REAL_GROUP), *TSNE_GROUPS.items())}   # real behind
    groups = {label: codes for label, codes in groups.items() if codes}
    predicted = [label for label in TSNE_GROUPS.values() if label in groups]
    if predicted and sum(map(len, groups.values())) >= 3:
        points = tsne_points({label: embed(codes) for label, codes in groups.items()}, seed)
        tsne = tsne_figure(points, name, inputs.embedding_model)
    else:
        tsne = message_figure(f"{name}: t-SNE of predicted code", "no predictions of KASER or Student SFT")
    figures = {"tsne.png": tsne, "reward_curves.png": rewards}
    base = Path(name)
    extras = {
        "annotation": annotation_table(inputs.annotation_quality) if inputs.annotation_quality else None,
        "knowledge": knowledge_table(inputs.knowledge) if inputs.knowledge else None,
        "mastery_png": f"![mastery]({(base / 'mastery.png').as_posix()})" if inputs.mastery_png else None,
        "tsne_png": (f"Predicted codes of {' and '.join(predicted)} ({inputs.embedding_model} embeddings, "
                     f"at most {tsne_max_points} codes per group), with real student code in grey for "
                     f"scale.\n\n![t-SNE]({(base / 'tsne.png').as_posix()})") if predicted else None,
        "rewards_png": ((f"Training run {run} (the first of params.yaml model.splits x model.folds).\n\n"
                         if run else "") +
                        f"![GRPO rewards]({(base / 'reward_curves.png').as_posix()})\n\n"
                        f"{' '.join(reward_trend(rows, reward_groups))}\n\nPer-step values: "
                        f"[{name}/grpo_rewards.csv]({(base / 'grpo_rewards.csv').as_posix()}) "
                        f"(`dvc plots show`)" +
                        (f"; per group: [{name}/grpo_groups.csv]({(base / 'grpo_groups.csv').as_posix()})"
                         if reward_groups else "") + ".") if rows else None,
        "sweep": demote_headings(inputs.sweep.strip(), 3) if inputs.sweep else None,
    }
    producers = {key: text.format(dataset=name) for key, text in PRODUCERS.items()}
    section = dataset_section(name, inputs.evaluation, inputs.paper_name, extras, producers)
    return DatasetReport(section, rewards_csv(rows), figures, groups_csv(reward_groups))
