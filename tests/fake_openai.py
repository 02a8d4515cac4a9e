"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (ephemeral port).

It answers POST /v1/chat/completions; the real `openai` client talks to it. Behaviour is chosen by
markers inside the student code of a prompt (e.g. RATE_LIMIT_ONCE, or a key of MALFORMED for a
broken 200 answer), so each test reads as data. The `server` and `make_client` fixtures in
conftest.py start one per test.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


SECRET = "sk-test-DO-NOT-STORE-5f2c9a"
TRICKLE_BYTES, TRICKLE_EVERY_S = 16, 0.5   # TRICKLE_BODY: an answer whose body takes 8 s to arrive
RETRY_AFTER_S = 3                          # RATE_LIMIT_DATE_ONCE: a 429 with Retry-After as an HTTP date
KEY_ENV = "KASER_TEST_LLM_KEY"
TOKENS_IN, TOKENS_OUT = 1000, 500  # usage the fake server reports for every answer


def completion(content, usage=None, finish_reason="stop") -> bytes:
    """The body of a 200 chat completion, with any content, usage and finish reason."""
    usage = {"prompt_tokens": TOKENS_IN, "completion_tokens": TOKENS_OUT} if usage is None else usage
    return json.dumps({"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": finish_reason,
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": usage}).encode()


GOOD = json.dumps({"errors": [{"Reasoning": "r", "Category": "Logical", "Label": "Off-by-one error"}]})
# marker -> (content type, body of a 200 answer, what the failure must say); each is asked
# 1 + malformed_retries times and then becomes a failed row, never an exception
MALFORMED = {
    # a proxy's error page or plain text instead of JSON
    "BODY_HTML": ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                  "server answer is not JSON: '<html><body><h1>502 Bad Gateway"),
    "BODY_TEXT": ("text/plain", b"upstream connect error", "server answer is not JSON"),
    # JSON content type, but not JSON, empty, or not UTF-8
    "BODY_BROKEN_JSON": ("application/json", b'{"choices": [', "server answer is not JSON"),
    "BODY_EMPTY": ("application/json", b"", "server answer is not JSON"),
    "BODY_NOT_UTF8": ("application/json", b'{"choices": "\xff\xfe"}', "server answer is not JSON"),
    # JSON, but not an object; nested deeper than any parser recursion allows
    "BODY_ARRAY": ("application/json", b"[]", "server answer is JSON but an array, not an object"),
    "BODY_NULL": ("application/json", b"null", "server answer is JSON but null, not an object"),
    "BODY_DEEP": ("application/json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    # usage that is not token counts (the answer itself would be fine)
    "USAGE_STRING": ("application/json", completion(GOOD, usage="lots"),
                     "usage is a string, not token counts"),
    "USAGE_NEGATIVE": ("application/json",
                       completion(GOOD, usage={"prompt_tokens": -5, "completion_tokens": 1}),
                       "usage.prompt_tokens is '-5', not a token count"),
    "USAGE_TEXT_COUNT": ("application/json",
                         completion(GOOD, usage={"prompt_tokens": "9", "completion_tokens": 1}),
                         "usage.prompt_tokens is"),
    # content that is not text: a number, an object, null
    "CONTENT_NUMBER": ("application/json", completion(42),
                       "choices[0].message.content is a number, not text"),
    "CONTENT_OBJECT": ("application/json", completion({"errors": []}),
                       "choices[0].message.content is an object, not text"),
    "CONTENT_NULL": ("application/json", completion(None), "empty answer"),
    # no choices, a choice that is not an object, an error object sent with status 200
    "NO_CHOICES": ("application/json", json.dumps({"id": "x", "choices": []}).encode(),
                   "server answer has no choices"),
    "CHOICE_STRING": ("application/json", json.dumps({"choices": ["hi"]}).encode(),
                      "choices[0] has no message object"),
    "ERROR_IN_200": ("application/json", json.dumps({"error": {"message": "overloaded"}}).encode(),
                     "server answer is an error: 'overloaded'"),
    # text that is JSON nested deeper than the answer parser can go
    "CONTENT_DEEP": ("application/json", completion("[" * 100_000 + "]" * 100_000),
                     "nested too deeply"),
}


class FakeOpenAI:
    """Scripted chat-completions server; records every request and the peak concurrency."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests: list[dict] = []       # {"prompt", "auth", "body", "status", "at" (monotonic s)}
        self.seen: Counter = Counter()       # user message -> times asked
        self.answered = 0                    # 200 answers so far
        self.refuse_after: int | None = None  # answer 401 once this many were answered
        self.answer_with: str | None = None  # a MALFORMED marker that applies to every prompt
        self.hold_after: int | None = None   # requests after this many wait for `release`
        self.release = threading.Event()
        self.received = 0                     # requests that arrived (held ones included)
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    fake.received += 1
                    held = fake.hold_after is not None and fake.received > fake.hold_after
                if held:
                    fake.release.wait(timeout=60)
                time.sleep(fake.delay)
                status, payload = fake.respond(self.path, body, self.headers.get("Authorization"))
                with fake.lock:
                    fake.in_flight -= 1
                content_type, data = (payload if isinstance(payload, tuple)
                                      else ("application/json", json.dumps(payload).encode()))
                user = body["messages"][-1]["content"]
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                if status == 429:   # seconds, or an HTTP date RETRY_AFTER_S from now
                    self.send_header("Retry-After", formatdate(time.time() + RETRY_AFTER_S, usegmt=True)
                                     if "RATE_LIMIT_DATE_ONCE" in user else "0")
                self.end_headers()
                trickled = TRICKLE_BYTES if "TRICKLE_BODY" in user else 0
                try:
                    for byte in range(trickled):    # the body's first bytes one at a time, then the rest
                        self.wfile.write(data[byte:byte + 1])
                        self.wfile.flush()
                        time.sleep(TRICKLE_EVERY_S)
                    self.wfile.write(data[trickled:])
                except OSError:    # the client gave up on the answer
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                       daemon=True)

    def respond(self, path: str, body: dict, auth: str | None) -> tuple[int, dict | tuple]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        with self.lock:
            self.seen[user] += 1
            times = self.seen[user]
            refuse = self.refuse_after is not None and self.answered >= self.refuse_after
            status = (404 if path != "/v1/chat/completions" else 401 if refuse
                      else 429 if ("RATE_LIMIT_ONCE" in user or "RATE_LIMIT_DATE_ONCE" in user) and times == 1
                      else 500 if "SERVER_ERROR_ONCE" in user and times == 1
                      else 503 if "SERVER_DOWN" in user
                      else 400 if "BAD_REQUEST" in user else 200)
            self.answered += status == 200
            self.requests.append({"prompt": user, "auth": auth, "body": body, "status": status,
                                  "at": time.monotonic()})
        if status != 200:
            return status, {"error": {"message": f"scripted {status}", "type": "test"}}
        marker = self.answer_with or next((m for m in MALFORMED if m in user), None)
        if marker is not None:
            content_type, data, _ = MALFORMED[marker]
            return 200, (content_type, data)
        if "ALWAYS_MALFORMED" in user or ("MALFORMED_ONCE" in user and times == 1):
            content = '{"errors": [{"Reasoning": "unterminated'
        elif "identify all errors" in system:
            label = re.search(r"BUG:(\w[\w -]*)", user)
            content = json.dumps({"errors": [{
                "Reasoning": "The loop stops one element early.", "Category": "Logical",
                "Label": label.group(1) if label else "Off-by-one error"}]})
        elif "list of possible errors" in system:
            first = re.search(r"Possible errors:\n- (.+)", user).group(1)
            content = json.dumps({"errors": [first, "An error not on the list"]})
        elif "knowledge components" in system:   # KCGen-KT style KC generation
            content = json.dumps({"kcs": ["For Loops", " string indexing ", "for loops"]})
        else:  # cluster summary: generalise the first (most frequent) label
            first = re.search(r"\n- (.+) \(\d+\)", user).group(1)
            content = json.dumps({"Reasoning": "most members say so", "Label": f"General {first}"})
        return 200, {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                     "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}],
                     "usage": {"prompt_tokens": TOKENS_IN, "completion_tokens": TOKENS_OUT,
                               "total_tokens": TOKENS_IN + TOKENS_OUT}}

    def prompts(self, status: int | None = None) -> list[str]:
        return [r["prompt"] for r in self.requests if status is None or r["status"] == status]
