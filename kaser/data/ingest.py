"""Ingestion of the public releases (CodeWorkout ProgSnap2, FalconCode) into a dataset folder.

    kaser ingest codeworkout ROOT --out DIR [--problems FILE] [--kc-file problem_kc.json]
    kaser ingest falconcode ROOT --out DIR
    python stages/prepare.py codeworkout             # the DVC stage, for a `datasets:` entry

The result holds to the contracts of `kaser.data.contracts` (validated on write). Bad input stops with a
`kaser.InputError` that names the file, the column and the first offending row. Rows are counted
from 1 at the first data row of a file (the header is not a row), in every format; in a CSV a row
is a record, which may span lines. Every CSV passes `kaser.data.strict_csv.check_csv` before it
is read (UTF-8 only, no NUL byte, cells under MAX_CELL_CHARS, no repeated column, regular
records); an .xlsx problem table gets the same header and cell checks.
Ingestion keeps, per (student, problem), the first scored attempt, and numbers each student's kept
attempts 0..n-1 in the order they were made (`step`); an `Order` that is empty, NaN, infinite or
repeated within one (student, problem) stops it (`_order_numbers`), as the first attempt would be
a guess. Only problems with at least one submission
are kept. A problem's `signature` (the starter header the student saw) is the CodeWorkout problem
table's `signature` cell where it has one (the public tables do not), else the most common header
among the problem's correct first submissions, else among all its first submissions
(`submission_signatures`), null where none defines a function.
Departures from the paper's pipeline, and why:
1. CodeWorkout KCs from a KCGen-KT `problem_kc.json` are the KC descriptions by default
   (`kc_level="description"`); the KCGen-KT loader uses the cluster names (`kc_level="cluster"`).
   Both are offered: the public file has about a dozen clusters and a few hundred descriptions,
   while the paper reports 50 KCs for CodeWorkout, so neither level is certain to be theirs.
2. FalconCode scores are divided by the problem's `max_score` so every dataset has score in
   [0, 1] and correct == (score == 1); the release scores in points.
3. A FalconCode `id` that names problems in several courses becomes `id@course_id`, since the
   releases key problems by (id, course_id) and the prompts may differ between semesters.
4. Line ends in code and statements become "\n" (CodeWorkout code is stored with "\r\n" or
   "\r"), so similarity metrics and the model see one convention.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.data.contracts import (PROBLEM_SCHEMA, ROW, dataset_counts, empty_text, fail_if,
                        write_dataset)
from kaser.data.strict_csv import check_cells, check_csv, check_header

# The 18 binary concept columns of the CodeWorkout (CSEDM challenge) problem table, in its order.
CODEWORKOUT_CONCEPTS = (
    "If/Else", "NestedIf", "While", "For", "NestedFor", "Math+-*/", "Math%", "LogicAndNotOr",
    "LogicCompareNum", "LogicBoolean", "StringFormat", "StringConcat", "StringIndex", "StringLen",
    "StringEqual", "CharEqual", "ArrayIndex", "DefFunction",
)
FALCONCODE_FILES = ("falconcode_v1_table_problems.csv", "falconcode_v1_code_samples.csv",
                    "falconcode_v1_table_runs.csv")

# ---------------------------------------------------------------------------- raw files

def _scan_csv(path: Path, required: Sequence[str]) -> pl.LazyFrame:
    """A CSV as text columns plus ROW, not yet read; a missing file or column, or a file that
    fails the strict checks, is an InputError."""
    header = check_csv(path)
    _require(header, required, path)
    frame = pl.scan_csv(path, infer_schema=False, encoding="utf8")
    names = _collect(frame.collect_schema, path).names()
    return frame.rename(dict(zip(names, header))).with_row_index(ROW, offset=1)


def _read_csv(path: Path, required: Sequence[str]) -> pl.DataFrame:
    return _collect(_scan_csv(path, required).collect, path)


def _collect(read, path):
    try:
        return read()
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(f"cannot read as CSV: {str(err).splitlines()[0]}", file=path) from None


def _require(columns: Sequence[str], required: Sequence[str], path) -> None:
    for name in required:
        if name not in columns:
            raise InputError(f"missing column; found {', '.join(columns)}", file=path, column=name)


def _read_xlsx(path: Path, required: Sequence[str]) -> pl.DataFrame:
    """First sheet of a workbook as text columns plus ROW (blank rows skipped, still counted)."""
    import openpyxl   # only needed for the challenge's .xlsx problem table

    if not path.is_file():
        raise InputError("not found", file=path)
    sheet = openpyxl.load_workbook(path, read_only=True, data_only=True).worksheets[0]
    rows = sheet.iter_rows(values_only=True)
    header = [str(h).strip() if h is not None else "" for h in next(rows, ())]
    check_header([name for name in header if name], path)
    records = [(n, row) for n, row in enumerate(rows, start=1)
               if any(v not in (None, "") for v in row)]
    for n, row in records:
        check_cells([_cell_text(v) or "" for v in row], header, path, n)
    columns = {name: [_cell_text(row[i]) if i < len(row) else None for _, row in records]
               for i, name in enumerate(header) if name}
    df = pl.DataFrame(columns, schema={name: pl.String for name in columns})
    _require(df.columns, required, path)
    return df.with_columns(pl.Series(ROW, [n for n, _ in records], dtype=pl.UInt32))


def _cell_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _clean_id(name: str) -> pl.Expr:
    """IDs as text: '12', 12 and '12.0' (a spreadsheet round trip) are the same id."""
    return pl.col(name).str.strip_chars().str.replace(r"^(-?\d+)\.0+$", "${1}").alias(name)


def _number(df: pl.DataFrame, name: str, path) -> pl.DataFrame:
    """Column `name` as Float64; a non-empty cell that is not a number is an InputError."""
    parsed = pl.col(name).str.strip_chars().cast(pl.Float64, strict=False)
    bad = df.filter(parsed.is_null() & ~empty_text(name))
    if bad.height:
        raise InputError(f"not a number: {bad[name][0]!r}", file=path, column=name,
                         row=bad[ROW][0])
    return df.with_columns(parsed.alias(name))


def _order_numbers(runs: pl.DataFrame, path, student: str, problem: str) -> pl.DataFrame:
    """Column Order as numbers. An Order that is empty, NaN or infinite, or that one (student,
    problem) pair holds twice, is an InputError at its row: either leaves the first attempt, and so
    every count in metadata.json, up to the file's row order."""
    runs = _number(runs.sort(ROW), "Order", path)   # text that is no number at all: "not a number"
    fail_if(runs, ~pl.col("Order").is_finite(), "Order is empty, NaN or infinite; it decides which "
            "attempt came first", path, "Order")
    repeat = runs.filter(pl.int_range(pl.len()).over(student, problem, "Order") > 0)
    if repeat.height:
        again = repeat.row(0, named=True)
        first = runs.filter((pl.col(student) == again[student]) & (pl.col(problem) == again[problem])
                            & (pl.col("Order") == again["Order"]))[ROW][0]
        raise InputError(f"Order {again['Order']:g} again for student {again[student]!r} on problem "
                         f"{again[problem]!r} (first at row {first}): which attempt came first is "
                         "ambiguous", file=path, column="Order", row=again[ROW])
    return runs


