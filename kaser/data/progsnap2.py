"""Ingestion of any ProgSnap2 dialect (CSEDM-style course logs) into a dataset folder.

    kaser ingest progsnap2 ROOT --out DIR [--problems FILE] [--language python|java]
        [--events Submit,Run.Program] [--score-threshold 1.0] [--kcs derived|openai]
    python stages/prepare.py itap-python        # a `datasets:` entry with `source: progsnap2`

What the standard and its dialects allow, and what is read:
- The main table is `MainTable.csv` in ROOT or ROOT/Data; code states are the first table found
  among `CodeStates/CodeStates.csv`, `CodeStates.csv`, `CodeState.csv` beside it (columns
  CodeStateID, Code).
- Submissions are the events of the submission-like types (`Submit`, `Project.Submit`,
  `Run.Program`) present in the table that carry a correctness value, or the types `events` names.
- Correctness comes from `Score` (numbers in [0, 1]; correct when score >= `score_threshold`)
  or, without scores, from `Correct` (TRUE/FALSE, true/false, 1/0); `NA` or empty rows are left
  out and counted.
- Problems are keyed by `ProblemID`; where an `AssignmentID` column gives one problem id under
  several assignments, the key is `AssignmentID/ProblemID`.
- The language comes from `ToolInstances` ("ITAP; Python", "Java 8; CodeWorkout") or `language`.
- Events are ordered by `Order`, else `ServerTimestamp` (ties broken by file order), and the
  first submission per (student, problem) is kept, numbered per student, as for CodeWorkout. A
  submission whose `Order` is empty, NaN or infinite, or repeats that of an earlier submission of
  the same student and problem, stops the run: the first attempt would be a guess.
- A backslash ending a program (an export artifact: ITAP's codes end in `\"` where the writer
  escaped the closing quote) is removed and counted; no program can end in a line continuation.
- A problem's `reference` is the correct code the most students submitted at any attempt (the
  log's later attempts included), so the static annotator can test a problem whose first
  submissions are all wrong against a correct peer; null where nobody solved it.
Every choice made from the data is printed once (`report`); every refusal is one
`kaser.InputError` naming file, column and row.

Statements, KCs and starter signatures come from the optional problem table (CSV or XLSX: an id
column `problem_id`/`ProblemID`/`id`, a `statement`/`Requirement`/`prompt` column, an optional
`kcs` column of `;`-separated names, an optional `signature` column: the header the student saw,
`def oneToN(n):`). A problem without a signature gets the most common header among its correct
first submissions, else among all its first submissions, else its reference's
(`kaser.data.signatures`), null where no code defines a function. A problem without a
statement gets one built from what the data gives, the entry function's most common name and
parameters in the submissions (`Write the Python function oneToN(n).`); a problem without KCs
gets KCs derived from its correct submissions (`kaser.data.derived_kcs`: `derived` offline from
syntax trees, or `openai`).

Departures from CodeWorkout ingestion, and why:
1. With a `score_threshold` below 1, a score at or above it is stored as 1.0, since the dataset
   contract has correct == (score == 1).
2. Code-state folders of the standard's directory layout (one file per code state) are not read;
   only the table layout, which every CSEDM release uses.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.code.syntax import field, find, parse, text
from kaser.data.contracts import PROBLEM_SCHEMA, ROW, empty_text, fail_if
from kaser.data.ingest import (_clean_id, _code_for, _collect, _first_attempts, _moment,
                               _number, _order_numbers, _read_csv, _read_xlsx, _scan_csv, _submissions,
                               submission_signatures)
from kaser.data.signatures import starter_signature

SUBMISSION_EVENTS = ("Submit", "Project.Submit", "Run.Program")
CODE_TABLES = ("CodeStates/CodeStates.csv", "CodeStates.csv", "CodeState.csv")
TRUE_WORDS, FALSE_WORDS = ("true", "1", "1.0", "yes"), ("false", "0", "0.0", "no")
MISSING_WORDS = ("", "na", "nan", "null", "none")
# a backslash ending a program: left by exports that escaped the closing quote (`...x*2\"`); no
# Python or Java program can end in one, so it is removed (and counted)
STRAY_BACKSLASH = r"\\\s*$"
ID_COLUMNS, STATEMENT_COLUMNS, KC_COLUMNS = (("problem_id", "ProblemID", "id"),
                                            ("statement", "Requirement", "prompt"), ("kcs", "KCs"))
SIGNATURE_COLUMNS = ("signature", "Signature")


# ---------------------------------------------------------------------------- files

def main_table(root) -> Path:
    """ROOT/MainTable.csv or ROOT/Data/MainTable.csv."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("not a folder", file=root)
    for folder in (root, root / "Data"):
        if (folder / "MainTable.csv").is_file():
            return folder / "MainTable.csv"
    raise InputError("no MainTable.csv here or under Data/", file=root)


