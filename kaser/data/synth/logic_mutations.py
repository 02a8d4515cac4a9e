"""Operators for the runtime and logical errors of the catalogue in `kaser.data.synth.mutations`.

Each factory takes a language and returns an operator `(code, rng) -> str | None` that edits one
site (chosen with `rng`) of a correct program so that it raises at run time or computes a wrong
answer, the way novices do: `i <= nums.length`, a loop counter never incremented, `&&` for `||`,
`sum / count` on ints, `a.equals(b)` written `a == b`, an accumulator starting at 1.

    off_by_one("java")("for (int i = 0; i < n; i++) ...", random.Random(0))
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from tree_sitter import Node

from kaser.code.syntax import (
    ancestors, child_of_type, comparisons, delete_lines, field, find, in_loop_bound, inside, is_length, is_updated,
    minus_one_operand, parse, pick, range_arguments, right_operand, statements, text, token,
    variable_uses,
)

Operator = Callable[[str, random.Random], "str | None"]


# --- Runtime --------------------------------------------------------------------------------------

def index_out_of_bounds(language: str) -> Operator:
    """`i < nums.length` -> `i <= nums.length`, `range(len(s))` -> `range(len(s) + 1)`, `s[len(s) - 1]` -> `s[len(s)]`."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        for node, op in comparisons(root, language, "<"):
            if is_length(right_operand(node, language), language):
                edits.append([(op.start_byte, op.end_byte, "<=")])
        for node in find(root, "binary_expression", "binary_operator"):
            inner = minus_one_operand(node)
            if is_length(inner, language) and _is_index(node, language):
                edits.append([(inner.end_byte, node.end_byte, "")])
        if language == "python":
            for args in range_arguments(root):
                stop = args[0] if len(args) == 1 else args[1] if len(args) == 2 else None
                if stop is not None and is_length(stop, language):
                    edits.append([(stop.end_byte, stop.end_byte, " + 1")])
        return pick(code, rng, edits)
    return operator


def _is_index(node: Node, language: str) -> bool:
    """`node` is an array/string index: `a[node]`, `s.charAt(node)`, or a start of a `range` counting down."""
    parent = node.parent
    if language == "java":
        if parent.type == "array_access" and field(parent, "index") == node:
            return True
        return parent.type == "argument_list" and text(field(parent.parent, "name")) == "charAt"
    if parent.type == "subscript" and field(parent, "value") != node:
        return True
    call = parent.parent
    return parent.type == "argument_list" and call.type == "call" and text(field(call, "function")) == "range" \
        and len(parent.named_children) == 3 and parent.named_children[0] == node


def division_by_zero(language: str) -> Operator:
    """The guard before a division left out, the counter that becomes the divisor never counted, or
    a divisor that starts at 0 (`for (int d = 0; ...) if (n % d == 0)`)."""
    def operator(code, rng):
        root = parse(code, language)
        divisions = [n for n in find(root, "binary_expression", "binary_operator")
                     if any(c.type in ("/", "%", "//") for c in n.children)]
        if not divisions:
            return None
        first_division = min(d.start_byte for d in divisions)
        divisors = {text(field(d, "right")) for d in divisions if field(d, "right").type == "identifier"}
        edits = []
        for statement in find(root, "if_statement"):
            condition = text(field(statement, "condition"))
            if statement.end_byte < first_division and "== 0" in condition and _guard(statement, language):
                edits.append([delete_lines(code, statement)])
        for name in sorted(divisors):
            for step in _increments(root, language, name):
                if not _loop_condition_uses(step, name) and _removable(step, language):
                    edits.append([delete_lines(code, step)])
            edits.extend([edit] for edit in _start_at_zero(root, language, name))
        return pick(code, rng, edits)
    return operator


