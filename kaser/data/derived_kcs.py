"""Knowledge components for problems a release gives none: derived from correct code, or asked of
an LLM (KCGen-KT style).

    kaser ingest progsnap2 ROOT --out DIR --kcs derived      # offline (default)
    kaser ingest progsnap2 ROOT --out DIR --kcs openai       # params.yaml `llm`, answers cached
    python benchmarks/derived_kcs.py                          # F1 against the synthetic truth

`derived`: each correct submission's syntax tree (tree-sitter, Python or Java) is searched for the
constructs of the CSEDM concept columns (If/Else, NestedIf, While, For, NestedFor, Math+-*/,
Math%, LogicAndNotOr, LogicCompareNum, LogicBoolean, StringFormat, StringConcat, StringIndex,
StringLen, StringEqual, CharEqual, ArrayIndex, DefFunction) plus recursion, early returns and
local variables. A construct is a KC of the problem when at least SHARE of its correct
submissions use it (one student's detour does not make a KC); of the constructs that pass, the
MAX_KCS with the highest share x idf (constructs every problem uses, such as a local variable or
a comparison, weigh less) are kept. On the synthetic benchmark (benchmarks/derived_kcs.py) this
recovers the bank's curated KCs with micro F1 about 0.73 (precision 0.72, recall 0.74); SHARE
and MAX_KCS were chosen there, among 0.3/0.4/0.5 and 4/5. Constructs are named by the readable KC names of the synthetic bank
(CONSTRUCT_KCS is the table from CSEDM column to name), so derived and curated KCs share a vocabulary.

`openai`: the statement and up to three correct codes go to the chat model, which answers 2-5
short KC names (KCGen-KT's generation step, without its clustering); the answer is cached like
every LLM answer (kaser.llm).

Departures, and why:
1. CSEDM's DefFunction and "return statements" are derived only where they are a skill of their
   own: a helper function beside the entry one, a return out of a loop. Every one-function
   submission defines a function and returns, which would tell no problem from another. A problem
   with no other construct (`return 'Hello'`) gets "function definition" so that every problem
   has a KC.
2. Python has no declared types: a subscript is string indexing when its object is used as text
   (a string literal compared, added or assigned, a string method, or a text-like parameter name
   such as `s`, `word`, `text`), else array indexing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from kaser import InputError
from kaser.code.syntax import ancestors, field, find, parse, text

KC_BACKENDS = ("derived", "openai")
SHARE = 0.3     # a construct is a KC when this share of the correct submissions use it
MAX_KCS = 4     # KCs per problem at most, as CSEDM's concept columns (about 4 set per problem)
# construct (CSEDM concept column, or ours) -> the KC name used in datasets
CONSTRUCT_KCS = {
    "If/Else": "conditionals", "NestedIf": "nested conditionals", "While": "while loops",
    "For": "for loops", "NestedFor": "nested loops", "Math+-*/": "arithmetic", "Math%": "modulo",
    "LogicAndNotOr": "boolean operators", "LogicCompareNum": "numeric comparison",
    "LogicBoolean": "boolean logic", "StringFormat": "string formatting",
    "StringConcat": "string concatenation", "StringIndex": "string indexing",
    "StringLen": "string length", "StringEqual": "string equality",
    "CharEqual": "character comparison", "ArrayIndex": "array indexing",
    "Recursion": "recursion", "Variables": "variables",
    "DefFunction": "function definition",   # here: a helper function beside the entry one
    "Return": "return statements",          # here: an early return out of a loop
}
FALLBACK_KC = "function definition"   # CSEDM DefFunction: the KC of a problem with no other construct
_STRING_METHODS = {"lower", "upper", "isdigit", "isalpha", "isupper", "islower", "isspace", "split",
                   "strip", "startswith", "endswith", "find", "replace", "join", "count", "index",
                   "charAt", "substring", "length", "equals", "indexOf", "toUpperCase",
                   "toLowerCase", "contains", "format", "capitalize", "title", "isalnum"}
_TEXT_NAMES = re.compile(r"^(s\d?|str\w*|word\w*|text\w*|name\w*|string\w*|phrase|sentence|"
                         r"line|letters?|chars?|ch|c|message|msg|password|sky|a?str)$", re.I)
_LOOPS = {"python": ("for_statement", "while_statement"),
          "java": ("for_statement", "enhanced_for_statement", "while_statement", "do_statement")}
_STRING_NODES = ("string", "string_literal", "character_literal", "concatenated_string")


# ---------------------------------------------------------------------------- constructs

def _is_text(node, language: str, text_names: set[str]) -> bool:
    """Whether an expression node is (probably) a string or character."""
    if node is None:
        return False
    if node.type in _STRING_NODES or node.type == "template_string":
        return True
    if node.type == "identifier":
        return text(node) in text_names
    if node.type in ("subscript", "array_access"):
        inner = field(node, "value") if language == "python" else field(node, "array")
        return _is_text(inner, language, text_names)
    if node.type in ("call", "method_invocation"):
        name = field(node, "function") if language == "python" else field(node, "name")
        last = text(name).rsplit(".", 1)[-1] if name is not None else ""
        return last in ("str", "charAt", "substring", "lower", "upper", "strip", "toString",
                        "toUpperCase", "toLowerCase", "chr", "join", "format", "replace")
    if node.type in ("binary_operator", "binary_expression"):
        return any(_is_text(field(node, side), language, text_names) for side in ("left", "right"))
    if node.type == "parenthesized_expression":
        return any(_is_text(c, language, text_names) for c in node.named_children)
    return False


def _text_names(root, language: str) -> set[str]:
    """Variables used as text: declared String/char (Java), or (Python) assigned, compared or
    added to a string, given string methods, or named like text."""
    names: set[str] = set()
    if language == "java":
        for decl in find(root, "formal_parameter", "local_variable_declaration"):
            kind = field(decl, "type")
            if kind is not None and text(kind) in ("String", "char", "Character", "StringBuilder"):
                for ident in find(decl, "identifier"):
                    names.add(text(ident))
        return names
    for param in find(root, "parameters"):
        names.update(text(p) for p in param.named_children
                     if p.type == "identifier" and _TEXT_NAMES.match(text(p)))
    for _ in range(2):   # a second pass lets a name learnt from another name count
        for node in find(root, "assignment", "augmented_assignment", "comparison_operator",
                         "binary_operator", "for_statement"):
            parts = list(node.named_children)
            if node.type == "for_statement":
                left, right = field(node, "left"), field(node, "right")
                if left is not None and left.type == "identifier" and _is_text(right, language, names):
                    names.add(text(left))
                continue
            if any(_is_text(p, language, names) for p in parts):
                names.update(text(p) for p in parts if p.type == "identifier")
        for call in find(root, "call"):
            function = field(call, "function")
            if function is not None and function.type == "attribute":
                obj, attr = field(function, "object"), field(function, "attribute")
                if obj is not None and obj.type == "identifier" and text(attr) in _STRING_METHODS:
                    names.add(text(obj))
    return names


def _loop_depth(node, language: str) -> int:
    return sum(a.type in _LOOPS[language] for a in ancestors(node))


def constructs(code: str, language: str) -> set[str]:
    """The CSEDM-style constructs (CONSTRUCT_KCS keys) one program uses.

    >>> sorted(constructs("def f(s):\\n    return s[0] == 'a'", "python"))
    ['CharEqual', 'StringIndex']
    """
    root = parse(code, language)
    found: set[str] = set()
    names = _text_names(root, language)
    ifs = find(root, "if_statement", "conditional_expression", "ternary_expression")
    if ifs:
        found.add("If/Else")
    if any(any(a.type == "if_statement" for a in ancestors(n)) for n in find(root, "if_statement")):
        found.add("NestedIf")
    loops = find(root, *_LOOPS[language])
    if any(n.type in ("while_statement", "do_statement") for n in loops):
        found.add("While")
    if any(n.type in ("for_statement", "enhanced_for_statement") for n in loops) or \
            find(root, "list_comprehension", "generator_expression"):
        found.add("For")
    if any(_loop_depth(n, language) > 0 for n in loops):
        found.add("NestedFor")
    binaries = find(root, "binary_operator", "binary_expression", "augmented_assignment",
                    "assignment_expression", "update_expression")
    for node in binaries:
        operator = next((text(c) for c in node.children if not c.is_named), "")
        if operator in ("%", "%=") and not _is_text(field(node, "left"), language, names):
            found.add("Math%")
        elif operator.rstrip("=") in ("+", "-", "*", "/", "//", "**"):
            left, right = field(node, "left"), field(node, "right")
            if operator.startswith("+") and (_is_text(left, language, names) or _is_text(right, language, names)):
                found.add("StringConcat")
            elif operator not in ("=",):
                found.add("Math+-*/")
        elif operator in ("&&", "||"):
            found.add("LogicAndNotOr")
        elif operator in ("==", "!=", "<", ">", "<=", ">="):
            _compare(field(node, "left"), field(node, "right"), language, names, found)
    if find(root, "boolean_operator", "not_operator") or any(
            text(c) == "!" for n in find(root, "unary_expression") for c in n.children):
        found.add("LogicAndNotOr")
    for node in find(root, "comparison_operator"):
        parts = node.named_children
        for left, right in zip(parts, parts[1:]):
            _compare(left, right, language, names, found)
    if _boolean_values(root, language):
        found.add("LogicBoolean")
    if find(root, "interpolation") or any(
            (field(c, "function") is not None and text(field(c, "function")).rsplit(".", 1)[-1] == "format")
            or (field(c, "name") is not None and text(field(c, "name")) == "format")
            for c in find(root, "call", "method_invocation")):
        found.add("StringFormat")
    for node in find(root, "subscript", "array_access", "slice"):
        inner = field(node, "value") if language == "python" else field(node, "array")
        if node.type == "slice":
            continue
        found.add("StringIndex" if _is_text(inner, language, names) else "ArrayIndex")
    for call in find(root, "call", "method_invocation"):
        name = field(call, "function") if language == "python" else field(call, "name")
        last = text(name).rsplit(".", 1)[-1] if name is not None else ""
        arguments = field(call, "arguments")
        target = arguments.named_children[0] if arguments is not None and arguments.named_children else None
        if last == "len" and _is_text(target, language, names) or (language == "java" and last == "length"):
            found.add("StringLen")
        if last == "len" and target is not None and not _is_text(target, language, names):
            found.add("ArrayIndex")
        if last in ("charAt", "substring"):
            found.add("StringIndex")
        if last in ("equals", "equalsIgnoreCase", "compareTo", "startswith", "endswith", "startsWith", "endsWith"):
            found.add("StringEqual")
    if language == "java" and find(root, "field_access") and any(
            text(field(n, "field")) == "length" for n in find(root, "field_access")):
        found.add("ArrayIndex")
    if _recursive(root, language):
        found.add("Recursion")
    if len(find(root, "method_declaration" if language == "java" else "function_definition")) > 1:
        found.add("DefFunction")
    loops = set(_LOOPS[language])
    if any(any(a.type in loops for a in ancestors(r)) for r in find(root, "return_statement")):
        found.add("Return")
    kind = ("assignment", "augmented_assignment") if language == "python" else ("local_variable_declaration",)
    if len(find(root, *kind)) >= 1:
        found.add("Variables")
    return found


def _boolean_values(root, language: str) -> bool:
    """Booleans as values (CSEDM LogicBoolean): a variable set to true/false, or a condition that
    is a bare name (`if raining:`, `while (!found)`); returning a literal True does not count."""
    literals = ("true", "false")
    for node in find(root, "assignment", "variable_declarator"):
        value = field(node, "right") if language == "python" else field(node, "value")
        if value is not None and value.type in literals:
            return True
    for node in find(root, "if_statement", "while_statement", "elif_clause"):
        condition = field(node, "condition")
        while condition is not None and condition.type in ("parenthesized_expression", "not_operator",
                                                            "unary_expression"):
            inner = condition.named_children
            condition = inner[-1] if inner else None
        if condition is not None and condition.type == "identifier":
            return True
    return False


def _compare(left, right, language: str, names: set[str], found: set[str]) -> None:
    if left is None or right is None:
        return
    def one_character(node) -> bool:   # 'a', text[i], s.charAt(i)
        return (node.type == "character_literal"
                or (node.type == "string" and len(text(node).strip("'\"")) == 1)
                or (node.type in ("subscript", "array_access") and _is_text(node, language, names))
                or (node.type == "method_invocation" and text(field(node, "name")) == "charAt"))

    if _is_text(left, language, names) or _is_text(right, language, names):
        found.add("CharEqual" if one_character(left) or one_character(right) else "StringEqual")
    else:
        found.add("LogicCompareNum")


def _recursive(root, language: str) -> bool:
    kind = "method_declaration" if language == "java" else "function_definition"
    for function in find(root, kind):
        name = field(function, "name")
        calls = find(function, "method_invocation" if language == "java" else "call")
        target = "name" if language == "java" else "function"
        if name is not None and any(field(c, target) is not None and text(field(c, target)) == text(name)
                                    for c in calls):
            return True
    return False


def construct_shares(codes: Sequence[str], language: str) -> dict[str, float]:
    """Share of `codes` using each construct; of two loop kinds only the more common counts, as
    a student's `while` for the class's `for` is style, not another KC."""
    counts = Counter(c for code in codes for c in constructs(code, language))
    if counts["For"] and counts["While"]:
        del counts["While" if counts["For"] >= counts["While"] else "For"]
    return {c: n / len(codes) for c, n in counts.items()} if codes else {}


def derive_kcs(codes: Sequence[str], language: str, share: float = SHARE,
               weight: dict[str, float] | None = None, max_kcs: int | None = None) -> list[str]:
    """KC names of the constructs used by at least `share` of `codes` (sorted); with `max_kcs`,
    only that many, the highest share x `weight` (an idf over problems, `problem_kcs`) first.

    >>> derive_kcs(["def f(n):\\n    t = 0\\n    for i in range(n):\\n        t += i\\n    return t"], "python")
    ['arithmetic', 'for loops', 'variables']
    """
    shares = construct_shares(codes, language)
    kept = [c for c, value in shares.items() if value >= share]
    if max_kcs is not None:
        kept = sorted(kept, key=lambda c: (-shares[c] * (weight or {}).get(c, 1.0), c))[:max_kcs]
    return sorted(CONSTRUCT_KCS[c] for c in kept) or [FALLBACK_KC]


def derive_problem_kcs(problems: Sequence[tuple[str, Sequence[str]]], language: str,
                       share: float = SHARE, max_kcs: int | None = MAX_KCS) -> dict[str, list[str]]:
    """problem id -> derived KCs for `(problem_id, correct codes)`: constructs that nearly every
    problem uses (a function's variables, a comparison) rank below the ones that tell problems
    apart, by idf = log((1 + problems) / (1 + problems using the construct)) + 1."""
    import math
    shares = {pid: construct_shares(codes, language) for pid, codes in problems}
    using = Counter(c for own in shares.values() for c, value in own.items() if value >= share)
    weight = {c: math.log((1 + len(problems)) / (1 + n)) + 1 for c, n in using.items()}
    return {pid: derive_kcs(codes, language, share, weight, max_kcs) for pid, codes in problems}


# ---------------------------------------------------------------------------- the LLM backend

KC_PROMPT_VERSION = "kcgen/v1"
_KC_SYSTEM = """\
You are an expert {language} programming instructor. Given a programming problem and correct \
student solutions, list the knowledge components (KCs) a student must master to solve it: 2 to 5 \
short, general skill names (e.g. "for loops", "string indexing", "modulo"), not problem-specific.
Return a JSON object with this template:
{{"kcs": ["<KC name>", ...]}}"""
_KC_SCHEMA = {"type": "object", "required": ["kcs"],
              "properties": {"kcs": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}


def kc_request(statement: str, codes: Sequence[str], language: str):
    from kaser.llm import ChatRequest, parse_json_answer
    shown = "\n\n".join(f"Solution {i + 1}:\n```{language}\n{code}\n```"
                        for i, code in enumerate(codes[:3]))
    messages = ({"role": "system", "content": _KC_SYSTEM.format(language=language.capitalize())},
                {"role": "user", "content": f"Problem:\n{statement}\n\n{shown}"})
    return ChatRequest(KC_PROMPT_VERSION, messages, lambda answer: parse_json_answer(answer, _KC_SCHEMA))


def problem_kcs(problems: Sequence[tuple[str, str, Sequence[str]]], language: str,
                backend: str = "derived", llm=None, share: float = SHARE) -> dict[str, list[str]]:
    """problem id -> KCs for `(problem_id, statement, correct codes)`, by `backend`."""
    if backend == "derived":
        return derive_problem_kcs([(pid, codes) for pid, _, codes in problems], language, share)
    if backend != "openai":
        raise InputError(f"kcs backend must be one of {', '.join(KC_BACKENDS)}, not {backend!r}")
    if llm is None:
        raise InputError("the openai KC backend needs the llm settings (params.yaml `llm`)")
    replies = llm.ask_many([kc_request(statement, codes, language) for _, statement, codes in problems],
                           desc="KCs (llm)")
    result = {}
    for (pid, _, _), reply in zip(problems, replies):
        if not reply.ok:
            raise InputError(f"no KCs for problem {pid!r}: {reply.failure}")
        result[pid] = list(dict.fromkeys(k.strip().lower() for k in reply.value["kcs"] if k.strip()))
    return result
