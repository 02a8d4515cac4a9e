"""Knowledge estimator: mastery profiles over KCs from students' code histories (paper §3.1).

    python stages/knowledge.py synthetic-java     # the DVC stage, one dataset
    kaser knowledge DIR                           # the same on any folder from `kaser synth/ingest`

A KCGen-KT-style knowledge-tracing model. At step t the input is the embedding of the student's
code, the KCs of the problem and whether the attempt was correct; an LSTM turns the history into
h_t, and m_t = sigmoid(W h_t + b) in [0,1]^K is the mastery of every KC of the dataset
(`kc_vocabulary`: the sorted KCs of problems.parquet). The chance that the next attempt is
correct is the product (option: mean) of m_t over the next problem's KCs; the loss is the binary
cross-entropy against that attempt's correctness.

`run_knowledge` trains it 5-fold by student beside the baselines of `kaser.knowledge.baselines`, scores
next-attempt correctness on held-out students, and returns every student's mastery *before* each
attempt, from the one fold model that never saw that student. On synthetic data it also compares
estimated with true mastery (Spearman).

Departures from the paper, and why:
1. The paper gives no initial state; here h_{-1} (and the LSTM cell state) are learned vectors, so
   the profile before the first attempt, sigmoid(W h_{-1} + b), is a learned prior, and the first
   attempt is predicted from it and counts in the loss. Prompts at step 0 need a profile too.
2. The KC part of the input is the KC multi-hot split by outcome, [kcs * a_t, kcs * (1 - a_t)]
   (as in DKT's skill-by-correctness encoding), plus a_t; it carries the same information as
   [kcs, a_t] but lets one LSTM input weight mean "succeeded on KC j".
3. The code embedding (384-d for MiniLM) is projected to `projection` dimensions with dropout
   before the LSTM: a few hundred students cannot fit 384 x 4 x hidden input weights.
4. Training stops early on the loss of a validation share of the training students.
5. `kc_shrinkage` adds an L2 penalty on each KC's read-out (its row of W and entry of b) minus the
   mean read-out over KCs: a prior that a student's KCs share a common level unless the data say
   otherwise. Without it the per-KC levels are weakly identified (a KC's offset trades against
   another's in the product) and soak up problem difficulty. With it (and dropout 0.4, weight
   decay 1e-3 instead of 0.2 and 1e-4) the mastery Spearman on the synthetic datasets rises from
   0.43 to 0.54 (Python) and from 0.48 to 0.60 (Java), for an AUC lower by at most 0.006.
6. `problem_ease` (option, off by default) multiplies the success chance by sigmoid(e_p), one
   learned factor per problem shared by all students, so difficulty that is not about KCs is not
   charged to the problem's KCs; a problem no training student attempted gets the mean factor.
   The profile itself keeps its meaning. On synthetic data it changes AUC and Spearman by about
   their seed-to-seed spread, so the paper's model stays the default.

Mastery values are on the product's scale: with ~4 KCs per problem, a 50% chance of success
needs m ~ 0.84 on each KC, so estimated profiles sit higher than the synthetic truth; their order
(what the Spearman checks) is what carries over. `aggregate: mean` puts m on the scale of P(correct).
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch
from torch import nn
from tqdm import tqdm

from kaser import InputError
from kaser.data.contracts import (kc_vocabulary, read_dataset, read_folds, validate_problems,
                                  validate_submissions)
from kaser.knowledge.baselines import (BASELINES, Attempts, mastery_spearman, mean_over_folds,
                                prediction_metrics)


@dataclass(frozen=True)
class KnowledgeParams:
    """params.yaml `knowledge` (its values there are the ones measured on the synthetic datasets)."""
    embedding_backend: str  # or "hidden-state" (see kaser.embeddings)
    embedding_model: str
    embedding_batch_size: int
    projection: int
    hidden_size: int
    dropout: float
    aggregate: str  # product | mean of mastery over the next problem's KCs
    kc_shrinkage: float  # L2 pull of each KC's read-out towards the KCs' mean (note 5)
    problem_ease: bool  # a learned success factor per problem (note 6)
    learning_rate: float
    weight_decay: float
    batch_size: int
    max_epochs: int
    patience: int
    validation_fraction: float
    seed: int


AGGREGATES = ("product", "mean")


# --- tables -> arrays -------------------------------------------------------------------------

@dataclass(frozen=True)
class Histories:
    """Every student's attempts, rows ordered by (student, step), with padded tensors for the LSTM.

    table: student_id, problem_id, step, row (position in the submissions given);
    attempts: the same rows as arrays; students: sorted ids (index = Attempts.student);
    problems: ids in problems.parquet order (index = Attempts.problem);
    embedding (S, T, E), kcs (S, T, K), correct (S, T), mask (S, T), problem (S, T): student-major
    padding.
    """
    table: pl.DataFrame
    attempts: Attempts
    students: list[str]
    problems: list[str]
    embedding: torch.Tensor
    kcs: torch.Tensor
    correct: torch.Tensor
    mask: torch.Tensor
    problem: torch.Tensor


def _check_kcs(problems: pl.DataFrame) -> None:
    empty = problems.with_row_index().filter(pl.col("kcs").list.len().fill_null(0) == 0)
    if len(empty):
        raise InputError(f"problem {empty['problem_id'][0]} has no KCs; the KT model predicts "
                         "from the KCs of a problem", file="problems.parquet", column="kcs",
                         row=int(empty["index"][0]) + 1)


def build_histories(problems: pl.DataFrame, submissions: pl.DataFrame,
                    embeddings: np.ndarray, kcs: list[str]) -> Histories:
    """Arrays and padded tensors of all histories; `embeddings` rows follow `submissions` rows.

    The tables must hold to the contracts (`kaser.data.contracts.validate_problems/validate_submissions`).
    """
    _check_kcs(problems)
    if len(embeddings) != len(submissions):
        raise InputError(f"{len(embeddings)} code embeddings for {len(submissions)} submissions")
    table = (submissions.select("student_id", "problem_id", "step", "correct")
             .with_row_index("row").sort("student_id", "step"))
    students = sorted(set(table["student_id"].to_list()))
    student_index = {s: i for i, s in enumerate(students)}
    problem_index = {p: i for i, p in enumerate(problems["problem_id"].to_list())}
    kc_index = {kc: j for j, kc in enumerate(kcs)}
    problem_kcs = np.zeros((len(problem_index), len(kcs)), dtype=np.float32)
    for i, problem_kc_list in enumerate(problems["kcs"].to_list()):
        problem_kcs[i, [kc_index[kc] for kc in problem_kc_list]] = 1.0
    student = np.array([student_index[s] for s in table["student_id"].to_list()], dtype=np.int64)
    problem = np.array([problem_index[p] for p in table["problem_id"].to_list()], dtype=np.int64)
    correct = table["correct"].cast(pl.Float64).to_numpy()
    attempts = Attempts(student, problem, problem_kcs[problem], correct)

    position = np.arange(len(student)) - np.searchsorted(student, student, side="left")
    shape = (len(students), int(position.max(initial=-1)) + 1)

    def padded(values: np.ndarray, dtype) -> torch.Tensor:
        grid = np.zeros(shape + values.shape[1:], dtype=dtype)
        grid[student, position] = values
        return torch.from_numpy(grid)

    rows = np.asarray(embeddings, dtype=np.float32).reshape(len(submissions), -1)
    return Histories(table, attempts, students, list(problem_index),
                     embedding=padded(rows[table["row"].to_numpy()], np.float32),
                     kcs=padded(attempts.kcs, np.float32), correct=padded(correct, np.float32),
                     mask=padded(np.ones(len(student), dtype=bool), bool),
                     problem=padded(problem, np.int64))


# --- the model --------------------------------------------------------------------------------

class KnowledgeTracer(nn.Module):
    """LSTM over (code embedding, KCs, correctness) -> mastery logits over all KCs."""

    def __init__(self, embedding_dim: int, n_kcs: int, projection: int = 32,
                 hidden_size: int = 64, dropout: float = 0.2, n_problems: int = 0):
        super().__init__()
        # optional per-problem ease: a factor sigmoid(e_p) in the success chance shared by all students
        self.problem_ease = nn.Parameter(torch.full((n_problems,), 2.0)) if n_problems else None
        self.project = nn.Linear(embedding_dim, projection) if embedding_dim else None
        self.dropout = nn.Dropout(dropout)
        input_size = (projection if embedding_dim else 0) + 2 * n_kcs + 1
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.initial_hidden = nn.Parameter(torch.zeros(hidden_size))
        self.initial_cell = nn.Parameter(torch.zeros(hidden_size))
        self.mastery = nn.Linear(hidden_size, n_kcs)

    def kc_spread(self) -> torch.Tensor:
        """Squared distance of each KC's read-out (row of W, entry of b) from the KCs' mean."""
        readout = torch.cat([self.mastery.weight, self.mastery.bias.unsqueeze(1)], dim=1)
        return ((readout - readout.mean(0, keepdim=True)) ** 2).sum()

    def forward(self, embedding: torch.Tensor, kcs: torch.Tensor,
                correct: torch.Tensor) -> torch.Tensor:
        """Mastery logits (B, T + 1, K): [:, t] is the profile before attempt t, [:, T] after the last."""
        right = correct.unsqueeze(-1)
        parts = [kcs * right, kcs * (1 - right), right]
        if self.project is not None:
            parts.insert(0, self.dropout(self.project(self.dropout(embedding))))
        batch = kcs.shape[0]
        state = (self.initial_hidden.expand(1, batch, -1).contiguous(),
                 self.initial_cell.expand(1, batch, -1).contiguous())
        hidden, _ = self.lstm(torch.cat(parts, dim=-1), state)
        start = self.initial_hidden.expand(batch, 1, -1)
        return self.mastery(torch.cat([start, hidden], dim=1))


def correct_probability(logits: torch.Tensor, kcs: torch.Tensor, aggregate: str,
                        ease: torch.Tensor | None = None) -> torch.Tensor:
    """P(attempt t correct) from the profile before it: (B, T), using logits[:, :T] and kcs (B, T, K);
    `ease` (B, T), when given, are logits of a per-problem factor."""
    before = logits[:, :kcs.shape[1]]
    if aggregate == "product":
        probability = torch.exp((kcs * nn.functional.logsigmoid(before)).sum(-1))
    elif aggregate == "mean":
        probability = (kcs * torch.sigmoid(before)).sum(-1) / kcs.sum(-1).clamp(min=1.0)
    else:
        raise InputError(f"unknown aggregate '{aggregate}'; known: {', '.join(AGGREGATES)}")
    return probability if ease is None else probability * torch.sigmoid(ease)


def _loss(model: KnowledgeTracer, data: Histories, students: torch.Tensor, aggregate: str):
    logits = model(data.embedding[students], data.kcs[students], data.correct[students])
    ease = model.problem_ease[data.problem[students]] if model.problem_ease is not None else None
    probability = correct_probability(logits, data.kcs[students], aggregate, ease).clamp(1e-6, 1 - 1e-6)
    mask = data.mask[students]
    return nn.functional.binary_cross_entropy(probability[mask], data.correct[students][mask])


@contextlib.contextmanager
def _deterministic(seed: int):
    """Seeded torch, deterministic kernels, one thread; global settings restored afterwards.

    One thread: the model is small enough that threads only add overhead (10x slower on a busy
    2-core machine), and results then do not depend on the core count.
    """
    before = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.set_num_threads(before[1])


def train_tracer(data: Histories, students: np.ndarray, cfg: KnowledgeParams,
                 desc: str = "training KT") -> tuple[KnowledgeTracer, list[dict]]:
    """Train on the given student indices (a validation share of them stops training early).

    Returns the model at its best validation loss and the per-epoch history
    [{"epoch", "train_loss", "validation_loss"}, ...].
    """
    if cfg.aggregate not in AGGREGATES:
        raise InputError(f"unknown aggregate '{cfg.aggregate}'; known: {', '.join(AGGREGATES)}")
    rng = np.random.default_rng(cfg.seed)
    shuffled = rng.permutation(np.asarray(students))
    n_validation = max(1, int(round(cfg.validation_fraction * len(shuffled)))) if len(shuffled) > 1 else 0
    validation = torch.from_numpy(np.sort(shuffled[:n_validation]))
    fit = torch.from_numpy(np.sort(shuffled[n_validation:]))
    with _deterministic(cfg.seed):
        model = KnowledgeTracer(data.embedding.shape[-1], data.kcs.shape[-1], cfg.projection,
                                cfg.hidden_size, cfg.dropout,
                                len(data.problems) if cfg.problem_ease else 0)
        optimiser = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate,
                                     weight_decay=cfg.weight_decay)
        order = torch.Generator().manual_seed(cfg.seed)
        best, best_state, waited, history = float("inf"), None, 0, []
        bar = tqdm(range(cfg.max_epochs), desc=desc, unit="epoch", leave=False)
        for epoch in bar:
            model.train()
            epoch_loss = []
            for batch in fit[torch.randperm(len(fit), generator=order)].split(cfg.batch_size):
                optimiser.zero_grad()
                loss = _loss(model, data, batch, cfg.aggregate)
                if cfg.kc_shrinkage:
                    loss = loss + cfg.kc_shrinkage * model.kc_spread()
                loss.backward()
                optimiser.step()
                epoch_loss.append(loss.item())
            model.eval()
            with torch.no_grad():
                val = _loss(model, data, validation if len(validation) else fit, cfg.aggregate).item()
            history.append({"epoch": epoch, "train_loss": float(np.mean(epoch_loss)),
                            "validation_loss": val})
            bar.set_postfix(train=f"{history[-1]['train_loss']:.4f}", val=f"{val:.4f}")
            if val < best - 1e-5:
                best, waited = val, 0
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                waited += 1
                if waited >= cfg.patience:
                    break
        bar.close()
        model.load_state_dict(best_state)
        model.eval()
        if model.problem_ease is not None:   # problems no training student attempted: mean factor
            seen = torch.zeros(len(data.problems), dtype=torch.bool)
            trained = torch.from_numpy(np.asarray(students))
            seen[data.problem[trained][data.mask[trained]]] = True
            with torch.no_grad():
                model.problem_ease[~seen] = model.problem_ease[seen].mean()
    return model, history


def trace(model: KnowledgeTracer, data: Histories, students: np.ndarray,
          aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """For the given students' attempts (rows of data.attempts, in order): the mastery profile
    before each attempt (N, K) and P(correct) of each attempt (N,)."""
    index = torch.from_numpy(np.asarray(students))
    model.eval()
    with torch.no_grad(), _deterministic(0):
        logits = model(data.embedding[index], data.kcs[index], data.correct[index])
        ease = model.problem_ease[data.problem[index]] if model.problem_ease is not None else None
        probability = correct_probability(logits, data.kcs[index], aggregate, ease)
        mask = data.mask[index]
        return (torch.sigmoid(logits[:, :mask.shape[1]])[mask].double().numpy(),
                probability[mask].double().numpy())


# --- cross-validation -------------------------------------------------------------------------

def _fold_of_students(folds: dict, students: list[str]) -> np.ndarray:
    """Fold number of every student (index order); each must be in exactly one test fold."""
    if "by_student" not in folds:
        raise InputError("no 'by_student' folds", file="folds.json")
    fold_of: dict[str, int] = {}
    for number, members in enumerate(folds["by_student"]):
        for student in members:
            if student in fold_of:
                raise InputError(f"student {student} is in folds {fold_of[student]} and {number}",
                                 file="folds.json", column="by_student")
            fold_of[student] = number
    missing = [s for s in students if s not in fold_of]
    if missing:
        raise InputError(f"student {missing[0]} (and {len(missing) - 1} more) in no fold",
                         file="folds.json", column="by_student")
    return np.array([fold_of[s] for s in students], dtype=np.int64)


def run_knowledge(problems: pl.DataFrame, submissions: pl.DataFrame, folds: dict,
                  embeddings: np.ndarray, cfg: KnowledgeParams) -> tuple[dict, pl.DataFrame]:
    """5-fold KT by student: (report for knowledge.json, mastery before every attempt).

    `embeddings` holds one code embedding per submissions row (shape (N, 0) for none).
    mastery columns: student_id, problem_id, step, fold, mastery (list[float64] over `kcs`).
    """
    problems, submissions = validate_problems(problems), validate_submissions(submissions, problems)
    kcs = kc_vocabulary(problems)
    data = build_histories(problems, submissions, embeddings, kcs)
    fold_of = _fold_of_students(folds, data.students)
    per_fold, mastery_parts = [], []
    for fold in range(len(folds["by_student"])):
        test = np.flatnonzero(fold_of == fold)
        train = np.flatnonzero(fold_of != fold)
        if not len(test):
            continue
        model, history = train_tracer(data, train, cfg, desc=f"KT fold {fold}")
        profiles, probability = trace(model, data, test, cfg.aggregate)
        test_rows = np.isin(data.attempts.student, test)
        test_attempts = data.attempts.select(test)
        scores = {"lstm": prediction_metrics(test_attempts.correct, probability)}
        for name, baseline in BASELINES.items():
            scores[name] = prediction_metrics(test_attempts.correct,
                                              baseline(data.attempts.select(train), test_attempts))
        per_fold.append({"fold": fold, "epochs": len(history), "models": scores})
        mastery_parts.append(data.table.filter(pl.Series(test_rows))
                             .select("student_id", "problem_id", "step")
                             .with_columns(pl.lit(fold, dtype=pl.Int64).alias("fold"),
                                           pl.Series("mastery", profiles.tolist(),
                                                     dtype=pl.List(pl.Float64))))
    mastery = pl.concat(mastery_parts).sort("student_id", "step")
    report = {"kcs": kcs,
              "models": mean_over_folds([f["models"] for f in per_fold]),
              "per_fold": per_fold,
              "n_attempts": len(data.table), "n_students": len(data.students)}
    if "true_mastery" in submissions.columns:
        report["spearman"] = mastery_spearman(mastery, submissions, problems, kcs)
    return report, mastery


def train_final_model(problems: pl.DataFrame, submissions: pl.DataFrame, embeddings: np.ndarray,
                      cfg: KnowledgeParams) -> tuple[KnowledgeTracer, dict]:
    """The model trained on every student (the stage's checkpoint) and its config for reloading."""
    kcs = kc_vocabulary(problems)
    data = build_histories(problems, submissions, embeddings, kcs)
    model, history = train_tracer(data, np.arange(len(data.students)), cfg, desc="KT all students")
    config = {"kcs": kcs, "problems": problems["problem_id"].to_list(),
              "embedding_dim": int(data.embedding.shape[-1]), "epochs": len(history), **asdict(cfg)}
    return model, config


def save_checkpoint(model: KnowledgeTracer, config: dict, folder: str | Path) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), folder / "model.pt")
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def load_checkpoint(folder: str | Path) -> tuple[KnowledgeTracer, dict]:
    """A model written by `save_checkpoint`, ready for `trace`, and its config."""
    folder = Path(folder)
    if not (folder / "model.pt").exists():
        raise InputError("no KT checkpoint here; run the knowledge stage first", file=folder)
    config = json.loads((folder / "config.json").read_text())
    model = KnowledgeTracer(config["embedding_dim"], len(config["kcs"]), config["projection"],
                            config["hidden_size"], config["dropout"],
                            len(config["problems"]) if config["problem_ease"] else 0)
    model.load_state_dict(torch.load(folder / "model.pt", weights_only=True))
    return model.eval(), config


