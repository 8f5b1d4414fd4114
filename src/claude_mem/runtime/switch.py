"""`CLAUDE_MEM`: one switch per Claude Code session, read from the environment (issue 30). Stdlib only.

Claude Code passes its environment to every hook, to our MCP server and to the status line, so
`CLAUDE_MEM=off claude` turns memory off for that session alone:

| value                          | stored (capture) | shown (index, per-prompt memory, MCP tools) |
|--------------------------------|------------------|---------------------------------------------|
| unset, empty, `on`, `1`, `true` | yes            | yes                                         |
| `off`, `0`, `false`, `no`      | no               | no                                          |
| `read`                         | no               | yes                                         |
| `write`                        | yes              | no                                          |
| anything else                  | no               | no (taken as `off`, and said once)          |

A value this module does not know is taken as `off`: a typo must never capture what the user meant
to keep out. The one parser behind the hooks, the MCP server and the status line.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

VARIABLE = "CLAUDE_MEM"
ON, OFF, READ, WRITE = "on", "off", "read", "write"
MODES = (ON, OFF, READ, WRITE)
SPELLINGS = {
    "": ON, "on": ON, "1": ON, "true": ON,
    "off": OFF, "0": OFF, "false": OFF, "no": OFF,
    "read": READ, "write": WRITE,
}


def raw(env: "Mapping[str, str] | None" = None) -> str:
    """The variable as set ("" when unset)."""
    return (os.environ if env is None else env).get(VARIABLE) or ""


def mode(env: "Mapping[str, str] | None" = None) -> str:
    """`on`, `off`, `read` or `write` for this environment; an unknown value is `off`."""
    return SPELLINGS.get(raw(env).strip().lower(), OFF)


def problem(env: "Mapping[str, str] | None" = None) -> "str | None":
    """What is wrong with the variable's value (it is then taken as `off`), or None."""
    value = raw(env)
    if value.strip().lower() in SPELLINGS:
        return None
    shown = value if len(value) <= 40 else value[:40] + "…"
    return (f"{VARIABLE}={shown!r} is not one of on, off, read, write: taken as off "
            "(nothing of this session is stored or shown)")


def captures(chosen: str) -> bool:
    """Whether a session under `chosen` is stored."""
    return chosen in (ON, WRITE)


def shows(chosen: str) -> bool:
    """Whether a session under `chosen` is shown memory (the index, per-prompt memory, the MCP tools)."""
    return chosen in (ON, READ)


def label(env: "Mapping[str, str] | None" = None) -> str:
    """`CLAUDE_MEM=off` as the user set it, for messages (`=off` too for an unknown value, with a note)."""
    chosen = mode(env)
    if problem(env) is not None:
        return f"{VARIABLE}={raw(env).strip()[:40]!r}, an unknown value taken as off"
    return f"{VARIABLE}={raw(env).strip()}" if chosen != ON else f"{VARIABLE}=on"


def off_message(env: "Mapping[str, str] | None" = None) -> str:
    """What a tool or surface says instead of memory when the session is not shown any (`off`, `write`)."""
    return f"memory is off for this session ({label(env)})"
