"""The fingerprints repository (migration m011): which files an observation is about, as they were
when it was made. Capture records them (`capture.fingerprint`), observations inherit them from their
events or `remember --file`, and `recall.freshness` compares them with the working tree."""

from __future__ import annotations

import sqlite3

if False:  # for the type checker only: the hooks read fingerprints (recall.freshness), `typing` stays off their path
    from collections.abc import Iterable, Mapping
    from typing import TypedDict

    class FileFingerprint(TypedDict):
        """One file as it was: `path` relative to the project root; `size` and `mtime_ns` from stat;
        `hash` git's blob hash of the content (None: not hashed — too large, unreadable, missing);
        `commit` the repository's HEAD then (None outside git or before the first commit)."""

        path: str
        size: int | None
        mtime_ns: int | None
        hash: str | None
        commit: str | None

# At most this many files per observation: an event that touched 10,000 files names the first ones.
MAX_FILES = 50


def add(conn: sqlite3.Connection, observation_id: int, files: Iterable[Mapping[str, object]]) -> int:
    """Record the files of one observation (inside the caller's transaction); a path already recorded
    keeps its first fingerprint. Returns how many were recorded."""
    rows: list[tuple[object, ...]] = []
    for item in files:
        path = item.get("path")
        if not isinstance(path, str) or not path or len(rows) >= MAX_FILES:
            continue
        size, mtime, digest, commit = item.get("size"), item.get("mtime_ns"), item.get("hash"), item.get("commit")
        rows.append((observation_id, path, size if isinstance(size, int) else None,
                     mtime if isinstance(mtime, int) else None, digest if isinstance(digest, str) else None,
                     commit if isinstance(commit, str) else None))
    conn.executemany(
        "INSERT INTO observation_files (observation_id, path, size, mtime_ns, hash, commit_sha)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
    return len(rows)


def of(conn: sqlite3.Connection, observation_ids: Iterable[int]) -> dict[int, list[FileFingerprint]]:
    """observation id → its files, by path; observations without files are absent."""
    wanted = sorted({int(i) for i in observation_ids})
    found: dict[int, list[FileFingerprint]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        for observation_id, path, size, mtime, digest, commit in conn.execute(
            "SELECT observation_id, path, size, mtime_ns, hash, commit_sha FROM observation_files"
            f" WHERE observation_id IN ({', '.join('?' for _ in chunk)}) ORDER BY observation_id, path", chunk,
        ):
            found.setdefault(int(observation_id), []).append(
                {"path": path, "size": size, "mtime_ns": mtime, "hash": digest, "commit": commit})
    return found
