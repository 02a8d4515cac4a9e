"""The synthetic problem bank: its data files join into well-formed problems, and every reference
passes every test.

    python -m pytest tests/test_bank.py            # structure + Python references
    python -m pytest tests/test_bank.py -m java    # Java references (needs javac)

References are run only through kaser.code.sandbox (subprocesses), never in this process: the whole
bank of a language as one batch (`sandbox.run_problems`, i.e. `run_tests` for many problems, one
javac + one JVM), which keeps the Java check to seconds.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest
import yaml

from kaser import InputError
from kaser.code import sandbox
from kaser.data.synth.bank import BANK_DIR, KC_VOCABULARY, LANGUAGES, BankProblem, load_bank

BANKS = {language: load_bank(language) for language in LANGUAGES}

# How each language declares the entry function, so "entry appears in the reference" means a
# definition, not a mention in a comment or a recursive call.
ENTRY_DEFINITION = {
    "java": r"public\s+(?:static\s+)?[\w\[\]]+\s+{entry}\s*\(",
    "python": r"^def\s+{entry}\s*\(",
}
ENTRY_NAME = {"java": r"^[a-z][A-Za-z0-9]*$", "python": r"^[a-z][a-z0-9_]*$"}

needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")


def _json_roundtrip(value):
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("language", sorted(BANKS))
def test_bank_has_enough_problems_with_unique_ids(language):
    problems = BANKS[language]
    ids = [p.problem_id for p in problems]
    assert len(problems) >= 32
    assert len(ids) == len(set(ids)), "duplicate problem_id"
    assert all(isinstance(p, BankProblem) for p in problems)
    assert all(i.startswith(f"{language}_") for i in ids)
    assert len({p.entry for p in problems}) == len(problems), "two problems share an entry name"


@pytest.mark.parametrize("language", sorted(BANKS))
def test_every_problem_is_well_formed(language):
    for p in BANKS[language]:
        where = p.problem_id
        assert re.match(ENTRY_NAME[language], p.entry), where
        assert len(p.statement) >= 40, where
        assert 2 <= len(p.kcs) <= 5, where
        assert len(set(p.kcs)) == len(p.kcs), where
        assert set(p.kcs) <= set(KC_VOCABULARY), (where, set(p.kcs) - set(KC_VOCABULARY))
        assert len(p.references) >= 2, where
        assert len(set(p.references)) == len(p.references), f"{where}: identical references"
        definition = re.compile(ENTRY_DEFINITION[language].format(entry=p.entry), re.MULTILINE)
        for code in p.references:
            assert definition.search(code), f"{where}: reference does not define {p.entry}"
            assert code.endswith("\n") and "\t" not in code, where
        assert len(p.tests) >= 8, where
        arities = {len(args) for args, _ in p.tests}
        assert len(arities) == 1, f"{where}: tests disagree on the number of arguments"
        for args, expected in p.tests:
            assert isinstance(args, tuple), where
            # JSON-representable: a round trip gives the same values back (tuples become lists).
            assert _json_roundtrip(list(args)) == list(args), (where, args)
            assert _json_roundtrip(expected) == expected, (where, expected)


@pytest.mark.parametrize("language", sorted(BANKS))
def test_bank_covers_the_whole_kc_vocabulary(language):
    used = {kc for p in BANKS[language] for kc in p.kcs}
    assert used == set(KC_VOCABULARY), set(KC_VOCABULARY) - used


def test_languages_pose_the_same_problems_in_the_same_order():
    # The generator draws problems by position, so position i is one task in every language.
    java, python = BANKS["java"], BANKS["python"]
    assert [(p.kcs, p.tests) for p in java] == [(p.kcs, p.tests) for p in python]
    shared = yaml.safe_load((BANK_DIR / "problems.yaml").read_text())
    assert [p.problem_id for p in python] == [
        "python_list_average" if s["id"] == "array_average" else f"python_{s['id']}" for s in shared]


def test_statements_use_each_languages_words():
    # problems.yaml says {true}; each language fills in its own spelling, and no {word} is left.
    for language in LANGUAGES:
        assert not any("{" in p.statement or "}" in p.statement for p in BANKS[language]), language
    words = {language: yaml.safe_load((BANK_DIR / f"{language}.yaml").read_text())["words"]
             for language in LANGUAGES}
    assert len({frozenset(w) for w in words.values()}) == 1, "languages define different words"
    hike = {language: next(p for p in BANKS[language] if p.problem_id.endswith("_can_hike"))
            for language in LANGUAGES}
    assert hike["java"].statement.endswith("return true if we go hiking.")
    assert hike["python"].statement.endswith("return True if we go hiking.")
    digit_sum = next(p for p in BANKS["java"] if p.problem_id == "java_digit_sum")
    assert "(digitSum(472) is 13)" in digit_sum.statement      # {entry}: the language's function name


@pytest.mark.parametrize("language", sorted(BANKS))
def test_every_problem_shows_the_header_every_reference_declares(language):
    # the starter signature the prompt shows: the entry's header, with the tests' arity, the
    # same in every reference (so no reference style contradicts what the student was shown)
    from kaser.data.contracts import signature_name
    from kaser.data.signatures import defined_functions, starter_signature
    for p in BANKS[language]:
        assert signature_name(p.signature, language) == p.entry, p.problem_id
        assert {starter_signature(code, language, p.entry) for code in p.references} == {p.signature}
        [entry] = [f for f in defined_functions(p.references[0], language) if f.name == p.entry]
        assert entry.accepts(len(p.tests[0][0])), p.problem_id
    ticket = next(p for p in BANKS[language] if p.problem_id.endswith("_ticket_price"))
    assert ticket.signature == {"java": "public int ticketPrice(int age, boolean member)",
                                "python": "def ticket_price(age, member):"}[language]


def _altered_bank(tmp_path, file: str, change) -> None:
    """A copy of the bank's data files in tmp_path, with `change` applied to one file's data."""
    for path in BANK_DIR.glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    data = yaml.safe_load((tmp_path / file).read_text())
    change(data)
    (tmp_path / file).write_text(yaml.safe_dump(data, sort_keys=False))


def _drop_python_solution(data):
    del data["problems"]["ticket_price"]


def _unknown_word(data):
    data[0]["statement"] += " Say {maybe}."


def _untranslated_word(data):
    del data["words"]["true"]


def _wrong_entry(data):
    data["problems"]["can_hike"]["entry"] = "goHiking"


@pytest.mark.parametrize("file, change, language, message", [
    # a problem without a Python solution: the file and the missing id are named
    ("python.yaml", _drop_python_solution, "python", r"python\.yaml: .*missing \['ticket_price'\]"),
    # a statement word that no language defines: named where the language would define it
    ("problems.yaml", _unknown_word, "java", r"java\.yaml:problems\.ticket_price: the statement uses \{maybe\}"),
    # a word Java forgot to define, used by can_hike's statement
    ("java.yaml", _untranslated_word, "java", r"java\.yaml:problems\.can_hike: the statement uses \{true\}"),
    # an entry the first reference does not define: no starter signature to show
    ("java.yaml", _wrong_entry, "java", r"java\.yaml: the first reference of can_hike defines no function 'goHiking'"),
])
def test_broken_bank_files_are_named(tmp_path, file, change, language, message):
    _altered_bank(tmp_path, file, change)
    with pytest.raises(InputError, match=message):
        load_bank(language, tmp_path)


def test_an_unchanged_copy_loads_the_same_bank(tmp_path):
    # Guards the test above: the copy it alters loads the real bank when nothing is changed.
    _altered_bank(tmp_path, "python.yaml", lambda data: None)
    assert load_bank("python", tmp_path) == BANKS["python"]


def test_unknown_language_is_refused():
    with pytest.raises(InputError, match="unknown language 'cobol'"):
        load_bank("cobol")


def _failures(language: str, problems: list[BankProblem]) -> list[str]:
    """Every (problem, reference, test) that does not pass, run as one sandbox batch."""
    batch = [(p.entry, p.references, [(list(args), expected) for args, expected in p.tests])
             for p in problems]
    failures = []
    for problem, results in zip(problems, sandbox.run_problems(language, batch), strict=True):
        for number, result in enumerate(results):
            if not result.compiled:
                failures.append(f"{problem.problem_id} reference {number}: {result.diagnostics}")
                continue
            for (args, expected), case in zip(problem.tests, result.cases, strict=True):
                if case.status != "pass":
                    failures.append(
                        f"{problem.problem_id} reference {number} on {args}: {case.status}, "
                        f"expected {expected!r}, got {case.actual} {case.exception or ''} "
                        f"{case.detail}"
                    )
    return failures


def test_python_references_pass_every_test():
    failures = _failures("python", BANKS["python"])
    assert not failures, "\n".join(failures)


@pytest.mark.java
@needs_javac
def test_java_references_pass_every_test():
    failures = _failures("java", BANKS["java"])
    assert not failures, "\n".join(failures)


def test_python_check_catches_a_wrong_expected_value():
    # Guards the two tests above: a bank entry with a wrong expectation must be reported.
    problem = BANKS["python"][0]
    (args, expected), *_ = problem.tests
    broken = dataclasses.replace(
        problem, tests=((args, _json_roundtrip(expected)), (args, "not the answer")))
    failures = _failures("python", [broken])
    assert len(failures) == len(problem.references)
    assert all("not the answer" in f for f in failures)


@pytest.mark.java
@needs_javac
def test_java_check_catches_a_reference_that_does_not_compile():
    problem = BANKS["java"][0]
    broken_code = problem.references[0].replace(";", "", 1)   # a missing semicolon
    broken = dataclasses.replace(problem, references=(broken_code, problem.references[1]))
    failures = _failures("java", [broken])
    assert len(failures) == 1 and "reference 0" in failures[0]
