"""A cached chat client for any OpenAI-compatible server (o4-mini by default, or `vllm serve`).

    kaser annotate DIR --backend openai        # labels errors through this client
    python stages/annotate.py synthetic-python   # the DVC stage, same work

Every answer goes through a content-addressed SQLite cache. The key is the sha256 of the
canonical JSON of exactly what determines the answer: model, prompt version, messages and the
decoding parameters, which are the `llm` settings (LLMParams); the server address, the API key
and the rest of `llm_client` (LLMClientParams) are not part of it, so a cache filled against
api.openai.com is reused behind a proxy and can be pushed to / pulled from a DVC remote.

    with ChatClient(llm, llm_client, Path("data/synthetic-python/llm_cache.sqlite")) as client:
        replies = client.ask_many([ChatRequest(version, messages, parse), ...], desc="annotate")
        print(client.usage.line())

- Only valid answers are cached, each committed the moment it arrives: a rerun costs zero calls,
  and an interrupted run (Ctrl-C, a crash, a revoked key) resumes paying only for what is missing.
- An answer that `parse` rejects (`MalformedAnswer`) is asked again up to `malformed_retries`
  times, then returned as a failed `Reply`, never raised. Failures are not cached, so a rerun
  tries them again.
- A server answer that is not a chat completion (a 200 whose body is not JSON, an HTML page, no
  `choices`, content that is not text, a `usage` that is not token counts) is a malformed answer
  too: asked again, then a failed `Reply` whose `failure` says what was wrong. We read the body
  ourselves (`read_completion`) instead of trusting the openai client's lenient model objects.
- `timeout_s` bounds a whole request: connecting, waiting for the answer and reading all of its
  body (httpx's own timeout is per read, which a body trickling in never trips); a request over
  it is a timeout, retried as one.
- Ctrl-C stops the batch within a second: the queue is dropped, no retry is started, and the
  requests already sent get INTERRUPT_GRACE_S (0.5 s) to land, so a paid answer that arrives by
  then is cached and a rerun does not ask it again; then KeyboardInterrupt propagates to the
  caller (the CLI prints one line).
- Rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
  exponential backoff and jitter (our own loop; the openai client's retries are off so that the
  policy and its timing are ours and testable), and never sooner than the server's Retry-After
  (seconds or an HTTP date). A refused key, permission or unknown model/URL
  (401/403/404) is a configuration error and stops the run with `kaser.InputError`.
- The API key is read from the environment variable named by `api_key_env`, only when the first
  uncached prompt needs the server; it is never stored in the config, the cache or any log line.
- Tokens and cost (USD per million tokens from the config) are summed from each response's
  `usage`, malformed answers included (they are paid for); cache hits cost nothing.
"""

from __future__ import annotations

import dataclasses
import datetime
import email.utils
import hashlib
import json
import logging
import os
import random
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from tqdm import tqdm

from kaser import InputError
from kaser.llm.answers import MalformedAnswer, completion_text, read_completion

log = logging.getLogger("kaser.llm")

MAX_BACKOFF_S = 60.0  # no single wait longer than this, whatever the base and attempt
INTERRUPT_GRACE_S = 0.5  # after Ctrl-C, how long a request in flight may still land in the cache


@dataclass(frozen=True)
class LLMParams:
    """The `llm` settings: what, besides the prompt, decides an answer, so exactly what the cache
    key holds (params.yaml `llm`, one comment per key there)."""
    model: str
    json_mode: bool
    temperature: float | None
    reasoning_effort: str | None
    max_completion_tokens: int | None
    seed: int | None

    def decoding(self) -> dict[str, Any]:
        """The request parameters that shape the answer; unset (None) ones are not sent.

        >>> LLMParams("o4-mini", True, 0.0, None, None, 3).decoding()
        {'response_format': {'type': 'json_object'}, 'seed': 3, 'temperature': 0.0}
        """
        params = {"temperature": self.temperature, "reasoning_effort": self.reasoning_effort,
                  "max_completion_tokens": self.max_completion_tokens, "seed": self.seed,
                  "response_format": {"type": "json_object"} if self.json_mode else None}
        return {k: v for k, v in sorted(params.items()) if v is not None}


