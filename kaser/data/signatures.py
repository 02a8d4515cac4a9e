"""Starter signatures: the function header a student sees in the editor before writing any code.

    starter_signature("def add(a, b):\\n    return a + b", "python")     # 'def add(a, b):'
    starter_signature(java_code, "java", entry="luckySum")   # 'public int luckySum(int a, int b)'
    common_signature(correct_codes, "java")                   # the most common header among them
    signature_name("public int luckySum(int a, int b)", "java")   # 'luckySum' (kaser.data.contracts)
    defined_functions(code, "python")                         # [Function(name, ...), ...]

A CodeWorkout student writes the body of a method whose header the editor already shows, and the
tests call that method by name; the student prompt (`kaser.predictor.prompt`) shows the same
header, so the model writes the function the tests call. The problems table keeps it in its
nullable `signature` column (`kaser.data.contracts`), filled by every source:
- synthetic data: the header of the bank's entry function in the shown reference solution;
- public releases: the problem table's signature column where it has one, else the most common
  header among the correct first submissions (then among all first submissions, then the
  reference), null where no submission defines a function (a script-style problem);
- `kaser simulate`: `--signature`, else the header of the `--reference` solution.

A Python header is the `def` line up to and including its colon (decorators left out); a Java
header is the method declaration up to its body (modifiers, return type, name, parameters,
`throws`). Whitespace inside a header is collapsed to single spaces, so a header written over
several lines reads as one. The entry function of a code is the one named `entry` when given,
else the first one that no other function of the code calls (helpers are called), else the first.
Python functions count at module level only (what a test can call); Java methods anywhere.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kaser.code.syntax import field, find, parse, text, walk

@dataclass(frozen=True)
class Function:
    """One function a code defines, as a test harness sees it."""
    name: str
    min_args: int          # positional arguments it needs
    max_args: float        # positional arguments it takes (math.inf with *args / varargs)
    helper: bool           # another function of the code calls it
    signature: str         # its header (see the module docstring)

    def accepts(self, n_args: int) -> bool:
        return self.min_args <= n_args <= self.max_args


def _nodes(code: str, language: str) -> list:
    root = parse(code, language)
    if language == "java":
        return find(root, "method_declaration")
    # module level only: the children of the module, a decorated definition's own definition
    found = []
    for child in root.children:
        if child.type == "decorated_definition":
            child = field(child, "definition")
        if child is not None and child.type == "function_definition":
            found.append(child)
    return found


def _header(node, language: str) -> str | None:
    body = field(node, "body")
    if body is None or field(node, "name") is None or field(node, "parameters") is None:
        return None
    header = " ".join(node.text[:body.start_byte - node.start_byte].decode(errors="replace").split())
    if language == "python" and not header.endswith(":"):
        return None
    return header or None


def _calls(node, language: str) -> set[str]:
    """Names of the functions `node` calls (a method name, or a Python call's function text)."""
    kind, name = ("method_invocation", "name") if language == "java" else ("call", "function")
    return {text(callee) for n in walk(node) if n.type == kind
            if (callee := field(n, name)) is not None}


def _arity(node, language: str) -> tuple[int, float]:
    params = field(node, "parameters")
    if language == "java":
        kinds = [p.type for p in params.named_children]
        fixed = kinds.count("formal_parameter")
        return fixed, math.inf if "spread_parameter" in kinds else fixed
    least, most, keyword_only = 0, 0.0, False
    for p in params.named_children:
        if p.type in ("keyword_separator", "list_splat_pattern"):
            most = math.inf if p.type == "list_splat_pattern" else most
            keyword_only = True
        elif p.type in ("identifier", "typed_parameter"):
            if keyword_only:          # a keyword-only parameter without default: no positional call
                return 1, 0.0
            least, most = least + 1, most + 1
        elif p.type in ("default_parameter", "typed_default_parameter") and not keyword_only:
            most += 1
    return least, most


def defined_functions(code: str, language: str) -> list[Function]:
    """The functions of `code` in document order: Python's at module level, Java's methods
    anywhere, each with its arity, whether another function calls it, and its header.

    >>> [(f.name, f.helper) for f in defined_functions(
    ...     "def twice(x):\\n    return 2 * x\\ndef f(n):\\n    return twice(f(n - 1))", "python")]
    [('twice', True), ('f', False)]
    """
    nodes = [n for n in _nodes(code, language) if _header(n, language) is not None]
    names = [text(field(n, "name")) for n in nodes]
    called = set()
    for node, name in zip(nodes, names):
        called |= _calls(node, language) - {name}      # a function calling itself is no helper
    return [Function(name, *_arity(node, language), name in called, _header(node, language))
            for node, name in zip(nodes, names)]


def starter_signature(code: str, language: str, entry: str | None = None) -> str | None:
    """The header of the code's entry function (see the module docstring); None without one.

    >>> starter_signature("def helper(x):\\n    return x\\ndef oneToN(n):\\n    return helper(n)", "python")
    'def oneToN(n):'
    >>> starter_signature("public int luckySum(int a, int b) {\\n  return a + b;\\n}", "java")
    'public int luckySum(int a, int b)'
    """
    functions = defined_functions(code, language)
    named = [f for f in functions if f.name == entry] if entry else []
    chosen = named or [f for f in functions if not f.helper] or functions
    return chosen[0].signature if chosen else None


def common_signature(codes: Iterable[str], language: str) -> str | None:
    """The most common `starter_signature` among `codes` (ties: the first seen); None when no
    code defines a function.

    >>> common_signature(["def f(a):\\n  return a", "def g(a):\\n  return 1", "def f(a):\\n  return 0"], "python")
    'def f(a):'
    """
    found = Counter(s for code in codes if (s := starter_signature(code, language)) is not None)
    return found.most_common(1)[0][0] if found else None


