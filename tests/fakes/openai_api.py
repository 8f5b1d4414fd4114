"""A fake OpenAI-compatible server: `POST /v1/chat/completions` (JSON and SSE) and `GET /v1/models`.

Observer prompts get replies built from their content (`replies.py`); anything else an echo.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from .replies import estimate_tokens, latest_observer_prompt, observer_reply, text_of
from .server import FakeServer, Handler, Recorded


class FakeOpenAI(FakeServer):
    """The fake chat-completions API. `api_key`, when set, must arrive as Bearer."""

    def __init__(self, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.counter = itertools.count(1)

    def answer(self, messages: list[dict[str, Any]]) -> str:
        prompt = latest_observer_prompt(messages)
        if prompt is not None:
            return observer_reply(prompt)
        users = [m for m in messages if m.get("role") == "user"]
        return f"FAKE-REPLY #{next(self.counter)}: {text_of(users[-1].get('content'))[-200:] if users else ''}"

    def route(self, handler: Handler, request: Recorded) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            handler.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
            return
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            handler.send_json(404, {"error": {"message": f"no route {request.path}", "type": "invalid_request_error"}})
            return
        if self.api_key is not None and handler.raw_headers.get("authorization") != f"Bearer {self.api_key}":
            handler.send_json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
            return
        body = request.body if isinstance(request.body, dict) else {}
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        if not messages:
            handler.send_json(400, {"error": {"message": "messages is required", "type": "invalid_request_error"}})
            return
        text = self.answer(messages)
        model = str(body.get("model") or "fake-model")
        usage = {"prompt_tokens": estimate_tokens(messages), "completion_tokens": max(1, len(text) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        ident = f"chatcmpl-fake{next(self.counter):06d}"
        created = int(time.time())
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            payload = {"id": ident, "object": "chat.completion", "created": created, "model": model,
                       "choices": [choice], "usage": usage}
            if request.fault == "truncate":
                handler.send_truncated_json(payload)
            else:
                handler.send_json(200, payload)
            return
        handler.start_sse()
        base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
        pieces = [text[i : i + 64] for i in range(0, len(text), 64)] or [""]
        for n, piece in enumerate(pieces):
            if request.fault == "truncate" and n >= len(pieces) // 2:
                return
            delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
            handler.send_sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        handler.send_sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            handler.send_sse({**base, "choices": [], "usage": usage})
        handler.send_sse("[DONE]")
