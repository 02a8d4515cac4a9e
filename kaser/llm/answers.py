"""What a server's answer must look like before anything trusts it (for kaser.llm.client).

    read_completion(body)            # the raw body of a 200 answer -> (completion, tokens in, out)
    completion_text(completion)      # choices[0].message.content, text or MalformedAnswer
    parse_json_answer(text, schema)  # a JSON answer checked against a small schema

Every way an answer can be wrong (a body that is not JSON, an HTML page, no `choices`, content
that is not text, a `usage` that is not token counts, JSON of the wrong shape) raises
`MalformedAnswer` with the reason; the client asks again and finally records a failed row.
"""

from __future__ import annotations

import json
from typing import Any


class MalformedAnswer(ValueError):
    """The model's text is not the JSON the prompt asked for; the request is asked again."""


# ---------------------------------------------------------------------------------------------
# JSON answers

_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
               "number": (int, float), "integer": int}


def check_schema(value: Any, schema: dict[str, Any], path: str = "$") -> None:
    """Raise MalformedAnswer unless `value` fits `schema`.

    A small subset of JSON Schema, enough for our answers: type, properties, required, items,
    enum, minItems.

    >>> check_schema({"errors": ["x"]}, {"type": "object", "required": ["errors"],
    ...     "properties": {"errors": {"type": "array", "items": {"type": "string"}}}})
    >>> check_schema({"errors": [1]}, {"type": "object",
    ...     "properties": {"errors": {"type": "array", "items": {"type": "string"}}}})
    Traceback (most recent call last):
    kaser.llm.answers.MalformedAnswer: $.errors[0]: expected string, got int
    """
    kind = schema.get("type")
    if kind is not None:
        expected = _JSON_TYPES[kind]
        if not isinstance(value, expected) or (isinstance(value, bool) and kind != "boolean"):
            raise MalformedAnswer(f"{path}: expected {kind}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise MalformedAnswer(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                raise MalformedAnswer(f"{path}: missing key '{name}'")
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                check_schema(value[name], sub, f"{path}.{name}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise MalformedAnswer(f"{path}: needs at least {schema['minItems']} item(s)")
        if "items" in schema:
            for i, item in enumerate(value):
                check_schema(item, schema["items"], f"{path}[{i}]")


def parse_json_answer(text: str, schema: dict[str, Any]) -> Any:
    """Decode a JSON answer (tolerating a ```json fence around it) and check it against `schema`.

    >>> parse_json_answer('```json\\n{"label": "Off-by-one"}\\n```', {"type": "object"})
    {'label': 'Off-by-one'}
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as err:
        raise MalformedAnswer(f"not JSON ({err.msg} at char {err.pos}): {text[:80]!r}") from None
    except RecursionError:
        raise MalformedAnswer("JSON nested too deeply") from None
    check_schema(value, schema)
    return value


# ---------------------------------------------------------------------------------------------
# Server answers

def _preview(body: bytes | str, size: int = 60) -> str:
    text = body.decode("utf8", "replace") if isinstance(body, bytes) else body
    return repr(" ".join(text.split())[:size])


def _json_type(value: Any) -> str:
    """
    >>> _json_type([]), _json_type(1.5), _json_type(None)
    ('an array', 'a number', 'null')
    """
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), "a value")


def read_completion(body: bytes) -> tuple[dict[str, Any], int, int]:
    """(completion, prompt tokens, completion tokens) of a 200 answer's raw body.

    A body that is not a JSON object, or a `usage` that is present but not two token counts,
    raises MalformedAnswer. A missing `usage` counts as 0 tokens (some servers leave it out).

    >>> read_completion(b'{"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}')
    ({'choices': [], 'usage': {'prompt_tokens': 3, 'completion_tokens': 2}}, 3, 2)
    >>> read_completion(b'<html>502 Bad Gateway</html>')
    Traceback (most recent call last):
    kaser.llm.answers.MalformedAnswer: server answer is not JSON: '<html>502 Bad Gateway</html>'
    >>> read_completion(b'{"choices": [], "usage": "lots"}')
    Traceback (most recent call last):
    kaser.llm.answers.MalformedAnswer: server answer: usage is a string, not token counts
    """
    try:
        completion = json.loads(body)
    except ValueError:   # JSONDecodeError, and UnicodeDecodeError for bytes that are not UTF-8
        raise MalformedAnswer(f"server answer is not JSON: {_preview(body)}") from None
    except RecursionError:
        raise MalformedAnswer("server answer is JSON nested too deeply") from None
    if not isinstance(completion, dict):
        raise MalformedAnswer(f"server answer is JSON but {_json_type(completion)}, not an object")
    usage = completion.get("usage")
    if usage is None:
        return completion, 0, 0
    if not isinstance(usage, dict):
        raise MalformedAnswer(f"server answer: usage is {_json_type(usage)}, not token counts")
    tokens = []
    for name in ("prompt_tokens", "completion_tokens"):
        count = usage.get(name)
        if count is None:
            count = 0
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MalformedAnswer(f"server answer: usage.{name} is {_preview(json.dumps(count))}, "
                                  "not a token count")
        tokens.append(count)
    return completion, tokens[0], tokens[1]


def completion_text(completion: dict[str, Any]) -> str:
    """The text of the first choice; MalformedAnswer when there is none or it is not text.

    >>> completion_text({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]})
    'hi'
    >>> completion_text({"choices": [{"message": {"content": 42}}]})
    Traceback (most recent call last):
    kaser.llm.answers.MalformedAnswer: server answer: choices[0].message.content is a number, not text
    """
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        error = completion.get("error")
        if error is not None:   # some proxies report errors with status 200
            message = error.get("message", error) if isinstance(error, dict) else error
            raise MalformedAnswer(f"server answer is an error: {_preview(str(message), 120)}")
        raise MalformedAnswer("server answer has no choices")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise MalformedAnswer("server answer: choices[0] has no message object")
    if choice.get("finish_reason") == "length":
        raise MalformedAnswer("answer cut off at the token limit")
    content = choice["message"].get("content")
    if content is None or content == "":
        raise MalformedAnswer("empty answer")
    if not isinstance(content, str):
        raise MalformedAnswer(f"server answer: choices[0].message.content is "
                              f"{_json_type(content)}, not text")
    return content