def _start_at_zero(root: Node, language: str, name: str) -> list:
    """Edits starting a divisor at 0: `int d = 2` -> `int d = 0`, `range(2, n)` -> `range(n)`."""
    edits = []
    if language == "java":
        for declarator in find(root, "variable_declarator"):
            value = field(declarator, "value")
            if text(field(declarator, "name")) == name and value is not None \
                    and value.type == "decimal_integer_literal" and text(value) != "0":
                edits.append((value.start_byte, value.end_byte, "0"))
        return edits
    for assignment in find(root, "assignment"):
        value = field(assignment, "right")
        if text(field(assignment, "left")) == name and value is not None \
                and value.type == "integer" and text(value) != "0":
            edits.append((value.start_byte, value.end_byte, "0"))
    for loop in find(root, "for_statement"):
        args = range_arguments(field(loop, "right")) if field(loop, "right") is not None else []
        if text(field(loop, "left")) == name and args and len(args[0]) == 2 \
                and args[0][0].type == "integer" and text(args[0][0]) != "0":
            edits.append((args[0][0].start_byte, args[0][1].start_byte, ""))
    return edits


def _guard(statement: Node, language: str) -> bool:
    has_else = field(statement, "alternative") is not None
    return not has_else and bool(find(field(statement, "consequence"), "return_statement")) and \
        _removable(statement, language)


def _removable(statement: Node, language: str) -> bool:
    """A statement whose deletion leaves valid code (Python blocks may not become empty)."""
    return statement.parent.type == "block" and (language == "java" or len(statements(statement.parent)) > 1)


def _increments(root: Node, language: str, name: str) -> list[Node]:
    """Statements `v++`, `v += k`, `v = v + k` of a variable."""
    steps = []
    for statement in find(root, "expression_statement"):
        expression = statement.named_children[0] if statement.named_children else None
        if expression is None:
            continue
        if expression.type == "update_expression" and text(expression).strip("+-") == name:
            steps.append(statement)
        elif expression.type in ("assignment_expression", "augmented_assignment", "assignment") \
                and text(field(expression, "left")) == name:
            right = field(expression, "right")
            if expression.type != "assignment" and (expression.type == "augmented_assignment" or
                                                    text(token(expression, "=") or expression) != "="):
                steps.append(statement)
            elif right is not None and re.match(rf"{re.escape(name)}\s*[-+*/]", text(right)):
                steps.append(statement)
    return steps


def _loop_condition_uses(statement: Node, name: str) -> bool:
    return any(a.type == "while_statement" and name in {text(i) for i in find(field(a, "condition"), "identifier")}
               for a in ancestors(statement))


# --- Logical ---------------------------------------------------------------------------------------

def infinite_loop(language: str) -> Operator:
    """The update of a while loop's variable left out (`i++` missing)."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        for loop in find(root, "while_statement"):
            names = {text(i) for i in find(field(loop, "condition"), "identifier")}
            for name in sorted(names):
                for step in _increments(root, language, name):
                    inner_loops = [a for a in ancestors(step) if a.type in ("while_statement", "for_statement")]
                    if inner_loops and inner_loops[0] == loop and _removable(step, language):
                        edits.append([delete_lines(code, step)])
        return pick(code, rng, edits)
    return operator


def off_by_one(language: str) -> Operator:
    """A loop that stops one early or starts one late: `i < n` -> `i < n - 1`, `i = 0` -> `i = 1`, ..."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        loops = find(root, "for_statement", "while_statement")
        conditions = [field(loop, "condition") for loop in loops if field(loop, "condition") is not None]
        for node, op in [pair for c in conditions for pair in comparisons(c, language, "<", "<=", ">=")]:
            right = right_operand(node, language)
            if op.type == "<":
                edits.append([(right.end_byte, right.end_byte, " - 1")])
            else:
                edits.append([(op.start_byte, op.end_byte, op.type[0])])
        if language == "java":
            for loop in find(root, "for_statement"):
                init = field(loop, "init")
                value = field(field(init, "declarator"), "value") if init is not None and \
                    init.type == "local_variable_declaration" else None
                if value is not None and text(value) == "0":
                    edits.append([(value.start_byte, value.end_byte, "1")])
        else:
            for args in range_arguments(root):
                if len(args) == 1:
                    edits.append([(args[0].start_byte, args[0].start_byte, "1, ")])
                    edits.append([(args[0].end_byte, args[0].end_byte, " - 1")])
                elif len(args) == 2:
                    edits.append([(args[1].end_byte, args[1].end_byte, " - 1")])
                elif len(args) == 3 and text(args[1]) == "-1":
                    edits.append([(args[1].start_byte, args[1].end_byte, "0")])
        return pick(code, rng, edits)
    return operator