def _moment(df: pl.DataFrame, name: str, path, strict: bool) -> pl.Expr:
    """A sort key for a timestamp column: numbers, else ISO date-times, else the text itself."""
    text = pl.col(name).str.strip_chars()
    present = df.select(text.is_not_null() & (text != "")).to_series()
    for parsed in (text.cast(pl.Float64, strict=False),
                   text.str.to_datetime(strict=False, time_zone="UTC"),
                   text.str.to_datetime(strict=False)):
        ok = df.select(parsed.is_not_null()).to_series()
        if (ok | ~present).all():
            return parsed
    if strict:
        first = df.filter(~ok & present)
        raise InputError(f"cannot order by this time: {first[name][0]!r}", file=path, column=name,
                         row=first[ROW][0])
    return text


def _first_attempts(runs: pl.DataFrame, order: list[pl.Expr]) -> pl.DataFrame:
    """First run per (student_id, problem_id) in `order` (then file order), with its step."""
    runs = runs.with_columns(*(key.alias(f"_key{i}") for i, key in enumerate(order)))
    keys = [f"_key{i}" for i in range(len(order))] + [ROW]
    first = runs.sort(keys, nulls_last=True).unique(["student_id", "problem_id"], keep="first",
                                                    maintain_order=True)
    # `first` is in attempt order, so a running count per student is the step
    step = pl.int_range(pl.len()).over("student_id").cast(pl.Int64)
    return first.with_columns(step.alias("step"))


