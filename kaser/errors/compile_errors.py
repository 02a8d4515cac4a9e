"""Compiler and parser messages -> standard error labels, and the edits that get past them.

Part of the static annotator (`kaser.errors.static_annotator`, `kaser annotate DIR`):

    java_compile_errors(code, diagnostics)   # javac's messages -> [(label, evidence)]
    java_syntax_repairs(code, diagnostics)   # programs that may compile, to find what hides behind
    python_syntax_pass(code)                 # Python: parse, label, repair, parse again

A compiler stops at the first syntax error it meets (javac at parse errors, Python at the first
error of all), so an error behind it stays invisible: a missing `;` hides an undefined variable
and every wrong answer. The repairs are the edits a teacher would make to read on: put the `;`
back at the end of the line, close the parenthesis, re-indent the line, rename `Count` to the
declared `count`. The annotator runs the repaired programs and keeps labelling.

Python code is parsed here with `compile()`, which builds a code object and runs nothing; the
code itself only ever runs in `kaser.code.sandbox`.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

from kaser.code.syntax import find, parse, text

GENERIC_SYNTAX = "Syntax error"          # a compile error no rule names
UNDEFINED_METHOD = "Undefined method"    # javac "cannot find symbol ... method"

_OPENERS, _CLOSERS = "({[", ")}]"
# one `=` that is not part of ==, <=, >=, !=, +=, ... (an assignment where a test belongs)
_LONE_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^:])=(?!=)")
_CONDITION_WORDS = re.compile(r"\b(if|elif|while|return)\b|&&|\|\||\band\b|\bor\b|\?")
_PY_HEADER = re.compile(r"^\s*(if|elif|else|for|while|def|try|except|finally|with|class)\b")


# ---------------------------------------------------------------- source scanning

def code_mask(code: str, language: str) -> str:
    """`code` with string/char literals and comments blanked (same length, newlines kept).

    >>> code_mask('x = "a(b" # (', "python")
    'x = "   "    '
    """
    out, i, n = list(code), 0, len(code)
    while i < n:
        ch = code[i]
        if (language == "java" and code.startswith("//", i)) or (language == "python" and ch == "#"):
            end = code.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif language == "java" and code.startswith("/*", i):
            end = code.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in code[i:end]]
            i = end
        elif ch in "\"'":
            quote = code[i:i + 3] if language == "python" and code[i:i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < n and not code.startswith(quote, j):
                if code[j] == "\\":
                    j += 1
                elif code[j] == "\n" and len(quote) == 1:
                    break
                j += 1
            end = min(n, j + len(quote))
            out[i + 1:end - 1] = [c if c == "\n" else " " for c in code[i + 1:end - 1]]
            i = end
        else:
            i += 1
    return "".join(out)


def bracket_balance(code: str, language: str) -> dict[str, int]:
    """Openers minus closers per bracket kind, outside strings and comments.

    >>> bracket_balance("if (a) { f(b; }", "java")
    {'()': 1, '{}': 0, '[]': 0}
    """
    counts = Counter(code_mask(code, language))
    return {o + c: counts[o] - counts[c] for o, c in zip(_OPENERS, _CLOSERS)}


def _line(code: str, number: int | None) -> str:
    lines = code.split("\n")
    return lines[number - 1] if number is not None and 1 <= number <= len(lines) else ""


def assignment_in_condition(line: str, language: str) -> bool:
    """A lone `=` on a line that tests something (if/while/return/&&/...), outside strings.

    >>> assignment_in_condition("    if (x = 5) {", "java"), assignment_in_condition("int x = 5;", "java")
    (True, False)
    """
    masked = code_mask(line, language)
    words = _CONDITION_WORDS.search(masked)
    if words is None:
        return False
    if language == "java" and re.match(r"\s*for\b", masked):
        return False
    return _LONE_ASSIGN.search(masked, words.start()) is not None


# ---------------------------------------------------------------- Java

def _java_label(message: str, detail: str, line_text: str, balance: dict[str, int]) -> str:
    m = message.lower()
    if "';' expected" in m:
        return "Missing semicolon"
    if "reached end of file while parsing" in m or "class, interface, enum, or record expected" in m:
        return "Unbalanced braces"
    if re.search(r"'\)' expected|'\(' expected|', '\)'|'\)' or|'\(' or", m):
        return "Unbalanced parentheses"
    if "missing return statement" in m:
        return "Missing return statement"
    if "unreachable statement" in m:
        return "Unreachable code"
    if "might not have been initialized" in m:
        return "Uninitialized variable"
    if "cannot find symbol" in m:
        return UNDEFINED_METHOD if re.search(r"symbol:\s*method", detail) else "Undefined variable"
    if re.search(r"incompatible types|unexpected type|lossy conversion|bad operand type|incomparable types"
                 r"|cannot be dereferenced|cannot be applied|cannot be converted|cannot assign a value", m):
        return ("Confusing assignment with equality" if assignment_in_condition(line_text, "java")
                else "Type mismatch")
    if balance["{}"]:
        return "Unbalanced braces"
    if balance["()"]:
        return "Unbalanced parentheses"
    return GENERIC_SYNTAX


def java_compile_errors(code: str, diagnostics) -> list[tuple[str, str]]:
    """(label, evidence) for each javac diagnostic, plus bracket imbalance javac may name otherwise.

    Evidence is "line L: <javac message> (<symbol/required/found>)".
    """
    balance = bracket_balance(code, "java")
    found = []
    for d in diagnostics:
        detail = getattr(d, "detail", "") or ""
        label = _java_label(d.message, detail, _line(code, d.line), balance)
        evidence = f"line {d.line}: {d.message}" + (f" ({detail})" if detail else "")
        found.append((label, evidence))
    labels = {label for label, _ in found}
    if balance["{}"] and "Unbalanced braces" not in labels:
        found.append(("Unbalanced braces", f"{balance['{}']:+d} '{{' without a matching '}}'"))
    if balance["()"] and "Unbalanced parentheses" not in labels:
        found.append(("Unbalanced parentheses", f"{balance['()']:+d} '(' without a matching ')'"))
    if labels - {GENERIC_SYNTAX}:
        found = [f for f in found if f[0] != GENERIC_SYNTAX]
    return found


def _insert_at_line_end(code: str, number: int, token: str, language: str) -> str | None:
    """`token` added after the last code character of line `number` (before a comment)."""
    lines = code.split("\n")
    if not 1 <= number <= len(lines):
        return None
    end = len(code_mask(lines[number - 1], language).rstrip())
    if end == 0:
        return None
    lines[number - 1] = lines[number - 1][:end] + token + lines[number - 1][end:]
    return "\n".join(lines)


def _close_paren_candidates(code: str, number: int, language: str, limit: int = 6) -> list[str]:
    """Programs with one `)` added on line `number` after its last unclosed `(`."""
    lines = code.split("\n")
    if not 1 <= number <= len(lines):
        return []
    line = lines[number - 1]
    masked = code_mask(line, language)
    stack = []
    for i, ch in enumerate(masked):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            stack.pop()
    if not stack:
        return []
    start = stack[-1]
    end = len(masked.rstrip())
    while end > start and masked[end - 1] in "{:;":
        end -= 1
    positions = [end]
    depth = 0
    for i in range(start + 1, end):
        ch = masked[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and i + 1 < end and (masked[i].isalnum() or masked[i] in "_)]\"'") \
                and not (masked[i + 1].isalnum() or masked[i + 1] in "_.([\"'"):
            positions.append(i + 1)
    found = []
    for pos in dict.fromkeys(positions):
        lines_copy = list(lines)
        lines_copy[number - 1] = line[:pos] + ")" + line[pos:]
        found.append("\n".join(lines_copy))
    return found[:limit]


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _brace_candidates(code: str, limit: int = 4) -> list[str]:
    """Programs with one `}` put back where the indentation says a block ends."""
    lines = code.split("\n")
    masked = code_mask(code, "java").split("\n")
    found = []
    for i, line in enumerate(masked):
        if not line.rstrip().endswith("{"):
            continue
        width = len(_indent(line))
        for j in range(i + 1, len(lines)):
            if not masked[j].strip():
                continue
            else_line = masked[j].lstrip().startswith("else")
            indent = len(_indent(lines[j]))
            if indent <= width + (2 if else_line else 0):
                if else_line:   # `if (...) { ... else {`: the `}` goes before the else
                    found.append("\n".join(lines[:j] + [_indent(line) + "} " + lines[j].lstrip()] + lines[j + 1:]))
                elif not (masked[j].lstrip().startswith("}") and indent == width):
                    found.append("\n".join(lines[:j] + [_indent(line) + "}"] + lines[j:]))
                break
        else:
            found.append(code.rstrip("\n") + "\n" + _indent(line) + "}\n")
    return found[:limit] + [code.rstrip("\n") + "\n}\n"]


def declared_names(code: str, language: str) -> list[str]:
    from kaser.code.syntax import local_names, parameter_names
    root = parse(code, language)
    return list(dict.fromkeys(parameter_names(root, language) + local_names(root, language)))


def closest_names(name: str, names: list[str]) -> list[str]:
    """Declared names a misspelling most likely meant (case-insensitive match first)."""
    same = [n for n in names if n.lower() == name.lower() and n != name]
    near = difflib.get_close_matches(name, [n for n in names if n != name], n=2, cutoff=0.6)
    return list(dict.fromkeys(same + near))[:2]


def _rename_on_line(code: str, number: int, old: str, new: str) -> str | None:
    lines = code.split("\n")
    if not 1 <= number <= len(lines):
        return None
    changed = re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, lines[number - 1])
    if changed == lines[number - 1]:
        return None
    lines[number - 1] = changed
    return "\n".join(lines)


_ZERO = {"int": "0", "long": "0", "short": "0", "byte": "0", "double": "0.0", "float": "0",
         "boolean": "false", "char": "' '", "String": '""'}


def _java_fixes(code: str, d) -> list[str]:
    message, detail, number = d.message, getattr(d, "detail", "") or "", d.line
    m = message.lower()
    line = _line(code, number)
    if number is None:
        return []
    if "';' expected" in m:
        return [c for c in (_insert_at_line_end(code, number, ";", "java"),
                            _insert_at_line_end(code, number - 1, ";", "java")) if c]
    if "reached end of file" in m or "'else' without 'if'" in m:
        return _brace_candidates(code)
    if "class, interface, enum, or record expected" in m:
        lines = code.split("\n")
        closers = [i for i, l in enumerate(lines) if l.strip() == "}"]
        return ["\n".join(lines[:i] + lines[i + 1:]) for i in reversed(closers[-3:])]
    if re.search(r"'\)' expected|', '\)'|'\)' or", m):
        return _close_paren_candidates(code, number, "java")
    if "cannot find symbol" in m:
        symbol = re.search(r"symbol:\s*variable\s+(\w+)", detail)
        if symbol:
            names = declared_names(code, "java")
            return [c for n in closest_names(symbol.group(1), names)
                    if (c := _rename_on_line(code, number, symbol.group(1), n))]
        return []
    if "might not have been initialized" in m:
        name = re.search(r"variable (\w+)", message)
        if name:
            declaration = re.compile(rf"\b([\w\[\]<>]+)\s+{re.escape(name.group(1))}\s*;")
            for i, l in enumerate(code.split("\n")):
                found = declaration.search(l)
                if found and found.group(1) in _ZERO:
                    lines = code.split("\n")
                    lines[i] = l[:found.end() - 1].rstrip() + f" = {_ZERO[found.group(1)]};" + l[found.end():]
                    return ["\n".join(lines)]
        return []
    if "unreachable statement" in m:
        lines = code.split("\n")
        return ["\n".join(lines[:number - 1] + lines[number:])]
    if assignment_in_condition(line, "java"):
        masked = code_mask(line, "java")
        hit = _LONE_ASSIGN.search(masked, _CONDITION_WORDS.search(masked).start())
        lines = code.split("\n")
        lines[number - 1] = line[:hit.start()] + "==" + line[hit.end():]
        return ["\n".join(lines)]
    conversion = re.search(r"(\w+) cannot be converted to (\w+)|lossy conversion from (\w+) to (\w+)", message)
    if conversion:
        found, wanted = (conversion.group(1), conversion.group(2)) if conversion.group(1) else \
            (conversion.group(3), conversion.group(4))
        changed = re.sub(rf"^(\s*){re.escape(wanted)}\b(?=\s+\w+\s*=)", rf"\g<1>{found}", line)
        if changed != line:
            lines = code.split("\n")
            lines[number - 1] = changed
            return ["\n".join(lines)]
    return []


def java_syntax_repairs(code: str, diagnostics, limit: int = 8) -> list[str]:
    """Candidate programs, each fixing one diagnostic (the first few), plus one fixing all of them.

    Candidates are tried by compiling and running them; the annotator keeps the best one.
    """
    per_diagnostic = [_java_fixes(code, d) for d in diagnostics[:4]]
    candidates = [c for fixes in per_diagnostic for c in fixes]
    firsts = [(d, fixes[0]) for d, fixes in zip(diagnostics, per_diagnostic) if fixes]
    if len(firsts) > 1:
        combined = code
        for d, _ in sorted(firsts, key=lambda pair: -(pair[0].line or 0)):
            fixes = _java_fixes(combined, d)
            combined = fixes[0] if fixes else combined
        candidates.insert(0, combined)
    return [c for c in dict.fromkeys(candidates) if c != code][:limit]


def java_method_return_repairs(code: str, limit: int = 3) -> list[str]:
    """For "missing return statement": `return v;` at the end of the method, for each local `v`
    declared with the method's return type."""
    root = parse(code, "java")
    data = code.encode()
    found = []
    for method in find(root, "method_declaration"):
        kind, body = method.child_by_field_name("type"), method.child_by_field_name("body")
        if kind is None or body is None or text(kind) == "void" or not body.named_children:
            continue
        names = [text(d.child_by_field_name("name")) for decl in find(body, "local_variable_declaration")
                 if text(decl.child_by_field_name("type")) == text(kind)
                 for d in decl.named_children if d.type == "variable_declarator"]
        last = body.named_children[-1]
        indent = _indent(_line(code, last.start_point[0] + 1))
        close = body.end_byte - 1
        for name in dict.fromkeys(names):
            head = data[:close].decode().rstrip()
            found.append(f"{head}\n{indent}return {name};\n" + data[close:].decode().lstrip(" "))
    return found[:limit]


