"""Regular expressions compiled once per machine, not once per process.

`re.compile` parses a pattern and turns it into the regex engine's code in Python, ~0.3 ms a pattern;
redacting a 100 KB tool output needs ~60 of them, and importing `re` itself costs ~6 ms. A hook
lives for one event, so it would pay both every time. Here the engine's code of every pattern
compiled is kept in one cache file (`use_cache`, in the data dir, named after the interpreter and
the engine's version), and a later process builds the pattern from it with `_sre.compile` — what
`re.compile` ends with — without importing `re` at all.

Nothing is trusted blindly: a pattern goes into the cache only when the object built from its
code equals (same flags, same code) what `re.compile` returned, and an entry that fails to build
is compiled again. The file is the user's own (0600 in a 0700 data dir), like the database.
"""

import marshal
import os
import sys

from claude_mem.fastpath import files

try:
    import _sre  # type: ignore[import-not-found]  # no stubs: the engine `re.compile` hands its code to
except ImportError:  # not CPython: `re` does it all, no cache
    _sre = None

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# pattern -> (flags, code as bytes, groups, groupindex, indexgroup): the arguments of `_sre.compile`.
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
MAX_ENTRIES = 2000  # past this (patterns of many releases), the cache starts over

_compiled: "dict[str, re.Pattern[str]]" = {}
_cache_path: str | None = None
_loaded: dict[str, Entry] | None = None  # the cache file's entries, read on the first miss
_fresh: dict[str, Entry] = {}  # compiled by this process, not yet in the file
_VERSION = f"{sys.implementation.cache_tag}-{getattr(_sre, 'MAGIC', 0)}-{getattr(_sre, 'CODESIZE', 0)}"


def cache_file(directory: str) -> str:
    """The cache file in `directory` for this interpreter (the engine's code changes between versions)."""
    return os.path.join(directory, f"patterns-{_VERSION}.marshal")


def use_cache(path: str | None) -> None:
    """Read compiled patterns from `path` (on the first pattern this process needs) and `save` there."""
    global _cache_path, _loaded
    if path != _cache_path:
        _cache_path, _loaded = path, None


def regex(pattern: str) -> "re.Pattern[str]":
    """`re.compile(pattern)`, from the cache when it holds the pattern."""
    found = _compiled.get(pattern)
    if found is None:
        found = _compiled[pattern] = _from_cache(pattern) or _compile(pattern)
    return found


def compiled_count() -> int:
    """How many patterns this process has built (from the cache or compiled)."""
    return len(_compiled)


def _entries() -> dict[str, Entry]:
    global _loaded
    if _loaded is None:
        _loaded = {}
        if _cache_path is not None and getattr(_sre, "CODESIZE", 0) == 4:  # code read back as 32-bit words
            try:
                with open(_cache_path, "rb") as handle:
                    data = marshal.loads(handle.read())
                if isinstance(data, dict):
                    _loaded = data
            except (OSError, EOFError, ValueError, TypeError):
                pass  # no cache yet, or a damaged one: compile, and `save` writes a good one
    return _loaded


def _from_cache(pattern: str) -> "re.Pattern[str] | None":
    entry = _entries().get(pattern) if _cache_path is not None else None
    if entry is None:
        return None
    try:
        return _build(pattern, entry)
    except Exception:  # noqa: BLE001 - a damaged entry: compile the pattern instead
        return None


def _compile(pattern: str) -> "re.Pattern[str]":
    import re

    compiled = re.compile(pattern)
    if getattr(_sre, "CODESIZE", 0) == 4 and _cache_path is not None:
        try:
            entry = _entry(pattern)
            if _build(pattern, entry) == compiled:
                _fresh[pattern] = entry
        except Exception:  # noqa: BLE001 - `re`'s internals differ in this version: no cache, same patterns
            pass
    return compiled


def _entry(pattern: str) -> Entry:
    """The arguments `re._compiler.compile` hands `_sre.compile` for `pattern` (flags 0)."""
    from array import array
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, 0)
    code = _compiler._code(parsed, 0)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return parsed.state.flags, array("I", code).tobytes(), parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _build(pattern: str, entry: Entry) -> "re.Pattern[str]":
    flags, code, groups, groupindex, indexgroup = entry
    built: re.Pattern[str] = _sre.compile(pattern, flags, list(memoryview(code).cast("I")), groups, groupindex,
                                            indexgroup)
    return built


def save() -> bool:
    """Write the patterns this process compiled into the cache file (with the ones already there);
    False when there was nothing new or the file could not be written."""
    if not _fresh or _cache_path is None:
        return False
    entries = dict(_entries()) if len(_entries()) < MAX_ENTRIES else {}
    entries.update(_fresh)
    if not files.replace_atomically(_cache_path, marshal.dumps(entries)):
        return False
    global _loaded
    _loaded = entries
    _fresh.clear()
    return True