def _code_for(runs: pl.DataFrame, runs_key: str, runs_path, codes: pl.LazyFrame, codes_key: str,
              code_column: str, codes_path) -> pl.DataFrame:
    """Attach each run's code (reading only the codes runs need); an id without code is an
    InputError naming the run's row."""
    codes = (codes.select(_clean_id(codes_key).alias(runs_key), pl.col(code_column).alias("code"),
                          ROW)
             .join(runs.lazy().select(runs_key).unique(), on=runs_key, how="semi"))
    codes = _collect(lambda: codes.collect(engine="streaming"), codes_path).sort(ROW)
    distinct = codes.filter(pl.struct(runs_key, "code").is_first_distinct())
    fail_if(distinct, pl.int_range(pl.len()).over(runs_key) > 0,
             "the same id appears with two different codes", codes_path, codes_key)
    joined = runs.join(distinct.select(runs_key, "code").unique(runs_key), on=runs_key, how="left")
    missing = joined.filter(empty_text("code")).sort(ROW)
    if missing.height:
        raise InputError(f"{missing[runs_key][0]!r} has no code in {codes_path}", file=runs_path,
                         column=runs_key, row=missing[ROW][0])
    return joined


def _submissions(first: pl.DataFrame) -> pl.DataFrame:
    return first.select("student_id", "problem_id", "step", _unix_lines("code"), "score",
                        (pl.col("score") == 1.0).alias("correct"))


def _unix_lines(name: str) -> pl.Expr:
    return pl.col(name).str.replace_all("\r\n?", "\n").alias(name)


def submission_signatures(submissions: pl.DataFrame, language: str) -> dict[str, str | None]:
    """problem_id -> the most common starter signature (kaser.data.signatures) among the
    problem's correct submissions, else among all of them; None where no code defines a function.

    >>> subs = pl.DataFrame({"problem_id": ["p", "p", "p"], "correct": [False, True, False],
    ...                      "code": ["def f(x):\\n  return 0", "def g(x):\\n  return x", "def f(x): pass"]})
    >>> submission_signatures(subs, "python")
    {'p': 'def g(x):'}
    """
    from kaser.data.signatures import common_signature

    found = {}
    for (pid,), group in submissions.group_by("problem_id", maintain_order=True):
        right = group.filter(pl.col("correct"))["code"].to_list()
        found[pid] = (common_signature(right, language)
                      or common_signature(group["code"].to_list(), language))
    return found


def _check_score(df: pl.DataFrame, path, column: str) -> None:
    bad = df.filter(~pl.col("score").is_between(0.0, 1.0)).sort(ROW)
    if bad.height:
        raise InputError(f"score {bad['score'][0]} is outside [0, 1]", file=path, column=column,
                         row=bad[ROW][0])


