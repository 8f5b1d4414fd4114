"""Claude Code transcripts → the hook calls they show, as the payloads the hooks would have received.

A session is `<projects>/<dir>/<session_id>.jsonl` plus its sub-agents' transcripts
(`<dir>/<session_id>/subagents/agent-*.jsonl`), whose tool calls belong to the session (the hooks
see them under the parent's session id). Read in the order the hooks ran: user prompts
(UserPromptSubmit), each `tool_use` with its `tool_result` (PostToolUse, or PostToolUseFailure when
`is_error`), the turn's last assistant message (Stop), the end of each run (SessionEnd; Claude Code
writes a `cost-state` line when a run exits). Sub-agent lines are merged in by timestamp, so a
sub-agent's tools come before the Agent call that ran them, as their hooks did.

The transcript is not an API contract (reference/claude-code-integration.md §2): unknown line types
are counted and skipped, damaged lines reported with their place, and nothing here is fatal.
"""

from __future__ import annotations

import heapq
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from claude_mem.importers import lines

CHAIN_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})
# Bookkeeping: the other entry types Claude Code 2.1.330 routes when it writes a transcript (its
# table of them, read in the binary), and `summary` of 1.x. Read and deliberately ignored.
BOOKKEEPING_TYPES = frozenset({
    "agent-color", "agent-name", "agent-setting", "ai-title", "api-request", "api-request-blob",
    "api-request-resumed", "api-request-shape", "artifact-autoreact-ledger", "artifact-comment-monitor",
    "atis-latch", "attribution-snapshot", "bridge-session", "content-replacement", "continued-in", "cost-state",
    "custom-title", "data-flow-incomplete", "data-flow-records", "derived-from", "dev-mods", "ended-by-model",
    "file-history-delta", "file-history-snapshot", "fork-context-ref", "frame-link", "history-suppression",
    "isolation-latch", "last-prompt", "memory-mode", "mode", "observer-ref", "permission-mode", "pr-link",
    "queue-operation", "relocated", "resume-head-vouch", "session-owner", "summary", "tag", "tools-used",
    "worktree-state",
})
RUN_END = "cost-state"
INTERRUPTED = "[Request interrupted by user"
NOT_PROMPTS = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
SESSION_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$")
KEEP_PLACES = 20  # damaged lines listed one by one; past this many, only counted


@dataclass(frozen=True)
class SessionFiles:
    """The transcript files of one Claude Code session."""

    session_id: str
    main: str | None
    subagents: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.main or self.subagents[0]


def _subagent_session(path: str) -> str | None:
    """The parent session of `<session_id>/subagents/agent-*.jsonl`, else None."""
    folder = os.path.dirname(path)
    name = os.path.basename(path)
    if os.path.basename(folder) == "subagents" and name.startswith("agent-"):
        return os.path.basename(os.path.dirname(folder)) or None
    return None


