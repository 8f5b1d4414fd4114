"""Where a session really puts text: Read output, Write, Edit (new string, original file,
structuredPatch), Bash command and output, the prompt, the Stop message, a tool failure.

`PLACEMENTS[name] = (hook, build)`: `build(text)` returns the hook payload (without session id and
cwd) that carries `text` in that place."""

from collections.abc import Callable

Build = Callable[[str], dict]


def _patch(text: str) -> list[dict]:
    lines = ["+" + line for line in text.split("\n")]
    return [{"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": len(lines), "lines": lines}]


def _tool(name: str, tool_input: dict, response: object) -> dict:
    return {"hook_event_name": "PostToolUse", "tool_name": name, "tool_input": tool_input, "tool_response": response}


PLACEMENTS: dict[str, tuple[str, Build]] = {
    "read": ("post-tool", lambda t: _tool("Read", {"file_path": "/p/.env"},
                                          {"type": "text", "file": {"filePath": "/p/.env", "content": t}})),
    "write": ("post-tool", lambda t: _tool("Write", {"file_path": "/p/.env", "content": t}, {"type": "create"})),
    "edit-new-string": ("post-tool", lambda t: _tool("Edit", {"file_path": "/p/c.py", "old_string": "x", "new_string": t},
                                                     {"filePath": "/p/c.py"})),
    "edit-original-file": ("post-tool", lambda t: _tool("Edit", {"file_path": "/p/c.py", "old_string": "x", "new_string": "y"},
                                                        {"filePath": "/p/c.py", "originalFile": t})),
    "edit-structured-patch": ("post-tool", lambda t: _tool("Edit", {"file_path": "/p/c.py", "old_string": "", "new_string": "y"},
                                                           {"filePath": "/p/c.py", "structuredPatch": _patch(t)})),
    "bash-command": ("post-tool", lambda t: _tool("Bash", {"command": t, "description": "run"},
                                                  {"stdout": "ok", "stderr": "", "interrupted": False})),
    "bash-output": ("post-tool", lambda t: _tool("Bash", {"command": "cat config"},
                                                 {"stdout": t, "stderr": "", "interrupted": False})),
    "prompt": ("user-prompt", lambda t: {"hook_event_name": "UserPromptSubmit", "prompt": "use this config:\n" + t}),
    "assistant-message": ("stop", lambda t: {"hook_event_name": "Stop", "last_assistant_message": "Configured:\n" + t}),
    "tool-error": ("post-tool", lambda t: {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                                           "tool_input": {"command": "deploy"}, "error": "deploy failed:\n" + t}),
}