# ---------------------------------------------------------------- Python

def _python_label(error: SyntaxError, code: str) -> str:
    message = error.msg or ""
    line = _line(code, error.lineno)
    if isinstance(error, IndentationError) or "indent" in message:
        return "Indentation error"
    if "expected ':'" in message:
        return "Missing colon"
    if re.search(r"never closed|unmatched|does not match opening parenthesis", message):
        return "Unbalanced parentheses"
    if "Maybe you meant '=='" in message:
        return "Confusing assignment with equality"
    if bracket_balance(line, "python")["()"]:
        return "Unbalanced parentheses"
    if _PY_HEADER.match(line) and not code_mask(line, "python").rstrip().endswith(":"):
        return "Missing colon"
    if assignment_in_condition(line, "python"):
        return "Confusing assignment with equality"
    if bracket_balance(code, "python")["()"]:
        return "Unbalanced parentheses"
    return GENERIC_SYNTAX


def _python_fixes(code: str, error: SyntaxError, label: str) -> list[str]:
    number, message = error.lineno or 0, error.msg or ""
    lines = code.split("\n")
    if not 1 <= number <= len(lines):
        return []
    line = lines[number - 1]

    def with_line(new: str, at: int = number) -> str:
        return "\n".join(lines[:at - 1] + [new] + lines[at:])

    if label == "Missing colon":
        fixed = _insert_at_line_end(code, number, ":", "python")
        return [fixed] if fixed else []
    if label == "Indentation error":
        before = [l for l in lines[:number - 1] if l.strip() and not l.strip().startswith("#")]
        levels = sorted({len(_indent(l)) for l in before})
        header = re.search(r"on line (\d+)", message)
        if header:
            base = _indent(_line(code, int(header.group(1))))
            unit = min((w for w in levels if w), default=4) or 4
            return [with_line(base + " " * unit + line.lstrip())]
        if "unexpected indent" in message and before:
            return [with_line(_indent(before[-1]) + line.lstrip())]
        width = len(_indent(line))
        return [with_line(" " * w + line.lstrip()) for w in sorted(levels, key=lambda w: abs(w - width))[:2]]
    if label == "Unbalanced parentheses":
        if "unmatched" in message and error.offset:
            return [with_line(line[:error.offset - 1] + line[error.offset:])]
        return _close_paren_candidates(code, number, "python")
    if label == "Confusing assignment with equality":
        masked = code_mask(line, "python")
        words = _CONDITION_WORDS.search(masked)
        hit = _LONE_ASSIGN.search(masked, words.start() if words else 0)
        return [with_line(line[:hit.start()] + "==" + line[hit.end():])] if hit else []
    return []