def code_table(main: Path) -> Path:
    for name in CODE_TABLES:
        if (main.parent / name).is_file():
            return main.parent / name
    raise InputError(f"no code-state table beside MainTable.csv (looked for {', '.join(CODE_TABLES)})",
                     file=main.parent)


# ---------------------------------------------------------------------------- events

def _correct_flags(events: pl.DataFrame, path) -> pl.DataFrame:
    """`Correct` as score 1.0/0.0 (null where NA); any other word is an InputError."""
    word = pl.col("Correct").str.strip_chars().str.to_lowercase()
    fail_if(events, ~(word.is_in(TRUE_WORDS + FALSE_WORDS + MISSING_WORDS) | word.is_null()),
            "Correct must be TRUE/FALSE, true/false or 1/0 (NA for unknown)", path, "Correct")
    return events.with_columns(pl.when(word.is_in(TRUE_WORDS)).then(1.0)
                               .when(word.is_in(FALSE_WORDS)).then(0.0).otherwise(None)
                               .alias("score"))


def _language(events: pl.DataFrame, language: str | None, path) -> str:
    if language is not None:
        if language not in ("python", "java"):
            raise InputError(f"language must be python or java, not {language!r}")
        return language
    if "ToolInstances" not in events.columns:
        raise InputError("no ToolInstances column to tell the language; pass --language python|java",
                         file=path, column="ToolInstances")
    tools = pl.col("ToolInstances").str.to_lowercase()
    named = events.with_columns(pl.when(tools.str.contains(r"\bpython")).then(pl.lit("python"))
                                .when(tools.str.contains(r"\bjava\b")).then(pl.lit("java"))
                                .otherwise(None).alias("_language"))
    fail_if(named, pl.col("_language").is_null(),
            "names neither Python nor Java; pass --language python|java", path, "ToolInstances")
    fail_if(named, pl.col("_language") != pl.col("_language").first(),
            f"a second language (the first row says {named['_language'][0]}); ingest one "
            "language at a time", path, "ToolInstances")
    return named["_language"][0]


def read_events(root, *, events: Sequence[str] | None = None, score_threshold: float = 1.0,
                language: str | None = None, report: Callable[[str], None] = print
                ) -> tuple[pl.DataFrame, str, dict]:
    """(first submissions with code, language, choices) of a ProgSnap2 folder; each choice made
    from the data is one helper below, and all of them are reported in one line."""
    path = main_table(root)
    table = _main_events(path)
    choices: dict = {"main_table": str(path)}
    table, scored = _correctness(table, path)
    choices["correctness"] = (f"Score (correct when >= {score_threshold})" if scored
                              else "Correct flags")
    kinds = _submission_kinds(table, events, path)
    choices["events"] = kinds
    runs, choices["left_out_unscored"] = _scored_runs(table, kinds, scored, score_threshold, path)
    runs = _clean_ids(runs, path)
    choices["language"] = _language(runs, language, path)
    problem, choices["problem_key"] = _problem_key(runs)
    runs = runs.with_columns(pl.col("SubjectID").alias("student_id"), problem.alias("problem_id"))
    runs, order, choices["order"] = _event_order(runs, path)
    codes_path = code_table(path)
    choices["code_states"] = str(codes_path)
    first, choices["stray_backslashes_removed"] = _first_submissions(runs, order, path, codes_path)
    report(f"progsnap2: submissions are {', '.join(kinds)} events; correctness from "
           f"{choices['correctness']}; {choices['left_out_unscored']} such events without a "
           f"value left out; problems keyed by {choices['problem_key']}; language "
           f"{choices['language']}; order by {choices['order']}; code from {codes_path.name} "
           f"({choices['stray_backslashes_removed']} first submissions ended in a stray backslash, "
           "removed)")
    return first, choices["language"], choices


