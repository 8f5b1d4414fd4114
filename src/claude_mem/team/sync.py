"""One exchange with the team server: push what this machine has that the server lacks (rows of shared
projects, then tombstones), pull what other machines pushed since the last cursor.

Every step is idempotent, so a crash anywhere (kill -9 mid-push, the server gone mid-pull) is repaired
by the next exchange: a row is marked pushed only after the server committed it (a replay changes
nothing there), and a project's cursor moves only after its pulled rows are committed locally.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from claude_mem import project as identity
from claude_mem import settings
from claude_mem.store import DatabaseError, Store, team_bulk
from claude_mem.store import team as local
from claude_mem.store import team_server as server
from claude_mem.team import integrity, outgoing
from claude_mem.team.config import TeamConfig, safe_error, team_project

BATCH = 500
# A pull's batches: a small first one (search has the newest history of a joined project at once),
# then large ones (one transaction each: the cost of a commit spread over many rows).
PULL_SIZES = (1000, 5000, 20000)
log = logging.getLogger("claude_mem.team")

Progress = Callable[[str, int, int], None]  # (step, done, total)


@dataclass
class Totals:
    pushed: int = 0
    buried: int = 0
    pulled: int = 0
    deleted: int = 0
    resent: int = 0  # rows the server had lost, sent again (reconciliation)
    refused: int = 0  # rows the server refused (they stay in the outbox)
    migrated: list[str] = field(default_factory=list)

    def add(self, other: Totals) -> None:
        self.pushed += other.pushed
        self.buried += other.buried
        self.pulled += other.pulled
        self.deleted += other.deleted
        self.resent += other.resent
        self.refused += other.refused


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def device_id(conn: Store) -> str:
    """This data dir's name among the team's devices: made once (host name and a random suffix)."""
    found = local.state(conn).get("device")
    if found:
        return found
    made = f"{socket.gethostname()[:40]}-{secrets.token_hex(4)}"
    local.set_state(conn, {"device": made})
    return local.state(conn)["device"]


class Replicator:
    """Push and pull for one data dir; `connect_local` opens its SQLite store."""

    def __init__(self, config: TeamConfig, connect_local: Callable[[], Store]) -> None:
        self.config = config
        self.connect_local = connect_local
        self.remote: Any = None  # the psycopg connection, opened (and migrated) on first use
        self._found_remotes: dict[str, str | None] = {}
        self._server_checked = False  # epoch and authorship read on this connection
        self._next_reconcile = 0.0  # time.monotonic() of the next periodic reconciliation
        self.max_field_chars: int | None = None  # read from the data dir's settings on the first pull

    # -- the server connection ------------------------------------------------------------------

    def open(self) -> list[str]:
        """Connect and bring the server's schema up to ours; returns the migrations applied."""
        if self.remote is not None and not self.remote.closed:
            return []
        self.remote = server.connect(self.config.url)
        try:
            return server.migrate(self.remote)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        if self.remote is not None:
            try:
                self.remote.close()
            except Exception:
                pass
            self.remote = None
        self._server_checked = False

    def describe(self, exc: BaseException) -> str:
        return safe_error(exc, self.config.url)

    # -- what is shared ---------------------------------------------------------------------------

    def shared_projects(self, conn: Store) -> dict[str, str]:
        """Local key → team project of every local project that `team_projects` shares."""
        found = {}
        for key, recorded in local.local_projects(conn).items():
            remote = recorded or self._remote_on_disk(key)
            if self.config.shares(key, remote):
                found[key] = team_project(key, remote)
        return found

    def _remote_on_disk(self, key: str) -> str | None:
        """The remote of a project whose remote the store has not recorded yet (no session started
        there since it was recorded), read from its checkout's git config if it is on this machine."""
        if key not in self._found_remotes:
            remote = None
            if os.path.isabs(key) and os.path.isdir(key):
                remote = identity.remote_of(identity.locate(key)[1])
            self._found_remotes[key] = remote
        return self._found_remotes[key]

    def pulled_projects(self, conn: Store, names: list[str]) -> list[str]:
        """The team projects on the server that this machine takes in."""
        mine = {team: key for key, team in self.shared_projects(conn).items()}
        return [name for name in names if name in mine or self.config.shares(name, None if name.startswith("/")
                                                                                  else name)]

    def outbox(self, conn: Store) -> int:
        return local.unpushed_count(conn, list(self.shared_projects(conn)), self.config.kinds())

    # -- push -------------------------------------------------------------------------------------

    def push(self, conn: Store, device: str, progress: Progress | None = None) -> Totals:
        totals = Totals()
        shared = self.shared_projects(conn)
        keys = list(shared)
        total = local.unpushed_count(conn, keys, self.config.kinds()) if progress else 0
        for kind in self.config.kinds():
            after = 0
            while True:
                rows = local.unpushed(conn, kind, keys, BATCH, after)
                if not rows:
                    break
                after = rows[-1]["id"]
                # What leaves, field by field (the sharing settings, the secret redactor): team/outgoing.py
                sent = [{"uid": row["uid"], "kind": kind, "project": shared[row["project"]], "payload": payload}
                        for row, payload in zip(rows, outgoing.payloads(conn, kind, rows, self.config.share_prompts),
                                                strict=True)]
                revisions, refused = integrity.send(self, conn, sent, device)
                totals.refused += refused
                marks = [(row["id"], row["uid"], revisions[row["uid"]][0]) for row in rows if row["uid"] in revisions]
                gone = local.mark_pushed(conn, kind, marks)
                if gone:  # deleted here while on their way: bury them now rather than wait
                    totals.buried += server.bury(self.remote, gone, self.config.author, device)
                buried_there = [uid for uid, (_, deleted) in revisions.items() if deleted]
                totals.deleted += local.delete_rows(conn, kind, buried_there)
                totals.pushed += sum(1 for row in rows if row["uid"] in revisions)
                if progress:
                    progress("push", totals.pushed, total)
        while True:
            stones = local.tombstones(conn, BATCH)
            if not stones:
                break
            uids = [stone["uid"] for stone in stones]
            totals.buried += server.bury(self.remote, uids, self.config.author, device)
            local.drop_tombstones(conn, uids)
        return totals

    # -- pull -------------------------------------------------------------------------------------

    def pull(self, conn: Store, device: str, progress: Progress | None = None) -> Totals:
        """Take in what other devices pushed since each project's cursor: streamed in batches (small
        first, so search has something at once, then large), each batch one local transaction that also
        moves the cursor. A pull cut off (the server gone, the connection dropped) keeps every batch
        it committed and the next one goes on from there; rows it cannot store are counted and logged."""
        totals = Totals()
        cursors = local.state(conn)
        limit = self._field_limit(conn)
        for name in self.pulled_projects(conn, server.projects(self.remote)):
            cursor_key = f"cursor:{name}"
            after = int(cursors.get(cursor_key, "0"))
            with_key = ""  # the project's local key, found (or made) when its first row arrives
            total = server.pending(self.remote, name, after, device) if progress else 0
            done, started = 0, time.monotonic()
            try:
                for batch in server.stream(self.remote, name, after, device, PULL_SIZES):
                    good, applied = team_bulk.prepare(batch, limit)
                    with_key = with_key or self._local_key(conn, name)
                    # the cursor: the revision of the batch's last row (the last of STREAM_COLUMNS)
                    team_bulk.apply(conn, good, with_key, (cursor_key, int(batch[-1][-1])), cursors, applied)
                    for note in applied.notes:
                        log.warning("team pull of %s: %s", name, note)
                    totals.pulled += applied.stored
                    totals.deleted += applied.deleted
                    done += len(batch)
                    if progress:
                        progress("pull", done, max(total, done))
                    elif len(batch) >= 5000:  # a join in the worker: its progress in the log
                        log.info("team pull of %s: %d rows so far, %.0f rows/s", name, done,
                                 done / max(time.monotonic() - started, 1e-3))
            except server.driver().Error as exc:
                raise server.ServerError(
                    f"pull of {name} cut off after {done} row(s) (the next sync goes on from there): "
                    f"{self.describe(exc)}") from exc
        return totals

    def _field_limit(self, conn: Store) -> int:
        """`max_field_chars` of this data dir: a pulled text is cut as a local capture is."""
        if self.max_field_chars is None:
            directory = team_bulk.data_dir(conn)
            self.max_field_chars = int(settings.load(directory)["max_field_chars"] if directory
                                       else settings.DEFAULTS["max_field_chars"])
        return self.max_field_chars

    def _local_key(self, conn: Store, name: str) -> str:
        from claude_mem.store.transaction import transaction

        with transaction(conn):
            return local.project_for_team(conn, name, now_iso())

    # -- one exchange -------------------------------------------------------------------------------

    def sync_once(self, progress: Progress | None = None, reconcile: bool | None = None) -> Totals:
        """Push then pull, and reconcile (always with `reconcile` True or when the server at the URL
        changed, never with False, every `integrity.RECONCILE_SECONDS` with None); raises on any
        failure (the caller records it and retries later)."""
        totals = Totals()
        totals.migrated = self.open()
        conn = self.connect_local()
        try:
            device = device_id(conn)
            if not self._server_checked:
                if integrity.check_server(self, conn):  # another server at this URL: check at once
                    reconcile = True
                self._server_checked = True
            if reconcile or (reconcile is None and time.monotonic() >= self._next_reconcile):
                totals.resent += integrity.reconcile(self, conn, device).resent  # the push below re-sends
                self._next_reconcile = time.monotonic() + integrity.RECONCILE_SECONDS
            totals.add(self.push(conn, device, progress))
            integrity.check_cursors(self, conn)
            totals.add(self.pull(conn, device, progress))
            integrity.take_anchors(self, conn)
            record(conn, totals, None)
        finally:
            conn.close()
        return totals


def record(conn: Store, totals: Totals | None, error: str | None) -> None:
    """Keep the outcome of an exchange in `team_state` (what `team status` shows)."""
    current = local.state(conn)
    values: dict[str, object] = {"last_attempt_at": now_iso(), "last_error": error or ""}
    if totals is not None:
        values["last_sync_at"] = values["last_attempt_at"]
        for name in ("pushed", "pulled", "buried", "deleted"):
            values[name] = int(current.get(name, "0")) + getattr(totals, name)
    else:
        values["last_error_at"] = values["last_attempt_at"]
    local.set_state(conn, values)


def record_failure(connect_local: Callable[[], Store], error: str) -> None:
    try:
        conn = connect_local()
    except DatabaseError:
        return
    try:
        record(conn, None, error)
    except DatabaseError:
        pass
    finally:
        conn.close()