def _syntax_error(code: str) -> SyntaxError | None:
    try:
        compile(code, "<student>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return error
    except (ValueError, RecursionError, MemoryError) as error:   # NUL bytes, absurd nesting
        return SyntaxError(str(error))
    return None


def python_syntax_pass(code: str, max_steps: int = 4, max_candidates: int = 4
                       ) -> tuple[list[tuple[str, str]], list[str]]:
    """(labels with evidence, repaired programs that parse) of a Python program.

    Labels each syntax error Python reports, repairs it, and parses again (Python shows one
    error at a time). The programs are the repairs of the last step that parse ([code] itself when
    it parses as it is, [] when no repair gets through).
    """
    labels: list[tuple[str, str]] = []
    current = code
    for _ in range(max_steps):
        error = _syntax_error(current)
        if error is None:
            return labels, [current]
        label = _python_label(error, current)
        labels.append((label, f"line {error.lineno}: {type(error).__name__}: {error.msg}"))
        fixes = [f for f in dict.fromkeys(_python_fixes(current, error, label)) if f != current]
        clean = [f for f in fixes if _syntax_error(f) is None]
        if clean:
            return labels, clean[:max_candidates]
        moved = [f for f in fixes if _moved_on(_syntax_error(f), error)]
        if not moved:
            return labels, []
        current = moved[0]
    return labels, []


def _moved_on(after: SyntaxError | None, before: SyntaxError) -> bool:
    """The repair got past the error: the next one is later or different."""
    return after is None or (after.lineno or 0) > (before.lineno or 0) or after.msg != before.msg
