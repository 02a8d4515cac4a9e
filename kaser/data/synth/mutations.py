"""The error catalogue of the synthetic benchmark: error types that inject real novice mistakes.

Each `ErrorType` has a standard label (`kaser.taxonomy.STANDARD_ERRORS`), the knowledge components
whose weak mastery causes it, and per language an operator `(code, rng) -> str | None` that edits
the syntax tree of a correct program at one site chosen with `rng` (None: the error has no site
in this code). Edits are the ones students make: `i < nums.length` -> `i <= nums.length`,
`&&` -> `||`, a dropped `;` or `:`, `.equals(x)` -> `== x`, an accumulator starting at 1, ...

    from kaser.data.synth.mutations import CATALOGUE
    mutated = CATALOGUE["Off-by-one error"].apply(code, "java", random.Random(0))

An operator only promises the edit. Whether the error shows (does not compile, raises, or gives a
wrong answer on the tests) is checked by running the program; `kaser.data.synth.generate` keeps an
error only where it shows, so `true_errors` is what the code really does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from kaser.data.synth.logic_mutations import (
    division_by_zero, incorrect_initialization, index_out_of_bounds, infinite_loop, integer_division,
    java_string_equality, missing_logic_branch, off_by_one, wrong_boolean_operator, wrong_comparison_operator,
    wrong_return_value, wrong_string_method,
)
from kaser.code.syntax import (
    all_names, child_of_type, comparisons, delete_lines, field, find, in_loop_bound, indentation, inside,
    is_reserved, local_names, parameter_names, parse, pick, statements, text, token, variable_uses,
)
from kaser.taxonomy import category_of

Operator = Callable[[str, random.Random], "str | None"]


@dataclass(frozen=True)
class ErrorType:
    label: str                          # key of kaser.taxonomy.STANDARD_ERRORS
    kcs: tuple[str, ...]                # weak mastery of these KCs makes the error likely
    operators: Mapping[str, Operator]   # language -> operator
    weight: float = 1.0                 # frequency relative to other errors of its category

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self.operators))

    def category(self, language: str) -> str:
        return category_of(self.label, language)

    def apply(self, code: str, language: str, rng: random.Random) -> str | None:
        """`code` with this error at one site chosen by `rng`, or None where it cannot occur."""
        operator = self.operators.get(language)
        mutated = operator(code, rng) if operator is not None else None
        return mutated if mutated is not None and mutated != code else None


# --- Syntax ----------------------------------------------------------------------------------------

def java_missing_semicolon(code, rng):
    root = parse(code, "java")
    owners = ("expression_statement", "local_variable_declaration", "return_statement",
              "break_statement", "continue_statement")
    return pick(code, rng, [[(c.start_byte, c.end_byte, "")] for n in find(root, *owners)
                             if n.parent.type != "for_statement"
                             for c in n.children[-1:] if c.type == ";"])


def java_unbalanced_braces(code, rng):
    root = parse(code, "java")
    return pick(code, rng, [[(n.children[-1].start_byte, n.children[-1].end_byte, "")]
                             for n in find(root, "block") if n.children and n.children[-1].type == "}"])


def unbalanced_parentheses(language: str) -> Operator:
    def operator(code, rng):
        root = parse(code, language)
        closers = []
        for n in find(root, "argument_list", "parenthesized_expression", "formal_parameters", "parameters"):
            if n.children and n.children[-1].type == ")" and (n.named_child_count or n.type != "argument_list"):
                closers.append([(n.children[-1].start_byte, n.children[-1].end_byte, "")])
        return pick(code, rng, closers)
    return operator


def python_missing_colon(code, rng):
    root = parse(code, "python")
    headers = find(root, "if_statement", "elif_clause", "else_clause", "for_statement",
                   "while_statement", "function_definition")
    return pick(code, rng, [[(c.start_byte, c.end_byte, "")] for n in headers
                             for c in n.children if c.type == ":"])


def python_indentation_error(code, rng):
    """Over-indent a later statement of a block, or pull the first one back to its header."""
    root = parse(code, "python")
    data = code.encode()
    unit = min((len(indentation(code, b)) for b in find(root, "block") if indentation(code, b)), default=4)
    edits = []
    for block in find(root, "block"):
        for i, statement in enumerate(statements(block)):
            start = data.rfind(b"\n", 0, statement.start_byte) + 1
            if data[start:statement.start_byte].strip():
                continue   # shares its line with something else
            indent = indentation(code, statement)
            if i > 0:   # half a level more: a column no block uses
                edits.append([(start, statement.start_byte, indent + " " * max(1, unit // 2))])
            elif block.parent is not None and block.parent.start_point[0] < statement.start_point[0]:
                edits.append([(start, statement.start_byte, indentation(code, block.parent))])
    return pick(code, rng, edits)


def java_assignment_for_equality(code, rng):
    root = parse(code, "java")
    lvalues = ("identifier", "array_access", "field_access")
    literals = ("decimal_integer_literal", "character_literal", "string_literal",
                "decimal_floating_point_literal", "null_literal")
    edits = []
    for node, op in comparisons(root, "java", "=="):
        if not inside(node, "parenthesized_expression") or in_loop_bound(node):
            continue
        left, right = field(node, "left"), field(node, "right")
        if left.type not in lvalues or right.type in literals or right.type == "binary_expression":
            edits.append([(op.start_byte, op.end_byte, "=")])
    return pick(code, rng, edits)


def python_assignment_for_equality(code, rng):
    root = parse(code, "python")
    edits = []
    for node, op in comparisons(root, "python", "=="):
        if len(node.named_children) == 2 and not inside(node, "argument_list", "lambda") and \
                inside(node, "if_statement", "while_statement", "return_statement"):
            edits.append([(op.start_byte, op.end_byte, "=")])
    return pick(code, rng, edits)


def missing_return(language: str) -> Operator:
    """Drop the return that ends the function, or the one ending its final else branch."""
    def operator(code, rng):
        root = parse(code, language)
        edits = []
        for function in find(root, "method_declaration", "function_definition"):
            body = field(function, "body")
            lines = statements(body) if body is not None else []
            last = lines[-1] if lines else None
            if last is not None and last.type == "return_statement":
                if len(lines) > 1 or language == "java":
                    edits.append([delete_lines(code, last)])
                elif language == "python" and field(last, "argument") is None and last.named_children:
                    # one-line function: the student computes the value but never returns it
                    edits.append([(last.start_byte, last.named_children[0].start_byte, "result = ")])
            for branch in _final_else_blocks(last, language):
                inner = statements(branch)
                if inner and inner[-1].type == "return_statement" and (len(inner) > 1 or language == "java"):
                    edits.append([delete_lines(code, inner[-1])])
        return pick(code, rng, edits)
    return operator


def _final_else_blocks(statement: Node | None, language: str) -> list[Node]:
    while statement is not None and statement.type == "if_statement":
        if language == "java":
            alternative = field(statement, "alternative")
            if alternative is not None and alternative.type == "block":
                return [alternative]
            statement = alternative
        else:
            clause = child_of_type(statement, "else_clause")
            return [field(clause, "body")] if clause is not None else []
    return []


def java_unreachable_code(code, rng):
    """A statement after a return: a print of the returned value, or a second return."""
    root = parse(code, "java")
    edits = []
    for ret in find(root, "return_statement"):
        if ret.parent.type != "block" or not ret.named_children or ret.named_children[0].type != "identifier":
            continue
        value = text(ret.named_children[0])
        edits.append([(ret.end_byte, ret.end_byte, f"\n{indentation(code, ret)}System.out.println({value});")])
    for function in find(root, "method_declaration"):
        last = statements(field(function, "body"))[-1:]
        if last and last[0].type == "if_statement" and _final_else_blocks(last[0], "java"):
            returns = find(last[0], "return_statement")
            if returns and returns[-1].named_children:
                edits.append([(last[0].end_byte, last[0].end_byte,
                               f"\n{indentation(code, last[0])}{text(returns[-1])}")])
    return pick(code, rng, edits)


# --- Types, names and initialisation ----------------------------------------------------------------

_JAVA_TYPE_SWAP = {"String": "char", "char": "String", "boolean": "int"}


def java_type_mismatch(code, rng):
    """`String c = s.substring(i, i + 1)` -> `char c = ...`, `double` holding a fraction -> `int`."""
    root = parse(code, "java")
    edits = []
    for decl in find(root, "local_variable_declaration"):
        kind, declarator = field(decl, "type"), field(decl, "declarator")
        if declarator is None or field(declarator, "value") is None:
            continue
        name = text(kind)
        if name in _JAVA_TYPE_SWAP:
            edits.append([(kind.start_byte, kind.end_byte, _JAVA_TYPE_SWAP[name])])
        elif name == "double" and find(field(declarator, "value"), "decimal_floating_point_literal"):
            edits.append([(kind.start_byte, kind.end_byte, "int")])
    return pick(code, rng, edits)


def python_type_mismatch(code, rng):
    """`s[len(s) // 2]` -> `s[len(s) / 2]` (float index), or `"n=" + str(n)` -> `"n=" + n`."""
    root = parse(code, "python")
    edits = []
    for node in find(root, "binary_operator"):
        op = token(node, "//")
        if op is not None and (inside(node, "subscript") or in_loop_bound(node)):
            edits.append([(op.start_byte, op.end_byte, "/")])
        if token(node, "+") is not None:
            for side in (field(node, "left"), field(node, "right")):
                if side.type == "call" and text(field(side, "function")) == "str":
                    args = field(side, "arguments").named_children
                    if len(args) == 1 and args[0].type in ("identifier", "call", "binary_operator"):
                        edits.append([(side.start_byte, side.end_byte, text(args[0]) if args[0].type != "binary_operator"
                                       else f"({text(args[0])})")])
    return pick(code, rng, edits)


def _misspellings(name: str) -> list[str]:
    spellings = [name[0].swapcase() + name[1:], name + "s"]     # count -> Count, counts
    if len(name) >= 4:
        spellings.append(name[:-2] + name[-1])                   # total -> totl
    return spellings


def undefined_variable(language: str) -> Operator:
    """One use of a variable spelled differently from its declaration (`count` -> `Count`)."""
    def operator(code, rng):
        root = parse(code, language)
        taken = all_names(root)
        edits = []
        for name in parameter_names(root, language) + local_names(root, language):
            uses = variable_uses(root, language, name)
            spellings = [s for s in _misspellings(name)
                         if s not in taken and not is_reserved(s, language) and s.isidentifier()]
            if not spellings:
                continue
            for use in uses[1:]:   # the first one declares it
                if language == "python" and _binds(use):
                    continue
                edits.append([(use.start_byte, use.end_byte, spellings[rng.randrange(len(spellings))])])
        return pick(code, rng, edits)
    return operator


def _binds(identifier: Node) -> bool:
    """A Python identifier that is the target of a plain assignment."""
    parent = identifier.parent
    return parent.type in ("assignment", "for_statement") and field(parent, "left") == identifier


def _first_later_use_reads(root: Node, language: str, name: str, after: int) -> bool:
    later = [u for u in variable_uses(root, language, name) if u.start_byte >= after]
    if not later:
        return False
    parent = later[0].parent
    plain = "assignment_expression" if language == "java" else "assignment"
    return not (parent.type == plain and field(parent, "left") == later[0]
                and (language == "python" or text(token(parent, "=") or parent) == "="))


# Initial values a student forgets to write: `int count = 0;` -> `int count;`
_LITERALS = ("decimal_integer_literal", "decimal_floating_point_literal", "string_literal", "true", "false",
             "integer", "float", "string")


def java_uninitialized_variable(code, rng):
    """`int count = 0;` -> `int count;` where the count is read before it is assigned."""
    root = parse(code, "java")
    edits = []
    for decl in find(root, "local_variable_declaration"):
        declarators = [c for c in decl.named_children if c.type == "variable_declarator"]
        if decl.parent.type == "for_statement" or len(declarators) != 1:
            continue
        name, value = field(declarators[0], "name"), field(declarators[0], "value")
        if value is not None and value.type in _LITERALS \
                and _first_later_use_reads(root, "java", text(name), decl.end_byte):
            edits.append([(name.end_byte, value.end_byte, "")])
    return pick(code, rng, edits)


def python_uninitialized_variable(code, rng):
    """The line `total = 0` left out where `total` is then updated or read."""
    root = parse(code, "python")
    params = set(parameter_names(root, "python"))
    seen: set[str] = set()
    edits = []
    for statement in find(root, "expression_statement"):
        assignment = statement.named_children[0] if statement.named_children else None
        if assignment is None or assignment.type != "assignment" or field(assignment, "left").type != "identifier":
            continue
        name = text(field(assignment, "left"))
        first = name not in seen and name not in params
        seen.add(name)
        block = statement.parent
        value = field(assignment, "right")
        if first and block.type == "block" and len(statements(block)) > 1 \
                and value is not None and value.type in _LITERALS \
                and _first_later_use_reads(root, "python", name, statement.end_byte):
            edits.append([delete_lines(code, statement)])
    return pick(code, rng, edits)


def _both(factory: Callable[[str], Operator]) -> dict[str, Operator]:
    return {language: factory(language) for language in ("java", "python")}


# label -> error type. KCs: the knowledge whose weak mastery leads to the error (`kcs` must meet a
# problem's KCs for the error to be possible there).
CATALOGUE: dict[str, ErrorType] = {e.label: e for e in (
    ErrorType("Missing semicolon", ("variables", "arithmetic", "string concatenation", "return statements"),
              {"java": java_missing_semicolon}),
    ErrorType("Unbalanced braces", ("conditionals", "nested conditionals", "for loops", "while loops", "nested loops"),
              {"java": java_unbalanced_braces}),
    ErrorType("Unbalanced parentheses", ("arithmetic", "boolean operators", "numeric comparison", "string length"),
              _both(unbalanced_parentheses)),
    ErrorType("Missing colon", ("conditionals", "for loops", "while loops", "nested loops"),
              {"python": python_missing_colon}),
    ErrorType("Indentation error", ("conditionals", "nested conditionals", "for loops", "while loops", "nested loops"),
              {"python": python_indentation_error}),
    ErrorType("Confusing assignment with equality", ("numeric comparison", "conditionals", "modulo"),
              {"java": java_assignment_for_equality, "python": python_assignment_for_equality}),
    ErrorType("Missing return statement", ("return statements", "conditionals", "variables"), _both(missing_return)),
    ErrorType("Unreachable code", ("return statements", "conditionals", "nested conditionals"),
              {"java": java_unreachable_code}),
    ErrorType("Type mismatch", ("variables", "string indexing", "character comparison", "string concatenation"),
              {"java": java_type_mismatch, "python": python_type_mismatch}),
    ErrorType("Undefined variable", ("variables", "for loops", "string concatenation"), _both(undefined_variable)),
    ErrorType("Uninitialized variable", ("variables", "arithmetic"),
              {"java": java_uninitialized_variable, "python": python_uninitialized_variable}),
    ErrorType("Index out of bounds", ("array indexing", "string indexing", "string length"), _both(index_out_of_bounds)),
    ErrorType("Division by zero", ("arithmetic", "modulo"), _both(division_by_zero)),
    # rare in first submissions, and each hanging program costs the sandbox a timeout per test
    ErrorType("Infinite loop", ("while loops", "for loops"), _both(infinite_loop), weight=0.25),
    ErrorType("Off-by-one error", ("for loops", "while loops", "nested loops", "array indexing"), _both(off_by_one)),
    ErrorType("Integer division", ("arithmetic",), _both(integer_division)),
    ErrorType("Wrong boolean operator", ("boolean operators", "boolean logic"), _both(wrong_boolean_operator)),
    ErrorType("Wrong comparison operator", ("numeric comparison", "conditionals"), _both(wrong_comparison_operator)),
    ErrorType("Missing logic branch", ("conditionals", "nested conditionals"), _both(missing_logic_branch)),
    ErrorType("String comparison with ==", ("string equality", "character comparison"),
              {"java": java_string_equality}),
    ErrorType("Wrong string method", ("string indexing", "string equality", "string formatting"),
              _both(wrong_string_method)),
    ErrorType("Incorrect initialization", ("variables", "arithmetic", "string concatenation"),
              _both(incorrect_initialization)),
    ErrorType("Wrong return value", ("return statements", "boolean logic", "conditionals"), _both(wrong_return_value)),
)}
