"""Syntax trees of Java and Python code (tree-sitter), and edits of the code by byte ranges.

The error operators (`kaser.data.synth.mutations`) and the student styles (`kaser.data.synth.students`)
find their sites here and rewrite source text, so a mutated program keeps the student's layout
everywhere except at the edit. Tree-sitter positions are byte offsets into the UTF-8 code;
`splice` applies edits in those units.

    root = parse("int f(int n) { return n; }", "java")
    [text(n) for n in find(root, "identifier")]   # ['f', 'n', 'n']
"""

from __future__ import annotations

import builtins
import functools
import keyword
import random
import re
from collections.abc import Iterable, Iterator

import tree_sitter_java
import tree_sitter_python
from tree_sitter import Language, Node, Parser

LANGUAGES = ("java", "python")

# One edit: replace bytes [start, end) of the UTF-8 code by `text`.
Edit = tuple[int, int, str]

JAVA_KEYWORDS = frozenset("""abstract assert boolean break byte case catch char class const continue
default do double else enum extends final finally float for goto if implements import instanceof
int interface long native new package private protected public return short static strictfp super
switch synchronized this throw throws transient try void volatile while true false null var
String Math System Integer Character Double Arrays""".split())
# Names a Python student cannot take for a variable without shadowing something the code uses.
PYTHON_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins))


@functools.cache
def _parser(language: str) -> Parser:
    grammar = {"java": tree_sitter_java, "python": tree_sitter_python}[language]
    return Parser(Language(grammar.language()))


