"""The LLM behind every `openai` backend: a cached, retrying client for any OpenAI-compatible
server (`client`) and the checks an answer must pass before it is trusted (`answers`).

    from kaser.llm import ChatClient, ChatRequest, LLMClientParams, LLMParams
"""

from kaser.llm.answers import (MalformedAnswer, check_schema, completion_text, parse_json_answer,
                               read_completion)
from kaser.llm.client import (MAX_BACKOFF_S, ChatClient, ChatRequest, LLMClientParams, LLMParams, Reply,
                              ResponseCache, Usage, cache_key, canonical_json, request_key)

__all__ = ["MAX_BACKOFF_S", "ChatClient", "ChatRequest", "LLMClientParams", "LLMParams",
           "MalformedAnswer", "Reply", "ResponseCache", "Usage", "cache_key", "canonical_json", "check_schema",
           "completion_text", "parse_json_answer", "read_completion", "request_key"]
