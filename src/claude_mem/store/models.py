"""What the queue and results repositories hand out and take in: an event, a claimed batch, and the
observations and summary the observer wrote for it (before they are stored).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PendingEvent:
    """One row of `pending_events`, payload decoded."""

    id: int
    session_id: int
    kind: str
    prompt_number: int | None
    payload: dict[str, Any]
    attempts: int = 0
    created_at: str = ""

    @property
    def chars(self) -> int:
        return len(json.dumps(self.payload, default=str))


@dataclass(frozen=True)
class Batch:
    """Events of one session claimed together for one observer turn."""

    session_id: int
    content_session_id: str
    project: str
    cwd: str
    events: tuple[PendingEvent, ...]
    lease: str  # the lease_until written at claim time: proof the batch is still ours

    @property
    def ids(self) -> list[int]:
        return [event.id for event in self.events]

    def first(self, kind: str) -> PendingEvent | None:
        """The batch's first event of `kind`, if any."""
        return next((event for event in self.events if event.kind == kind), None)


@dataclass(frozen=True)
class ParsedObservation:
    """An observation as the observer wrote it (reply contract, DESIGN §5), not yet stored."""

    type: str
    title: str
    narrative: str
    subtitle: str = ""
    facts: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    # Not content (no column of its own): the id of an earlier observation this one supersedes or
    # contradicts (`<supersedes>`, issue 26); storing the batch sets that one's `superseded_by`.
    supersedes: int | None = None


@dataclass(frozen=True)
class ParsedSummary:
    """A turn summary as the observer wrote it, not yet stored."""

    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    files_read: tuple[str, ...] = ()
    files_edited: tuple[str, ...] = ()
    notes: str = ""


@dataclass(frozen=True)
class Related:
    """An existing observation shown to the observer beside a batch (same files, or matching words), so
    that a new one may say it supersedes it (issue 26)."""

    id: int
    type: str
    title: str
    files: tuple[str, ...] = ()
