"""The hook's lean stand-ins give exactly what the standard library gives (`claude_mem.fastpath`):
JSON through `_json` equals `json`, a pattern built from the compiled-pattern cache equals
`re.compile`'s, and `privacy.encoded.unquote` equals `urllib.parse.unquote`."""

import json
import os
import random
import re
import subprocess
import sys
from urllib.parse import unquote as urllib_unquote

import pytest

from claude_mem.fastpath import jsontext, patterns
from claude_mem.privacy.encoded import unquote
from conftest import FIXTURES, REPO

VALUES = [
    {"a": [1, 2.5, None, True, False, "é\u2028\ud800x\x00\x1f\"\\", {"z": 1, "b": float("inf")}]},
    "text", 1, -0.0, 1e300, 10**30, [], {}, [float("nan")], {"ключ": "значение", "emoji": "🙂"},
    {2: "an int key", "x": 1},  # sort_keys cannot order these: json's TypeError
    {"nested": [[[[{"deep": "x"}]]]]},
]
TEXTS = ['{"a": 1}', " [1, 2] ", '\n{"x": "\\ud800"}\t', "1", '"s"', "NaN", "[Infinity, -Infinity]", '{"a":1}x',
         "", " ", '{"a":', '{"a": 1, "a": 2}', "1.5e3", "-0", "[1,]", "[" * 100_000, '"\\u00e9\\n"',
         b'{"a": "\xc3\xa9"}', b"\xef\xbb\xbf{}", "\ufeff{}", b"\x00{", b'  {"a":1}  ', b"\xff", b'"\x00"',
         '{"a": "x" 1}', "[1] [2]", '"unterminated']


def outcome(function, *args, **kwargs):
    try:
        return "value", repr(function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the very error is what is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("sort_keys", [True, False])
def test_dumps_is_json_dumps(ensure_ascii, sort_keys):
    for value in VALUES:
        assert outcome(jsontext.dumps, value, ensure_ascii=ensure_ascii, sort_keys=sort_keys) == \
            outcome(json.dumps, value, ensure_ascii=ensure_ascii, sort_keys=sort_keys), value


def test_loads_is_json_loads():
    for text in TEXTS:
        assert outcome(jsontext.loads, text) == outcome(json.loads, text), text


def test_every_recorded_payload_reads_and_writes_as_with_json():
    found = 0
    for directory, _dirs, names in os.walk(os.path.join(FIXTURES, "hook-payloads")):
        for name in names:
            if name.endswith(".json"):
                with open(os.path.join(directory, name), "rb") as handle:
                    raw = handle.read()
                value = jsontext.loads(raw)
                assert value == json.loads(raw)
                assert jsontext.dumps(value, ensure_ascii=False, sort_keys=True) == \
                    json.dumps(value, ensure_ascii=False, sort_keys=True)
                found += 1
    assert found >= 30


def test_unquote_is_urllib_unquote():
    pieces = ["%", "%4", "%41", "%e2%82%ac", "%E2%82", "%zz", "%%", "a", "+", "é", "€", "\x00", "%C3", "%a9",
              "%fF", " ", "%2", "\udcff", "%80", "%ff%fe", "%0 ", "%-1"]
    draw = random.Random(27)
    for _ in range(20_000):
        text = "".join(draw.choice(pieces) for _ in range(draw.randrange(0, 12)))
        assert unquote(text) == urllib_unquote(text), text


FILL = """
import sys
sys.path[:0] = [sys.argv[1], "."]
from claude_mem import privacy
from claude_mem.fastpath import patterns
from tests.secret_corpus import LOOKALIKES, SECRETS
patterns.use_cache(sys.argv[2])
for _name, text, _secret in SECRETS:
    privacy.clean(text)
for text in LOOKALIKES:
    privacy.clean(text)
print(patterns.compiled_count(), patterns.save())
"""

READ = """
import sys
sys.path.insert(0, sys.argv[1])
from claude_mem.fastpath import patterns
patterns.use_cache(sys.argv[2])
names = list(patterns._entries())
built = [patterns.regex(name) for name in names]
before = "re" in sys.modules
import json, re
same = sum(1 for name, pattern in zip(names, built) if pattern == re.compile(name))
print(json.dumps({"entries": len(names), "same": same, "re_before": before}))
"""


def run(script: str, *args: str) -> str:
    result = subprocess.run([sys.executable, "-I", "-S", "-c", script, os.path.join(REPO, "src"), *args],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": REPO},
                            cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_patterns_from_the_cache_equal_re_compile(tmp_path):
    """Every pattern redaction used on the tests' corpus, built in a fresh process from the cache
    without `re`, is the very pattern `re.compile` makes (same flags, same engine code)."""
    cache = str(tmp_path / "cache" / "patterns.marshal")
    count, saved = run(FILL, cache).split()
    assert saved == "True" and int(count) >= 100
    found = json.loads(run(READ, cache))
    assert found["entries"] == int(count)
    assert found["same"] == found["entries"]
    assert found["re_before"] is False


def test_a_damaged_cache_costs_only_time(tmp_path):
    cache = tmp_path / "patterns.marshal"
    cache.write_bytes(b"\x00not marshal")
    patterns.use_cache(str(cache))
    try:
        assert patterns._entries() == {}
        pattern = r"(?i)damaged-cache-(?P<n>\d+)"
        assert patterns.regex(pattern) == re.compile(pattern)
        assert patterns.save()
        patterns.use_cache(str(tmp_path / "other"))
        patterns.use_cache(str(cache))
        assert patterns._from_cache(pattern) == re.compile(pattern)
        # A cache entry whose code the engine refuses is compiled again, not trusted.
        entries = patterns._entries()
        flags, code, groups, groupindex, indexgroup = entries[pattern]
        entries["(?:broken)"] = (flags, code[:8], groups, groupindex, indexgroup)
        assert patterns._from_cache("(?:broken)") is None
    finally:
        patterns.use_cache(None)


@pytest.mark.parametrize("name", ["plain", "with space", "100%", "what?", "hash#tag", "%3f literal", "ünïcode ✓"])
def test_a_read_only_connection_opens_any_path(tmp_path, name):
    """`connect_readonly` builds its `file:` URI without urllib: every character a path may hold reaches
    SQLite as written, and a path starting `//` stays a path."""
    import sqlite3

    from claude_mem.store import db

    folder = tmp_path / name
    folder.mkdir()
    for path in (str(folder / "x.db"), "/" + str(folder / "y.db")):  # `//tmp/...` is the same file on Linux
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS t (v)")
            conn.execute("INSERT INTO t VALUES (?)", (name,))
        conn.close()
        reader = db.connect_readonly(path)
        assert reader is not None
        with reader:
            assert reader.execute("SELECT v FROM t").fetchall()[-1] == (name,)
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                reader.execute("INSERT INTO t VALUES (1)")