@dataclass(frozen=True)
class LLMClientParams:
    """The `llm_client` settings: where the server is, how patient to be, what a token costs and
    where answers are kept; no answer depends on them, so none is in the cache key (params.yaml
    `llm_client`, one comment per key there)."""
    base_url: str | None
    api_key_env: str
    max_concurrency: int
    max_retries: int
    malformed_retries: int
    backoff_s: float
    timeout_s: float
    price_per_mtok_in: float
    price_per_mtok_out: float
    cache_file: str

    def __post_init__(self):
        if self.max_concurrency < 1:
            raise InputError("max_concurrency must be >= 1")
        for name in ("max_retries", "malformed_retries", "backoff_s", "timeout_s",
                     "price_per_mtok_in", "price_per_mtok_out"):
            if getattr(self, name) < 0:
                raise InputError(f"{name} must be >= 0")


@dataclass(frozen=True)
class ChatRequest:
    """One prompt: its template version, the chat messages, and how to read the answer.

    `parse(text)` returns the validated value or raises MalformedAnswer.
    """
    prompt_version: str
    messages: tuple[dict[str, str], ...]
    parse: Callable[[str], Any]


@dataclass(frozen=True)
class Reply:
    """A parsed answer (`value`), or why there is none (`failure`)."""
    value: Any = None
    failure: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None


def canonical_json(value: Any) -> bytes:
    """One byte string per JSON value: sorted keys, no spaces, UTF-8.

    >>> canonical_json({"b": 1, "a": [1, "é"]})
    b'{"a":[1,"\\xc3\\xa9"],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def cache_key(model: str, prompt_version: str, messages: Sequence[dict[str, str]],
              decoding: dict[str, Any]) -> str:
    """sha256 of what determines an answer; never the server address or the key."""
    return hashlib.sha256(canonical_json({
        "model": model, "prompt_version": prompt_version,
        "messages": [dict(m) for m in messages], "decoding": decoding,
    })).hexdigest()


def request_key(cfg: LLMParams, request: ChatRequest) -> str:
    return cache_key(cfg.model, request.prompt_version, request.messages, cfg.decoding())


# ---------------------------------------------------------------------------------------------
# Cache

class ResponseCache:
    """SQLite table key -> (response text, usage, created time); WAL mode, safe across threads.

    Each `put` commits at once, so an answer survives a crash the moment it is stored.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60,
                                   isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("""CREATE TABLE IF NOT EXISTS responses (
            key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
            response TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL, created REAL NOT NULL)""")

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, model: str, prompt_version: str, response: str,
            prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (key, model, prompt_version, response, prompt_tokens,
                              completion_tokens, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


# ---------------------------------------------------------------------------------------------
# Accounting

@dataclass(frozen=True)
class Usage:
    """Counts of one client (or, by subtraction, of one batch)."""
    prompts: int = 0            # prompts asked through ask / ask_many
    cache_hits: int = 0         # answered from the cache (or by an identical prompt in the batch)
    answered: int = 0           # answered by the server and cached
    failed: int = 0             # no valid answer (malformed every time, or the server gave up)
    requests: int = 0           # HTTP requests sent, retries included
    prompt_tokens: int = 0
    completion_tokens: int = 0  # reasoning tokens included, as the server bills them
    cost_usd: float = 0.0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                        for f in dataclasses.fields(self)})

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def line(self) -> str:
        """
        >>> Usage(3, 1, 1, 1, 4, 1000, 2500, 0.012).line()
        '3 prompts: 1 cache hits, 1 answered, 1 failed; 4 requests, 1,000 prompt + 2,500 completion tokens, $0.0120'
        """
        return (f"{self.prompts} prompts: {self.cache_hits} cache hits, {self.answered} answered, "
                f"{self.failed} failed; {self.requests} requests, {self.prompt_tokens:,} prompt + "
                f"{self.completion_tokens:,} completion tokens, ${self.cost_usd:.4f}")


