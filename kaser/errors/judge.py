"""The judge: which of a problem's candidate errors does a predicted code contain?

    with reward_judge(folder, JudgeParams("static"), settings) as judge:   # settings: a StaticParams
        judge("java_lucky_sum", code, ["Off-by-one error", "Missing semicolon"])  # -> set of labels
        judge.verdicts("java_lucky_sum", [code], candidates)  # -> [Verdict(errors, clean, valid, diagnosed)]

Used by the GRPO error reward (`kaser.predictor.rewards.make_error_reward`) and by the evaluation
(IoU@K); the pipeline's stages open params.yaml `judge` for the reward and `evaluate.judge` for the
evaluation. `folder` holds one dataset (problems.parquet, submissions.parquet and the
cluster stage's error_labels.parquet); the caller passes the settings and names the LLM answer cache.
`judge_name` is what, besides the code and the candidates, decides an answer: every setting and
every source file the judge runs, for caches of judged codes (the evaluate stage's).

Backends (`JudgeParams.backend`, params.yaml `judge.backend`):
- "static": the static annotator (compiler + tests + repair-based diagnosis, kaser.errors.static_annotator)
  finds the code's errors as standard labels; each is mapped to its cluster label through the
  cluster stage's error_labels.parquet, and only candidates are kept.
- "openai": the authors' judge prompt through the cached LLM client (kaser.errors.llm_tasks.judge_llm),
  choosing from the candidate list; answers are cached in the SQLite file the caller names
  (each pipeline stage its own, see stages/_runner.py).

Departures from the paper, and why:
1. With the static backend the judge does not read the candidate list to decide: it diagnoses
   the code, then keeps the diagnoses that are candidates. A grounded judge cannot be talked into
   an error by the list; the restriction to candidates keeps the label space the paper's.
2. `verdicts` also says whether the code is clean (no error of any kind: it parses/compiles and
   passes the tests, or matches the references on generated inputs) and valid (no Syntax-category
   error: it parses (Python) / compiles (Java) on its own), so that a code whose only diagnoses
   lie outside the candidate list (prose, a `pass` stub, truncated text) is not taken for a
   correct one (the authors' correctness branch). The openai judge names the candidate
   errors; its clean and valid come from the static diagnosis, grounded in the compiler and the
   tests.
3. A code that names its function otherwise than the problem's entry is valid: the wrong name
   is one error, "Wrong function name" (Runtime category), and where the code has exactly one
   function the tests could mean, the tests run against it, so its behaviour is judged too
   (kaser.errors.static_annotator, "The function the tests call"). A correct code under another
   name is valid and not clean, with the wrong name as its only diagnosis; a renamed code with a
   bug gets the bug's label beside it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import polars as pl

from kaser import InputError
from kaser.data.contracts import read_dataset
from kaser.sources import ROOT, expand, import_closure


@dataclass(frozen=True)
class JudgeParams:
    backend: str  # static | openai


class Verdict(NamedTuple):
    """What the judge says about one predicted code."""

    errors: frozenset[str]      # the candidate errors found in it
    clean: bool                 # no error of any kind: parses/compiles and passes the tests
    valid: bool                 # parses (Python) / compiles (Java) on its own: no Syntax-category
                                # error (a wrong function name is Runtime: departure 3)
    diagnosed: frozenset[str]   # every error found (cluster labels where known), listed or not


class _Diagnosis(NamedTuple):
    labels: frozenset[str]
    valid: bool


class StaticJudge:
    """Static diagnosis mapped into cluster labels, cached per (problem, code) in memory (LRU).

    Each problem's test plan (its tests, or inputs answered by references when it has none) is
    built once; every `judge_many` call is then one annotator run (one sandbox batch per round)
    for the codes not seen before.
    """

    def __init__(self, problems: pl.DataFrame, submissions: pl.DataFrame,
                 error_labels: pl.DataFrame, settings, cache_size: int = 100_000):
        self._problems = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
        correct = submissions.filter(pl.col("correct"))
        self._correct = {pid: list(dict.fromkeys(group["code"].to_list()))[:5]
                         for (pid,), group in correct.group_by("problem_id")}
        self._cluster_of = {(row["category"], row["label"]): row["cluster_label"]
                            for row in error_labels.iter_rows(named=True)}
        self._settings = settings
        self._specs: dict = {}
        self._found: OrderedDict[tuple[str, str], _Diagnosis] = OrderedDict()
        self._cache_size = cache_size

    def test_plan(self, problem_id: str):
        """The problem's test plan (its tests, or reference answers on generated inputs), built
        on first use and kept for the judge's lifetime."""
        from kaser.errors.static_annotator import problem_specs
        if problem_id not in self._specs:
            if problem_id not in self._problems:
                raise InputError(f"unknown problem {problem_id!r}", column="problem_id")
            correct = self._correct.get(problem_id, [])
            self._specs[problem_id] = problem_specs([self._problems[problem_id]], [correct], [correct],
                                                    self._settings)[0]
        return self._specs[problem_id]

    def _diagnose(self, problem_id: str, codes: list[str]) -> dict[tuple[str, str], _Diagnosis]:
        from kaser.errors.static_annotator import annotate_programs
        [found] = annotate_programs([self.test_plan(problem_id)], [codes], self._settings)
        fresh = {(problem_id, code): _Diagnosis(
                     frozenset(self._cluster_of.get((e.category, e.label), e.label) for e in errors),
                     not any(e.category == "Syntax" for e in errors))
                 for code, errors in zip(codes, found)}
        self._found.update(fresh)
        while len(self._found) > self._cache_size:
            self._found.popitem(last=False)
        return fresh

    def verdicts(self, problem_id: str, codes: Sequence[str],
                 candidate_errors: Sequence[str]) -> list[Verdict]:
        """A verdict per code; one annotator run for all codes not seen before."""
        new = [c for c in dict.fromkeys(codes) if (problem_id, c) not in self._found]
        fresh = self._diagnose(problem_id, new) if new else {}
        candidates = set(candidate_errors)
        verdicts = []
        for code in codes:
            key = (problem_id, code)
            if key in self._found:
                self._found.move_to_end(key)
            found = fresh.get(key) or self._found.get(key) or _Diagnosis(frozenset(), True)
            verdicts.append(Verdict(found.labels & candidates, not found.labels, found.valid,
                                    found.labels))
        return verdicts

    def judge_many(self, problem_id: str, codes: Sequence[str],
                   candidate_errors: Sequence[str]) -> list[set[str]]:
        """The candidate errors found in each code; one annotator run for all new codes."""
        return [set(v.errors) for v in self.verdicts(problem_id, codes, candidate_errors)]

    def __call__(self, problem_id: str, code: str, candidate_errors: Sequence[str]) -> set[str]:
        return self.judge_many(problem_id, [code], candidate_errors)[0]


