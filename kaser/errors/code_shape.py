"""The shape of a program, for rules that compare a wrong program with correct ones.

Used by the static annotator (`kaser annotate DIR`) where no repair explains a wrong answer:
the nearest correct program (by token sequence with variable names abstracted away) having
more branches than the student's says a branch is missing; a Python function that can reach its
end without `return` explains a None answer.

    nearest(code, correct_programs, "java")   # the most similar correct program
"""

from __future__ import annotations

import difflib
import functools

from kaser.code.syntax import find, parse, statements, text, walk


@functools.lru_cache(maxsize=50_000)
def shape(code: str, language: str) -> tuple[str, ...]:
    """Leaf tokens of the syntax tree, identifiers renamed v0, v1, ... by first appearance.

    >>> shape("int f(int n) { return n + 1; }", "java") == shape("int g(int k) { return k + 1; }", "java")
    True
    """
    names: dict[str, str] = {}
    tokens = []
    for node in walk(parse(code, language)):
        if node.child_count == 0 and "comment" not in node.type:
            token = text(node)
            if node.type == "identifier":
                token = names.setdefault(token, f"v{len(names)}")
            tokens.append(token)
    return tuple(tokens)


def nearest(code: str, programs: list[str], language: str) -> str:
    """The program of `programs` most similar to `code` (difflib ratio over shapes)."""
    mine = shape(code, language)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(mine)
    best, best_score = programs[0], -1.0
    for program in programs:
        matcher.set_seq1(shape(program, language))
        if matcher.real_quick_ratio() <= best_score or matcher.quick_ratio() <= best_score:
            continue
        score = matcher.ratio()
        if score > best_score:
            best, best_score = program, score
    return best


def branch_count(code: str, language: str) -> int:
    """if / else-if / else / ternary arms of a program.

    >>> branch_count("def f(a):\\n    if a:\\n        return 1\\n    elif a > 2:\\n        return 2\\n    return 0\\n", "python")
    2
    """
    root = parse(code, language)
    if language == "java":
        ifs = find(root, "if_statement")
        return len(ifs) + sum(1 for n in ifs if n.child_by_field_name("alternative") is not None) \
            + len(find(root, "ternary_expression"))
    return len(find(root, "if_statement", "elif_clause", "else_clause", "conditional_expression"))


def falls_through(code: str, entry: str) -> bool:
    """The Python function `entry` can reach its end without a return (so it returns None).

    >>> falls_through("def f(a):\\n    if a:\\n        return 1\\n", "f"), falls_through("def f(a):\\n    return 1\\n", "f")
    (True, False)
    """
    for function in find(parse(code, "python"), "function_definition"):
        name = function.child_by_field_name("name")
        if name is not None and text(name) == entry:
            return _block_falls_through(function.child_by_field_name("body"))
    return False


def _block_falls_through(block) -> bool:
    lines = statements(block) if block is not None else []
    if not lines:
        return True
    last = lines[-1]
    if last.type in ("return_statement", "raise_statement"):
        return False
    if last.type == "if_statement":
        otherwise = [c for c in last.children if c.type == "else_clause"]
        if not otherwise:
            return True
        bodies = [last.child_by_field_name("consequence"), otherwise[0].child_by_field_name("body")]
        bodies += [c.child_by_field_name("consequence") for c in last.children if c.type == "elif_clause"]
        return any(_block_falls_through(b) for b in bodies)
    if last.type == "while_statement" and text(last.child_by_field_name("condition")) == "True":
        return False
    return True


def ends_without_else(code: str, entry: str) -> bool:
    """The Python function `entry` ends in an if / elif chain whose branches all return but that
    has no else: it returns None for what no branch covers (a missing branch, not a missing return).

    >>> ends_without_else("def f(a):\\n    if a > 1:\\n        return 1\\n    elif a < 0:\\n        return 2\\n", "f")
    True
    """
    for function in find(parse(code, "python"), "function_definition"):
        name = function.child_by_field_name("name")
        if name is None or text(name) != entry:
            continue
        lines = statements(function.child_by_field_name("body"))
        last = lines[-1] if lines else None
        if last is None or last.type != "if_statement" or any(c.type == "else_clause" for c in last.children):
            return False
        bodies = [last.child_by_field_name("consequence")]
        bodies += [c.child_by_field_name("consequence") for c in last.children if c.type == "elif_clause"]
        return all(not _block_falls_through(b) for b in bodies)
    return False
