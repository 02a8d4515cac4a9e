"""The LLM prompts of error annotation and judging, each versioned, with the parser of its answer.

    kaser annotate DIR --backend openai        # error labelling (paper Table 9)
    kaser cluster DIR                          # cluster summaries (paper §2.1), backend openai
    (the judge is called by the GRPO error reward and by evaluation)

Each template has a version string that is part of the cache key (kaser.llm): change the text
of a template, bump its version, and only its answers are asked again. Each `*_request` builds a
`ChatRequest` whose `parse` turns the model's text into validated Python values or raises
`MalformedAnswer` (so the client asks again).

Departures from the paper, and why:
1. Table 9's JSON template is not valid JSON (key-value pairs directly inside a list); ours puts
   each error in an object: {"errors": [{"Reasoning", "Category", "Label"}]}. Keys are read
   case-insensitively and a category such as "syntax error" is read as "Syntax".
2. Table 9 is printed for Java only. For Python the two Java-specific examples become their
   Python counterparts ("Semicolon errors" -> "Indentation errors", "NullPointerExceptions" ->
   "NoneType errors"); the rest of the text is the same with "Python" for "Java".
3. The cluster summary (paper Table 10) and judge (Table 15) prompts are not printed in our copy
   of the paper; both are written here from the paper's description of them. The cluster summary
   shows each distinct member label once with its count (most frequent first, at most
   `MAX_SUMMARY_LABELS`), so "the error that reflects the majority" is visible without repeating
   labels thousands of times.
4. The judge drops any answered label that is not on the candidate list (matched ignoring case,
   spacing and a final period) instead of trusting the model to copy exactly.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kaser.llm import ChatRequest, MalformedAnswer, check_schema, parse_json_answer
from kaser.taxonomy import CATEGORIES

# ---------------------------------------------------------------------------------------------
# (a) error labelling, paper Table 9

ERROR_LABELLING_VERSION = "error-labelling/table9-v1"

_EXAMPLES = {  # language -> (syntax, runtime, logical) example labels
    "java": ("Confusing assignment with equality, Unbalanced parentheses, Semicolon errors",
             "Uninitialized Variables, Parameter confusion, NullPointerExceptions",
             "Off-by-one errors, Integer Division, Infinite Loops"),
    "python": ("Confusing assignment with equality, Unbalanced parentheses, Indentation errors",
               "Uninitialized Variables, Parameter confusion, NoneType errors",
               "Off-by-one errors, Integer Division, Infinite Loops"),
}

_ERROR_LABELLING_SYSTEM = """\
You are an expert {Language} programming instructor and automated code reviewer.
Given a {Language} programming problem and a student's buggy code solution, your task is to \
identify all errors present in the code. There is at least one error in the code. Use concise \
and standardized label/taxonomy for each error. Make sure the error label is generalizable \
without problem specific description.
Take the following error label examples as reference:
Syntax Error (Examples): {syntax}
Runtime Error (Examples): {runtime}
Logical Error (Examples): {logical}
Return a JSON object with this template:
{{"errors": [{{"Reasoning": "<one sentence explanation of the error in the code>", \
"Category": "Syntax | Runtime | Logical", "Label": "<error label>"}}]}}"""

_ERROR_LABELLING_SCHEMA = {
    "type": "object", "required": ["errors"],
    "properties": {"errors": {"type": "array", "items": {
        "type": "object", "required": ["reasoning", "category", "label"],
        "properties": {"reasoning": {"type": "string"}, "category": {"type": "string"},
                       "label": {"type": "string"}}}}},
}


def _language_name(language: str) -> str:
    if language not in _EXAMPLES:
        raise ValueError(f"language must be one of {sorted(_EXAMPLES)}, got {language!r}")
    return language.capitalize()


def error_labelling_messages(statement: str, language: str, code: str) -> tuple[dict[str, str], ...]:
    """System + user messages of Table 9 for one submission.

    >>> m = error_labelling_messages("Add a and b.", "python", "def f(a, b): return a - b")
    >>> m[0]["content"].splitlines()[0]
    'You are an expert Python programming instructor and automated code reviewer.'
    >>> m[1]["content"]
    'Problem: Add a and b.\\n\\nCode:\\ndef f(a, b): return a - b'
    """
    name = _language_name(language)
    syntax, runtime, logical = _EXAMPLES[language]
    system = _ERROR_LABELLING_SYSTEM.format(Language=name, syntax=syntax,
                                            runtime=runtime, logical=logical)
    return ({"role": "system", "content": system},
            {"role": "user", "content": f"Problem: {statement}\n\nCode:\n{code}"})


def _category(text: str) -> str:
    """'Syntax', 'syntax error', 'LOGICAL' -> the standard category name."""
    word = text.strip().split()[0].capitalize() if text.strip() else ""
    if word not in CATEGORIES:
        raise MalformedAnswer(f"category {text!r} is not one of {', '.join(CATEGORIES)}")
    return word


def _lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def parse_error_labels(text: str) -> list[dict[str, str]]:
    """The errors of a Table 9 answer as {category, label, evidence} (evidence = the Reasoning).

    >>> parse_error_labels('{"errors": [{"Reasoning": "r", "Category": "logical error", '
    ...                    '"Label": " Off-by-one "}]}')
    [{'category': 'Logical', 'label': 'Off-by-one', 'evidence': 'r'}]
    """
    answer = _lower_keys(parse_json_answer(text, {"type": "object"}))
    check_schema(answer, _ERROR_LABELLING_SCHEMA)
    errors = []
    for item in answer["errors"]:
        label = " ".join(item["label"].split())
        if not label:
            raise MalformedAnswer("an error with an empty label")
        errors.append({"category": _category(item["category"]), "label": label,
                       "evidence": item["reasoning"].strip()})
    return errors


def error_labelling_request(statement: str, language: str, code: str) -> ChatRequest:
    return ChatRequest(ERROR_LABELLING_VERSION,
                       error_labelling_messages(statement, language, code), parse_error_labels)


# ---------------------------------------------------------------------------------------------
# (b) representative label of an error cluster, paper §2.1 "Representative Labels"

CLUSTER_SUMMARY_VERSION = "cluster-summary/v1"
MAX_SUMMARY_LABELS = 50  # distinct member labels shown, most frequent first

_CLUSTER_SUMMARY_SYSTEM = """\
You are an expert programming instructor. The error labels below were written for different \
students' code and were grouped into one cluster because they describe similar errors.
First identify the error that reflects the majority of the errors in the cluster (each label is \
followed by how many times it occurs). Then abstract it: remove problem-specific details such as \
names of variables or methods, literal values and the task itself, so that the description is a \
general error that fits other problems too. Keep it a concise, standardized error label like the \
ones in the cluster.
Return a JSON object with this template:
{"Reasoning": "<one sentence: which error the majority of the cluster describes>", \
"Label": "<representative error label>"}"""

_CLUSTER_SUMMARY_SCHEMA = {"type": "object", "required": ["label"],
                           "properties": {"label": {"type": "string"},
                                          "reasoning": {"type": "string"}}}


def cluster_summary_messages(labels: Sequence[str]) -> tuple[dict[str, str], ...]:
    """Messages for one cluster; `labels` may repeat (one entry per error), order does not matter.

    >>> cluster_summary_messages(["b", "a", "b"])[1]["content"]
    'Error labels in the cluster:\\n- b (2)\\n- a (1)'
    """
    if not labels:
        raise ValueError("a cluster needs at least one label")
    counts = sorted(Counter(labels).items(), key=lambda item: (-item[1], item[0]))
    lines = "\n".join(f"- {label} ({n})" for label, n in counts[:MAX_SUMMARY_LABELS])
    return ({"role": "system", "content": _CLUSTER_SUMMARY_SYSTEM},
            {"role": "user", "content": f"Error labels in the cluster:\n{lines}"})


def parse_cluster_summary(text: str) -> str:
    """
    >>> parse_cluster_summary('{"Reasoning": "most are about loop bounds", "Label": "Off-by-one error"}')
    'Off-by-one error'
    """
    answer = _lower_keys(parse_json_answer(text, {"type": "object"}))
    check_schema(answer, _CLUSTER_SUMMARY_SCHEMA)
    label = " ".join(answer["label"].split())
    if not label:
        raise MalformedAnswer("empty label")
    return label


def cluster_summary_request(labels: Sequence[str]) -> ChatRequest:
    return ChatRequest(CLUSTER_SUMMARY_VERSION, cluster_summary_messages(labels),
                       parse_cluster_summary)


# ---------------------------------------------------------------------------------------------
# (c) judge: which of a problem's candidate errors are in a code (paper Appendix E.3)

JUDGE_VERSION = "judge/v1"

_JUDGE_SYSTEM = """\
You are an expert {Language} programming instructor and automated code reviewer.
Given a {Language} programming problem, a student's code solution and a list of possible errors, \
your task is to identify which of the listed errors are present in the code. Choose only from the \
list and copy each chosen error label exactly as it is written. The code may contain none of the \
listed errors; then return an empty list.
Return a JSON object with this template:
{{"errors": ["<error label from the list>", ...]}}"""

_JUDGE_SCHEMA = {"type": "object", "required": ["errors"],
                 "properties": {"errors": {"type": "array", "items": {"type": "string"}}}}


def judge_messages(statement: str, language: str, code: str,
                   candidate_errors: Sequence[str]) -> tuple[dict[str, str], ...]:
    """
    >>> print(judge_messages("P.", "java", "int f() {}", ["Off-by-one error", "Missing return"])[1]["content"])
    Problem: P.
    <BLANKLINE>
    Code:
    int f() {}
    <BLANKLINE>
    Possible errors:
    - Off-by-one error
    - Missing return
    """
    system = _JUDGE_SYSTEM.format(Language=_language_name(language))
    listed = "\n".join(f"- {label}" for label in candidate_errors)
    return ({"role": "system", "content": system},
            {"role": "user",
             "content": f"Problem: {statement}\n\nCode:\n{code}\n\nPossible errors:\n{listed}"})


def _label_key(label: str) -> str:
    return re.sub(r"\s+", " ", label).strip().rstrip(".").casefold()


def parse_judge(text: str, candidate_errors: Sequence[str]) -> set[str]:
    """The chosen labels, spelled as on the list; labels not on the list are dropped.

    >>> sorted(parse_judge('{"errors": ["off-by-one error.", "Made up"]}', ["Off-by-one error"]))
    ['Off-by-one error']
    """
    answer = _lower_keys(parse_json_answer(text, {"type": "object"}))
    check_schema(answer, _JUDGE_SCHEMA)
    listed = {_label_key(label): label for label in candidate_errors}
    return {listed[_label_key(label)] for label in answer["errors"] if _label_key(label) in listed}


def judge_request(statement: str, language: str, code: str,
                  candidate_errors: Sequence[str]) -> ChatRequest:
    return ChatRequest(JUDGE_VERSION, judge_messages(statement, language, code, candidate_errors),
                       functools.partial(parse_judge, candidate_errors=tuple(candidate_errors)))