class LLMJudge:
    """The paper's LLM judge over the cached client (answers cached on disk, not here); whether
    a code is clean and valid comes from `grounding` (a StaticJudge) when given, else a code is
    clean when the LLM names no candidate error (the paper's text)."""

    def __init__(self, problems: pl.DataFrame, client, grounding: StaticJudge | None = None):
        self._problems = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
        self._client = client
        self._grounding = grounding

    def __call__(self, problem_id: str, code: str, candidate_errors: Sequence[str]) -> set[str]:
        from kaser.errors.llm_tasks import judge_llm
        problem = self._problems[problem_id]
        return judge_llm(problem["statement"], problem["language"], code, list(candidate_errors),
                         self._client)

    def judge_many(self, problem_id: str, codes: Sequence[str],
                   candidate_errors: Sequence[str]) -> list[set[str]]:
        return [self(problem_id, code, candidate_errors) for code in codes]

    def verdicts(self, problem_id: str, codes: Sequence[str],
                 candidate_errors: Sequence[str]) -> list[Verdict]:
        named = self.judge_many(problem_id, codes, candidate_errors)
        if self._grounding is None:
            return [Verdict(frozenset(found), not found, True, frozenset(found)) for found in named]
        grounded = self._grounding.verdicts(problem_id, codes, candidate_errors)
        return [Verdict(frozenset(found), g.clean and not found, g.valid,
                        frozenset(found) | g.diagnosed) for found, g in zip(named, grounded)]