def _main_events(path: Path) -> pl.DataFrame:
    """The main table's columns that ingestion reads (EventType stripped); a table with no
    correctness column or no order column is an InputError."""
    scan = _scan_csv(path, ("EventType", "SubjectID", "ProblemID", "CodeStateID"))
    names = scan.collect_schema().names()
    if "Score" not in names and "Correct" not in names:
        raise InputError("needs a Score or a Correct column to tell right from wrong", file=path,
                         column="Score")
    if "Order" not in names and "ServerTimestamp" not in names:
        raise InputError("needs a column Order or ServerTimestamp to order events", file=path,
                         column="Order")
    wanted = ("EventType", "SubjectID", "ProblemID", "CodeStateID", "AssignmentID", "Score",
              "Correct", "Order", "ServerTimestamp", "ToolInstances")
    table = _collect(scan.select(*(n for n in wanted if n in names), ROW).collect, path)
    return table.with_columns(pl.col("EventType").str.strip_chars())


def _correctness(table: pl.DataFrame, path) -> tuple[pl.DataFrame, bool]:
    """(table with a `score` column, whether it came from Score): Score where that column has
    numbers, else the Correct flags."""
    if "Score" in table.columns:
        numbered = _number(table, "Score", path)
        if numbered["Score"].is_not_null().any():
            return numbered.with_columns(pl.col("Score").alias("score")), True
    return _correct_flags(table, path), False


def _submission_kinds(table: pl.DataFrame, events: Sequence[str] | None, path) -> list[str]:
    """The event types that are submissions: those `events` names (each must be present), else
    the submission-like types that carry a correctness value."""
    present = table["EventType"].unique(maintain_order=True).to_list()
    if events:
        unknown = [e for e in events if e not in present]
        if unknown:
            raise InputError(f"event type {unknown[0]!r} not in the table; present: "
                             f"{', '.join(map(str, present))}", file=path, column="EventType")
        return list(events)
    with_values = set(table.filter(pl.col("score").is_not_null())["EventType"].to_list())
    kinds = [e for e in SUBMISSION_EVENTS if e in with_values]
    if not kinds:
        raise InputError(f"no submission-like event ({', '.join(SUBMISSION_EVENTS)}) with a "
                         f"correctness value; present: {', '.join(map(str, present))}; "
                         "name one with --events", file=path, column="EventType")
    return kinds


def _scored_runs(table: pl.DataFrame, kinds: list[str], scored: bool, score_threshold: float,
                 path) -> tuple[pl.DataFrame, int]:
    """(the `kinds` events with a correctness value, how many without one were left out); a
    score must be in [0, 1], and one at or above `score_threshold` counts as 1.0."""
    runs = table.filter(pl.col("EventType").is_in(kinds))
    left_out = int(runs["score"].is_null().sum())
    runs = runs.filter(pl.col("score").is_not_null())
    if runs.is_empty():
        raise InputError(f"no {'/'.join(kinds)} event has a correctness value", file=path,
                         column="Score" if scored else "Correct")
    if scored:
        bad = runs.filter(~pl.col("score").is_between(0.0, 1.0)).sort(ROW)
        if bad.height:
            raise InputError(f"score {bad['score'][0]} is outside [0, 1]", file=path,
                             column="Score", row=bad[ROW][0])
        runs = runs.with_columns(pl.when(pl.col("score") >= score_threshold).then(1.0)
                                 .otherwise(pl.col("score")).alias("score"))
    return runs, left_out


def _clean_ids(runs: pl.DataFrame, path) -> pl.DataFrame:
    """SubjectID, ProblemID, CodeStateID (and AssignmentID where there is one) as clean ids; an
    empty SubjectID, ProblemID or CodeStateID is an InputError."""
    runs = runs.with_columns(_clean_id(n) for n in ("SubjectID", "ProblemID", "CodeStateID"))
    for name in ("SubjectID", "ProblemID", "CodeStateID"):
        fail_if(runs, empty_text(name), f"empty {name}", path, name)
    if "AssignmentID" in runs.columns:
        runs = runs.with_columns(_clean_id("AssignmentID"))
    return runs


