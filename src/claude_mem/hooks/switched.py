"""The hooks of a session whose `CLAUDE_MEM` switch (`runtime.switch`) is not `on`. Stdlib only.

- `off` (or an unknown value): nothing is opened, written or shown; the session-start hook prints
  only a `systemMessage` telling the user, the others print nothing.
- `read`: the session-start index and per-prompt memory are shown from a read-only connection and
  nothing is written: no session, prompt, event or `shown` row, no quarantine copy, no worker started.
  Per-prompt memory cannot know what this session was shown, so it leaves out what its index lists
  (the newest `context_observations` the index is drawn from).
- `write`: captured as usual (the runner's own path); `write_output` is what the two hooks that
  would show memory print instead.
"""

from __future__ import annotations

from claude_mem import paths, settings
from claude_mem.capture import payload
from claude_mem.fastpath import patterns
from claude_mem.runtime import switch

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any


def off_output(hook: str, env: dict[str, Any]) -> dict[str, Any] | None:
    """What a hook prints when the session is off: the user's one line at session start, else nothing."""
    if hook != "session-start":
        return None
    return {"systemMessage": f"claude-mem: memory is off for this session ({switch.label(env)}):"
                             " nothing is stored or shown"}


def write_output(hook: str, env: dict[str, Any]) -> dict[str, Any] | None:
    """What a hook prints under `write`: a line for the user at session start, no context anywhere."""
    if hook != "session-start":
        return None
    return {"systemMessage": f"claude-mem: this session is recorded but shown no memory ({switch.label(env)})"}


def read_output(hook: str, raw: bytes, env: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """(what the hook prints, its stderr lines) under `read`: memory shown, nothing written."""
    if hook not in ("session-start", "user-prompt"):
        return None, []
    data_dir = settings.data_dir()
    patterns.use_cache(patterns.cache_file(paths.cache_dir(data_dir)))  # read: the cache is written only by `save`
    try:
        incoming = payload.decode(raw)
        config = settings.load(data_dir)
        record = payload.capture_record(hook, incoming, config, env)  # excluded projects, private prompts
    except payload.Unregistered:
        return None, []
    except payload.BadInput as exc:
        return None, [f"ignored bad input: {exc}"]
    if record["private"]:
        return None, []
    from claude_mem import store
    from claude_mem.store import projects

    try:
        reader = store.open(data_dir, readonly=True, busy_timeout_ms=store.HOOK_BUSY_MS)
    except store.NoDatabase:
        reader = None
    try:
        key = projects.resolve(reader, str(record["project"]), record.get("remote"))
        session = str(record["content_session_id"])
        if hook == "session-start":
            from claude_mem.recall import context

            source = incoming.get("source")
            result = context.for_session(reader, key, source if isinstance(source, str) else "startup", session,
                                         config, data_dir)
            message = f"{result['system_message']}; read-only session ({switch.label(env)}): nothing of it is stored"
            if result["empty"]:  # its text would promise that this session is being recorded
                return {"systemMessage": message}, []
            return {**context.hook_output(result), "systemMessage": message}, []
        if not config["prompt_context"] or reader is None:
            return None, []
        from claude_mem.recall.prompt_context import user_prompt
        from claude_mem.store import context as store_context

        # what the session-start index draws its rows from (it lists these, or the newest of them that fit
        # its budget): one indexed query, where building the index itself would cost this hook ~1/4 more
        listed = {int(row[0]) for row in store_context.index_rows(
            reader, key, None, max(int(config.get("context_observations") or 0), 0))}
        related = user_prompt({"prompt": record["payload"].get("prompt"), "cwd": str(record["cwd"] or ""),
                               "session_id": "", "project": key}, data_dir, config, env, None, exclude=listed)
        return related, []
    finally:
        if reader is not None:
            reader.close()
