"""Simulating students on a problem: predicted code and errors per knowledge profile (paper §5.2).

    kaser simulate --problem statement.txt --language java --kcs "loops,conditionals" \\
        --mastery "loops=0.2,conditionals=0.8" -k 5 --out runs/sim
    kaser simulate --problem "Return the sum of a and b." --language python --kcs arithmetic \\
        --population 30 --dataset synthetic-python --out runs/class
    kaser simulate ... --reference solution.py [--tests tests.json]   # judge logic, not only syntax
    kaser simulate ... --signature "def add(a, b):"   # the header the student sees (else --reference's)
    python stages/sweep.py synthetic-python      # the knowledge sweep: reports/<ds>/knowledge_sweep.md

`simulate` samples K codes per mastery profile from the base model + the dataset's KASER adapter
of the first training run, the first of params.yaml `model.splits` x `model.folds`
(models/<ds>/grpo/<split>-<fold>, chosen by the caller: kaser.cli, stages/sweep.py), with the
student prompt of training (the problem's starter signature included: `--signature`, else the
header of the `--reference` solution, else none; `problem_signature`), and finds each code's
errors with the static annotator (`judge_codes`; with a model solution, by differential testing
against it). `error_distribution` turns a population's samples into the forecast share of codes
showing each error: what an instructor would see before the assignment goes out.
`knowledge_sweep` is the paper's Table 4: one problem of a dataset, three profiles (low, mixed,
high mastery on its KCs), K codes each, judged against the problem's candidate errors.

Departures from the paper, and why:
1. A new problem without `--reference` or `--tests` has nothing to run against: its errors are
   what the compiler / parser finds (Syntax category) and nothing else. The output says so. With
   a model solution (`--reference FILE`) the predicted codes are tested differentially against
   it on generated inputs, as real submissions without tests are, and `--tests FILE` (JSON
   `[{"input": [args...], "expected": value}, ...]`) adds the staff's own cases.
   Logical and runtime errors need tests; the knowledge sweep, on a dataset problem, has them
   (the judge the caller opens, over the dataset's tests and correct submissions).
2. A population is drawn from the dataset's knowledge-tracing profiles (mastery.parquet rows, a
   seeded draw) projected onto the requested KCs; the paper does not describe class forecasts.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.predictor.sampling import GenerateParams

NEW_PROBLEM_NOTE = ("The problem has no tests, so errors come from the compiler / parser only "
                    "(syntax level); runtime and logical errors are not judged.")
REFERENCE_NOTE = ("Errors are judged as for real submissions: compiled / parsed, run on {what}, "
                  "and wrong answers explained by repair, so runtime and logical errors are found.")
SWEEP_PROFILES = {"low": (0.15,), "mixed": (0.2, 0.85), "high": (0.9,)}   # levels, cycled over KCs


# ---------------------------------------------------------------- profiles

def parse_kcs(text: str) -> list[str]:
    """The --kcs list: comma-separated, trimmed, no empties or repeats.

    >>> parse_kcs(" loops, conditionals ")
    ['loops', 'conditionals']
    """
    kcs = [kc.strip() for kc in text.split(",")]
    if not all(kcs):
        raise InputError(f"--kcs: empty KC in {text!r}")
    repeated = sorted({kc for kc in kcs if kcs.count(kc) > 1})
    if repeated:
        raise InputError(f"--kcs: KC {repeated[0]!r} given twice")
    return kcs


def parse_mastery(text: str, kcs: Sequence[str]) -> dict[str, float]:
    """The --mastery profile "kc=level,..." naming exactly `kcs`, each level in [0, 1].

    >>> parse_mastery("loops=0.2, conditionals=0.8", ["conditionals", "loops"])
    {'conditionals': 0.8, 'loops': 0.2}
    >>> parse_mastery("loops=2", ["loops"])
    Traceback (most recent call last):
    kaser.InputError: --mastery: 'loops=2': level 2.0 is outside [0, 1]
    """
    profile: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        kc, sep, value = (s.strip() for s in item.partition("="))
        try:
            level = float(value) if sep and kc else None
        except ValueError:
            level = None
        if level is None or level != level:   # also NaN
            raise InputError(f"--mastery: {item!r} is not kc=level (e.g. loops=0.2)")
        if kc not in kcs:
            raise InputError(f"--mastery: {item!r}: KC {kc!r} is not in --kcs ({', '.join(kcs)})")
        if kc in profile:
            raise InputError(f"--mastery: {item!r}: KC {kc!r} given twice")
        if not 0.0 <= level <= 1.0:
            raise InputError(f"--mastery: {item!r}: level {level} is outside [0, 1]")
        profile[kc] = level
    missing = [kc for kc in kcs if kc not in profile]
    if missing:
        raise InputError(f"--mastery: no level for KC(s) {', '.join(missing)}")
    return {kc: profile[kc] for kc in kcs}


def population_profiles(mastery: pl.DataFrame, vocabulary: Sequence[str], kcs: Sequence[str],
                        size: int, seed: int) -> list[dict[str, float]]:
    """`size` profiles over `kcs`: a seeded draw of mastery rows (vocabulary order), projected.

    >>> rows = pl.DataFrame({"mastery": [[0.1, 0.9], [0.4, 0.6]]})
    >>> population_profiles(rows, ["arrays", "loops"], ["loops"], 3, 0)
    [{'loops': 0.6}, {'loops': 0.6}, {'loops': 0.9}]
    """
    if size < 1:
        raise InputError(f"--population must be at least 1, not {size}")
    unknown = [kc for kc in kcs if kc not in vocabulary]
    if unknown:
        raise InputError(f"--kcs: KC(s) {', '.join(unknown)} unknown to the dataset; known: "
                         f"{', '.join(vocabulary)}")
    if mastery.height == 0:
        raise InputError("no mastery rows to draw a population from", file="mastery.parquet")
    index = [list(vocabulary).index(kc) for kc in kcs]
    rng = random.Random(seed)
    vectors = mastery["mastery"].to_list()
    drawn = [vectors[rng.randrange(len(vectors))] for _ in range(size)]
    return [{kc: round(float(vector[i]), 2) for kc, i in zip(kcs, index)} for vector in drawn]


def sweep_levels(kcs: Sequence[str]) -> dict[str, dict[str, float]]:
    """The knowledge sweep's three profiles over `kcs`: low, mixed (alternating), high.

    >>> sweep_levels(["a", "b", "c"])["mixed"]
    {'a': 0.2, 'b': 0.85, 'c': 0.2}
    """
    return {name: {kc: levels[i % len(levels)] for i, kc in enumerate(kcs)}
            for name, levels in SWEEP_PROFILES.items()}


# ---------------------------------------------------------------- sampling and errors

def sample_codes(statement: str, language: str, kcs: Sequence[str],
                 profiles: Sequence[dict[str, float]], model_path, adapter,
                 params: GenerateParams, dtype: str = "auto", *,
                 signature: str | None) -> list[list[str]]:
    """`params.k` predicted codes per profile, with the training prompt (`signature`: the
    problem's starter signature, None when unknown)."""
    from kaser.predictor.base_model import load_tokenizer
    from kaser.predictor.rewards import completion_code
    from kaser.predictor.sampling import sample_completions
    from kaser.predictor.prompt import build_prompt_text

    tokenizer = load_tokenizer(model_path)
    prompts = [build_prompt_text(tokenizer, statement, kcs, [p[kc] for kc in kcs], language,
                                 signature=signature) for p in profiles]
    from kaser.predictor.sampling import Completion
    texts = sample_completions(model_path, adapter, prompts, params, dtype)
    # each code keeps whether the token budget cut it off (Completion.truncated)
    return [[Completion(completion_code(text), getattr(text, "truncated", None)) for text in own]
            for own in texts]


def judge_codes(statement: str, language: str, codes: Sequence[str], *, tests=None,
                reference: str | None = None, signature: str | None = None,
                settings) -> dict[str, list[dict]]:
    """code -> [{category, label}] for each distinct code, by the static annotator on a problem
    row built from the statement: with `tests` (problems.parquet format) and / or a `reference`
    (differential testing on generated inputs) it finds runtime and logical errors, without
    either only what the compiler / parser finds (NEW_PROBLEM_NOTE). The tests call the function
    `signature` names (else the reference's entry); `settings` are the annotator's (a
    StaticParams, from params.yaml `annotate`)."""
    from kaser.errors.static_annotator import annotate_static

    problem = {"problem_id": "new_problem", "language": language, "statement": statement,
               "tests": tests, "reference": reference, "signature": signature}
    distinct = list(dict.fromkeys(codes))
    found = annotate_static(problem, distinct, (), settings=settings)
    return {code: [{"category": e.category, "label": e.label} for e in errors]
            for code, errors in zip(distinct, found)}


def simulate(statement: str, language: str, kcs: Sequence[str],
             profiles: Sequence[dict[str, float]], model_path, adapter, params: GenerateParams,
             dtype: str = "auto", k: int | None = None, *, tests=None, reference=None,
             signature: str | None = None, settings) -> list[dict]:
    """[{profile, samples: [{code, truncated, errors: [{category, label}]}]}] per profile, K
    samples each, prompted with the starter `signature` (None: unknown); errors by
    `judge_codes`. A code the token budget cut off is marked `truncated` and not judged."""
    if k is not None:
        params = dataclasses.replace(params, k=k)
    codes = sample_codes(statement, language, kcs, profiles, model_path, adapter, params, dtype,
                         signature=signature)

    def cut(code) -> bool:
        return bool(getattr(code, "truncated", False))

    # a code the token budget cut off is not judged: its syntax errors are the budget's
    found = judge_codes(statement, language, [str(c) for own in codes for c in own if not cut(c)],
                        tests=tests, reference=reference, signature=signature, settings=settings)
    return [{"profile": dict(profile),
             "samples": [{"code": str(code), "truncated": cut(code),
                          "errors": [] if cut(code) else found[str(code)]} for code in own]}
            for profile, own in zip(profiles, codes)]


def error_distribution(results: Sequence[dict]) -> dict[str, float]:
    """Share of the sampled codes that finished showing each error label, highest first.

    >>> error_distribution([{"samples": [{"errors": [{"label": "Missing semicolon"}]},
    ...                                  {"errors": []}]}])
    {'Missing semicolon': 0.5}
    """
    samples = [s for r in results for s in r["samples"] if not s.get("truncated")]
    if not samples:
        return {}
    counts = Counter(label for s in samples for label in {e["label"] for e in s["errors"]})
    return {label: n / len(samples) for label, n in sorted(counts.items(), key=lambda c: (-c[1], c[0]))}


# ---------------------------------------------------------------- reports

def _code_block(code: str, language: str) -> str:
    fence = "````" if "```" in code else "```"
    return f"{fence}{language}\n{code or '(empty)'}\n{fence}"


def simulation_markdown(simulation: dict) -> str:
    """simulation.md: per profile its mastery table and each sampled code with its errors; for a
    population the forecast error distribution first."""
    problem = simulation["problem"]
    lines = ["# Simulated students", "", f"Language: {problem['language']}; model: "
             f"{simulation['adapter']}; {simulation['k']} sample(s) per profile.", "",
             "> " + problem["statement"].replace("\n", "\n> "), ""]
    if problem.get("signature"):
        lines += [f"Starter signature (shown to the model): `{problem['signature']}`", ""]
    lines += [f"_{simulation['note']}_", ""]
    if "error_distribution" in simulation:
        lines += [f"## Forecast error distribution ({len(simulation['profiles'])} students)", "",
                  "| error | share of codes |", "|---|---|"]
        lines += [f"| {label} | {share:.0%} |" for label, share in simulation["error_distribution"].items()]
        if not simulation["error_distribution"]:
            lines.append("| (none found) | |")
        lines.append("")
    for number, result in enumerate(simulation["profiles"], start=1):
        lines += [f"## Profile {number}", "", "| KC | mastery |", "|---|---|"]
        lines += [f"| {kc} | {level:.2f} |" for kc, level in result["profile"].items()]
        for sample_number, sample in enumerate(result["samples"], start=1):
            errors = (", ".join(f"{e['label']} ({e['category']})" for e in sample["errors"]) or "none found"
                      if not sample.get("truncated") else "cut off by the token budget (not annotated)")
            lines += ["", f"Sample {sample_number}: errors: {errors}", "",
                      _code_block(sample["code"], problem["language"])]
        lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Text for one markdown table cell (newlines as <br>, HTML and pipes escaped)."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
    return escaped.replace("\n", "<br>") or "(empty)"


def errors_text(found) -> str:
    """What the sweep prints for one sample: the candidate errors found, or for a verdict
    (kaser.errors.judge.Verdict) without them whether the code is correct; None: cut off.

    >>> errors_text({"Off-by-one error"}), errors_text(set()), errors_text(None)
    ('Off-by-one error', 'none', 'cut off by the token budget (not judged)')
    """
    if found is None:
        return "cut off by the token budget (not judged)"
    labels = getattr(found, "errors", found)
    if labels:
        return ", ".join(sorted(labels))
    if not hasattr(found, "clean"):
        return "none"
    if found.clean:
        return "none (correct)"
    other = ", ".join(sorted(found.diagnosed))
    return ("no candidate error, not correct" + (f": {other}" if other else "")
            + ("" if found.valid else " (does not parse/compile)"))


def sweep_markdown(problem: dict, levels: dict[str, dict[str, float]],
                   codes: dict[str, list[str]], errors: dict[str, list]) -> str:
    """Table 4 layout: KCs with each profile's mastery, then each sample's code and errors
    (label sets, or verdicts; None for a code the token budget cut off)."""
    names = list(levels)
    kcs = list(problem["kcs"])
    lines = [f"# Knowledge sweep: {problem['problem_id']}", "",
             "> " + problem["statement"].replace("\n", "\n> "), "",
             "Predicted codes from the KASER adapter for three mastery profiles on the problem's KCs; "
             "errors judged against the problem's candidate errors (params.yaml `judge`).", "",
             "| KC | " + " | ".join(f"{n} mastery" for n in names) + " |",
             "|---|" + "---|" * len(names)]
    lines += [f"| {_cell(kc)} | " + " | ".join(f"{levels[n][kc]:.2f}" for n in names) + " |" for kc in kcs]
    for sample in range(max(len(codes[n]) for n in names)):
        lines.append(f"| predicted code {sample + 1} | " + " | ".join(
            f"<code>{_cell(codes[n][sample])}</code>" for n in names) + " |")
        lines.append(f"| errors {sample + 1} | " + " | ".join(
            _cell(errors_text(errors[n][sample])) for n in names) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the knowledge sweep

def sweep_problem(folds: dict, problem_errors: dict[str, list[str]], fold: int) -> str:
    """The first problem of test fold `fold` (by problem) with the most candidate errors.

    >>> sweep_problem({"by_problem": [["p2", "p1", "p3"]]}, {"p1": ["a", "b"], "p2": ["a"],
    ...                "p3": ["a", "c"]}, 0)
    'p1'
    """
    by_problem = folds.get("by_problem") or []
    if not 0 <= fold < len(by_problem) or not by_problem[fold]:
        raise InputError(f"no test fold {fold} by problem", file="folds.json")
    return max(by_problem[fold], key=lambda p: (len(problem_errors.get(p, ())), -by_problem[fold].index(p)))


def knowledge_sweep(dataset_folder, problem_id: str, model_path, adapter, params: GenerateParams,
                    judge, dtype: str = "auto") -> str:
    """reports/<ds>/knowledge_sweep.md for one problem of the dataset in `dataset_folder` (paper
    Table 4); `judge` is an open kaser.errors.judge.reward_judge over the same folder (the
    evaluation judge). A code is correct only when the judge finds no error at all; a code cut
    off by the token budget is marked, not judged."""
    from kaser.data.contracts import read_dataset

    folder = Path(dataset_folder)
    problems, _ = read_dataset(folder)
    rows = problems.filter(pl.col("problem_id") == problem_id)
    if rows.height == 0:
        raise InputError(f"unknown problem {problem_id!r}", file=folder / "problems.parquet",
                         column="problem_id")
    problem = rows.row(0, named=True)
    path = folder / "problem_errors.json"
    if not path.is_file():
        raise InputError("not found; run the cluster stage first", file=path)
    candidates = json.loads(path.read_text()).get(problem_id, [])
    levels = sweep_levels(problem["kcs"])
    sampled = sample_codes(problem["statement"], problem["language"], problem["kcs"],
                           list(levels.values()), model_path, adapter, params, dtype,
                           signature=problem["signature"])
    codes = dict(zip(levels, sampled))
    errors = {}
    for name, own in codes.items():
        verdicts = iter(judge.verdicts(problem_id, [c for c in own if not getattr(c, "truncated", False)],
                                       candidates))
        errors[name] = [None if getattr(c, "truncated", False) else next(verdicts) for c in own]
    return sweep_markdown(problem, levels, codes, errors)


# ---------------------------------------------------------------- for the command (kaser.cli)

def read_statement(problem: str) -> str:
    try:
        path = Path(problem)
        is_file = path.is_file()
    except OSError:          # a statement too long to be a file name
        is_file = False
    text = path.read_text() if is_file else problem
    if not text.strip():
        raise InputError("--problem: the problem statement is empty")
    return text.strip()


def problem_signature(signature: str | None, reference: str | None, language: str) -> str | None:
    """The starter signature `kaser simulate` shows: `--signature` (whitespace collapsed), else
    the header of the `--reference` solution's entry function, else None.

    >>> problem_signature(None, "def helper(x):\\n    return x\\ndef add(a, b):\\n    return helper(a) + b", "python")
    'def add(a, b):'
    >>> problem_signature("public int add(int a,\\n  int b)", None, "java")
    'public int add(int a, int b)'
    """
    from kaser.data.contracts import signature_name
    from kaser.data.signatures import starter_signature

    if signature is not None:
        signature = " ".join(signature.split())
        if signature_name(signature, language) is None:
            raise InputError(f"--signature {signature!r} declares no {language} function "
                             "(e.g. `def add(a, b):` or `public int add(int a, int b)`)")
        return signature
    return starter_signature(reference, language) if reference else None


def read_reference(path: str | None) -> str | None:
    """The --reference file's code (a model solution), or None."""
    if path is None:
        return None
    file = Path(path)
    if not file.is_file():
        raise InputError("not found", file=file)
    code = file.read_text().replace("\r\n", "\n").strip()
    if not code:
        raise InputError("--reference: the model solution is empty", file=file)
    return code


def read_tests(path: str | None) -> list[dict] | None:
    """--tests FILE: JSON `[{"input": [args...], "expected": value}, ...]` -> problems.parquet
    test cases (JSON text); a malformed case is an InputError naming its 1-based row."""
    if path is None:
        return None
    file = Path(path)
    if not file.is_file():
        raise InputError("not found", file=file)
    try:
        cases = json.loads(file.read_text())
    except ValueError as err:
        raise InputError(f"not JSON: {err}", file=file) from None
    if not isinstance(cases, list) or not cases:
        raise InputError('expected a non-empty list [{"input": [args...], "expected": value}, ...]',
                         file=file)
    tests = []
    for row, case in enumerate(cases, start=1):
        if not isinstance(case, dict) or set(case) != {"input", "expected"}:
            raise InputError('each case is {"input": [args...], "expected": value}', file=file,
                             column="input", row=row)
        if not isinstance(case["input"], list):
            raise InputError("input must be a list of arguments", file=file, column="input", row=row)
        tests.append({"input": json.dumps(case["input"]), "expected": json.dumps(case["expected"])})
    return tests


def check_model_folders(base: Path, adapter: Path, dataset: str) -> tuple[Path, Path]:
    """(base, adapter) when the base model folder and the trained KASER adapter exist, else an
    error saying which stage makes them."""
    base, adapter = Path(base), Path(adapter)
    if not base.is_dir():
        raise InputError("base model folder not found; run `dvc repro base_model` first", file=base)
    if not (adapter / "adapter_config.json").is_file():
        raise InputError(f"no trained KASER adapter; run `dvc repro grpo@{dataset}` first", file=adapter)
    return base, adapter


def dataset_population(folder: Path, dataset: str, kcs: list[str], size: int,
                       seed: int) -> list[dict[str, float]]:
    """`population_profiles` drawn from the dataset in `folder` (problems + mastery.parquet), in
    prompt levels (kaser.predictor.prompt.prompt_levels: percentiles, as the model was trained on)."""
    folder = Path(folder)
    for name in ("problems.parquet", "mastery.parquet"):
        if not (folder / name).is_file():
            stage = "prepare" if name == "problems.parquet" else "knowledge"
            raise InputError(f"not found; run `dvc repro {stage}@{dataset}` first", file=folder / name)
    from kaser.data.contracts import kc_vocabulary
    vocabulary = kc_vocabulary(pl.read_parquet(folder / "problems.parquet", columns=["kcs"]))
    from kaser.predictor.prompt import prompt_levels
    mastery = prompt_levels(pl.read_parquet(folder / "mastery.parquet", columns=["mastery"]))
    return population_profiles(mastery, vocabulary, kcs, size, seed)


def simulation_record(statement: str, language: str, kcs: list[str], dataset: str, adapter,
                      k: int, results: list[dict], population: bool, *, reference: str | None = None,
                      tests: list | None = None, signature: str | None = None) -> dict:
    """simulation.json: the problem, the model, the note (what the codes were judged against) and
    every profile's samples (and, for a population, the forecast error distribution)."""
    what = " and ".join(w for w, given in (("inputs answered by the reference solution", reference),
                                           ("the given tests", tests)) if given)
    simulation = {"problem": {"statement": statement, "language": language, "kcs": kcs,
                              "signature": signature},
                  "dataset": dataset, "adapter": str(adapter), "k": k,
                  "note": REFERENCE_NOTE.format(what=what) if what else NEW_PROBLEM_NOTE,
                  "profiles": results}
    if population:
        simulation["error_distribution"] = error_distribution(results)
    return simulation
