"""The post-tool hook's work, phase by phase, in CPU milliseconds of its own process.

Run as `python -I -S bench/hook_phases.py SRC PAYLOAD` (the flags hooks.json gives the hook): the
same calls the hook makes for a post-tool event when no worker takes it over, in their order, with `time.process_time()`
(user + system) read between them; prints one JSON object. `SRC` is the `src` directory of the
checkout to measure, so a checkout from before a change is measured by the same probe; it ends as
that checkout's `scripts/hook.py` does (`os._exit` or a normal exit). Interpreter start-up and exit
are not seen from inside: `bench_hooks.phases` takes them from the rusage of this
process and of a bare `python -I -S -c pass`.
"""

import os
import sys
import time

clock = time.process_time
started = clock()
sys.path.insert(0, sys.argv[1])
found: dict = {}


def lap(name: str, since: float) -> float:
    now = clock()
    found[name] = round((now - since) * 1000, 3)
    return now


mark = started
from claude_mem import privacy  # noqa: E402, F401 - what is imported is what is measured (redaction's rules)
from claude_mem.hooks import runner  # noqa: E402

mark = lap("import hook modules (runner, settings, capture, privacy)", mark)
from claude_mem import settings, store  # noqa: E402
from claude_mem.capture import payload  # noqa: E402
from claude_mem.store.capture import apply_record  # noqa: E402

mark = lap("import store (sqlite3)", mark)
try:
    from claude_mem.fastpath import patterns
except ImportError:  # a checkout from before the compiled-pattern cache
    patterns = None  # type: ignore[assignment]
env = dict(os.environ)
with open(sys.argv[2], "rb") as handle:
    raw = handle.read()
data_dir = settings.data_dir()
if patterns is not None:
    patterns.use_cache(patterns.cache_file(os.path.join(data_dir, "cache")))
incoming = payload.decode(raw)
config = settings.load(data_dir)
mark = lap("read + parse payload, settings", mark)
record = payload.capture_record("post-tool", incoming, config, env)
mark = lap("capture record (redaction)", mark)
fingerprint = getattr(runner, "_fingerprint", None)  # a checkout from before store/intake.py
if fingerprint is None:
    from claude_mem.store.intake import _fingerprint as fingerprint
fingerprint(data_dir, "post-tool", record, incoming, env)
mark = lap("file fingerprints", mark)
conn = store.open(data_dir, busy_timeout_ms=store.HOOK_BUSY_MS)
mark = lap("open database", mark)
with store.transaction(conn):
    apply_record(conn, record)
conn.close()
mark = lap("insert + commit", mark)
if patterns is not None:
    patterns.save()
mark = lap("save compiled patterns", mark)
found["in process"] = round((clock() - started) * 1000, 3)
sys.stdout.write(repr(found) + "\n")
sys.stdout.flush()
with open(os.path.join(os.path.dirname(sys.argv[1]), "scripts", "hook.py"), encoding="utf-8") as handle:
    skips_teardown = "os._exit(" in handle.read()
if skips_teardown:  # the checkout's launcher ends this way (after its capture): so does its probe
    os._exit(0)
