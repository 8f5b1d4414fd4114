"""What each memory tool does, for both servers: the stdlib one Claude Code runs (`stdio`) and the
`mcp` SDK one kept as its reference (`server`). Stdlib only.

Every call gives plain text, or raises `ToolFailure` with a message for the model. A server answers
many calls in a session: each thread keeps its connection between calls (opening one costs more
than a keyword search at 1k rows), reopened when the database file is replaced (a restore or a
repair) or after a call failed on it. A search by meaning is asked of the running worker, which holds
the model (`recall.by_meaning`: started as the hooks start it; without one, this process searches
by meaning where it can, else by keyword), and the first line of the answer says when it was not. A session started with
`CLAUDE_MEM=off` or `write` (the server inherits Claude Code's environment) is answered only that
memory is off for it.
"""

from __future__ import annotations

import _thread
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from claude_mem import paths, settings, store
from claude_mem.index.base import SearchResult
from claude_mem.index.query import SearchQuery
from claude_mem.mcp_server import answers
from claude_mem.recall import by_meaning
from claude_mem.recall.common import RecallError
from claude_mem.runtime import switch
from claude_mem.store import DatabaseError, Store
from claude_mem.store import projects as store_projects

BUSY_MS = 5_000


class ToolFailure(Exception):
    """A call the tool cannot answer; the message is what the model reads."""


def here(conn: Store | None) -> str:
    """The project of the server's working directory (`CLAUDE_PROJECT_DIR` wins when set)."""
    return store_projects.project_here(conn, os.getcwd())


# thread → (data dir, the database file's (device, inode), its connection)
_kept: dict[int, tuple[str, tuple[int, int], Store]] = {}


def _connection(data_dir: str, identity: tuple[int, int]) -> Store:
    """This thread's connection to the database of `data_dir`, opened when it has none for that file."""
    thread = _thread.get_ident()
    kept = _kept.get(thread)
    if kept is not None and kept[:2] == (data_dir, identity):
        return kept[2]
    forget_connection()
    conn = store.open(data_dir, busy_timeout_ms=BUSY_MS)
    _kept[thread] = (data_dir, identity, conn)
    return conn


def forget_connection() -> None:
    """Close this thread's kept connection (the next call opens a new one)."""
    kept = _kept.pop(_thread.get_ident(), None)
    if kept is not None:
        kept[2].close()


@contextmanager
def opened() -> Iterator[Store | None]:
    """This call's connection (None when no database exists yet); store errors → `ToolFailure`."""
    data_dir = settings.data_dir()
    try:
        found = os.stat(paths.db_path(data_dir))
    except FileNotFoundError:  # nothing captured yet; a read must not create the database
        yield None
        return
    except OSError as exc:
        raise ToolFailure(f"claude-mem cannot open its memory database: {exc}") from exc
    try:
        conn = _connection(data_dir, (found.st_dev, found.st_ino))
    except (DatabaseError, OSError) as exc:
        forget_connection()
        raise ToolFailure(f"claude-mem cannot open its memory database: {exc}") from exc
    try:
        yield conn
    except RecallError as exc:
        raise ToolFailure(str(exc)) from exc
    except DatabaseError as exc:
        forget_connection()
        raise ToolFailure(f"claude-mem could not read its memory database: {exc}") from exc
    except UnicodeEncodeError as exc:  # a lone surrogate in a value SQLite must bind
        raise ToolFailure(f"a value is not valid text ({exc.reason}): remove the unpaired surrogate") from exc
    except BaseException:
        forget_connection()  # whatever happened, no half-done state is carried into the next call
        raise


def _answer(produce: Callable[[Store], str]) -> str:
    if not switch.shows(switch.mode()):  # CLAUDE_MEM=off or write in the session's environment: no memory
        return switch.off_message()
    with opened() as conn:
        return answers.EMPTY_STORE if conn is None else produce(conn)


def search(arguments: dict[str, Any]) -> str:
    """The `search` tool: matching rows, one line each, with paging and the next steps."""
    return _answer(lambda conn: answers.search_text(
        conn, here(conn), arguments.get("query", ""), project=arguments.get("project"),
        all_projects=bool(arguments.get("all_projects")), types=arguments.get("types") or (),
        kinds=arguments.get("kinds") or (), since=arguments.get("since"), until=arguments.get("until"),
        file=arguments.get("file"), concept=arguments.get("concept"), limit=arguments.get("limit", 20),
        offset=arguments.get("offset", 0), order=arguments.get("order", "relevance"), mode=arguments.get("mode"),
        run=_search))


def _search(conn: Store, wanted: SearchQuery) -> SearchResult:
    """A search by meaning asks the worker over this thread's kept connection (a server makes many)."""
    return by_meaning.search(conn, wanted, keep=True)


def timeline(arguments: dict[str, Any]) -> str:
    """The `timeline` tool: rows around the anchor in time order."""
    return _answer(lambda conn: answers.timeline_text(
        conn, here(conn), str(arguments["anchor"]), arguments.get("before", 5), arguments.get("after", 5),
        arguments.get("project"), bool(arguments.get("all_projects"))))


def get_observations(arguments: dict[str, Any]) -> str:
    """The `get_observations` tool: full records for the ids."""
    ids: Sequence[int | str] = arguments["ids"]
    return _answer(lambda conn: answers.observations_text(conn, ids))


TOOLS: dict[str, Callable[[dict[str, Any]], str]] = {
    "search": search, "timeline": timeline, "get_observations": get_observations,
}
