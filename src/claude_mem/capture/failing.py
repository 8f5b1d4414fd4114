"""The commands that failed and were not fixed since, as a file: the pre-tool hook's pre-filter (issue 31).

The pre-tool hook runs before every Bash call; opening SQLite costs it more than everything else together. So
it first looks for the command's signature (`capture.failure_signature.command_signature`) in
`<data dir>/cache/failing-commands`, one signature a line, and opens the store only on a hit. A post-tool hook
that stores a failure appends its command's signature (`add`); the worker rewrites the file with the signatures
of the failures still unresolved (`rewrite`) whenever that set changes, and at its start. A line lost to a
race costs one note before a retry, never a wrong one: every hit is checked against the store. Stdlib only.
"""

import os

from claude_mem import paths

FILE = "failing-commands"
MAX_BYTES = 4_000_000  # read at most (250,000 signatures); the worker keeps it to the unresolved ones


def path(data_dir: str) -> str:
    return os.path.join(paths.cache_dir(data_dir), FILE)


def add(data_dir: str, signature: str) -> None:
    """Append one signature (a failure was just stored)."""
    if not signature or "\n" in signature:
        return
    os.makedirs(paths.cache_dir(data_dir), mode=0o700, exist_ok=True)
    handle = os.open(path(data_dir), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(handle, signature.encode("ascii", "replace") + b"\n")
    finally:
        os.close(handle)


def contains(data_dir: str, signature: str) -> bool:
    """Whether `signature` may have an unresolved failure (False: certainly not, or no file yet)."""
    if not signature:
        return False
    try:
        with open(path(data_dir), "rb") as handle:
            text = handle.read(MAX_BYTES)
    except OSError:
        return False
    needle = signature.encode("ascii", "replace") + b"\n"
    return text.startswith(needle) or b"\n" + needle in text


def rewrite(data_dir: str, signatures: "list[str]") -> None:
    """Replace the file with `signatures` (the worker: the unresolved failures' commands)."""
    os.makedirs(paths.cache_dir(data_dir), mode=0o700, exist_ok=True)
    target = path(data_dir)
    temporary = f"{target}.{os.getpid()}.tmp"
    with open(temporary, "wb") as handle:
        handle.write(b"".join(signature.encode("ascii", "replace") + b"\n" for signature in signatures
                              if signature and "\n" not in signature))
    os.chmod(temporary, 0o600)
    os.replace(temporary, target)