# --- figure and files ------------------------------------------------------------------------

def plot_mastery(mastery: pl.DataFrame, submissions: pl.DataFrame, problems: pl.DataFrame,
                 kcs: list[str], student_id: str | None = None, n_kcs: int = 4):
    """One student's estimated (solid) and, where known, true (dashed) mastery for the KCs that
    student practised most; dots mark correct (top) and incorrect (bottom) attempts."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    student_id = student_id or mastery["student_id"].min()
    rows = (mastery.filter(pl.col("student_id") == student_id)
            .join(submissions.drop("problem_id"), on=["student_id", "step"], how="left")
            .join(problems.select("problem_id", "kcs"), on="problem_id", how="left").sort("step"))
    practised = rows.explode("kcs")["kcs"].value_counts(sort=True)
    shown = sorted(practised.sort(["count", "kcs"], descending=[True, False])["kcs"].head(n_kcs))
    steps = rows["step"].to_numpy()
    estimated = np.array(rows["mastery"].to_list())
    true = np.array(rows["true_mastery"].to_list()) if "true_mastery" in rows.columns else None
    figure, axes = plt.subplots(figsize=(9, 4.8))
    for colour, kc in zip(plt.cm.tab10.colors, shown):
        j = kcs.index(kc)
        axes.plot(steps, estimated[:, j], color=colour, linewidth=2, label=f"{kc} (estimated)")
        if true is not None:
            axes.plot(steps, true[:, j], color=colour, linestyle="--", label=f"{kc} (true)")
    right = rows["correct"].to_numpy()
    axes.scatter(steps[right], np.full(right.sum(), 1.04), color="tab:green", s=18,
                 label="correct attempt", clip_on=False)
    axes.scatter(steps[~right], np.full((~right).sum(), -0.04), color="tab:red", s=18, marker="x",
                 label="incorrect attempt", clip_on=False)
    fold = rows["fold"][0]
    axes.set(xlabel="step (attempt number in the student's history)",
             ylabel="mastery before the attempt", ylim=(-0.08, 1.08),
             title=f"Student {student_id}: {'estimated vs true' if true is not None else 'estimated'}"
                   f" mastery\n(from the fold {fold} model, which never saw this student)")
    axes.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    return figure


def code_embeddings(submissions: pl.DataFrame, cfg: KnowledgeParams,
                    cache_path: str | Path | None = None) -> np.ndarray:
    """One embedding per submissions row, reusing (and refreshing) the .npz cache at `cache_path`."""
    from kaser.embeddings import EmbeddingCache
    codes = submissions["code"].fill_null("").to_list()
    if cache_path is None:
        return EmbeddingCache(cfg.embedding_model, cfg.embedding_backend).embed(
            codes, cfg.embedding_batch_size)
    cache = EmbeddingCache.read(cache_path, cfg.embedding_model, cfg.embedding_backend)
    vectors = cache.embed(codes, cfg.embedding_batch_size)
    cache.write(cache_path, keep=codes)
    return vectors


def run_folder(data_dir: str | Path, report_dir: str | Path, cfg: KnowledgeParams,
               final_model: bool = True) -> dict:
    """Read a dataset folder, run the 5 folds (and the all-students model), write every output:
    data_dir/{code_embeddings.npz, mastery.parquet, knowledge/}, report_dir/{knowledge.json,
    mastery.png}. Returns the report."""
    data_dir, report_dir = Path(data_dir), Path(report_dir)
    problems, submissions = read_dataset(data_dir)
    folds = read_folds(data_dir / "folds.json")
    started = time.perf_counter()
    embeddings = code_embeddings(submissions, cfg, data_dir / "code_embeddings.npz")
    embedded = time.perf_counter()
    report, mastery = run_knowledge(problems, submissions, folds, embeddings, cfg)
    report_dir.mkdir(parents=True, exist_ok=True)
    mastery.write_parquet(data_dir / "mastery.parquet")
    (report_dir / "knowledge.json").write_text(json.dumps(report, indent=2) + "\n")
    figure = plot_mastery(mastery, submissions, problems, report["kcs"])
    figure.savefig(report_dir / "mastery.png", dpi=120)
    if final_model:
        model, config = train_final_model(problems, submissions, embeddings, cfg)
        save_checkpoint(model, config, data_dir / "knowledge")
    finished = time.perf_counter()
    models = ", ".join(f"{name} {m['auc']:.3f}" for name, m in report["models"].items()
                       if m["auc"] is not None)
    spearman = report.get("spearman", {}).get("attempted_kcs")
    print(f"knowledge: {report['n_attempts']} attempts; embeddings {embedded - started:.0f} s, "
          f"training {finished - embedded:.0f} s; AUC {models}"
          + (f"; mastery Spearman {spearman:.3f}" if spearman is not None else ""))
    return report
