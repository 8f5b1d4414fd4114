"""A cache file replaced whole, for the short-lived processes that keep one (`patterns`, the status line)."""

import os


def replace_atomically(path: str, data: bytes) -> bool:
    """Write `data` to `path` through a temporary file and a rename, so that readers see the old file or
    the new one, never half of it; the file is its user's alone (0600, in a 0700 folder made if needed).
    False when it could not be written (a read-only data dir keeps what it had)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    return True