def integer_division(language: str) -> Operator:
    """`(double) sum / count` -> `sum / count`, `total / 2.0` -> `total / 2`; Python `/` -> `//`."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        for node in find(root, "binary_expression", "binary_operator"):
            op = token(node, "/")
            if op is None:
                continue
            if language == "python":
                if not any(side.type == "float" for side in (field(node, "left"), field(node, "right"))):
                    edits.append([(op.start_byte, op.end_byte, "//")])
                continue
            for side in (field(node, "left"), field(node, "right")):
                if side.type == "cast_expression" and text(field(side, "type")) in ("double", "float"):
                    edits.append([(side.start_byte, field(side, "value").start_byte, "")])
                elif side.type == "decimal_floating_point_literal" and text(side).endswith(".0"):
                    edits.append([(side.start_byte, side.end_byte, text(side)[:-2])])
        return pick(code, rng, edits)
    return operator


def wrong_boolean_operator(language: str) -> Operator:
    swap = {"&&": "||", "||": "&&"} if language == "java" else {"and": "or", "or": "and"}
    node_type = "binary_expression" if language == "java" else "boolean_operator"

    def operator(code, rng):
        root = parse(code, language)
        return pick(code, rng, [[(c.start_byte, c.end_byte, swap[c.type])]
                                 for n in find(root, node_type) for c in n.children if c.type in swap])
    return operator


def wrong_comparison_operator(language: str) -> Operator:
    """`>=` -> `>` or `<=`, `==` -> `!=`, ... in a condition that is not a loop bound."""
    swaps = {"<": ("<=", ">"), "<=": ("<", ">="), ">": (">=", "<"), ">=": (">", "<="), "==": ("!=",), "!=": ("==",)}

    def operator(code, rng):
        root = parse(code, language)
        pairs = comparisons(root, language, *swaps)
        return pick(code, rng, [[(op.start_byte, op.end_byte, rng.choice(swaps[op.type]))]
                                 for node, op in pairs if not in_loop_bound(node)])
    return operator


def missing_logic_branch(language: str) -> Operator:
    """An else / else-if / elif branch left out, or a whole one-armed if left out."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        for statement in find(root, "if_statement"):
            if language == "java":
                consequence, alternative = field(statement, "consequence"), field(statement, "alternative")
                if alternative is not None:
                    end = (field(alternative, "consequence").end_byte if alternative.type == "if_statement"
                           else alternative.end_byte)
                    edits.append([(consequence.end_byte, end, "")])
                elif statement.parent.type == "block" and statement.parent.parent.type != "method_declaration" \
                        or len(statements(statement.parent)) > 2:
                    edits.append([delete_lines(code, statement)])
            else:
                for clause in statement.children:
                    if clause.type in ("elif_clause", "else_clause"):
                        edits.append([delete_lines(code, clause)])
                if child_of_type(statement, "elif_clause") is None and child_of_type(statement, "else_clause") is None \
                        and _removable(statement, language):
                    edits.append([delete_lines(code, statement)])
        return pick(code, rng, edits)
    return operator


