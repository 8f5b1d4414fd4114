"""The `offline` observer: no LLM. It answers from the rendered events of each request — the data
the prompt's `<event>` blocks are written from (commands, first error lines, diff lines), never the
prompt's text — in the reply contract, with what the events show: which file changed and how, which
commands ran and their outcome, a failing command that later passed, errors seen — folded into at
most three observations per turn. Routine reads and listings alone produce `<skip/>`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from claude_mem.observer.contract import reply_xml
from claude_mem.observer.events import EDIT_TOOLS, RenderedEvent
from claude_mem.observer.parser import ParsedObservation, ParsedSummary
from claude_mem.observer.provider import REGISTRY, Health, ObserverRequest, Reply, SessionInfo
from claude_mem.store.models import Related

MAX_OBSERVATIONS = 3
ROUTINE = re.compile(
    r"^\s*(ls|ll|pwd|cat|head|tail|less|wc|find|grep|rg|tree|which|echo|stat|file|du|df|env|"
    r"git\s+(status|log|diff|show|branch|remote))\b"
)
CHECK = re.compile(r"\b(test|tests|pytest|unittest|tox|nox|jest|vitest|mocha|lint|ruff|mypy|check|build|make|cargo|go)\b",
                   re.I)
READ_TOOLS = ("Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "NotebookRead")


def _q(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def _cmd(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f"`{text if len(text) <= limit else text[: limit - 1] + '…'}`"


@dataclass
class Command:
    line: str
    description: str
    ok: bool
    detail: str  # first line of the error or output

    @property
    def is_check(self) -> bool:
        return bool(CHECK.search(self.line) or CHECK.search(self.description))

    @property
    def routine(self) -> bool:
        return bool(ROUTINE.match(self.line)) and not self.is_check

    @property
    def outcome(self) -> str:
        if self.is_check:
            return "tests passed" if self.ok and "test" in (self.line + self.description).lower() else (
                "checks passed" if self.ok else "checks failed")
        return f"{_cmd(self.line)} {'succeeded' if self.ok else 'failed'}"


def _command(event: RenderedEvent) -> Command:
    detail = event.error_line or event.output_line
    # A multi-line command (a heredoc, a script) is named by its first line.
    return Command(line=(event.command.splitlines() or [""])[0], description=event.description,
                   ok=event.status not in ("failed", "interrupted"), detail=detail.strip())


def _change(event: RenderedEvent) -> str:
    """A short description of one edit from its diff."""
    if event.status == "created":
        return f"created ({len(event.added)} lines)"
    if len(event.removed) == 1 and len(event.added) == 1:
        return f"{_q(event.removed[0])} → {_q(event.added[0])}"
    return f"+{len(event.added)}/−{len(event.removed)} lines"


@dataclass
class Turn:
    """What the offline observer has seen since the last summary."""

    request: str = ""
    files_read: list[str] = field(default_factory=list)
    files_edited: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    failing: list[Command] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)


def _add(values: list[str], value: str) -> None:
    if value and value not in values:
        values.append(value)


def observe(events: list[RenderedEvent], turn: Turn) -> list[ParsedObservation]:
    """Observations for one batch of events, at most MAX_OBSERVATIONS."""
    edits: dict[str, list[RenderedEvent]] = {}
    commands: list[Command] = []
    errors: list[RenderedEvent] = []
    for event in events:
        if event.kind == "prompt" and not turn.request:
            turn.request = " ".join(event.body.split())[:300]
        if event.kind not in ("tool", "tool_failure"):
            continue
        if event.tool == "Bash":
            commands.append(_command(event))
        elif event.kind == "tool_failure" or event.status == "failed":
            errors.append(event)
        elif event.tool in EDIT_TOOLS and event.file:
            edits.setdefault(event.file, []).append(event)
            _add(turn.files_edited, event.file)
        elif event.tool in READ_TOOLS and event.file:
            _add(turn.files_read, event.file)
    turn.commands += commands
    fixed: list[tuple[Command, Command]] = []  # (failed earlier, passed now)
    for command in commands:
        if not command.ok:
            turn.failing.append(command)
            continue
        cured = [f for f in turn.failing if f.line == command.line or (f.is_check and command.is_check)]
        if cured:
            fixed.append((cured[0], command))
            turn.failing = [f for f in turn.failing if f not in cured]
    observations: list[ParsedObservation] = []
    if edits:
        observations.append(_edit_observation(edits, commands, fixed, turn))
    elif fixed:
        before, after = fixed[0]
        observations.append(ParsedObservation(
            type="bugfix", title=f"{_cmd(after.line)} passes again after failing",
            narrative=f"{_cmd(before.line)} had failed ({before.detail or 'no error text'}); "
                      f"{_cmd(after.line)} then succeeded.",
            facts=tuple(f"{_cmd(c.line)}: {'ok' if c.ok else 'failed'}" for c in commands[:5]),
            concepts=("problem-solution",),
        ))
    failures = [c for c in commands if not c.ok and c in turn.failing]
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more failing commands)" if len(failures) > 1 else ""
        observations.append(ParsedObservation(
            type="discovery", title=f"{_cmd(first.line)} fails: {first.detail[:80] or 'no error text'}",
            narrative=f"Running {_cmd(first.line, 120)} failed{more}. Error: {first.detail or 'none shown'}.",
            facts=tuple(f"{_cmd(c.line)}: {c.detail[:200]}" for c in failures[:5]), concepts=("gotcha",),
        ))
    if not edits and not fixed:
        useful = [c for c in commands if c.ok and not c.routine]
        if useful:
            shown = ", ".join(_cmd(c.line, 40) for c in useful[:3])
            observations.append(ParsedObservation(
                type="change" if not any(c.is_check for c in useful) else "discovery",
                title=f"Ran {shown}: {useful[-1].outcome if len(useful) == 1 else 'all succeeded'}",
                narrative=" ".join(f"{_cmd(c.line, 120)} succeeded"
                                   f"{': ' + c.detail[:160] if c.detail else ''}." for c in useful[:5]),
                facts=tuple(_cmd(c.line, 200) for c in useful[:5]),
            ))
    if errors:
        failure = errors[0]
        detail = failure.error_line
        where = f" on {failure.file}" if failure.file else ""
        observations.append(ParsedObservation(
            type="discovery", title=f"{failure.tool} failed{where}: {detail[:80]}",
            narrative=f"The {failure.tool} tool failed{where}: {detail[:300]}."
                      + (f" {len(errors) - 1} more tool calls failed." if len(errors) > 1 else ""),
            files_read=(failure.file,) if failure.file else (), concepts=("gotcha",),
        ))
    observations = observations[:MAX_OBSERVATIONS]
    turn.titles += [o.title for o in observations]
    return observations


def _edit_observation(edits: dict[str, list[RenderedEvent]], commands: list[Command], fixed: list[tuple[Command, Command]],
                      turn: Turn) -> ParsedObservation:
    files = list(edits)
    created = [f for f in files if all(e.status == "created" for e in edits[f])]
    changes = {f: [_change(e) for e in edits[f] if e.status != "created"] for f in files}
    first = files[0]
    verb = "Created" if first in created else (
        "Created and edited" if any(e.status == "created" for e in edits[first]) else "Edited")
    title = f"{verb} {first}"
    if changes[first]:
        title += f": {changes[first][-1]}"
    if len(files) > 1:
        title += f" (+{len(files) - 1} more file{'s' if len(files) > 2 else ''})"
    checks = [c for c in commands if not c.routine]
    if checks:
        title += f"; {checks[-1].outcome}"
    sentences = []
    for path in files[:6]:
        did = ", then ".join((["created"] if any(e.status == "created" for e in edits[path]) else [])
                             + [f"changed {c}" for c in changes[path]][:3])
        sentences.append(f"{path} was {did}.")
    if len(files) > 6:
        sentences.append(f"{len(files) - 6} more files were edited.")
    for command in checks[-2:]:
        sentences.append(f"Afterwards {_cmd(command.line, 120)}"
                         f"{' (' + command.description + ')' if command.description else ''} "
                         f"{'succeeded' if command.ok else 'failed: ' + (command.detail or 'no error text')}.")
    facts = [f"{path}: {change}" for path in files for change in changes[path]][:8]
    facts += [f"{_cmd(c.line, 200)} {'ok' if c.ok else 'failed'}" for c in checks[-2:]]
    return ParsedObservation(
        type="bugfix" if fixed else ("feature" if len(created) == len(files) else "change"),
        title=title, narrative=" ".join(sentences), facts=tuple(facts),
        concepts=("problem-solution",) if fixed else ("what-changed",),
        files_read=tuple(f for f in turn.files_read if f in files), files_modified=tuple(files),
    )


# A new observation supersedes a listed one only when it is plainly the same fact restated: same type,
# same files, and titles whose words (lower-cased) overlap this much (Jaccard) — a conservative rule.
SAME_TITLE = 0.8


def _words(title: str) -> set[str]:
    return set(re.findall(r"\w+", title.lower()))


def near_identical(a: str, b: str) -> bool:
    """Titles that say the same thing: equal once normalised, or sharing `SAME_TITLE` of their words."""
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and (wa == wb or len(wa & wb) / len(wa | wb) >= SAME_TITLE)


def superseding(observations: list[ParsedObservation], related: Sequence[Related]) -> list[ParsedObservation]:
    """`observations`, each naming the listed observation it supersedes under the conservative rule."""
    taken: set[int] = set()
    out = []
    for obs in observations:
        files = set(obs.files_modified + obs.files_read)
        for old in related:
            if (old.id not in taken and files and old.type == obs.type and set(old.files) == files
                    and near_identical(old.title, obs.title)):
                taken.add(old.id)
                obs = dataclasses.replace(obs, supersedes=old.id)
                break
        out.append(obs)
    return out


def summarise(turn: Turn, last_message: str) -> ParsedSummary:
    investigated = []
    if turn.files_read:
        investigated.append("read " + ", ".join(turn.files_read[:8]))
    routine = [c for c in turn.commands if c.routine]
    if routine:
        investigated.append("ran " + ", ".join(_cmd(c.line, 40) for c in routine[:4]))
    return ParsedSummary(
        request=turn.request or "(not captured)",
        investigated="; ".join(investigated),
        learned="; ".join(t for t in turn.titles if " fails: " in t or " failed" in t),
        completed="; ".join(t for t in turn.titles if " fails: " not in t) or "no files changed",
        next_steps="; ".join(f"{_cmd(c.line)} still fails" for c in turn.failing[:3]) or "none recorded",
        files_read=tuple(turn.files_read[:20]), files_edited=tuple(turn.files_edited[:20]),
        notes=f"Claude's last message: {' '.join(last_message.split())[:300]}" if last_message else "",
    )


class OfflineSession:
    def __init__(self, info: SessionInfo) -> None:
        self.turn = Turn(request=info.user_request.strip()[:300])

    async def send(self, request: ObserverRequest) -> Reply:
        observations = [] if request.summary_only else observe(list(request.events), self.turn)
        observations = superseding(observations, request.related)
        summary = None
        turn_end = request.turn_end
        if turn_end is not None:
            if turn_end.request:
                self.turn.request = " ".join(turn_end.request.split())[:300]
            summary = summarise(self.turn, turn_end.last_assistant_message)
            self.turn = Turn()
        return Reply(text=reply_xml(observations, summary), input_tokens=0, output_tokens=0)

    async def close(self) -> None:
        return None


class OfflineProvider:
    name = "offline"
    takes_system_prompt = False  # it reads no instructions at all

    def __init__(self, settings: Mapping[str, object] | None = None) -> None:
        self.settings = settings or {}

    async def open(self, session_info: SessionInfo) -> OfflineSession:
        return OfflineSession(session_info)

    async def health(self) -> Health:
        return Health(ok=True, reason="offline: observations derived from events without an LLM")

    async def aclose(self) -> None:
        return None


REGISTRY.register("offline", OfflineProvider)
