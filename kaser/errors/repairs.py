"""Candidate repairs of a program that runs but answers wrongly, each naming the error it would fix.

Part of the static annotator (`kaser.errors.static_annotator`, `kaser annotate DIR`): repair-based
diagnosis. Every candidate is one small inverse edit of a novice mistake at one site of the code,
tagged with the standard label of that mistake:

    flip `&&` <-> `||`, `and` <-> `or`                   -> Wrong boolean operator
    change a comparison (`<` -> `<=`, `==` -> `!=`, ...)  -> Wrong comparison operator
      ... in a loop bound, `<` <-> `<=`                   -> Off-by-one error
    shift a loop bound / start / range() argument by 1   -> Off-by-one error
    `a == b` on Strings -> `a.equals(b)` (Java)          -> String comparison with ==
    `(double) a / b`, Python `//` -> `/`                 -> Integer division
    `startsWith` <-> `endsWith`, `upper` <-> `lower`, ...  -> Wrong string method
    an accumulator / flag starting from another value     -> Incorrect initialization
    a returned literal swapped (`true` <-> `false`, 0/1)  -> Wrong return value
    `return v` added at the end of a Python function      -> Missing return statement

The annotator runs the candidates on the tests in one sandbox batch; a candidate that makes
failing tests pass without breaking passing ones names the error (and the repaired program is
searched again for a second error).

    candidates = logic_repairs(code, "java", limit=40)     # [Repair(label, code, change)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from kaser.code.syntax import (
    ancestors, comparisons, field, find, in_loop_bound, inside, is_updated, local_names, parameter_names, parse, range_arguments,
    right_operand, splice, statements, text, token,
)


@dataclass(frozen=True)
class Repair:
    label: str      # the standard error label the edit would fix
    code: str       # the edited program
    change: str     # "line 4: `i < n` -> `i <= n`", the evidence when the repair explains a failure
    edit: tuple[int, int, str] = (0, 0, "")   # the byte range of the original code and its new text


def combine(code: str, first: Repair, second: Repair) -> tuple[Repair, Repair, str] | None:
    """Both edits applied to `code` (None when they overlap): (first, second, edited program)."""
    (a, b, _), (c, d, _) = first.edit, second.edit
    if first.label == second.label and first.edit == second.edit or not (b <= c or d <= a):
        return None
    return first, second, splice(code, [first.edit, second.edit])


def _edit(code: str, node: Node, new: str, label: str, start: int | None = None,
          end: int | None = None) -> Repair:
    start = node.start_byte if start is None else start
    end = node.end_byte if end is None else end
    data = code.encode()
    old = data[start:end].decode()
    line = code.encode()[:start].count(b"\n") + 1
    shown_old = text(node) if len(text(node)) < 60 else old
    shown_new = (data[node.start_byte:start].decode() + new + data[end:node.end_byte].decode()
                 if len(text(node)) < 60 else new)
    return Repair(label, splice(code, [(start, end, new)]), f"line {line}: `{shown_old}` -> `{shown_new}`",
                  (start, end, new))


# ---------------------------------------------------------------- operators

_BOOLEAN_SWAP = {"&&": "||", "||": "&&", "and": "or", "or": "and"}
_COMPARISON_SWAPS = {"<": ("<=", ">"), "<=": ("<", ">="), ">": (">=", "<"), ">=": (">", "<="),
                     "==": ("!=",), "!=": ("==",)}
_BOUND_SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}


def boolean_operator_swaps(code: str, root: Node, language: str) -> list[Repair]:
    kind = "binary_expression" if language == "java" else "boolean_operator"
    return [_edit(code, n, _BOOLEAN_SWAP[c.type], "Wrong boolean operator", c.start_byte, c.end_byte)
            for n in find(root, kind) for c in n.children if c.type in _BOOLEAN_SWAP]


def comparison_swaps(code: str, root: Node, language: str) -> list[Repair]:
    found = []
    for node, op in comparisons(root, language, *_COMPARISON_SWAPS):
        if in_loop_bound(node):
            if op.type in _BOUND_SWAPS:
                found.append(_edit(code, node, _BOUND_SWAPS[op.type], "Off-by-one error", op.start_byte, op.end_byte))
            continue
        for new in _COMPARISON_SWAPS[op.type]:
            found.append(_edit(code, node, new, "Wrong comparison operator", op.start_byte, op.end_byte))
    return found


def _shifts(code: str, node: Node) -> list[Repair]:
    """`X - 1` -> `X`, `X + 1` -> `X`, otherwise `X` -> `X - 1` and `X + 1`."""
    value = text(node)
    minus = re.fullmatch(r"(.+?)\s*-\s*1", value, re.S)
    plus = re.fullmatch(r"(.+?)\s*\+\s*1", value, re.S)
    if minus or plus:
        return [_edit(code, node, (minus or plus).group(1), "Off-by-one error")]
    if value == "0":
        return [_edit(code, node, "1", "Off-by-one error")]
    if value == "1":
        return [_edit(code, node, "0", "Off-by-one error")]
    return [_edit(code, node, f"{value} - 1", "Off-by-one error"),
            _edit(code, node, f"{value} + 1", "Off-by-one error")]


def loop_bound_shifts(code: str, root: Node, language: str) -> list[Repair]:
    found = []
    for loop in find(root, "for_statement", "while_statement"):
        condition = field(loop, "condition")
        if condition is not None:
            for node, _ in comparisons(condition, language, "<", "<=", ">", ">="):
                found.extend(_shifts(code, right_operand(node, language)))
        if language == "java" and loop.type == "for_statement":
            init = field(loop, "init")
            declarator = field(init, "declarator") if init is not None and \
                init.type == "local_variable_declaration" else None
            value = field(declarator, "value") if declarator is not None else None
            if value is not None and text(value) in ("0", "1"):
                found.extend(_shifts(code, value))
    if language == "python":
        for args in range_arguments(root):
            if len(args) == 1:
                found.extend(_shifts(code, args[0]))
            elif len(args) in (2, 3):
                for arg in args[:2]:
                    if text(arg) == "-1":
                        found.append(_edit(code, arg, "0", "Off-by-one error"))
                    elif text(arg) == "0" and len(args) == 3:
                        found.append(_edit(code, arg, "-1", "Off-by-one error"))
                    else:
                        found.extend(_shifts(code, arg))
    return found


# ---------------------------------------------------------------- strings and numbers

_STRING_RETURNING = {"substring", "toLowerCase", "toUpperCase", "trim", "concat", "replace", "valueOf",
                     "toString", "strip", "repeat"}


def _java_string_names(root: Node) -> set[str]:
    names = set()
    for node in find(root, "formal_parameter", "local_variable_declaration"):
        if text(field(node, "type")) == "String":
            if node.type == "formal_parameter":
                names.add(text(field(node, "name")))
            else:
                names.update(text(field(d, "name")) for d in node.named_children if d.type == "variable_declarator")
    return names


def _is_java_string(node: Node, names: set[str]) -> bool:
    if node.type == "string_literal":
        return True
    if node.type == "identifier":
        return text(node) in names
    return node.type == "method_invocation" and text(field(node, "name")) in _STRING_RETURNING


def java_string_equality(code: str, root: Node) -> list[Repair]:
    names = _java_string_names(root)
    found = []
    for node, op in comparisons(root, "java", "==", "!="):
        left, right = field(node, "left"), field(node, "right")
        if "null" in (text(left), text(right)) or not (_is_java_string(left, names) or _is_java_string(right, names)):
            continue
        call = f"{text(left)}.equals({text(right)})"
        found.append(_edit(code, node, call if op.type == "==" else f"!{call}", "String comparison with =="))
    return found


def _java_double_context(node: Node) -> bool:
    for a in (node, *ancestors(node)):
        if a.type == "method_declaration":
            return text(field(a, "type")) in ("double", "float")
        if a.type == "local_variable_declaration":
            return text(field(a, "type")) in ("double", "float")
    return False


def integer_division(code: str, root: Node, language: str) -> list[Repair]:
    found = []
    for node in find(root, "binary_expression", "binary_operator"):
        if language == "python":
            op = token(node, "//")
            if op is not None:
                found.append(_edit(code, node, "/", "Integer division", op.start_byte, op.end_byte))
            continue
        op = token(node, "/")
        left = field(node, "left")
        if op is None or not _java_double_context(node) or any(
                s.type in ("decimal_floating_point_literal", "cast_expression")
                for s in (left, field(node, "right"))):
            continue
        found.append(_edit(code, left, f"(double) {text(left)}", "Integer division"))
    return found


def _int_locals(root: Node) -> list[str]:
    return [text(field(d, "name")) for decl in find(root, "local_variable_declaration")
            if text(field(decl, "type")) == "int" for d in decl.named_children if d.type == "variable_declarator"]


_STRING_METHOD_PAIRS = {
    "java": [("startsWith", "endsWith"), ("toUpperCase", "toLowerCase"), ("indexOf", "lastIndexOf"),
             ("isUpperCase", "isLowerCase"), ("isDigit", "isLetter"), ("contains", "startsWith"),
             ("contains", "endsWith")],
    "python": [("startswith", "endswith"), ("upper", "lower"), ("find", "rfind"), ("index", "rindex"),
               ("lstrip", "rstrip"), ("strip", "lstrip"), ("strip", "rstrip"), ("isupper", "islower"),
               ("isdigit", "isalpha"), ("count", "find")],
}


def wrong_string_method(code: str, root: Node, language: str) -> list[Repair]:
    swaps: dict[str, list[str]] = {}
    for a, b in _STRING_METHOD_PAIRS[language]:
        swaps.setdefault(a, []).append(b)
        swaps.setdefault(b, []).append(a)
    found = []
    if language == "java":
        for call in find(root, "method_invocation"):
            name, args = field(call, "name"), field(call, "arguments").named_children
            for new in swaps.get(text(name), []):
                found.append(_edit(code, name, new, "Wrong string method"))
            if text(name) == "substring" and len(args) == 1:
                ends = [f"{text(args[0])} + 1", *(v for v in _int_locals(root) if v != text(args[0]))]
                found.extend(_edit(code, args[0], f"{text(args[0])}, {end}", "Wrong string method") for end in ends[:3])
    else:
        for attribute in find(root, "attribute"):
            name = field(attribute, "attribute")
            if attribute.parent.type == "call":
                for new in swaps.get(text(name), []):
                    found.append(_edit(code, name, new, "Wrong string method"))
    return found


# ---------------------------------------------------------------- values

_INIT_SWAPS = {"0": ("1",), "1": ("0",), "-1": ("0",), '" "': ('""',), "true": ("false",), "false": ("true",),
               "True": ("False",), "False": ("True",), "0.0": ("1.0",), "1.0": ("0.0",)}
_RETURN_SWAPS = {"true": ("false",), "false": ("true",), "True": ("False",), "False": ("True",),
                 "0": ("1", "-1"), "1": ("0",), "-1": ("0",)}


def _sequence_parameters(code: str, root: Node, language: str) -> list[str]:
    """Parameters holding an array or list (Java by type, Python by `len(p)` / `p[...]`)."""
    if language == "java":
        return [text(field(p, "name")) for p in find(root, "formal_parameter")
                if field(p, "type").type == "array_type" or text(field(p, "type")).startswith("List")]
    return [p for p in parameter_names(root, "python")
            if re.search(rf"len\(\s*{re.escape(p)}\s*\)|\b{re.escape(p)}\[", code)]


def _is_loop_counter(name: Node) -> bool:
    declaration = name.parent.parent
    return declaration is not None and declaration.parent is not None and \
        declaration.parent.type == "for_statement"


def incorrect_initialization(code: str, root: Node, language: str) -> list[Repair]:
    pairs = ([(field(d, "name"), field(d, "value")) for d in find(root, "variable_declarator")]
             if language == "java" else [(field(a, "left"), field(a, "right")) for a in find(root, "assignment")])
    sequences = _sequence_parameters(code, root, language)
    found = []
    for name, value in pairs:
        if name is None or value is None or name.type != "identifier" or _is_loop_counter(name) \
                or not is_updated(root, language, text(name), value.end_byte):
            continue
        for new in _INIT_SWAPS.get(text(value), ()):
            found.append(_edit(code, value, new, "Incorrect initialization"))
        if text(value) == "0":
            found.extend(_edit(code, value, f"{seq}[0]", "Incorrect initialization") for seq in sequences[:1])
    return found


def wrong_return_value(code: str, root: Node) -> list[Repair]:
    found = []
    for ret in find(root, "return_statement"):
        if ret.named_children:
            value = ret.named_children[0]
            for new in _RETURN_SWAPS.get(text(value), ()):
                found.append(_edit(code, value, new, "Wrong return value"))
    return found


def python_missing_return(code: str, root: Node, limit: int = 3) -> list[Repair]:
    """`return v` appended to a function whose last statement is not a return."""
    found = []
    for function in find(root, "function_definition"):
        body = field(function, "body")
        lines = statements(body) if body is not None else []
        if not lines or lines[-1].type == "return_statement" or inside(function, "function_definition"):
            continue
        last = lines[-1]
        data = code.encode()
        line_start = data.rfind(b"\n", 0, last.start_byte) + 1
        indent = data[line_start:last.start_byte].decode()
        if indent.strip():
            continue
        names = [n for n in local_names(function, "python")][::-1][:limit]
        for name in names:
            edit = (body.end_byte, body.end_byte, f"\n{indent}return {name}")
            found.append(Repair("Missing return statement", splice(code, [edit]),
                                f"line {last.end_point[0] + 2}: `return {name}` added at the end of the function", edit))
    return found


# ---------------------------------------------------------------- all together

def logic_repairs(code: str, language: str, limit: int = 40) -> list[Repair]:
    """Single-edit repairs of `code`, most telling first, at most `limit`, no duplicates."""
    root = parse(code, language)
    if root.has_error:
        return []
    groups = [boolean_operator_swaps(code, root, language), comparison_swaps(code, root, language),
              loop_bound_shifts(code, root, language), incorrect_initialization(code, root, language),
              wrong_return_value(code, root), integer_division(code, root, language),
              wrong_string_method(code, root, language)]
    groups.append(java_string_equality(code, root) if language == "java" else python_missing_return(code, root))
    # round-robin over the kinds, so a long list of one kind does not crowd out the others
    ordered, seen = [], {code}
    for i in range(max(map(len, groups), default=0)):
        for group in groups:
            if i < len(group) and group[i].code not in seen:
                seen.add(group[i].code)
                ordered.append(group[i])
    return ordered[:limit]


# ---------------------------------------------------------------- getting past a Python runtime error

def python_runtime_reveals(code: str, exception: str, detail: str) -> list[str]:
    """Programs past a NameError (the misspelt name -> the nearest declared one) or an
    UnboundLocalError (the variable initialised at the top of the function), so what the error
    hides can be tested. Not repairs that name an error: the exception already did."""
    from kaser.errors.compile_errors import closest_names, declared_names
    name = re.search(r"'(\w+)'", detail or "")
    if name is None or exception not in ("NameError", "UnboundLocalError"):
        return []
    name = name.group(1)
    fixes = []
    if exception == "NameError":
        for target in closest_names(name, declared_names(code, "python")):
            fixes.append(re.sub(rf"(?<![\w.]){re.escape(name)}\b", target, code))
    else:
        body = re.search(r"^def .*:[ \t]*\n([ \t]+)", code, re.M)
        if body:
            indent = body.group(1)
            at = body.end() - len(indent)
            fixes.extend(code[:at] + f"{indent}{name} = {value}\n" + code[at:] for value in ("0", '""', "[]", "False"))
    return [f for f in dict.fromkeys(fixes) if f != code]
