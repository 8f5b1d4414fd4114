"""Search from a client process (the CLI, the MCP server): one place holds the model (issue 28).

A search by words runs in this process, as it always did. A search by meaning (`semantic` or
`hybrid`, named or the default where vectors exist) is asked of the running worker (`GET
/api/search`), which holds the model and the vectors: a client process then never loads onnxruntime,
numpy or a vector index. No worker running: one is started as the hooks start it (the `autostart`
setting), and waited for briefly. Only when no worker answers does this process search by meaning
itself (when its interpreter can embed), and the answer says so; else it searches by keyword with
`degraded: "keyword"` and a note — never a silent empty answer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from claude_mem import settings
from claude_mem.index import embedder
from claude_mem.index import search as index_search
from claude_mem.index.base import SearchResult
from claude_mem.index.query import SearchQuery
from claude_mem.recall import freshness
from claude_mem.runtime import discovery, kept_request
from claude_mem.store import Store, vectors

SEARCH_PATH = "/api/search"
# One search asked of a running worker; its first search by meaning loads the model (0.3–0.8 s).
ASK_TIMEOUT_S = 5.0
# A worker started for this search: until it publishes worker.json and answers.
START_TIMEOUT_S = 10.0
# What `ensure_worker` says when a worker runs or is on its way (worth waiting for).
COMING = ("running", "starting", "spawned", "restarting")
# What every surface reads from a hit: an answer whose items lack one is not a search result.
HIT_KEYS = frozenset(("kind", "id", "ref", "created_at", "project", "type", "title"))


def meaning_mode(conn: Store, wanted: SearchQuery) -> str:
    """The mode by meaning `wanted` asks for ("semantic" or "hybrid"), or "" for a search by words: a
    named keyword mode, no text (a listing), or the default where no vector exists yet."""
    if wanted.text is None or wanted.mode == "keyword":
        return ""
    if wanted.mode:
        return wanted.mode
    if "observation" not in wanted.kinds:  # meaning ranks observations only: keyword answers the rest
        return ""
    return "hybrid" if vectors.any_vector(conn, embedder.MODEL) else ""


def search(conn: Store, wanted: SearchQuery, data_dir: str | None = None,
           values: Mapping[str, Any] | None = None, keep: bool = False) -> SearchResult:
    """The page for `wanted` with freshness marked (DESIGN §6), from the worker when meaning is asked for;
    its `mode`, `degraded`, `unembedded` and `note` say how it was answered (`SearchResult`). `keep`: ask
    over a kept connection (a process that searches many times)."""
    mode = meaning_mode(conn, wanted)
    if not mode:
        return in_process(conn, wanted)
    found, reason = from_worker(replace(wanted, mode=mode), data_dir or settings.data_dir(), values, keep=keep)
    if found is not None:
        return found
    result = in_process(conn, replace(wanted, mode=mode))
    if result.degraded:  # this process cannot search by meaning either: keyword search answered
        return replace(result, mode="keyword", note=f"no worker answered ({reason}), and {result.note}")
    here = f"searched in this process: no worker answered ({reason})"
    return replace(result, mode=result.mode or mode, note=f"{here}; {result.note}" if result.note else here)


def in_process(conn: Store, wanted: SearchQuery) -> SearchResult:
    """The page for `wanted` searched in this process, by whatever mode it can run here, freshness marked."""
    result = index_search.search(conn, wanted)
    freshness.on_hits(conn, result.items, wanted.order == "relevance")
    return result


def from_worker(wanted: SearchQuery, data_dir: str, values: Mapping[str, Any] | None = None,
                timeout: float | None = None, keep: bool = False) -> tuple[SearchResult | None, str]:
    """The worker's answer to `wanted` (starting one as the hooks do when none runs), or None and why not;
    `timeout` (default `ASK_TIMEOUT_S`) bounds the request to a running worker."""
    timeout = ASK_TIMEOUT_S if timeout is None else timeout
    info = discovery.read_info(data_dir)
    if info is not None and discovery.pid_alive(info["pid"]):
        found = ask(info["port"], wanted, timeout, keep)
        return (found, "") if found is not None else (
            None, f"the worker (pid {info['pid']}) gave no search result, waited at most {timeout:g} s")
    values = values if values is not None else settings.load(data_dir)
    if not values.get("autostart", True):
        return None, "no worker is running and the autostart setting is off"
    from claude_mem.runtime.autostart import ensure_worker

    outcome = ensure_worker(data_dir, dict(values))
    if not outcome.startswith(COMING):
        return None, f"no worker is running; starting one: {outcome}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        info = discovery.read_info(data_dir)
        if info is not None and discovery.pid_alive(info["pid"]):
            found = ask(info["port"], wanted, min(left, timeout), keep)
            if found is not None:
                return found, ""
        time.sleep(0.05)
    return None, f"a worker was started ({outcome}) but gave no search result within {START_TIMEOUT_S:g} s"


def worker_params(wanted: SearchQuery) -> dict[str, str]:
    """`wanted` as `/api/search` parameters (times already in the store's format, the project a key)."""
    where = wanted.filters
    params = {"q": wanted.text or "", "mode": wanted.mode, "limit": str(wanted.limit), "offset": str(wanted.offset),
              "order": wanted.order, "kind": ",".join(wanted.kinds), "snippets": "true" if wanted.snippets else "false"}
    optional = {"project": where.project, "type": ",".join(where.types), "since": where.since, "until": where.until,
                "file": where.file, "concept": where.concept, "author": where.author}
    params.update({name: value for name, value in optional.items() if value})
    return params


def ask(port: int, wanted: SearchQuery, timeout: float, keep: bool = False) -> SearchResult | None:
    """The worker's answer on `port`, or None when it gives none in time or not a search result. `keep`:
    over this thread's kept connection (a long-lived client: `runtime.kept_request`), else one HTTP/1.0
    exchange (a one-shot CLI)."""
    path = f"{SEARCH_PATH}?{urlencode(worker_params(wanted))}"
    answer = kept_request.get_json(port, path, timeout) if keep else discovery.request_json(port, "GET", path, None, timeout)
    if answer is None:
        return None
    items, total = answer.get("items"), answer.get("total")
    if not isinstance(items, list) or not all(isinstance(item, dict) and HIT_KEYS <= item.keys()
                                              for item in items) \
            or not isinstance(total, int) or isinstance(total, bool):
        return None
    unembedded = answer.get("unembedded")
    return SearchResult(items, total, str(answer.get("match") or ""), answer.get("total_capped") is True,
                        mode=str(answer.get("mode") or wanted.mode), degraded=str(answer.get("degraded") or ""),
                        unembedded=unembedded if isinstance(unembedded, int) and not isinstance(unembedded, bool) else 0,
                        note=str(answer.get("note") or ""))
