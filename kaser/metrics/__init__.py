"""Metrics shared by the GRPO rewards and the evaluation.

- `kaser.metrics.codebleu`: CodeBLEU with the `codebleu` package's numbers, parses cached, so a
  group of completions against one reference (or against each other) parses each code once.
- `kaser.metrics.sets`: intersection over union of two error-label sets, IoU(∅, ∅) = 1.
- `kaser.metrics.pair_metrics`, `kaser.metrics.problem_metrics`: the paper's evaluation tables,
  built on the two above.

Both are higher-is-better scores in [0, 1]. Check them with
`python -m pytest tests/test_metrics_codebleu.py tests/test_rewards.py`.
"""

from kaser.metrics.codebleu import codebleu, codebleu_many, codebleu_parts, max_codebleu_to_rest
from kaser.metrics.sets import iou

HIGHER_IS_BETTER = {"codebleu": True, "iou": True}

__all__ = ["HIGHER_IS_BETTER", "codebleu", "codebleu_many", "codebleu_parts", "iou",
           "max_codebleu_to_rest"]
