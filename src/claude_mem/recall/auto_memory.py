"""Claude Code's auto memory beside ours (issue 30): kept in our index read-only, never repeated.

- `sync(conn, project)` brings the `auto_memory` rows of a project in line with its memory directory
  (`runtime.auto_memory.locate`): files are compared by stat first (size, mtime) and only the changed
  ones are read, hashed, redacted (`privacy.clean`: we never keep a secret) and stored; rows of files
  that are gone are removed. Binary files are skipped and counted, a directory past
  `MAX_FILES` files is cut (newest kept) and says so, a damaged file is indexed as far as it reads.
  With auto memory off the directory is still indexed when it exists (the notes are there to find).
- `already_loaded(conn, project, rows)`: the session-start index leaves out the observations whose title
  `MEMORY.md`'s loaded part already states (normalised words), so the two memories never say one
  thing twice. Import-light: the session-start hook calls it.
"""

from __future__ import annotations

import os

from claude_mem.store import auto_memory as repository

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Mapping
    from typing import Any

# A title shorter than this (in normalised characters) is too common to count as stated.
MIN_TITLE = 12
# Punctuation and Markdown marks (ASCII) read as spaces: a bytes `translate` runs at C speed, where a Unicode
# regex or a `str.translate` costs 0.5–1 ms on a full MEMORY.md at session start.
_MARKS = bytes(c if chr(c).isalnum() or c >= 128 else 32 for c in range(256))


def sync(conn: Any, project: str, environ: Mapping[str, str] | None = None, root: str | None = None) -> dict[str, Any]:
    """Index the auto memory directory of `project` (a key; `root`: its checkout on disk, when it was
    moved); returns the report also kept by `record_sync`: {directory, enabled, why_off, source, exists,
    files, binary, capped, problems, read, removed}."""
    from claude_mem.runtime import auto_memory as files

    where = files.locate(root or project, environ)
    found = files.listing(where.directory)
    problems = list(where.problems) + found.problems
    stored = repository.known(conn, project)
    read = 0
    for path, (size, mtime_ns) in found.files.items():
        before = stored.get(path)
        if before is not None and before[:2] == (size, mtime_ns):
            continue
        try:
            note = files.read_note(os.path.join(where.directory, path))
        except OSError as exc:
            problems.append(f"{path}: cannot be read ({exc.strerror or exc}); skipped")
            continue
        if before is not None and before[2] == note.hash:
            repository.touch(conn, project, path, size, mtime_ns)
            continue
        read += 1
        from claude_mem import privacy  # its patterns cost a few ms to load: only when a file is stored

        repository.save(conn, project, path, {
            "name": privacy.clean(note.name), "description": privacy.clean(note.description),
            "type": privacy.clean(note.type), "body": privacy.clean(note.body), "size": size, "mtime_ns": mtime_ns,
            "hash": note.hash, "problem": note.problem, "binary": note.binary})
    gone = [path for path in stored if path not in found.files]
    if gone:
        repository.remove(conn, project, gone)
    if found.capped:
        problems.append(f"{found.capped} more files than the {files.MAX_FILES} indexed (the newest are kept)")
    problems.extend(f"{path}: {problem}" for path, problem in repository.damaged(conn, project))
    now = repository.known(conn, project)
    binary = sum(1 for known in now.values() if known[3])
    report: dict[str, Any] = {
        "directory": where.directory, "enabled": where.enabled, "why_off": where.why_off, "source": where.source,
        "exists": not found.missing, "files": len(now) - binary, "binary": binary, "capped": found.capped,
        "problems": problems[:20], "read": read, "removed": len(gone)}
    kept = repository.last_sync(conn, project)
    if kept is None or any(kept[name] != report[name] for name in ("directory", "enabled", "files", "binary", "capped",
                                                                   "problems")):
        repository.record_sync(conn, project, report)  # written only when something changed: a search stays a read
    return report


def unchanged(conn: Any, project: str, environ: Mapping[str, str] | None = None, root: str | None = None) -> bool:
    """Whether `project`'s directory still matches its rows by stat alone (what the worker looks at
    every few seconds before it syncs)."""
    from claude_mem.runtime import auto_memory as files

    where = files.locate(root or project, environ)
    found = files.listing(where.directory)
    stored = repository.known(conn, project)
    return found.files == {path: known[:2] for path, known in stored.items()}


def _words(text: str) -> bytes:
    """Lower-case words (UTF-8) joined by single spaces, ASCII punctuation and Markdown marks dropped."""
    return b" ".join(text.lower().encode("utf-8", "replace").translate(_MARKS).split())


def already_loaded(conn: Any, project: str, rows: list[Any]) -> set[int]:
    """Ids of `rows` (observation index rows: id first, title fourth) whose title `MEMORY.md`'s loaded
    part already states, compared as normalised words — unless auto memory is off (this session's
    environment, or the settings its last sync read). Two index seeks when there is no `MEMORY.md`."""
    if os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip().lower() in ("1", "true", "yes", "on"):
        return set()  # this session loads no MEMORY.md
    text = repository.index_text(conn, project)
    if not text:
        return set()
    from claude_mem.runtime import auto_memory as files  # only for a project with a MEMORY.md

    loaded = b" " + _words(files.loaded_part(text)) + b" "
    found = set()
    for row in rows:
        title = _words(str(row[3] or ""))
        if len(title) >= MIN_TITLE and b" " + title + b" " in loaded:
            found.add(int(row[0]))
    return found