def _problem_key(runs: pl.DataFrame) -> tuple[pl.Expr, str]:
    """(the problem id expression, what it is): AssignmentID/ProblemID where a ProblemID stands
    under several assignments, else ProblemID."""
    if "AssignmentID" not in runs.columns:
        return pl.col("ProblemID"), "ProblemID (no AssignmentID column)"
    shared = runs.filter(~empty_text("AssignmentID")).group_by("ProblemID").agg(
        pl.col("AssignmentID").n_unique().alias("n"))
    if not (shared["n"] > 1).any():
        return pl.col("ProblemID"), "ProblemID (each in one assignment)"
    return ((pl.when(empty_text("AssignmentID")).then(pl.col("ProblemID"))
             .otherwise(pl.format("{}/{}", "AssignmentID", "ProblemID"))),
            "AssignmentID/ProblemID (a ProblemID is in several assignments)")


def _event_order(runs: pl.DataFrame, path) -> tuple[pl.DataFrame, list[pl.Expr], str]:
    """(runs with Order as numbers, the sort keys, what they are): Order, then ServerTimestamp;
    a timestamp that cannot be ordered is an InputError only where there is no Order."""
    order = []
    if "Order" in runs.columns:
        runs = _order_numbers(runs, path, "student_id", "problem_id")
        order.append(pl.col("Order"))
    if "ServerTimestamp" in runs.columns:
        order.append(_moment(runs, "ServerTimestamp", path, strict=not order))
    return runs, order, " then ".join(c for c in ("Order", "ServerTimestamp") if c in runs.columns)


def _first_submissions(runs: pl.DataFrame, order: list[pl.Expr], path, codes_path
                       ) -> tuple[pl.DataFrame, int]:
    """(the first submission per student and problem with its code and the problem's reference,
    how many of those codes ended in a stray backslash, now removed)."""
    first = _code_for(_first_attempts(runs, order), "CodeStateID", path,
                      _scan_csv(codes_path, ("CodeStateID", "Code")), "CodeStateID", "Code",
                      codes_path)
    first = first.join(_references(runs, path, codes_path), on="problem_id", how="left")
    stray = first["code"].str.contains(STRAY_BACKSLASH)
    return first.with_columns(pl.col("code").str.replace(STRAY_BACKSLASH, "")), int(stray.sum())


def _references(runs: pl.DataFrame, path, codes_path) -> pl.DataFrame:
    """problem_id -> reference: of every correct submission in the log (not only first ones),
    the code the most students submitted (ties: the earliest in the file), so that a problem
    whose first submissions are all wrong still has a program to test against."""
    correct = runs.filter(pl.col("score") == 1.0).select("student_id", "problem_id", "CodeStateID", ROW)
    if correct.is_empty():
        return pl.DataFrame(schema={"problem_id": pl.String, "reference": pl.String})
    coded = _code_for(correct, "CodeStateID", path, _scan_csv(codes_path, ("CodeStateID", "Code")),
                      "CodeStateID", "Code", codes_path)
    coded = coded.with_columns(pl.col("code").str.replace_all("\r\n?", "\n")
                               .str.replace(STRAY_BACKSLASH, "").str.strip_chars())
    votes = (coded.group_by("problem_id", "code").agg(pl.col("student_id").n_unique().alias("n"),
                                                      pl.col(ROW).min().alias("first"))
             .sort(["problem_id", "n", "first"], descending=[False, True, False]))
    return votes.unique("problem_id", keep="first", maintain_order=True).select(
        "problem_id", pl.col("code").alias("reference"))


# ---------------------------------------------------------------------------- problems

