"""Figures of the report: GRPO reward curves (and their CSV for DVC plots, and the reward per group
of each generated batch), the t-SNE of predicted code embeddings, and a stand-in figure that says
why a plot could not be drawn.

    python stages/report.py synthetic-python   # reports/synthetic-python/: tsne.png, reward_curves.png,
                                             # grpo_rewards.csv, grpo_groups.csv

Each function returns a matplotlib figure (Agg backend) or plain data; writing files is the stage's.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Mapping, Sequence

import numpy as np

REWARD_COLUMNS = ("similarity_reward", "error_reward", "diversity_reward")


# --- figures -------------------------------------------------------------------------------------

def first_run_log(logs: Mapping[str, Sequence[Mapping]] | Sequence[Mapping] | None
                  ) -> tuple[str | None, list]:
    """(run name, log) of the first run of a training stage's log file, which holds
    {"<split>-<fold>": log history} in run order (kaser.predictor.base_model.run_name); a bare list is a
    one-run file of before the runs were keyed, (None, [...]).

    >>> first_run_log({"student-0": [{"step": 1}], "student-1": []})
    ('student-0', [{'step': 1}])
    >>> first_run_log(None)
    (None, [])
    """
    if not logs:
        return None, []
    if isinstance(logs, Mapping):
        name = next(iter(logs))
        return name, list(logs[name])
    return None, list(logs)


def reward_rows(log_history: Sequence[Mapping]) -> list[dict]:
    """Per-step rows (step, each reward part's mean, weighted total `reward`) of TRL's log
    history; entries without rewards (the run summary) are skipped.

    >>> reward_rows([{"step": 1, "reward": 1.5, "rewards/error_reward/mean": 0.5}, {"train_runtime": 9}])
    [{'step': 1, 'error_reward': 0.5, 'reward': 1.5}]
    """
    rows = []
    for entry in log_history:
        if "reward" not in entry or "step" not in entry:
            continue
        row = {"step": int(entry["step"])}
        for name in REWARD_COLUMNS:
            if f"rewards/{name}/mean" in entry:
                row[name] = entry[f"rewards/{name}/mean"]
        row["reward"] = entry["reward"]
        rows.append(row)
    return rows


def rewards_csv(rows: Sequence[Mapping]) -> str:
    """CSV for DVC plots: step first, the total reward last (DVC's default y)."""
    return _csv_text(["step", *(c for c in REWARD_COLUMNS if any(c in r for r in rows)), "reward"], rows)


def _csv_text(columns: Sequence[str], rows: Sequence[Mapping]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def group_rows(log_history: Sequence[Mapping]) -> list[dict]:
    """The per-group rewards of every generated batch (kaser.predictor.grpo.group_reward_rows),
    kept by `train_grpo` as the log's {"group_rewards": [...]} entry; [] in a log without it.

    >>> group_rows([{"step": 1, "reward": 1.0}, {"group_rewards": [{"step": 1, "group_id": 0}]}])
    [{'step': 1, 'group_id': 0}]
    """
    return [row for entry in log_history for row in entry.get("group_rewards", [])]


def groups_csv(rows: Sequence[Mapping]) -> str:
    """CSV of `group_rows`: step, group_id, problem_id, each reward part, reward ("" without rows)."""
    if not rows:
        return ""
    return _csv_text(["step", "group_id", "problem_id",
                      *(c for c in REWARD_COLUMNS if any(c in r for r in rows)), "reward"], rows)


def reward_figure(rows: Sequence[Mapping], dataset: str, run: str | None = None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    steps = [r["step"] for r in rows]
    names = {"similarity_reward": "similarity (CodeBLEU)", "error_reward": "error match (IoU)",
             "diversity_reward": "diversity (1 − max CodeBLEU)", "reward": "total (weighted sum)"}
    for column, label in names.items():
        values = [r.get(column) for r in rows]
        if any(v is not None for v in values):
            axes.plot(steps, [np.nan if v is None else v for v in values], marker="o", markersize=3,
                      linewidth=2.5 if column == "reward" else 1.5, label=label)
    axes.set(xlabel="GRPO step", ylabel="mean reward over the step's completions",
             title=f"{dataset}: KASER GRPO reward per step" + (f" (run {run})" if run else ""))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=9, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    return figure


def tsne_points(groups: Mapping[str, np.ndarray], seed: int = 0) -> dict[str, np.ndarray]:
    """2-D t-SNE of all groups' embeddings together, split back by group."""
    from sklearn.manifold import TSNE

    names = [name for name, vectors in groups.items() if len(vectors)]
    stacked = np.concatenate([groups[name] for name in names])
    if len(stacked) < 3:
        raise ValueError(f"t-SNE needs at least 3 codes, got {len(stacked)}")
    perplexity = float(min(30, (len(stacked) - 1) / 3))
    points = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed,
                  metric="cosine").fit_transform(stacked)
    result, start = {}, 0
    for name in names:
        result[name] = points[start:start + len(groups[name])]
        start += len(groups[name])
    return result


def draw_codes(codes: Sequence[str], limit: int, seed: int = 0) -> list[str]:
    """At most `limit` of `codes`, a seeded draw in their original order.

    >>> draw_codes(["a", "b", "c"], 5)
    ['a', 'b', 'c']
    >>> len(draw_codes(list("abcdefgh"), 3, seed=1))
    3
    """
    if len(codes) <= limit:
        return list(codes)
    chosen = sorted(random.Random(seed).sample(range(len(codes)), limit))
    return [codes[i] for i in chosen]


def tsne_figure(points: Mapping[str, np.ndarray], dataset: str, model_name: str):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"Student code (real)": {"color": "0.7", "s": 10, "marker": "."},
              "Student SFT": {"color": "tab:orange", "s": 16, "marker": "o", "alpha": 0.7},
              "KASER": {"color": "tab:blue", "s": 16, "marker": "o", "alpha": 0.7}}
    figure, axes = plt.subplots(figsize=(9.5, 6.5))
    for name, xy in points.items():
        axes.scatter(xy[:, 0], xy[:, 1], label=f"{name} ({len(xy)} codes)",
                     **styles.get(name, {"s": 16}))
    axes.set(title=f"{dataset}: t-SNE of predicted-code embeddings ({model_name})",
             xlabel="t-SNE 1", ylabel="t-SNE 2", xticks=[], yticks=[])
    axes.legend(fontsize=10, loc="upper left", bbox_to_anchor=(1.01, 1.0), markerscale=1.5)
    figure.tight_layout()
    return figure


def message_figure(title: str, message: str):
    """A figure that says why the plot it stands in for could not be drawn (a DVC output
    must exist even then)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 2.5))
    axes.axis("off")
    axes.set_title(title)
    axes.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=11)
    return figure
