"""The history-based baselines of paper §4.2: ICL, PersonaPrompt and ParaStudent (prompts, data).

    python stages/generate.py synthetic-python icl          # data/<ds>/predictions/icl.parquet
    python stages/generate.py synthetic-python persona      # .../persona.parquet
    python stages/parastudent.py synthetic-python           # models/<ds>/parastudent/<split>-<fold>/ (LoRA adapters)
    python stages/generate.py synthetic-python parastudent  # .../parastudent.parquet

    pairs = with_history(pairs, problems, submissions, k=5, max_code_chars=600)
    icl_messages(pairs)                   # ICL and ParaStudent: k earlier codes, then the problem
    persona_messages(pairs, personas)     # PersonaPrompt: a persona text, then the problem
    summary_messages(language, history)   # the chat that writes a persona
    parastudent_examples(pairs, max_pairs=24, seed=0)   # in-context tuning examples for kaser.predictor.sft

A student's history is what we could observe before the pair: their own submissions with a
smaller `step` (any fold; a test student's past is observable), the k most recent, oldest first,
each as (problem statement, the student's code). Running the baselines (local model or an
OpenAI-compatible endpoint, persona cache) is `kaser.predictor.baselines`.

Departures from the paper, and why:
1. The prompts (paper Tables 11-13) are not in our copy of the paper, so the wording is ours, in
   the style of the authors' student-simulator system message (`kaser.predictor.prompt`): the same
   "Output only the code ..." sentence and the same "Simulate the student written code:" ending.
2. History codes longer than `max_code_chars` are cut (marked "..."), to bound the prompt on CPU;
   `max_code_chars: null` keeps them whole.
3. A persona is written per test pair from the history before that pair (not once per student
   from all their data), so it never sees the pair's own or later submissions; identical
   histories share one cached persona. A pair without history gets a fixed "nothing known" text
   instead of an LLM call.
4. ParaStudent (Miroyan et al. 2025) also conditions on earlier attempts at the same problem; as
   in the paper's adaptation, only first submissions exist here, so its examples are the ICL
   prompt (k earlier problems + the new one) -> the student's code, trained with `kaser.predictor.sft`.
   Training pairs without any earlier submission are left out (nothing to learn in context).
5. The new problem's starter signature, where known, follows its statement as in the student
   prompt (`kaser.predictor.prompt`, its departure 4, with the reason): every method is shown
   what the student saw, so none wins or loses by guessing the function's name. The earlier
   problems show none: the student's own code for them holds its header.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from kaser import InputError
from kaser.predictor.sft import sample_pairs, student_reply
from kaser.predictor.prompt import LANGUAGE_NAMES, signature_line

HISTORY_TYPE = pl.List(pl.Struct({"problem_id": pl.String, "statement": pl.String,
                                  "code": pl.String}))
NO_HISTORY_PERSONA = "Nothing is known about this student yet: no earlier submissions."
# a version names the wording; v2: the new problem's starter signature (departure 5)
PROMPT_VERSIONS = {"icl": "icl-v2", "persona": "persona-prompt-v2", "summary": "persona-summary-v1"}


@dataclass(frozen=True)
class BaselineParams:
    """params.yaml `baselines` (one comment per key there); each baseline reads only its own
    keys of it (kaser.predictor.baselines, stages/generate.py)."""
    backend: str
    history: int
    persona_history: int
    max_code_chars: int | None
    persona_max_new_tokens: int
    openai_model: str | None
    openai_base_url: str | None
    openai_temperature: float | None
    parastudent_max_pairs: int | None
    parastudent_max_length: int
    methods: tuple[str, ...]

    def __post_init__(self):
        # a key one baseline's stage does not read is None (stages/_runner.py Stage.section keys)
        if self.backend is not None and self.backend not in ("local", "openai"):
            raise InputError(f"backend must be local or openai, not {self.backend!r}")
        if any(n is not None and n < 0 for n in (self.history, self.persona_history)):
            raise InputError("history sizes must be >= 0")


def truncate_code(code: str, max_chars: int | None) -> str:
    """At most `max_chars` characters of `code` (then a "..." line); all of it when None.

    >>> truncate_code("return a + b;", 6)
    'return\\n...'
    >>> truncate_code("x = 1", None)
    'x = 1'
    """
    code = code.strip()
    if max_chars is None or len(code) <= max_chars:
        return code
    return code[:max_chars].rstrip() + "\n..."


def with_history(pairs: pl.DataFrame, problems: pl.DataFrame, submissions: pl.DataFrame,
                 k: int, max_code_chars: int | None = None) -> pl.DataFrame:
    """`pairs` (student_id, step, ...) with a column `history`: the student's k most recent
    submissions with a smaller step, oldest first, each {problem_id, statement, code}.

    >>> problems = pl.DataFrame({"problem_id": ["a", "b", "c"], "statement": ["A", "B", "C"]})
    >>> subs = pl.DataFrame({"student_id": ["s"] * 3, "problem_id": ["a", "b", "c"],
    ...                      "step": [0, 1, 2], "code": ["x", "y", "z"]})
    >>> table = with_history(subs.filter(pl.col("step") == 2), problems, subs, k=1)
    >>> table["history"].to_list()
    [[{'problem_id': 'b', 'statement': 'B', 'code': 'y'}]]
    """
    statements = dict(zip(problems["problem_id"].to_list(), problems["statement"].to_list()))
    by_student: dict[str, list[tuple[int, str, str]]] = {}
    for student, problem, step, code in submissions.select(
            "student_id", "problem_id", "step", "code").sort("student_id", "step").iter_rows():
        if problem not in statements:
            raise InputError(f"problem {problem} of student {student} is not in problems.parquet",
                             file="submissions.parquet")
        by_student.setdefault(student, []).append((step, problem, code))
    histories = []
    for student, step in zip(pairs["student_id"].to_list(), pairs["step"].to_list()):
        own = by_student.get(student, [])
        end = bisect_left(own, (step,))   # own[:end] has a smaller step
        earlier = own[max(0, end - k):end] if k else []
        histories.append([{"problem_id": problem, "statement": statements[problem],
                           "code": truncate_code(code, max_code_chars)}
                          for _, problem, code in earlier])
    return pairs.with_columns(pl.Series("history", histories, dtype=HISTORY_TYPE))


def history_text(history: Sequence[dict]) -> str:
    """The earlier problems and the student's code for each, numbered, oldest first.

    >>> print(history_text([{"statement": "Add a and b.", "code": "return a+b;"}]))
    Earlier problem 1: Add a and b.
    The student's code:
    return a+b;
    """
    return "\n\n".join(f"Earlier problem {number}: {item['statement']}\nThe student's code:\n"
                       f"{item['code']}" for number, item in enumerate(history, start=1))


def _language_name(language: str) -> str:
    if language not in LANGUAGE_NAMES:
        raise InputError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGE_NAMES)}")
    return LANGUAGE_NAMES[language]


_CODE_ONLY = ("Output only the code, with no explanations or comments. "
              "Do not wrap the code in markdown fences (no ```).")


def icl_system_message(language: str) -> str:
    """System message of ICL and ParaStudent: imitate the student shown by their earlier code."""
    return ("You are a student code simulator. Given a student's code for earlier programming "
            f"problems and a new problem, generate the {_language_name(language)} code that this "
            "student would write for the new problem, with the same style, level of knowledge "
            f"and plausible student errors. {_CODE_ONLY}")


def icl_user_message(statement: str, history: Sequence[dict], *, signature: str | None) -> str:
    """The student's earlier codes (if any), then the new problem and its starter signature
    (None: unknown, left out).

    >>> icl_user_message("Add a and b.", [], signature=None)
    'No earlier code of this student is known.\\n\\nProblem: Add a and b.\\n\\nSimulate the student written code:'
    >>> icl_user_message("Add a and b.", [], signature="def add(a, b):")[-74:]
    'b.\\n\\nFunction signature: def add(a, b):\\n\\nSimulate the student written code:'
    """
    shown = (f"The student's code for earlier problems, oldest first:\n\n{history_text(history)}"
             if history else "No earlier code of this student is known.")
    return (f"{shown}\n\nProblem: {statement}\n\n{signature_line(signature)}"
            "Simulate the student written code:")


def icl_messages(pairs: pl.DataFrame) -> list[list[dict[str, str]]]:
    """The in-context prompt of every row of a `with_history` table (ICL and ParaStudent)."""
    return [[{"role": "system", "content": icl_system_message(row["language"])},
             {"role": "user", "content": icl_user_message(row["statement"], row["history"],
                                                          signature=row["signature"])}]
            for row in pairs.select("language", "statement", "signature", "history")
            .iter_rows(named=True)]


def summary_messages(language: str, history: Sequence[dict]) -> list[dict[str, str]]:
    """The chat that compresses a history into a problem-independent persona (PersonaPrompt)."""
    system = ("You are an experienced programming instructor. Given a student's code for earlier "
              f"{_language_name(language)} problems, describe the student as a programmer in a "
              "short persona: their knowledge and gaps, the kinds of errors they tend to make, "
              "and their coding style. Describe the student, not the problems: say nothing "
              "specific to any one problem. Answer with the persona only, in at most five "
              "sentences.")
    user = f"{history_text(history)}\n\nDescribe this student's persona:"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def summary_chats(pairs: pl.DataFrame) -> list[list[dict[str, str]] | None]:
    """`summary_messages` of every row of a `with_history` table; None where it has no history."""
    return [summary_messages(language, history) if history else None
            for language, history in pairs.select("language", "history").iter_rows()]


def persona_user_message(statement: str, persona: str, *, signature: str | None) -> str:
    """The student's persona, then the new problem and its starter signature (None: left out).

    >>> persona_user_message("Add a and b.", "Careless with types.", signature=None)[:41]
    'Student persona: Careless with types.\\n\\nPr'
    >>> "Function signature: def add(a, b):" in persona_user_message("Add.", "x", signature="def add(a, b):")
    True
    """
    return (f"Student persona: {persona.strip()}\n\nProblem: {statement}\n\n"
            f"{signature_line(signature)}Simulate the student written code:")


def persona_messages(pairs: pl.DataFrame, personas: Sequence[str]) -> list[list[dict[str, str]]]:
    """The PersonaPrompt chat of every pair: the student's persona, then the problem."""
    if len(personas) != pairs.height:
        raise ValueError(f"{len(personas)} personas for {pairs.height} pairs")
    return [[{"role": "system", "content":
              "You are a student code simulator. Given a programming problem and a persona of the "
              f"student, generate the {_language_name(language)} code that this student would "
              f"write, including plausible student errors. {_CODE_ONLY}"},
             {"role": "user", "content": persona_user_message(statement, persona, signature=signature)}]
            for language, statement, signature, persona in zip(
                pairs["language"].to_list(), pairs["statement"].to_list(),
                pairs["signature"].to_list(), personas)]


def parastudent_examples(pairs: pl.DataFrame, max_pairs: int | None,
                         seed: int) -> list[dict]:
    """TRL prompt-completion examples for in-context tuning, from a `with_history` table of
    training pairs: rows with at least one earlier submission, at most `max_pairs` drawn with
    `seed`; prompt = `icl_messages`, completion = the student's code (`student_reply`)."""
    usable = sample_pairs(pairs.filter(pl.col("history").list.len() > 0), max_pairs, seed)
    if usable.height == 0:
        raise InputError("no training pair has an earlier submission of its student",
                         file="submissions.parquet")
    return [{"prompt": messages, "completion": [{"role": "assistant", "content": student_reply(code)}]}
            for messages, code in zip(icl_messages(usable), usable["code"].to_list())]
