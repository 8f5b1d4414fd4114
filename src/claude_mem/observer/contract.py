"""Writing the reply contract (the inverse of `parser`), for providers that build replies themselves."""

from __future__ import annotations

from collections.abc import Iterable

from claude_mem.observer.parser import LIST_ITEM, OBSERVATION_FIELDS, SUMMARY_FIELDS, ParsedObservation, ParsedSummary


def esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _items(tag: str, item: str, values: Iterable[str]) -> str:
    inner = "".join(f"<{item}>{esc(v)}</{item}>" for v in values)
    return f"  <{tag}>{inner}</{tag}>\n"


def _block(kind: str, parsed: ParsedObservation | ParsedSummary, fields: tuple[str, ...]) -> str:
    """`<kind>` with one tag per field in contract order; an empty optional text (a subtitle) is left out."""
    out = f"<{kind}>\n"
    for name in fields:
        value = getattr(parsed, name)
        if name in LIST_ITEM:
            out += _items(name, LIST_ITEM[name], value)
        elif value or name != "subtitle":
            out += f"  <{name}>{esc(value)}</{name}>\n"
    return out + f"</{kind}>"


def observation_xml(obs: ParsedObservation) -> str:
    block = _block("observation", obs, OBSERVATION_FIELDS)
    if obs.supersedes is not None:
        block = block.removesuffix("</observation>") + f"  <supersedes>{obs.supersedes}</supersedes>\n</observation>"
    return block


def summary_xml(summary: ParsedSummary) -> str:
    return _block("summary", summary, SUMMARY_FIELDS)


def reply_xml(observations: Iterable[ParsedObservation], summary: ParsedSummary | None) -> str:
    """A complete reply; `<skip/>` when there is nothing to say."""
    blocks = [observation_xml(o) for o in observations]
    if summary is not None:
        blocks.append(summary_xml(summary))
    return "\n".join(blocks) if blocks else "<skip/>"
