"""The DVC metrics a researcher reads: one short, flat headline file per dataset."""

import json
from pathlib import Path

import yaml

from kaser.evaluation.headline import headline_metrics

REPO = Path(__file__).resolve().parents[1]


def evaluation(methods: dict, k_values=(1, 5)) -> dict:
    return {"k_values": list(k_values), "methods": {
        name: {"n_pairs": 10, "n_incorrect_pairs": 4,
               "metrics": {metric: {"mean": value, "std": 0.0} for metric, value in metrics.items()}}
        for name, metrics in methods.items()}}


def test_headline_takes_the_largest_k_for_kaser_and_student_sft():
    h = headline_metrics(evaluation({
        "kaser": {"iou_incorrect@1": 0.1, "iou_incorrect@5": 0.4, "codebleu@5": 0.3, "coverage_iou": 0.2},
        "student_sft": {"iou_incorrect@5": 0.5, "codebleu@5": 0.35},
        "icl": {"iou_incorrect@5": 0.9}}),            # a baseline is not in the headline
        {"overall": {"f1": 0.8}, "counts": {"incorrect_share_with_errors": 0.95,
                                            "correct_share_with_errors": 0.01}},
        {"models": {"lstm": {"auc": 0.75}, "difficulty": {"auc": 0.7}},
         "spearman": {"attempted_kcs": 0.6}})
    assert h["kaser_iou@5"] == 0.4 and h["sft_iou@5"] == 0.5 and h["kaser_coverage_iou"] == 0.2
    assert h["sft_coverage_iou"] is None                     # not evaluated -> null, not 0
    assert h["annotation_f1"] == 0.8 and h["annotated_incorrect_share"] == 0.95
    assert (h["kt_auc"], h["kt_auc_difficulty"], h["mastery_spearman"]) == (0.75, 0.7, 0.6)
    assert not any("icl" in key for key in h)
    assert len(h) <= 20


def test_real_data_without_true_errors_has_counts_and_no_f1():
    # on real data the annotate stage writes {"counts": ...} only
    h = headline_metrics(evaluation({"kaser": {}}), {"counts": {"incorrect_share_with_errors": 0.9}}, None)
    assert h["annotation_f1"] is None and h["annotated_incorrect_share"] == 0.9 and h["kt_auc"] is None


def test_dvc_yaml_declares_only_the_headline_files_as_metrics():
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    declared = [next(iter(entry)) if isinstance(entry, dict) else entry
                for stage in stages.values() for entry in stage.get("do", stage).get("metrics", [])]
    assert declared == ["reports/${key}/headline.json"]
    json.dumps(headline_metrics(evaluation({}), None, None))   # serialisable with nothing evaluated