@contextmanager
def reward_judge(folder: Path, cfg: JudgeParams, settings, llm=None, llm_client=None,
                 cache_path: Path | None = None) -> Iterator:
    """The judge `cfg` for the dataset in `folder` (needs the cluster outputs): backend static
    with the annotator's `settings` (kaser.errors.static_annotator.StaticParams), backend
    openai with the client settings `llm` and `llm_client` (kaser.llm.LLMParams,
    LLMClientParams) and its answers cached at `cache_path`."""
    folder = Path(folder)
    check_backend(cfg)
    problems, submissions = read_dataset(folder)
    path = folder / "error_labels.parquet"
    if not path.is_file():
        raise InputError("not found; run the cluster stage first", file=path)
    # the static judge decides, and grounds the LLM's answer: whether the code is clean / valid
    static = StaticJudge(problems, submissions, pl.read_parquet(path), settings)
    if cfg.backend == "static":
        yield static
    else:
        from kaser.llm import ChatClient
        if cache_path is None:
            raise InputError("the openai judge needs a file for its answer cache")
        with ChatClient(llm, llm_client, cache_path, progress=False) as client:
            yield LLMJudge(problems, client, grounding=static)


def check_backend(cfg: JudgeParams) -> None:
    if cfg.backend not in ("static", "openai"):
        raise InputError(f"unknown judge backend {cfg.backend!r} (static or openai)")


# ---------------------------------------------------------------- what decides an answer

PACKAGE = ROOT   # the folder holding kaser/


def judge_sources(root: Path = PACKAGE) -> list[Path]:
    """Every kaser source file the judge can run: kaser/errors/judge.py and its import closure
    (kaser.sources: imports inside functions too, so both backends' annotator, sandbox and LLM
    client, and the data files they read) and every file of kaser/code/, whose sandbox also runs
    some as programs (python_worker.py, the Java harness), not imports."""
    judge = root / "kaser" / "errors" / "judge.py"
    code = {p for p in (root / "kaser" / "code").iterdir() if p.is_file() and p.suffix in (".py", ".java")}
    return expand({judge} | set(import_closure(judge, root)) | code)


def judge_name(cfg: JudgeParams, settings=None, llm=None, root: Path = PACKAGE,
               inputs: Sequence[Path] = ()) -> str:
    """Everything besides the code and the candidates that decides the judge's answers: its
    backend, the annotator settings (backend static) or the LLM settings that shape an answer
    (backend openai: model and decoding), a hash of every source file in `judge_sources`, and of
    the dataset files the judge reads, `inputs` (problems.parquet: tests and statements;
    submissions.parquet: the correct codes it takes as references; error_labels.parquet: raw
    label -> cluster label). A cache of judged codes keyed by it never answers with a judgement
    made otherwise."""
    import dataclasses
    import hashlib
    import json
    check_backend(cfg)
    if cfg.backend == "static":
        if settings is None:
            raise TypeError("judge_name: the static judge is decided by its annotator settings; "
                            "pass them (a StaticParams)")
        decides = {"annotate": dataclasses.asdict(settings)}
    else:
        if llm is None:
            raise InputError("the openai judge needs the `llm` settings")
        decides = {"llm": {"model": llm.model, **llm.decoding()}}
    files = judge_sources(root)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for path in inputs:
        digest.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return f"{json.dumps(dataclasses.asdict(cfg) | decides, sort_keys=True)}:{digest.hexdigest()[:16]}"