class _Meter:
    def __init__(self, cfg: LLMClientParams):
        self._cfg = cfg
        self._lock = threading.Lock()
        self._usage = Usage()

    def add(self, **counts) -> None:
        cost = (counts.get("prompt_tokens", 0) * self._cfg.price_per_mtok_in
                + counts.get("completion_tokens", 0) * self._cfg.price_per_mtok_out) / 1e6
        with self._lock:
            u = self._usage
            self._usage = dataclasses.replace(
                u, cost_usd=u.cost_usd + cost,
                **{name: getattr(u, name) + n for name, n in counts.items()})

    def snapshot(self) -> Usage:
        with self._lock:
            return self._usage


# ---------------------------------------------------------------------------------------------
# Client

class _GaveUp(Exception):
    """The server did not give an answer after all retries (recorded as a failure)."""


# Statuses that no retry can fix: the key, the permission or the model/URL is wrong.
_CONFIG_ERRORS = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
_TRANSIENT = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


class ChatClient:
    """Cached, retried, bounded-concurrency chat completions over the `openai` client."""

    def __init__(self, cfg: LLMParams, client: LLMClientParams, cache_path: str | Path, *,
                 progress: bool = True):
        if cfg is None or client is None:   # a caller's static backend passed None along
            raise InputError("an openai backend needs the `llm` and `llm_client` settings")
        self.cfg = cfg              # what is asked: part of every cache key
        self.client_cfg = client    # how it is asked: in no cache key
        self.cache = ResponseCache(cache_path)
        self.progress = progress
        self._meter = _Meter(client)
        self._openai: openai.OpenAI | None = None
        self._openai_lock = threading.Lock()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"ChatClient(model={self.cfg.model!r}, base_url={self.client_cfg.base_url!r}, "
                f"cache={str(self.cache.path)!r})")

    def close(self) -> None:
        if self._openai is not None:
            self._openai.close()
        self.cache.close()

    @property
    def usage(self) -> Usage:
        return self._meter.snapshot()

    def ask(self, request: ChatRequest) -> Reply:
        """One prompt: from the cache if there, else from the server (retried, then cached)."""
        key = request_key(self.cfg, request)
        reply = self._from_cache(key, request)
        if reply is None:
            reply = self._from_server(key, request)
        self._count([reply])
        return reply

    def ask_many(self, requests: Sequence[ChatRequest], desc: str | None = "llm") -> list[Reply]:
        """Replies in the order of `requests`; identical prompts are asked once.

        With `desc`, shows a progress bar and prints the batch's usage line at the end.
        """
        before = self.usage
        keys = [request_key(self.cfg, r) for r in requests]
        replies: dict[str, Reply] = {}
        missing: dict[str, ChatRequest] = {}
        for key, request in zip(keys, requests):
            if key in replies or key in missing:
                continue
            cached = self._from_cache(key, request)
            if cached is not None:
                replies[key] = cached
            else:
                missing[key] = request
        counts = Counter(keys)
        waiting = {key: counts[key] for key in missing}
        bar = tqdm(total=len(requests), desc=desc, unit="prompt",
                   disable=desc is None or not self.progress, file=sys.stderr)
        bar.update(len(requests) - sum(waiting.values()))
        stop = threading.Event()  # set on Ctrl-C or a configuration error: ask nothing more

        def work(key: str, request: ChatRequest) -> Reply | None:
            if stop.is_set():
                return None
            try:
                return self._from_server(key, request, stop)
            except BaseException:
                stop.set()
                raise

        pool = ThreadPoolExecutor(max_workers=self.client_cfg.max_concurrency)
        try:
            futures = {pool.submit(work, key, request): key for key, request in missing.items()}
            pending = set(futures)
            while pending:
                # a timed wait: the kernel may hand Ctrl-C to any thread, and the main thread
                # acts on it only when it runs, so it must not sleep until the next answer
                done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for future in done:
                    reply = future.result()  # re-raises the error that stopped the run
                    if reply is not None:
                        replies[futures[future]] = reply
                        bar.update(waiting[futures[future]])
        finally:
            # drop the queue; an answer in flight lands in the cache if it arrives within
            # INTERRUPT_GRACE_S, else its request is abandoned (_within)
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            bar.close()

        ordered, seen = [], set()
        for key in keys:
            reply = replies[key]
            if key in seen and reply.ok:
                reply = dataclasses.replace(reply, cached=True)
            seen.add(key)
            ordered.append(reply)
        self._count(ordered)
        if desc is not None:
            print(f"{desc} [{self.cfg.model}]: {(self.usage - before).line()}", file=sys.stderr)
        return ordered

    # -- internals --------------------------------------------------------------------------

    def _count(self, replies: Sequence[Reply]) -> None:
        self._meter.add(prompts=len(replies),
                        cache_hits=sum(r.ok and r.cached for r in replies),
                        answered=sum(r.ok and not r.cached for r in replies),
                        failed=sum(not r.ok for r in replies))

    def _from_cache(self, key: str, request: ChatRequest) -> Reply | None:
        text = self.cache.get(key)
        if text is None:
            return None
        try:
            return Reply(value=request.parse(text), cached=True)
        except MalformedAnswer:
            # a cached answer this parser rejects (the cache outlives parser changes): ask
            # again and overwrite
            return None

    def _from_server(self, key: str, request: ChatRequest,
                     stop: threading.Event | None = None) -> Reply:
        """The server's parsed answer, or a failed Reply; `stop` set (Ctrl-C) ends the retries."""
        tries = 1 + self.client_cfg.malformed_retries
        problem = ""
        for attempt in range(tries):
            if attempt and stop is not None and stop.is_set():
                return Reply(failure=f"stopped (interrupted) after a malformed answer: {problem}")
            try:
                text, prompt_tokens, completion_tokens = self._complete(request.messages, stop)
                value = request.parse(text)
            except _GaveUp as err:
                log.warning("llm: no answer for a %s prompt: %s", request.prompt_version, err)
                return Reply(failure=str(err))
            except (MalformedAnswer, RecursionError) as err:   # deep JSON can exhaust a parser
                problem = (str(err) if isinstance(err, MalformedAnswer)
                           else "answer nested too deeply")
                log.info("llm: malformed answer (%s), asking again", problem)
                continue
            self.cache.put(key, self.cfg.model, request.prompt_version, text,
                           prompt_tokens, completion_tokens)
            return Reply(value=value)
        log.warning("llm: malformed answer %d times for a %s prompt: %s",
                    tries, request.prompt_version, problem)
        return Reply(failure=f"malformed answer {tries} times; last: {problem}")

    def _client(self) -> openai.OpenAI:
        with self._openai_lock:
            if self._openai is None:
                key = os.environ.get(self.client_cfg.api_key_env)
                if not key:
                    raise InputError(
                        f"environment variable {self.client_cfg.api_key_env} is not set: export "
                        "the API key there (a local server without auth accepts any value, e.g. EMPTY; "
                        "the variable's name is the setting llm_client.api_key_env)")
                self._openai = openai.OpenAI(api_key=key, base_url=self.client_cfg.base_url,
                                             timeout=self.client_cfg.timeout_s, max_retries=0)
            return self._openai

    def _complete(self, messages: Sequence[dict[str, str]],
                  stop: threading.Event | None = None) -> tuple[str, int, int]:
        """(text, prompt tokens, completion tokens) of one completion; transient errors retried."""
        client = self._client()
        last_error: Exception | None = None
        for attempt in range(1 + self.client_cfg.max_retries):
            if attempt:
                delay = self._backoff(attempt, last_error)
                if stop is None:
                    time.sleep(delay)
                elif stop.wait(delay):   # interrupted while waiting: no more tries
                    raise _GaveUp(f"stopped (interrupted) while retrying after "
                                  f"{type(last_error).__name__}")
            self._meter.add(requests=1)
            try:
                # the raw body: the openai client would hand back a str for an HTML page and
                # unvalidated objects for a malformed completion
                body = _within(self.client_cfg.timeout_s, stop,
                               lambda: client.chat.completions.with_raw_response.create(
                                   model=self.cfg.model, messages=list(messages),
                                   **self.cfg.decoding()).http_response.content)
            except TimeoutError as err:
                last_error = err
                continue
            except _CONFIG_ERRORS as err:
                raise InputError(
                    f"the server refused the request (HTTP {err.status_code}): check the key in "
                    f"${self.client_cfg.api_key_env}, model {self.cfg.model!r} and base_url "
                    f"{self.client_cfg.base_url!r} (settings llm.model, llm_client.*)") from None
            except _TRANSIENT as err:
                last_error = err
                continue
            except openai.APIStatusError as err:  # other 4xx: this prompt, not the setup
                raise _GaveUp(f"HTTP {err.status_code}: {err.message}") from None
            except openai.APIError as err:        # anything else the client reports
                raise _GaveUp(f"{type(err).__name__}: {err}") from None
            completion, prompt_tokens, completion_tokens = read_completion(body)
            self._meter.add(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
            return completion_text(completion), prompt_tokens, completion_tokens
        status = getattr(last_error, "status_code", None)
        raise _GaveUp(f"{f'HTTP {status}' if status else type(last_error).__name__} "
                      f"after {1 + self.client_cfg.max_retries} tries")

    def _backoff(self, attempt: int, error: Exception | None) -> float:
        """backoff_s * 2^(attempt-1) * jitter in [0.5, 1.5), at least the server's Retry-After."""
        delay = self.client_cfg.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random())
        response = getattr(error, "response", None)
        if response is not None:
            delay = max(delay, retry_after_s(response.headers.get("retry-after")))
        return min(delay, MAX_BACKOFF_S)


