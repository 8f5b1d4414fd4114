"""A whole file or none: written to a hidden temp name, fsynced, renamed; the temp removed on failure.

What the spool, the quarantine and the overflow (`capture.trouble`) write with, so that a full disk never
leaves an empty or half-written file behind. Stdlib only.
"""

import os
import time

_sequence = 0


def write_file(directory: str, name: str, data: bytes) -> str:
    """`data` as `directory/name`, durably and whole: a hidden temp file, fsync, rename; nothing left on failure."""
    global _sequence
    _sequence += 1
    temp = os.path.join(directory, f".{os.getpid()}-{_sequence}-{time.time_ns()}.tmp")
    final = os.path.join(directory, name)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, final)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return final
