"""`remember`: a manual observation, stored like any other so it shows in context and search."""

import hashlib
import re

from claude_mem import privacy
from claude_mem.domain import OBSERVATION_TYPES, RecallError
from claude_mem.store import Store, memory
from claude_mem.store.rows import ObservationRow

MAX_TEXT_CHARS = 20_000
TITLE_CHARS = 100


class Remembered(ObservationRow):
    """The stored note, and whether this call stored it (False: the same note was there already)."""

    created: bool


def default_title(text: str) -> str:
    """The first sentence or line of `text`, cut at a word boundary."""
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0].strip()
    if len(first) <= TITLE_CHARS:
        return first
    cut = first[:TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut or first[:TITLE_CHARS]).rstrip(",;:") + "…"


def content_hash(kind: str, title: str, text: str) -> str:
    """What makes a manual note the same note twice."""
    return hashlib.sha256("\x1f".join(("manual", kind, title, text)).encode("utf-8")).hexdigest()


def remember(
    conn: Store, text: str, project: str, kind: str = "discovery", title: str | None = None,
    supersedes: int | None = None,
) -> Remembered:
    """Store a manual observation (no session); the same note twice returns the first. Adds `created`.
    `supersedes`: an earlier observation of the project this note replaces (issue 26).

    `<private>` spans are dropped and secrets redacted, as for everything the hooks capture."""
    raw = (text or "").strip()
    if not raw:
        raise RecallError("nothing to remember: the text is empty")
    if len(raw) > MAX_TEXT_CHARS:
        raise RecallError(f"the text is too long ({len(raw)} characters; at most {MAX_TEXT_CHARS})")
    body = privacy.clean(raw).strip()
    if not body:
        raise RecallError("nothing to remember: all of the text is <private>")
    if kind not in OBSERVATION_TYPES:
        raise RecallError(f"unknown type {kind!r} (known: {', '.join(OBSERVATION_TYPES)})")
    heading = " ".join(privacy.clean(title or "").split()) or default_title(body)
    if supersedes is not None and memory.project_of_observation(conn, supersedes) != project:
        raise RecallError(f"cannot supersede #{supersedes}: no observation of project {project!r} has that id")
    stored, created = memory.add_manual_observation(conn, project, kind, heading, body,
                                                    content_hash(kind, heading, body))
    if supersedes is not None:
        if not memory.mark_superseded(conn, stored["id"], supersedes):
            raise RecallError(f"cannot supersede #{supersedes} with #{stored['id']}: only an older observation can be"
                              " superseded, and never in a cycle")
    return {**stored, "created": created}