def _subagents_of(main: str, session_id: str) -> list[str]:
    folder = os.path.join(os.path.dirname(main), session_id, "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, name) for name in names if name.startswith("agent-") and name.endswith(".jsonl")]


def find_sessions(paths: Sequence[str]) -> tuple[list[SessionFiles], list[str]]:
    """The sessions under `paths` (files or directories; `*.jsonl` found recursively), oldest file
    first, and the paths that do not exist."""
    found: list[str] = []
    missing: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for directory, folders, names in os.walk(path):
                folders.sort()
                found += [os.path.join(directory, name) for name in sorted(names) if name.endswith(".jsonl")]
        elif os.path.exists(path):  # a FIFO or device too: reading it is refused, and the report says so
            found.append(path)
        else:
            missing.append(path)
    mains: dict[str, str] = {}
    subagents: dict[str, set[str]] = {}
    for path in dict.fromkeys(os.path.abspath(p) for p in found):
        parent = _subagent_session(path)
        if parent is not None:
            subagents.setdefault(parent, set()).add(path)
            continue
        session_id = os.path.basename(path)[: -len(".jsonl")] if path.endswith(".jsonl") else os.path.basename(path)
        mains.setdefault(session_id, path)
    for session_id, main in mains.items():
        subagents.setdefault(session_id, set()).update(_subagents_of(main, session_id))
    sessions = [SessionFiles(sid, mains.get(sid), tuple(sorted(subagents.get(sid, ())))) for sid in
                {**dict.fromkeys(mains), **dict.fromkeys(subagents)}]
    sessions = [s for s in sessions if s.main or s.subagents]
    return sorted(sessions, key=lambda s: (_mtime(s.label), s.label)), missing


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


@dataclass
class Notes:
    """What reading found besides hook calls: damaged lines (with their places), unknown line types."""

    damaged: list[str] = field(default_factory=list)
    damaged_count: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    unknown_first: dict[str, str] = field(default_factory=dict)
    other_session_lines: int = 0
    unmatched_results: int = 0

    def problem(self, path: str, line: int, message: str) -> None:
        self.damaged_count += 1
        if len(self.damaged) < KEEP_PLACES:
            self.damaged.append(f"{path}:{line}: {message}")

    def unknown_type(self, path: str, line: int, name: object) -> None:
        shown = name if isinstance(name, str) else f"(no type: {type(name).__name__})"
        shown = shown[:40]
        self.unknown[shown] += 1
        self.unknown_first.setdefault(shown, f"{path}:{line}")

    @property
    def skipped_lines(self) -> int:
        return self.damaged_count + sum(self.unknown.values())


@dataclass(frozen=True)
class HookCall:
    """One hook call a transcript shows: the hook command, its payload, when it happened."""

    hook: str
    payload: dict[str, Any]
    at: str


def stamp(value: object) -> str | None:
    """A transcript timestamp in the store's format (`2026-11-23T10:42:05.609Z`), else None."""
    if not isinstance(value, str):
        return None
    match = STAMP.match(value)
    if match:
        return f"{match.group(1)}.{(match.group(2) or '0')[:3].ljust(3, '0')}Z"
    from datetime import datetime

    from claude_mem.domain import iso_from

    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return iso_from(moment) if moment.tzinfo else None


def _text(content: object) -> str | None:
    """The text of a message's content (a string or text blocks); None when it has none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


def _typed_prompt(text: str) -> str | None:
    """What the user typed, as UserPromptSubmit receives it; None for lines that are no prompt."""
    stripped = text.lstrip()
    if stripped.startswith(NOT_PROMPTS):
        return None
    if "<command-name>" in stripped:
        name = re.search(r"<command-name>(.*?)</command-name>", stripped, re.S)
        args = re.search(r"<command-args>(.*?)</command-args>", stripped, re.S)
        if name:
            typed = name.group(1).strip()
            return f"{typed} {args.group(1).strip()}".strip() if args else typed
    return text


class SessionReader:
    """Reads one session's files; iterating yields its hook calls in the order the hooks ran.

    `start` (the first timestamp) and `start_cwd` are known once the first call has been yielded."""

    def __init__(self, files: SessionFiles, notes: Notes, max_line_bytes: int = lines.MAX_LINE_BYTES) -> None:
        self.files = files
        self.session_id = files.session_id
        self.notes = notes
        self.max_line_bytes = max_line_bytes
        self.start: str | None = None
        self.start_cwd: str | None = None
        self.unreadable: list[str] = []
        self._cwd = ""
        self._last_at = ""
        self._pending: dict[str, tuple[str, object]] = {}
        self._prompt_id: str | None = None
        self._turn_open = False
        self._interrupted = False
        self._message_id: object = None
        self._answered = False  # the turn has an assistant message (its last one decides the Stop)
        self._texts: list[str] = []
        self._calls_tools = False
        self._run_active = False
        self._started = False

    # -- reading ------------------------------------------------------------------------------------
    def _entries(self, path: str, sidechain: bool) -> Iterator[tuple[str, dict[str, Any], bool]]:
        """(timestamp, entry, sidechain) of the known lines of one file; a line without a timestamp has
        the one before it."""
        at = ""
        try:
            for number, entry in lines.objects(path, lambda n, m: self.notes.problem(path, n, m), self.max_line_bytes):
                kind = entry.get("type")
                if not isinstance(kind, str) or kind not in CHAIN_TYPES | BOOKKEEPING_TYPES:
                    self.notes.unknown_type(path, number, kind)
                    continue
                owner = entry.get("sessionId")
                if isinstance(owner, str) and owner and owner != self.session_id:
                    self.notes.other_session_lines += 1
                    continue
                at = stamp(entry.get("timestamp")) or at
                yield at, entry, sidechain
        except OSError as exc:
            self.unreadable.append(f"{path}: {exc.strerror or exc}")

    def __iter__(self) -> Iterator[HookCall]:
        streams = [self._entries(path, True) for path in self.files.subagents]
        if self.files.main:
            streams.insert(0, self._entries(self.files.main, False))
        # Each file keeps its own order; between files the earlier timestamp goes first.
        for at, entry, sidechain in heapq.merge(*streams, key=lambda item: item[0]):
            if at:
                self._last_at = at
            cwd = entry.get("cwd")
            if isinstance(cwd, str) and cwd:
                self._cwd = cwd
                if self.start_cwd is None:
                    self.start_cwd = cwd
            if self.start is None and at and entry.get("type") in CHAIN_TYPES:
                self.start = at
            kind = entry["type"]
            if kind == RUN_END:
                yield from self._end_run()
            elif kind == "user":
                yield from self._user(entry, sidechain or entry.get("isSidechain") is True, at)
            elif kind == "assistant":
                self._assistant(entry, sidechain or entry.get("isSidechain") is True)
        yield from self._end_run()

    # -- what each line means ---------------------------------------------------------------------------
    def _base(self, event: str) -> dict[str, Any]:
        return {"session_id": self.session_id, "cwd": self._cwd, "hook_event_name": event}

    def _call(self, hook: str, payload: dict[str, Any], at: str) -> Iterator[HookCall]:
        if not self._started:
            self._started = True
            start = {**self._base("SessionStart"), "cwd": self.start_cwd or self._cwd, "source": "startup"}
            yield HookCall("session-start", start, self.start or at)
        yield HookCall(hook, payload, at or self._last_at)

    def _user(self, entry: dict[str, Any], sidechain: bool, at: str) -> Iterator[HookCall]:
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        if results:
            structured = entry.get("toolUseResult", None) if len(results) == 1 else None
            for block in results:
                yield from self._result(block, structured, at)
            return
        if sidechain or entry.get("isMeta") is True or entry.get("isCompactSummary") is True:
            return
        text = _text(content)
        if text is None:
            return
        if text.lstrip().startswith(INTERRUPTED):
            self._interrupted = True
            return
        prompt = _typed_prompt(text)
        if prompt is None:
            return
        yield from self._close_turn()
        prompt_id = entry.get("promptId")
        uuid = entry.get("uuid")
        self._prompt_id = prompt_id if isinstance(prompt_id, str) and prompt_id else \
            f"transcript:{uuid if isinstance(uuid, str) else self._last_at}"
        self._turn_open, self._interrupted, self._run_active = True, False, True
        self._message_id, self._answered, self._texts, self._calls_tools = None, False, [], False
        payload = {**self._base("UserPromptSubmit"), "prompt_id": self._prompt_id, "prompt": prompt}
        yield from self._call("user-prompt", payload, at)

    def _result(self, block: dict[str, Any], structured: object, at: str) -> Iterator[HookCall]:
        tool_use_id = block.get("tool_use_id")
        call = self._pending.pop(tool_use_id, None) if isinstance(tool_use_id, str) else None
        if call is None:
            self.notes.unmatched_results += 1
            return
        name, tool_input = call
        payload = {**self._base("PostToolUse"), "prompt_id": self._prompt_id, "tool_name": name,
                   "tool_input": tool_input, "tool_use_id": tool_use_id}
        if block.get("is_error") is True:
            error = _text(block.get("content")) or ""
            payload.update(hook_event_name="PostToolUseFailure", error=error,
                           is_interrupt=error.startswith(INTERRUPTED))
        else:
            payload["tool_response"] = structured if structured is not None else block.get("content")
        yield from self._call("post-tool", payload, at)

    def _assistant(self, entry: dict[str, Any], sidechain: bool) -> None:
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        message_id = message.get("id") if isinstance(message, dict) else None
        if not sidechain and (message_id is None or message_id != self._message_id):
            self._message_id, self._answered, self._texts, self._calls_tools = message_id, True, [], False
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
                self._pending[block["id"]] = (block["name"], block.get("input"))
                if not sidechain:
                    self._calls_tools = True
            elif block.get("type") == "text" and isinstance(block.get("text"), str) and not sidechain:
                self._texts.append(block["text"])

    def _close_turn(self) -> Iterator[HookCall]:
        """The Stop hook of a turn that ended with Claude's answer (not interrupted, not mid-tool)."""
        if self._turn_open and not self._interrupted and self._answered and not self._calls_tools:
            payload = {**self._base("Stop"), "prompt_id": self._prompt_id, "stop_hook_active": False,
                       "last_assistant_message": "\n".join(self._texts)}
            yield from self._call("stop", payload, self._last_at)
        self._turn_open = False

    def _end_run(self) -> Iterator[HookCall]:
        yield from self._close_turn()
        if self._run_active:
            self._run_active = False
            payload = {**self._base("SessionEnd"), "prompt_id": self._prompt_id, "reason": "other"}
            yield from self._call("session-end", payload, self._last_at)