def retry_after_s(value: str | None, now: float | None = None) -> float:
    """Seconds a Retry-After header asks to wait: a number of seconds or an HTTP date; 0 when
    absent or unreadable.

    >>> retry_after_s("2.5"), retry_after_s("Wed, 21 Oct 2015 07:28:05 GMT", now=1445412480.0), retry_after_s("soon")
    (2.5, 5.0, 0.0)
    """
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    if moment.tzinfo is None:   # an HTTP date is GMT
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def _within(seconds: float, stop: threading.Event | None, call: Callable[[], Any]) -> Any:
    """call()'s result, with `seconds` for all of it (connection, headers and the whole body).

    httpx's timeout is per read, so a body that trickles in a byte at a time never trips it; the
    call therefore runs in a daemon thread of its own, and this thread waits for it: TimeoutError
    when `seconds` pass, _GaveUp once `stop` (Ctrl-C, a configuration error) has been set for
    INTERRUPT_GRACE_S, so an answer that lands by then is still used. A thread left behind ends
    with its request (httpx's read timeout, timeout_s, still applies to it) and never keeps the
    process from exiting.
    """
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as err:   # handed to the waiting thread
            outcome["error"] = err
        finally:
            done.set()

    threading.Thread(target=run, name="kaser-llm-request", daemon=True).start()
    end, give_up = time.monotonic() + seconds, None
    while not done.wait(0.05):
        now = time.monotonic()
        if now >= end:
            raise TimeoutError(f"no complete answer within timeout_s={seconds} s")
        if stop is not None and stop.is_set():
            give_up = give_up or now + INTERRUPT_GRACE_S
            if now >= give_up:
                raise _GaveUp("stopped (interrupted) while waiting for an answer")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
