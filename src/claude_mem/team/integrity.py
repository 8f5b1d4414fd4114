"""Keeping the team server whole (DESIGN §12): what the server is (its epoch, whether authorship is
verified), reconciliation of what this machine pushed with what the server holds, and rows the server
refuses.

- **Reconciliation**: the rows this machine wrote and the server acknowledged, per team project, by
  bucket (the uid's first two hex digits: count and a sum of the uids), beside the server's live rows
  written by this device. Only a bucket that differs is listed uid by uid, and a row the server holds
  under no state (lost in a crash with asynchronous commit, or an older backup restored) loses its
  pushed mark, so the normal push sends it again. Runs on `team sync` and every `RECONCILE_SECONDS`
  in the worker.
- **A restored or rebuilt server**: a pull cursor beyond the server's revision sequence, or a new
  epoch, means the server went back in time: pulling starts again from the start (replays change
  nothing), and the reconciliation runs at once.
- **Refused rows**: a batch the server refuses (a row over `ROW_LIMIT`, a role that may not write it,
  data PostgreSQL cannot hold) is sent again row by row; each refused row is logged once, counted in
  `team status`, stays in the outbox and is tried again at the next reconciliation (not logged again).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from claude_mem.store import Store, team_digest
from claude_mem.store import team as local
from claude_mem.store import team_server as server
from claude_mem.team.config import TeamConfig

log = logging.getLogger("claude_mem.team")


class Replicator(Protocol):
    """What these checks need of `team.sync.Replicator` (which calls them)."""

    config: TeamConfig
    remote: Any

    def shared_projects(self, conn: Store) -> dict[str, str]: ...

    def describe(self, exc: BaseException) -> str: ...

RECONCILE_SECONDS = 300.0
BUCKET_DIGITS = 2
HELD_CHUNK = 5000


@dataclass
class Reconciled:
    checked: int = 0  # rows of ours compared
    buckets: int = 0  # buckets that differed
    resent: int = 0  # rows the server lacked, back in the outbox
    restarted: int = 0  # projects whose pull starts again (a restored server)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def buckets(uids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """The local half of `team_server.digest`: bucket → (count, sum of the next 15 hex digits)."""
    found: dict[str, list[int]] = {}
    for uid in uids:
        entry = found.setdefault(uid[:BUCKET_DIGITS], [0, 0])
        entry[0] += 1
        entry[1] += int(uid[BUCKET_DIGITS:BUCKET_DIGITS + 15], 16)
    return {bucket: (count, total) for bucket, (count, total) in found.items()}


# -- the server's identity ----------------------------------------------------------------------------


def check_server(replicator: Replicator, conn: Store) -> bool:
    """Record what the server is (authorship verified or not, our role there, its epoch); True when the
    epoch changed (another server at the same URL: pulling starts again)."""
    found = server.facts(replicator.remote)
    saved = local.state(conn)
    values: dict[str, object] = {"authorship": "verified" if found["verified"] else "unverified",
                                 "server_role": found["role"], "server_name": found["name"] or "",
                                 "epoch": found["epoch"] or ""}
    changed = bool(saved.get("epoch")) and saved.get("epoch") != found["epoch"]
    if changed:
        log.warning("team: the server at this URL is another one (its epoch changed): pulling starts again and"
                    " this machine's rows are checked against it")
        values.update({key: 0 for key in saved if key.startswith("cursor:")})
        values["restored_at"] = now_iso()
    local.set_state(conn, values)
    return changed


def check_cursors(replicator: Replicator, conn: Store) -> int:
    """Pull cursors the server went back behind start again from 0; returns how many.

    Each cursor keeps an anchor, the last observation at or below it (`anchor:<project>` = "cursor rev
    uid"). The server going back in time (an older backup restored, commits lost in a crash) shows as an
    anchor it no longer holds at that revision (lost, or sent again since), or as a cursor beyond its
    revision sequence, however many rows were written since. One query per exchange, and one per
    project whose cursor moved (`take_anchors`). (A backup taken between the anchor and the cursor, where only session
    and summary rows lie, goes unseen.)"""
    saved = local.state(conn)
    cursors = {key[len("cursor:"):]: int(value) for key, value in saved.items() if key.startswith("cursor:")}
    if not cursors:
        return 0
    anchors: dict[str, tuple[str, int]] = {}
    for key, text in saved.items():
        parts = text.split()
        if key.startswith("anchor:") and key[len("anchor:"):] in cursors and len(parts) == 3:
            anchors[key[len("anchor:"):]] = (parts[2], int(parts[1]))
    lost, last = server.lost_anchors(replicator.remote, list(anchors.values()))
    behind = sorted(name for name, at in cursors.items()
                    if at > last or (name in anchors and anchors[name][0] in lost))
    if behind:
        log.warning("team: the server went back in time (restored from a backup?): pulling %d project(s) again"
                    " from the start", len(behind))
        values: dict[str, object] = {f"cursor:{name}": 0 for name in behind}
        values.update({f"anchor:{name}": "" for name in behind})
        local.set_state(conn, {**values, "restored_at": now_iso()})
    return len(behind)


def take_anchors(replicator: Replicator, conn: Store) -> None:
    """After a pull: a new anchor for each cursor that moved (see `check_cursors`)."""
    saved = local.state(conn)
    values: dict[str, object] = {}
    for key, text in saved.items():
        if not key.startswith("cursor:") or int(text) == 0:
            continue
        name, at = key[len("cursor:"):], int(text)
        taken = saved.get(f"anchor:{name}", "").split()
        if taken and taken[0] == str(at):
            continue
        found = server.anchor(replicator.remote, name, at)
        if found:
            values[f"anchor:{name}"] = f"{at} {found[1]} {found[0]}"
    if values:
        local.set_state(conn, values)


# -- reconciliation -----------------------------------------------------------------------------------


def reconcile(replicator: Replicator, conn: Store, device: str) -> Reconciled:
    """Compare what this machine pushed with what the server holds; rows the server lost wait in the
    outbox again, and rows refused before may be tried again (the caller pushes next). Records the
    outcome for `team status`."""
    result = Reconciled(restarted=check_cursors(replicator, conn))
    by_team: dict[str, list[str]] = {}
    for key, team in replicator.shared_projects(conn).items():
        by_team.setdefault(team, []).append(key)
    missing: list[tuple[str, str]] = []
    for team, keys in sorted(by_team.items()):
        mine = team_digest.pushed_uids(conn, keys)
        result.checked += len(mine)
        ours = buckets(uid for _, uid in mine)
        theirs = server.digest(replicator.remote, team, device)
        differ = {bucket for bucket in ours.keys() | theirs.keys() if ours.get(bucket) != theirs.get(bucket)}
        result.buckets += len(differ)
        if not differ:
            continue
        candidates = [row for row in mine if row[1][:BUCKET_DIGITS] in differ]
        there: set[str] = set()
        for start in range(0, len(candidates), HELD_CHUNK):
            there |= server.held(replicator.remote, [uid for _, uid in candidates[start:start + HELD_CHUNK]])
        missing += [row for row in candidates if row[1] not in there]
    result.resent = team_digest.unmark_pushed(conn, missing)
    if result.resent:
        log.warning("team: the server had lost %d row(s) this machine pushed: sending them again", result.resent)
    saved = local.state(conn)
    found = (f"{result.resent} row(s) the server had lost sent again" if result.resent
             else f"all {result.checked} row(s) pushed from here are on the server")
    if result.restarted:
        found += f"; the server went back in time: {result.restarted} project(s) pulled again"
    local.set_state(conn, {"reconciled_at": now_iso(), "reconcile_found": found, "refused": "[]",
                           "resent": int(saved.get("resent", "0")) + result.resent})
    return result


# -- rows the server refuses ----------------------------------------------------------------------------


def refused(conn: Store, key: str = "refused") -> set[str]:
    """The uids refused since the last check (`refused`), or ever logged (`refused_logged`)."""
    try:
        return set(json.loads(local.state(conn).get(key) or "[]"))
    except ValueError:
        return set()


def _refusal(exc: BaseException) -> bool:
    """Whether a failed push is the server refusing rows (the connection still fine), not an outage."""
    psycopg = server.driver()
    return isinstance(exc, psycopg.DatabaseError) and not isinstance(exc, psycopg.OperationalError
                                                                     | psycopg.InterfaceError)


def send(replicator: Replicator, conn: Store, rows: Sequence[dict[str, Any]], device: str
         ) -> tuple[dict[str, tuple[int, bool]], int]:
    """Push `rows` as `team_server.push` does, leaving out rows refused before; when the server refuses
    the batch, row by row, so one bad row does not hold the others back. Returns (what the server
    acknowledged, rows refused now)."""
    skip = refused(conn)
    rows = [row for row in rows if row["uid"] not in skip]
    try:
        return server.push(replicator.remote, rows, replicator.config.author, device), 0
    except Exception as exc:
        if not _refusal(exc) or len(rows) == 0:
            raise
    acknowledged: dict[str, tuple[int, bool]] = {}
    now_refused: list[str] = []
    logged = refused(conn, "refused_logged")
    for row in rows:
        try:
            acknowledged.update(server.push(replicator.remote, [row], replicator.config.author, device))
        except Exception as exc:
            if not _refusal(exc):
                raise
            now_refused.append(row["uid"])
            reason = getattr(getattr(exc, "diag", None), "message_primary", None) or replicator.describe(exc)
            if row["uid"] not in logged:  # once per row, not at every retry
                log.error("team: the server refused %s %s (it stays in the outbox): %s", row["kind"], row["uid"],
                          reason)
    if now_refused:
        local.set_state(conn, {"refused": json.dumps(sorted(skip | set(now_refused))),
                               "refused_logged": json.dumps(sorted(logged | set(now_refused)))})
    return acknowledged, len(now_refused)


def report(saved: dict[str, str]) -> dict[str, Any]:
    """What `team status` shows of all this, from the service's state."""
    try:
        refused_now = len(json.loads(saved.get("refused") or "[]"))
    except ValueError:
        refused_now = 0
    return {"authorship": saved.get("authorship") or None, "server_role": saved.get("server_role") or None,
            "resent": int(saved.get("resent", "0")), "reconciled_at": saved.get("reconciled_at"),
            "reconcile_found": saved.get("reconcile_found"), "refused": refused_now,
            "restored_at": saved.get("restored_at")}
