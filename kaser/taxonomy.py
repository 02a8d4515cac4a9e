"""The standard error labels shared by the synthetic generator and the static annotator.

The synthetic benchmark injects errors under these labels (`true_errors`) and the static annotator
reports what it finds under the same labels, so annotation precision / recall / F1 on synthetic
data is a comparison of label sets. Labels follow the paper's Table 9 examples and the frequent
novice errors it cites (Altadmri and Brown 2015). The LLM annotator writes free-text labels; the
`cluster` stage maps those to a small vocabulary of its own.

A label's category can depend on the language: a misspelled variable is a compile error in Java
but a NameError at run time in Python; a missing return does not compile in Java but silently
returns None in Python.
"""

from __future__ import annotations

CATEGORIES = ("Syntax", "Runtime", "Logical")

# label -> {language: category}
STANDARD_ERRORS: dict[str, dict[str, str]] = {
    "Missing semicolon": {"java": "Syntax"},
    "Unbalanced braces": {"java": "Syntax"},
    "Unbalanced parentheses": {"java": "Syntax", "python": "Syntax"},
    "Missing colon": {"python": "Syntax"},
    "Indentation error": {"python": "Syntax"},
    "Confusing assignment with equality": {"java": "Syntax", "python": "Syntax"},
    "Missing return statement": {"java": "Syntax", "python": "Logical"},
    "Unreachable code": {"java": "Syntax"},
    "Type mismatch": {"java": "Syntax", "python": "Runtime"},
    "Undefined variable": {"java": "Syntax", "python": "Runtime"},
    "Uninitialized variable": {"java": "Syntax", "python": "Runtime"},
    "Index out of bounds": {"java": "Runtime", "python": "Runtime"},
    "Division by zero": {"java": "Runtime", "python": "Runtime"},
    "Infinite loop": {"java": "Logical", "python": "Logical"},
    "Off-by-one error": {"java": "Logical", "python": "Logical"},
    "Integer division": {"java": "Logical", "python": "Logical"},
    "Wrong boolean operator": {"java": "Logical", "python": "Logical"},
    "Wrong comparison operator": {"java": "Logical", "python": "Logical"},
    "Missing logic branch": {"java": "Logical", "python": "Logical"},
    "String comparison with ==": {"java": "Logical"},
    "Wrong string method": {"java": "Logical", "python": "Logical"},
    "Incorrect initialization": {"java": "Logical", "python": "Logical"},
    "Wrong return value": {"java": "Logical", "python": "Logical"},
}


def category_of(label: str, language: str) -> str:
    """Category of a standard label in a language.

    >>> category_of("Undefined variable", "java"), category_of("Undefined variable", "python")
    ('Syntax', 'Runtime')
    """
    try:
        return STANDARD_ERRORS[label][language]
    except KeyError:
        raise KeyError(f"'{label}' is not a standard error label for {language}") from None