def read_problem_table(path) -> dict[str, dict]:
    """id -> {statement, kcs, signature} from a CSV or XLSX problem table (each may be None)."""
    path = Path(path)
    reader = _read_xlsx if path.suffix.lower() in (".xlsx", ".xlsm") else _read_csv
    table = reader(path, ())
    pick = {kind: next((c for c in options if c in table.columns), None)
            for kind, options in (("id", ID_COLUMNS), ("statement", STATEMENT_COLUMNS),
                                  ("kcs", KC_COLUMNS), ("signature", SIGNATURE_COLUMNS))}
    if pick["id"] is None:
        raise InputError(f"no id column (one of {', '.join(ID_COLUMNS)}); found "
                         f"{', '.join(c for c in table.columns if c != ROW)}", file=path,
                         column=ID_COLUMNS[0])
    if pick["statement"] is None and pick["kcs"] is None and pick["signature"] is None:
        raise InputError(f"none of a statement ({', '.join(STATEMENT_COLUMNS)}), a kcs "
                         f"({', '.join(KC_COLUMNS)}) or a signature ({', '.join(SIGNATURE_COLUMNS)}) "
                         "column", file=path, column=STATEMENT_COLUMNS[0])
    table = table.with_columns(_clean_id(pick["id"]))
    fail_if(table, empty_text(pick["id"]), "empty id", path, pick["id"])
    fail_if(table, pl.int_range(pl.len()).over(pick["id"]) > 0, "duplicate id", path, pick["id"])
    rows = {}
    for record in table.iter_rows(named=True):
        statement = (record[pick["statement"]] or "").strip() if pick["statement"] else ""
        kcs = None
        if pick["kcs"] and (record[pick["kcs"]] or "").strip():
            kcs = list(dict.fromkeys(k.strip() for k in re.split(r"[;,]", record[pick["kcs"]])
                                     if k.strip()))
        signature = " ".join((record[pick["signature"]] or "").split()) if pick["signature"] else ""
        rows[record[pick["id"]]] = {"statement": statement.replace("\r\n", "\n") or None,
                                    "kcs": kcs, "signature": signature or None}
    return rows


def signature(code: str, language: str) -> str | None:
    """`name(parameters)` of the code's entry function: the first one no other function calls.

    >>> signature("def helper(x):\\n    return x\\ndef oneToN(n):\\n    return helper(n)", "python")
    'oneToN(n)'
    """
    root = parse(code, language)
    functions = find(root, "method_declaration" if language == "java" else "function_definition")
    if not functions:
        return None
    calls = {text(name) for c in find(root, "method_invocation" if language == "java" else "call")
             if (name := field(c, "name" if language == "java" else "function")) is not None}
    named = [f for f in functions if field(f, "name") is not None and field(f, "parameters") is not None]
    entry = next((f for f in named if text(field(f, "name")) not in calls), named[0] if named else None)
    if entry is None:
        return None
    params = " ".join(text(field(entry, "parameters")).split())
    if language == "java":
        return f"{text(field(entry, 'type'))} {text(field(entry, 'name'))}{params}" \
            if field(entry, "type") is not None else None
    return f"{text(field(entry, 'name'))}{params}"


def statement_from_code(problem_id: str, codes: Sequence[str], language: str) -> str:
    """A statement for a problem released without one: the entry function's most common
    signature among `codes` (correct ones first, as the caller orders them)."""
    found = Counter(s for code in codes if (s := signature(code, language)) is not None)
    head = found.most_common(1)[0][0] if found else f"{problem_id}(...)"
    word = {"python": "Python function", "java": "Java method"}[language]
    return f"Write the {word} {head}. (Problem {problem_id}; no statement was released.)"


