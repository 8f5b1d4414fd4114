"""`remember`: a manual observation, stored like any other so it shows in context and search."""

import hashlib
import os
import re
from collections.abc import Sequence
from typing import Any

from claude_mem import privacy
from claude_mem.capture import fingerprint
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


def file_fingerprints(paths: Sequence[str], project: str, base: str | None = None) -> list[dict[str, Any]]:
    """The fingerprints (`store.fingerprints.FileFingerprint`) of the files a note names
    (`remember --file`), taken now, relative to the checkout root of `project` (its key is its root
    path; else `base`). A relative path is read from `base` (default: the current directory).
    RecallError names a path that is not a file inside the project."""
    if len(paths) > fingerprint.MAX_FILES_PER_EVENT:
        raise RecallError(f"too many files ({len(paths)}; at most {fingerprint.MAX_FILES_PER_EVENT})")
    base = base or os.getcwd()
    start = project if os.path.isdir(project) else base
    found: list[dict[str, Any]] = []
    for path in paths:
        files, _commit = fingerprint.fingerprints([path], base, start)
        if not files:
            root = fingerprint.checkout(start)[0]
            raise RecallError(f"--file {path}: not a file inside the project ({root})")
        found.extend(item for item in files if item["path"] not in {known["path"] for known in found})
    return found


def remember(
    conn: Store, text: str, project: str, kind: str = "discovery", title: str | None = None,
    supersedes: int | None = None, files: Sequence[str] = (), base: str | None = None,
) -> Remembered:
    """Store a manual observation (no session); the same note twice returns the first. Adds `created`.
    `supersedes`: an earlier observation of the project this note replaces (issue 26).

    `<private>` spans are dropped and secrets redacted, as for everything the hooks capture. `files`
    (paths, relative ones from `base`) are fingerprinted now and recorded as what the note is about."""
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
    prints = file_fingerprints(files, project, base) if files else []
    stored, created = memory.add_manual_observation(conn, project, kind, heading, body,
                                                    content_hash(kind, heading, body), prints)
    if supersedes is not None:
        if not memory.mark_superseded(conn, stored["id"], supersedes):
            raise RecallError(f"cannot supersede #{supersedes} with #{stored['id']}: only an older observation can be"
                              " superseded, and never in a cycle")
    return {**stored, "created": created}