def _with_signatures(problems: pl.DataFrame, submissions: pl.DataFrame, language: str,
                     given: dict[str, str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`problems` with the `signature` column: `given` (problem_id -> a problem table's header)
    where it has one, else `submission_signatures`."""
    found = submission_signatures(submissions, language) | {
        pid: " ".join(text.split()) for pid, text in (given or {}).items() if text and text.strip()}
    signatures = pl.Series("signature", [found.get(p) for p in problems["problem_id"]], dtype=pl.String)
    return problems.with_columns(signatures), submissions


# ---------------------------------------------------------------------------- CodeWorkout

def _normalise_text(text: str) -> str:
    return " ".join(text.split())


def _kc_map(path: Path, kc_level: str) -> dict[str, list[str]]:
    """KCGen-KT problem_kc.json: problem text -> [[KC description, KC cluster], ...]."""
    if not path.is_file():
        raise InputError("not found", file=path)
    try:
        raw = json.loads(path.read_text(encoding="utf8"))
    except ValueError as err:
        raise InputError(f"not JSON: {err}", file=path) from None
    position = {"description": 0, "cluster": 1}[kc_level]
    mapping = {}
    for text, pairs in (raw.items() if isinstance(raw, dict) else [(None, None)]):
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) > position and all(isinstance(s, str) for s in p)
                for p in pairs):
            raise InputError("expected {problem text: [[KC description, KC cluster], ...]}; "
                             f"see the entry for {str(text)[:60]!r}", file=path)
        mapping[_normalise_text(text)] = list(dict.fromkeys(p[position].strip() for p in pairs))
    return mapping


def _codeworkout_table(path: Path, concepts: Sequence[str]) -> pl.DataFrame:
    """The problem table (.csv or .xlsx): ProblemID, Requirement and the concept flags as 0/1."""
    reader = _read_xlsx if path.suffix.lower() in (".xlsx", ".xlsm") else _read_csv
    table = reader(path, ("ProblemID", "Requirement", *concepts))
    table = table.with_columns(_clean_id("ProblemID"))
    fail_if(table, empty_text("ProblemID"), "empty ProblemID", path, "ProblemID")
    fail_if(table, pl.int_range(pl.len()).over("ProblemID") > 0, "duplicate ProblemID", path,
             "ProblemID")
    fail_if(table, empty_text("Requirement"), "empty Requirement", path, "Requirement")
    for name in concepts:
        table = _number(table, name, path)
        fail_if(table, ~pl.col(name).fill_null(0.0).is_in([0.0, 1.0]),
                 "concept flag must be 0 or 1", path, name)
    return table


def _codeworkout_runs(path: Path) -> pl.DataFrame:
    """Scored Run.Program events of MainTable.csv with their order keys; other columns unread."""
    needed = ("SubjectID", "ProblemID", "CodeStateID", "EventType", "Score")
    events = _scan_csv(path, needed)
    names = events.collect_schema().names()
    if "Order" not in names and "ServerTimestamp" not in names:
        raise InputError("needs a column Order or ServerTimestamp to order events", file=path,
                         column="Order")
    columns = [c for c in (*needed, "Order", "ServerTimestamp") if c in names]
    runs = _collect(events.select(*columns, ROW)
                    .filter(pl.col("EventType").str.strip_chars() == "Run.Program").collect, path)
    runs = _number(runs, "Score", path).filter(pl.col("Score").is_not_null())
    if runs.is_empty():
        raise InputError("no Run.Program events with a Score", file=path, column="EventType")
    runs = runs.with_columns(_clean_id(n) for n in ("SubjectID", "ProblemID", "CodeStateID"))
    for name in ("SubjectID", "CodeStateID"):
        fail_if(runs, empty_text(name), f"empty {name}", path, name)
    if "Order" in runs.columns:
        runs = _order_numbers(runs, path, "SubjectID", "ProblemID")
    return runs.rename({"SubjectID": "student_id", "ProblemID": "problem_id", "Score": "score"})


def ingest_codeworkout(root, problems_file=None, kc_file=None, *,
                       kc_level: str = "description") -> tuple[pl.DataFrame, pl.DataFrame]:
    """(problems, submissions) from a ProgSnap2 CodeWorkout release and its problem table.

    KCs are the concept columns set to 1, or with `kc_file` (KCGen-KT problem_kc.json) the KC
    descriptions (or cluster names) of the problem's Requirement text, whitespace-normalised.
    """
    if kc_level not in ("description", "cluster"):
        raise InputError(f"kc_level must be description or cluster, not {kc_level!r}")
    root = Path(root)
    table_path = Path(problems_file) if problems_file else root / "problems.csv"
    main_path = root / "Data" / "MainTable.csv"
    concepts = () if kc_file else CODEWORKOUT_CONCEPTS
    table = _codeworkout_table(table_path, concepts)
    runs = _codeworkout_runs(main_path)
    unknown = runs.join(table, left_on="problem_id", right_on="ProblemID", how="anti").sort(ROW)
    if unknown.height:
        raise InputError(f"ProblemID {unknown['problem_id'][0]!r} is not in {table_path}",
                         file=main_path, column="ProblemID", row=unknown[ROW][0])
    _check_score(runs, main_path, "Score")
    order = [pl.col("Order")] if "Order" in runs.columns else []
    if "ServerTimestamp" in runs.columns:   # breaks ties of Order, or is the only order
        order.append(_moment(runs, "ServerTimestamp", main_path, strict=not order))
    codes_path = root / "Data" / "CodeStates" / "CodeStates.csv"
    first = _code_for(_first_attempts(runs, order), "CodeStateID", main_path,
                      _scan_csv(codes_path, ("CodeStateID", "Code")), "CodeStateID", "Code",
                      codes_path)

    table = table.filter(pl.col("ProblemID").is_in(first["problem_id"].implode()))
    if kc_file:
        kc_map = _kc_map(Path(kc_file), kc_level)
        kcs = []
        for pid, text, row in table.select("ProblemID", "Requirement", ROW).iter_rows():
            if _normalise_text(text) not in kc_map:
                raise InputError(f"no entry for problem {pid} ({table_path} row {row}): "
                                 f"{_normalise_text(text)[:80]!r}", file=kc_file)
            kcs.append(kc_map[_normalise_text(text)])
    else:
        kcs = [[c for c, flag in zip(concepts, flags) if flag == 1.0]
               for flags in table.select(concepts).rows()]
    problems = pl.DataFrame({
        "problem_id": table["ProblemID"], "language": "java",
        "statement": table.select(_unix_lines("Requirement").str.strip_chars()).to_series(),
        "kcs": kcs,
        "tests": None, "reference": None, "signature": None}, schema=PROBLEM_SCHEMA)
    given = (dict(table.select("ProblemID", "signature").iter_rows())
             if "signature" in table.columns else None)
    return _with_signatures(problems, _submissions(first), "java", given)


# ---------------------------------------------------------------------------- FalconCode

class _PlainText(HTMLParser):
    """HTML to readable text: block elements become line breaks, <pre> keeps its layout."""

    BLOCKS = {"p", "div", "br", "li", "ul", "ol", "pre", "tr", "table", "h1", "h2", "h3", "h4",
              "h5", "h6", "blockquote", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.in_pre = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.BLOCKS:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        self.in_pre += tag == "pre"

    def handle_endtag(self, tag):
        self.in_pre -= tag == "pre" and self.in_pre > 0
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        self.parts.append(data if self.in_pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Plain text of an HTML prompt.

    >>> html_to_text("<p>Write <b>add</b>(a,&nbsp;b)</p><ul><li>returns a+b</li></ul>")
    'Write add(a, b)\\n\\n- returns a+b'
    """
    parser = _PlainText()
    parser.feed(html)
    parser.close()
    lines = [line.rstrip() for line in "".join(parser.parts).split("\n")]
    text = "\n".join(line if line.strip() else "" for line in lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def ingest_falconcode(root) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(problems, submissions) from a FalconCode v1 release folder (the three CSV tables)."""
    root = Path(root)
    problems_path, codes_path, runs_path = (root / name for name in FALCONCODE_FILES)
    known = ("id", "course_id", "prompt", "type", "max_score")
    table = _read_csv(problems_path, known).with_columns(_clean_id("id"), _clean_id("course_id"))
    concepts = [c for c in table.columns if c not in (*known, ROW)]
    for name in concepts:
        flag = pl.col(name).str.strip_chars().cast(pl.Float64, strict=False)
        fail_if(table, ~(empty_text(name) | flag.is_in([0.0, 1.0])),
                 f"unexpected column: not a 0/1 concept column (known columns: {', '.join(known)})",
                 problems_path, name)
        table = table.with_columns(flag.fill_null(0.0).alias(name))
    fail_if(table, empty_text("id"), "empty id", problems_path, "id")
    fail_if(table, pl.int_range(pl.len()).over("id", "course_id") > 0,
             "duplicate (id, course_id)", problems_path, "id")
    table = _number(table, "max_score", problems_path)
    several = pl.col("course_id").n_unique().over("id") > 1
    table = table.with_columns(
        pl.when(several).then(pl.format("{}@{}", "id", "course_id")).otherwise("id")
        .alias("problem_id"))

    runs = _read_csv(runs_path, ("student_id", "course_id", "problem_id", "code_hash", "score",
                                 "timestamp"))
    runs = runs.with_columns(_clean_id("student_id"), _clean_id("course_id"),
                             _clean_id("problem_id"), _clean_id("code_hash"))
    runs = _number(runs, "score", runs_path).filter(pl.col("score").is_not_null()
                                                    & (pl.col("score") != -1.0))
    if runs.is_empty():
        raise InputError("no scored runs (score other than -1)", file=runs_path, column="score")
    fail_if(runs, empty_text("student_id"), "empty student_id", runs_path, "student_id")
    runs = runs.rename({"problem_id": "id"}).join(
        table.select("id", "course_id", "problem_id", "max_score"), on=["id", "course_id"],
        how="left").sort(ROW)
    fail_if(runs, pl.col("problem_id").is_null(),
             f"(problem_id, course_id) is not in {problems_path.name}", runs_path, "problem_id")
    divisor = pl.when(pl.col("max_score") > 0).then(pl.col("max_score")).otherwise(1.0)
    runs = runs.with_columns(pl.col("score") / divisor)
    _check_score(runs, runs_path, "score")
    first = _first_attempts(runs, [_moment(runs, "timestamp", runs_path, strict=True)])
    codes = _scan_csv(codes_path, ("hash", "source_code"))
    first = _code_for(first, "code_hash", runs_path, codes, "hash", "source_code", codes_path)

    table = table.filter(pl.col("problem_id").is_in(first["problem_id"].implode()))
    statements = [html_to_text(p or "") for p in table.select(_unix_lines("prompt")).to_series()]
    for statement, row in zip(statements, table[ROW].to_list()):
        if not statement:
            raise InputError("empty prompt", file=problems_path, column="prompt", row=row)
    kcs = [[c for c, flag in zip(concepts, flags) if flag == 1.0]
           for flags in table.select(concepts).rows()] if concepts else [[]] * table.height
    problems = pl.DataFrame({
        "problem_id": table["problem_id"], "language": "python", "statement": statements,
        "kcs": kcs, "tests": None, "reference": None, "signature": None}, schema=PROBLEM_SCHEMA)
    return _with_signatures(problems, _submissions(first), "python")


# ---------------------------------------------------------------------------- the command

def ingest_command(args) -> None:
    """`kaser ingest codeworkout|falconcode ROOT --out DIR`: write both tables, print counts."""
    if args.format == "codeworkout":
        problems, submissions = ingest_codeworkout(args.root, args.problems, args.kc_file,
                                                   kc_level=getattr(args, "kc_level", "description"))
    else:
        if args.problems or args.kc_file:
            raise InputError("--problems and --kc-file apply to codeworkout only")
        problems, submissions = ingest_falconcode(args.root)
    write_dataset(args.out, problems, submissions)
    counts = ", ".join(f"{k} {v}" for k, v in dataset_counts(problems, submissions).items())
    print(f"{args.format} -> {args.out}: {counts}")
