"""Writing the reply contract (the inverse of `parser`), for providers that build replies themselves."""

from __future__ import annotations

from collections.abc import Iterable

from claude_mem.observer.parser import ParsedObservation, ParsedSummary


def esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _items(tag: str, item: str, values: Iterable[str]) -> str:
    inner = "".join(f"<{item}>{esc(v)}</{item}>" for v in values)
    return f"  <{tag}>{inner}</{tag}>\n"


def observation_xml(obs: ParsedObservation) -> str:
    out = "<observation>\n"
    out += f"  <type>{esc(obs.type)}</type>\n  <title>{esc(obs.title)}</title>\n"
    if obs.subtitle:
        out += f"  <subtitle>{esc(obs.subtitle)}</subtitle>\n"
    out += f"  <narrative>{esc(obs.narrative)}</narrative>\n"
    out += _items("facts", "fact", obs.facts) + _items("concepts", "concept", obs.concepts)
    out += _items("files_read", "file", obs.files_read) + _items("files_modified", "file", obs.files_modified)
    return out + "</observation>"


def summary_xml(summary: ParsedSummary) -> str:
    out = "<summary>\n"
    for name in ("request", "investigated", "learned", "completed", "next_steps"):
        out += f"  <{name}>{esc(getattr(summary, name))}</{name}>\n"
    out += _items("files_read", "file", summary.files_read) + _items("files_edited", "file", summary.files_edited)
    return out + f"  <notes>{esc(summary.notes)}</notes>\n</summary>"


def reply_xml(observations: Iterable[ParsedObservation], summary: ParsedSummary | None) -> str:
    """A complete reply; `<skip/>` when there is nothing to say."""
    blocks = [observation_xml(o) for o in observations]
    if summary is not None:
        blocks.append(summary_xml(summary))
    return "\n".join(blocks) if blocks else "<skip/>"