def parse(code: str, language: str) -> Node:
    """The root node of `code`; check `root.has_error` for syntax errors tree-sitter sees."""
    return _parser(language).parse(code.encode()).root_node


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node` (itself included) in document order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def find(root: Node, *types: str) -> list[Node]:
    """Nodes of the given types, in document order."""
    return [n for n in walk(root) if n.type in types]


def text(node: Node) -> str:
    return node.text.decode()


def field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def child_of_type(node: Node, type_: str) -> Node | None:
    return next((c for c in node.children if c.type == type_), None)


def ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def inside(node: Node, *types: str) -> bool:
    return any(a.type in types for a in ancestors(node))


def splice(code: str, edits: Iterable[Edit]) -> str:
    """`code` with every edit applied; edits must not overlap.

    >>> splice("a < b", [(2, 3, "<=")])
    'a <= b'
    """
    data = code.encode()
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        data = data[:start] + new.encode() + data[end:]
    return data.decode()


def line_start(code: str, byte: int) -> int:
    """Byte offset of the start of the line holding `byte`."""
    return code.encode().rfind(b"\n", 0, byte) + 1


def indentation(code: str, node: Node) -> str:
    """The leading whitespace of the line on which `node` starts."""
    data = code.encode()
    start = line_start(code, node.start_byte)
    end = start
    while end < len(data) and data[end:end + 1] in (b" ", b"\t"):
        end += 1
    return data[start:end].decode()


def delete_lines(code: str, node: Node) -> Edit:
    """An edit removing `node` with its whole line(s) when nothing else shares them, else just it."""
    data = code.encode()
    start, end = line_start(code, node.start_byte), node.end_byte
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    if data[start:node.start_byte].strip() or data[end:line_end].strip():
        return (node.start_byte, node.end_byte, "")
    return (start, min(line_end + 1, len(data)), "")


def parameter_names(root: Node, language: str) -> list[str]:
    if language == "java":
        return [text(field(p, "name")) for p in find(root, "formal_parameter", "spread_parameter")
                if field(p, "name") is not None]
    names = []
    for params in find(root, "parameters"):
        for p in params.named_children:
            target = p if p.type == "identifier" else field(p, "name") or child_of_type(p, "identifier")
            if target is not None:
                names.append(text(target))
    return names


def local_names(root: Node, language: str) -> list[str]:
    """Variables the code declares or assigns itself (not parameters), in order of first binding."""
    found: list[str] = []
    if language == "java":
        for n in find(root, "variable_declarator", "enhanced_for_statement", "catch_formal_parameter"):
            name = field(n, "name")
            if name is not None:
                found.append(text(name))
    else:
        for n in find(root, "assignment", "augmented_assignment", "for_statement", "for_in_clause"):
            target = field(n, "left")
            targets = [target] if target is not None and target.type == "identifier" else (
                [c for c in target.named_children if c.type == "identifier"]
                if target is not None and target.type in ("pattern_list", "tuple_pattern") else [])
            found.extend(text(t) for t in targets)
    params = set(parameter_names(root, language))
    return [n for n in dict.fromkeys(found) if n not in params]


def variable_uses(root: Node, language: str, name: str) -> list[Node]:
    """Identifier nodes that refer to the variable `name` (not fields, methods or keywords)."""
    uses = []
    for n in find(root, "identifier"):
        if text(n) != name:
            continue
        parent, role = n.parent, _field_of(n)
        if language == "java" and (
                (parent.type == "field_access" and role == "field")
                or (parent.type in ("method_invocation", "method_declaration") and role == "name")):
            continue
        if language == "python" and (
                (parent.type == "attribute" and role == "attribute")
                or (parent.type == "keyword_argument" and role == "name")
                or (parent.type == "function_definition" and role == "name")
                or (parent.type == "call" and role == "function")):
            continue
        uses.append(n)
    return uses


def _field_of(node: Node) -> str | None:
    parent = node.parent
    for i, child in enumerate(parent.children):
        if child.start_byte == node.start_byte and child.end_byte == node.end_byte and child.type == node.type:
            return parent.field_name_for_child(i)
    return None


def all_names(root: Node) -> set[str]:
    """Every identifier-like token in the code, to avoid renaming onto a name already used."""
    return {text(n) for n in walk(root) if n.type in ("identifier", "type_identifier")}


def is_reserved(name: str, language: str) -> bool:
    return name in (JAVA_KEYWORDS if language == "java" else PYTHON_RESERVED)


def rename(code: str, language: str, mapping: dict[str, str]) -> str:
    """`code` with variables renamed by `mapping` (every use and binding of each old name)."""
    root = parse(code, language)
    edits = [(n.start_byte, n.end_byte, mapping[name])
             for name in mapping for n in variable_uses(root, language, name)]
    return splice(code, edits)


# --- Looking for edit sites ------------------------------------------------------------------------

def pick(code: str, rng: random.Random, candidates: list[list[Edit]]) -> str | None:
    """`code` with one candidate group of edits applied (chosen by `rng`), or None if there is none."""
    candidates = [c for c in candidates if c]
    return splice(code, rng.choice(candidates)) if candidates else None


def token(node: Node, type_: str) -> Node | None:
    """The anonymous child token of a type, e.g. the `<` of `i < n`."""
    return next((c for c in node.children if c.type == type_), None)


def statements(block: Node) -> list[Node]:
    """The statements of a block, without comments."""
    return [c for c in block.named_children if "comment" not in c.type]


def comparisons(root: Node, language: str, *operators: str) -> list[tuple[Node, Node]]:
    """(comparison, operator token) pairs for the given operators, e.g. `<`."""
    kind = "binary_expression" if language == "java" else "comparison_operator"
    return [(n, c) for n in find(root, kind) for c in n.children if c.type in operators]


def right_operand(comparison: Node, language: str) -> Node:
    return field(comparison, "right") if language == "java" else comparison.named_children[-1]


def is_length(node: Node | None, language: str) -> bool:
    """`x.length`, `s.length()` (Java) or `len(x)` (Python)."""
    if node is None:
        return False
    if language == "java":
        return ((node.type == "field_access" and text(field(node, "field")) == "length")
                or (node.type == "method_invocation" and text(field(node, "name")) == "length"))
    return node.type == "call" and text(field(node, "function")) == "len"


def minus_one_operand(node: Node | None) -> Node | None:
    """The `X` of `X - 1` when `node` is that expression."""
    if node is not None and node.type in ("binary_expression", "binary_operator") \
            and token(node, "-") is not None and text(field(node, "right")) == "1":
        return field(node, "left")
    return None


def range_arguments(root: Node) -> list[list[Node]]:
    """The argument nodes of every Python `range(...)` call."""
    return [field(call, "arguments").named_children for call in find(root, "call")
            if text(field(call, "function")) == "range" and field(call, "arguments").type == "argument_list"]


def in_loop_bound(node: Node) -> bool:
    """Inside the condition of a for or while loop, or inside a Python `range(...)`."""
    for a in (node, *ancestors(node)):
        parent = a.parent
        if parent is not None and parent.type in ("for_statement", "while_statement") \
                and field(parent, "condition") == a:
            return True
        if a.type == "call" and text(field(a, "function")) == "range":
            return True
    return False


def is_updated(root: Node, language: str, name: str, after: int) -> bool:
    """Whether variable `name` is assigned or incremented after byte offset `after`."""
    for use in variable_uses(root, language, name):
        parent = use.parent
        if use.start_byte < after:
            continue
        if parent.type in ("update_expression", "augmented_assignment"):
            return True
        if parent.type in ("assignment_expression", "assignment") and field(parent, "left") == use:
            return True
    return False


# Words of the student prompt's own scaffolding (kaser.predictor.prompt: "KC 1: ... mastery
# level ..."); no programming problem's code needs them, so a predicted code that names a variable
# after them copied the prompt instead of writing what a student would.
PROMPT_WORDS = frozenset({"kc", "kcs", "mastery"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def prompt_words_in(code: str) -> list[str]:
    """The words of `code` (identifiers, and words in its strings and comments) that hold one of
    the prompt's `PROMPT_WORDS` as a part (split at `_` and at camelCase), in order of first use.

    >>> prompt_words_in("def f(kc1_mastery, nums):\\n    kcMastery = 0.9\\n    return sum(nums)")
    ['kc1_mastery', 'kcMastery']
    >>> prompt_words_in("int masterCard = backlog(kcal);")   # only whole parts count
    []
    """
    found: dict[str, None] = {}
    for word in _WORD.findall(code):
        parts = {part.lower().rstrip("0123456789") for part in _WORD_PART.findall(word)}
        if parts & PROMPT_WORDS:
            found.setdefault(word)
    return list(found)