def java_string_equality(code, rng):
    """`a.equals(b)` -> `a == b` and `!a.equals(b)` -> `a != b`."""
    root = parse(code, "java")
    edits = []
    for call in find(root, "method_invocation"):
        args = field(call, "arguments").named_children
        target = field(call, "object")
        if text(field(call, "name")) != "equals" or target is None or len(args) != 1:
            continue
        parent = call.parent
        if parent.type == "unary_expression" and text(field(parent, "operator")) == "!":
            edits.append([(parent.start_byte, parent.end_byte, f"{text(target)} != {text(args[0])}")])
        else:
            edits.append([(call.start_byte, call.end_byte, f"{text(target)} == {text(args[0])}")])
    return pick(code, rng, edits)


_STRING_METHOD_SWAPS = {
    "java": {"startsWith": "endsWith", "endsWith": "startsWith", "toUpperCase": "toLowerCase",
             "toLowerCase": "toUpperCase", "indexOf": "lastIndexOf", "lastIndexOf": "indexOf",
             "isUpperCase": "isLowerCase", "isLowerCase": "isUpperCase", "isDigit": "isLetter",
             "isLetter": "isDigit", "contains": "startsWith"},
    "python": {"startswith": "endswith", "endswith": "startswith", "upper": "lower", "lower": "upper",
               "find": "rfind", "rfind": "find", "index": "rindex", "lstrip": "rstrip", "rstrip": "lstrip",
               "isupper": "islower", "islower": "isupper", "isdigit": "isalpha", "isalpha": "isdigit",
               "strip": "lstrip", "count": "find"},
}


def wrong_string_method(language: str) -> Operator:
    """`startsWith` for `endsWith`, `upper` for `lower`, `find` for `rfind`; Java `substring(i, j)` -> `substring(i)`."""
    swaps = _STRING_METHOD_SWAPS[language]

    def operator(code, rng):
        root = parse(code, language)
        edits = []
        if language == "java":
            for call in find(root, "method_invocation"):
                name, args = field(call, "name"), field(call, "arguments").named_children
                if text(name) in swaps:
                    edits.append([(name.start_byte, name.end_byte, swaps[text(name)])])
                elif text(name) == "substring" and len(args) == 2:
                    edits.append([(args[0].end_byte, args[1].end_byte, "")])
        else:
            for attribute in find(root, "attribute"):
                name = field(attribute, "attribute")
                if text(name) in swaps and attribute.parent.type == "call":
                    edits.append([(name.start_byte, name.end_byte, swaps[text(name)])])
        return pick(code, rng, edits)
    return operator


def incorrect_initialization(language: str) -> Operator:
    """An accumulator or flag starting from the wrong value: 0 -> 1, 1 -> 0, "" -> " ", true <-> false."""
    swaps = {"0": "1", "1": "0", '""': '" "', "true": "false", "false": "true",
             "True": "False", "False": "True", "0.0": "1.0"}

    def operator(code, rng):
        root = parse(code, language)
        edits = []
        pairs = ([(field(d, "name"), field(d, "value")) for d in find(root, "variable_declarator")]
                 if language == "java" else
                 [(field(a, "left"), field(a, "right")) for a in find(root, "assignment")])
        for name, value in pairs:
            if name is None or value is None or name.type != "identifier":
                continue
            updated = is_updated(root, language, text(name), value.end_byte)
            if text(value) in swaps and updated:
                edits.append([(value.start_byte, value.end_byte, swaps[text(value)])])
            elif value.type in ("array_access", "subscript") and text(value).endswith("[0]") and updated:
                edits.append([(value.start_byte, value.end_byte, "0")])   # max = nums[0] -> max = 0
        return pick(code, rng, edits)
    return operator


def wrong_return_value(language: str) -> Operator:
    """A branch returning the opposite truth value, or 0 where 1 (or -1) belongs."""
    swaps = {"true": "false", "false": "true", "True": "False", "False": "True", "0": "1", "1": "0", "-1": "0"}

    def operator(code, rng):
        root = parse(code, language)
        values = [r.named_children[0] for r in find(root, "return_statement") if r.named_children]
        return pick(code, rng, [[(v.start_byte, v.end_byte, swaps[text(v)])] for v in values if text(v) in swaps])
    return operator