def ingest_progsnap2(root, problems_file=None, *, events: Sequence[str] | None = None,
                     score_threshold: float = 1.0, language: str | None = None,
                     kcs: str = "derived", llm=None, report: Callable[[str], None] = print
                     ) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """(problems, submissions, metadata) from a ProgSnap2 folder; see the module docstring.

    `kcs` is `derived` (offline, from syntax trees) or `openai` (then `llm` is a ChatClient and
    its answers are cached) for problems the table gives no KCs.
    """
    from kaser.data.derived_kcs import KC_BACKENDS, problem_kcs

    if kcs not in KC_BACKENDS:
        raise InputError(f"kcs must be one of {', '.join(KC_BACKENDS)}, not {kcs!r}")
    first, language, choices = read_events(root, events=events, score_threshold=score_threshold,
                                           language=language, report=report)
    submissions = _submissions(first)
    table = read_problem_table(problems_file) if problems_file else {}
    ids = sorted(submissions["problem_id"].unique().to_list())
    by_problem = {pid: g.sort(pl.col("correct"), descending=True, maintain_order=True)
                  for (pid,), g in submissions.group_by("problem_id", maintain_order=True)}
    statements, kc_lists, need_kcs = {}, {}, []
    for pid in ids:
        given = table.get(pid, {})
        codes = by_problem[pid]["code"].to_list()
        statements[pid] = given.get("statement") or statement_from_code(pid, codes, language)
        if given.get("kcs"):
            kc_lists[pid] = given["kcs"]
        else:
            need_kcs.append(pid)
    correct = {pid: by_problem[pid].filter(pl.col("correct"))["code"].to_list() for pid in need_kcs}
    derived = problem_kcs([(pid, statements[pid], correct[pid] or by_problem[pid]["code"].to_list())
                           for pid in need_kcs], language, backend=kcs, llm=llm)
    kc_lists.update(derived)
    unstated = sum(1 for pid in ids if not table.get(pid, {}).get("statement"))
    choices["table_rows_without_submissions"] = sorted(set(table) - set(ids))
    choices.update({"source": "progsnap2", "kc_backend": kcs if need_kcs else "problem table",
                    "problems_without_statement": unstated,
                    "problems_with_derived_kcs": len(need_kcs)})
    references = dict(first.select("problem_id", "reference").unique("problem_id").iter_rows())
    from_codes = submission_signatures(submissions, language)
    signatures = {pid: table.get(pid, {}).get("signature") or from_codes.get(pid)
                  or (starter_signature(references[pid], language) if references.get(pid) else None)
                  for pid in ids}
    choices["problems_with_table_signature"] = sum(1 for p in ids if table.get(p, {}).get("signature"))
    choices["problems_without_signature"] = sum(1 for p in ids if signatures[p] is None)
    report(f"progsnap2: {unstated} of {len(ids)} problems without a statement (signature from the "
           f"submissions); KCs of {len(need_kcs)} derived ({kcs}); starter signatures: "
           f"{choices['problems_with_table_signature']} from the problem table, "
           f"{choices['problems_without_signature']} unknown (no code defines a function)"
           + ("" if not problems_file else f"; problem table {problems_file}, "
              f"{len(choices['table_rows_without_submissions'])} of its ids not in the log"))
    problems = pl.DataFrame({"problem_id": ids, "language": language,
                             "statement": [statements[p] for p in ids],
                             "kcs": [kc_lists[p] for p in ids], "tests": None,
                             "reference": [references.get(p) or None for p in ids],
                             "signature": [signatures[p] for p in ids]},
                            schema=PROBLEM_SCHEMA)
    return problems, submissions, choices


# ---------------------------------------------------------------------------- metadata and command

def write_metadata(folder, metadata: dict) -> None:
    """DIR/metadata.json: where the dataset came from and the choices made (KC backend included)."""
    import json
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=1, sort_keys=True) + "\n")


def kc_client(kcs: str, cache_path, llm, llm_client):
    """A ChatClient with the caller's `llm` and `llm_client` settings (kaser.llm.LLMParams,
    LLMClientParams) for the openai KC backend, else None."""
    if kcs != "openai":
        return None
    from kaser.llm import ChatClient
    return ChatClient(llm, llm_client, cache_path)


def ingest_command(args, llm=None, llm_client=None) -> None:
    """`kaser ingest progsnap2|codeworkout|falconcode ROOT --out DIR`: the progsnap2 reader here,
    the named releases in kaser.data.ingest; `llm` and `llm_client` (from kaser.cli) serve the
    openai KC backend."""
    from kaser.data.contracts import dataset_counts, write_dataset
    if args.format != "progsnap2":
        given = [flag for flag, value, default in (
            ("--events", args.events, None), ("--language", args.language, None),
            ("--score-threshold", args.score_threshold, 1.0), ("--kcs", args.kcs, "derived"))
            if value != default]
        if given:
            raise InputError(f"{', '.join(given)} apply to progsnap2 only")
        from kaser.data import ingest
        return ingest.ingest_command(args)
    if args.kc_file:
        raise InputError("--kc-file applies to codeworkout only; give KCs in --problems (kcs column)")
    events = [e.strip() for e in args.events.split(",") if e.strip()] if args.events else None
    out = Path(args.out)
    client = kc_client(args.kcs, out / "llm_cache.sqlite", llm, llm_client)
    try:
        problems, submissions, metadata = ingest_progsnap2(
            args.root, args.problems, events=events, score_threshold=args.score_threshold,
            language=args.language, kcs=args.kcs, llm=client)
    finally:
        if client is not None:
            client.close()
    write_dataset(out, problems, submissions)
    write_metadata(out, metadata)
    counts = ", ".join(f"{k} {v}" for k, v in dataset_counts(problems, submissions).items())
    print(f"progsnap2 -> {out}: {counts}")
