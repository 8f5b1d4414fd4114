"""The layers of DESIGN §2a, kept honest: no upward or circular import, no SQL outside `store/`,
nothing but the standard library on the hook path.

Modelled on basic-memory's `test_architecture_boundaries.py`: the source is parsed (never
imported), so a violation is found wherever it hides, including imports inside functions.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Iterator
from functools import cache

import pytest

from conftest import REPO

SRC = os.path.join(REPO, "src")
PACKAGE = "claude_mem"

# Rank of each top-level part: a module may import its own part, or a part of LOWER rank; two
# different parts of the same rank never import each other.
RANKS = {
    # domain facts, settings, project identity, privacy: the ground everything stands on
    "fastpath": -1,  # JSON and compiled regular expressions at a fraction of their start-up cost
    "": 0, "domain": 0, "paths": 0, "project": 0, "privacy": 0,
    "plugins": 0,  # entry points of other distributions (providers, worker services), looked up lazily
    "settings": 0.5,  # validates `provider` against domain.PROVIDERS

    "viewer": 1,  # static files and their path only
    "capture": 1,  # stdlib: payload -> redacted capture record; log, quarantine, spool files
    "runtime": 2,  # stdlib: worker discovery, launch, autostart, control
    "store": 3,  # the only SQL
    "index": 4,  # search behind one interface
    "observer": 5, "recall": 5,
    "importers": 5.5,  # foreign history through capture into the store; the dry run renders as the observer does
    "team": 5.5,  # replication of derived rows to a shared PostgreSQL (DESIGN §12)
    "worker": 6,
    "hooks": 7, "mcp_server": 7,
    "cli": 8,
    "entry": 9, "__main__": 10,
}
STDLIB_PARTS = ("fastpath", "domain", "paths", "plugins", "settings", "project", "privacy", "capture", "runtime")
HOOK_ENTRY = f"{PACKAGE}.hooks.runner"
# Costly imports that must not run when the hook modules load (DESIGN §4); deferred imports of
# them inside rarely taken branches are fine.
HOOK_HEAVY = {"dataclasses", "typing", "logging", "pathlib", "uuid", "subprocess", "inspect", "asyncio", "hashlib"}
# Modules the hook path loads only in a rare branch (spawning a worker needs `subprocess`).
HOOK_RARE = {f"{PACKAGE}.runtime.launch",
             # restoring a lost database from its backup, once, before anything writes (store.db.restore_first)
             f"{PACKAGE}.store.backup", f"{PACKAGE}.store.salvage"}
SQL_START = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|VACUUM|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|"
    r"WITH|REPLACE|ANALYZE|REINDEX)\s"
)
SQL_ANYWHERE = re.compile(r"\bSELECT\b.*\bFROM\b|\bINSERT INTO\b|\bDELETE FROM\b|\bUPDATE\b\s+\w+\s+SET\b", re.S)
SQL_CALLS = {"execute", "executemany", "executescript"}


def module_files() -> Iterator[tuple[str, str]]:
    """(dotted module name, path) of every module of the package."""
    root = os.path.join(SRC, PACKAGE)
    for directory, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, SRC)[:-3].split(os.sep)
            if relative[-1] == "__init__":
                relative = relative[:-1]
            yield ".".join(relative), path


@cache
def tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), path)


MODULES = dict(module_files())


def is_package(module: str) -> bool:
    return MODULES.get(module, "").endswith("__init__.py")


def imports(module: str, top_level_only: bool = False) -> set[str]:
    """Absolute names imported by `module` (its functions' deferred imports too, unless `top_level_only`)."""
    found: set[str] = set()
    body = tree(MODULES[module])
    nodes = body.body if top_level_only else ast.walk(body)
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package(module) else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                candidate = f"{prefix}.{alias.name}"
                found.add(candidate if candidate in MODULES else prefix)
    return found


def part(module: str) -> str:
    """The top-level part a module belongs to (`` for the package itself)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def internal(name: str) -> str | None:
    """The module of ours that an imported name refers to, if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def test_every_part_has_a_rank() -> None:
    unranked = sorted({part(module) for module in MODULES} - set(RANKS))
    assert not unranked, f"give these parts a rank in RANKS: {unranked}"


def test_no_upward_or_sideways_import() -> None:
    problems = []
    for module in MODULES:
        mine = part(module)
        for name in imports(module):
            target = internal(name) if name.startswith(PACKAGE) else None
            if target is None or part(target) == mine:
                continue
            theirs = part(target)
            if RANKS[theirs] >= RANKS[mine]:
                problems.append(f"{module} ({mine or 'root'}, rank {RANKS[mine]}) imports {target} "
                                f"({theirs or 'root'}, rank {RANKS[theirs]})")
    assert not problems, "imports must point down the layers:\n" + "\n".join(sorted(problems))


def test_no_import_cycle() -> None:
    graph = {module: {t for name in imports(module) if name.startswith(PACKAGE)
                      for t in [internal(name)] if t and t != module} for module in MODULES}
    # A package's __init__ is imported with any of its modules; that edge is not a cycle of code.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, "circular imports:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def sql_texts(path: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if SQL_START.match(text) or SQL_ANYWHERE.search(text):
                yield node.lineno, text.strip()[:60]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            yield node.lineno, f".{node.func.attr}(…)"


def test_sql_only_in_the_store() -> None:
    found = [f"{os.path.relpath(path, SRC)}:{line}: {text!r}"
             for module, path in MODULES.items() if part(module) != "store"
             for line, text in sql_texts(path)]
    assert not found, "SQL outside store/ (move it into a repository function):\n" + "\n".join(found)


def test_sql_detector_finds_sql() -> None:
    """The detector itself: it must flag what it is meant to flag, and leave prose alone."""
    sample = ast.parse('x = "SELECT id FROM t"\ny = "  UPDATE t SET a = 1"\nz = "Select the best one"\nconn.execute(q)')
    hits = [node for node in ast.walk(sample) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (SQL_START.match(node.value) or SQL_ANYWHERE.search(node.value))]
    assert len(hits) == 2
    calls = [n for n in ast.walk(sample) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in SQL_CALLS]
    assert len(calls) == 1


def is_stdlib(name: str) -> bool:
    top = name.split(".")[0]
    # `_sha2` (3.12) / `_sha256` (3.11): private builtins tried in turn, so not all exist in one version.
    return top in sys.stdlib_module_names or top.startswith("_")


def closure(start: str) -> set[str]:
    """Every module of ours reachable from `start` through any import."""
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in imports(module):
            target = internal(name) if name.startswith(PACKAGE) else None
            if target:
                todo.append(target)
                parent = target.rpartition(".")[0]
                while parent:  # importing a.b.c runs a/__init__ and a/b/__init__
                    todo.append(parent)
                    parent = parent.rpartition(".")[0]
    return seen


def test_hook_path_is_stdlib_only() -> None:
    reachable = closure(HOOK_ENTRY)
    foreign = sorted(f"{module} imports {name}" for module in reachable for name in imports(module)
                     if not name.startswith(PACKAGE) and not is_stdlib(name))
    assert not foreign, "non-stdlib imports reachable from the hook entry point:\n" + "\n".join(foreign)


def test_hook_modules_load_nothing_heavy() -> None:
    loaded = [module for module in closure(HOOK_ENTRY) if module not in HOOK_RARE]
    heavy = sorted(f"{module} imports {name} at load time" for module in loaded
                   for name in imports(module, top_level_only=True) if name.split(".")[0] in HOOK_HEAVY)
    assert not heavy, "\n".join(heavy)


@pytest.mark.parametrize("stdlib_part", STDLIB_PARTS)
def test_stdlib_parts_import_no_third_party_at_load(stdlib_part: str) -> None:
    foreign = sorted(f"{module} imports {name}" for module in MODULES if part(module) == stdlib_part
                     for name in imports(module, top_level_only=True)
                     if not name.startswith(PACKAGE) and not is_stdlib(name))
    assert not foreign, "\n".join(foreign)


def names_sqlite(path: str) -> list[int]:
    """Lines where a module imports or names `sqlite3`."""
    lines = []
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "sqlite3" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "sqlite3":
            lines.append(node.lineno)
    return lines


def test_only_the_store_names_sqlite() -> None:
    """Surfaces hold a `store.Store` from `store.open` and catch `store.DatabaseError`: the driver is the
    store's business (DESIGN §2a), so a second way in cannot grow back."""
    found = [f"{os.path.relpath(path, SRC)}:{line}" for module, path in MODULES.items() if part(module) != "store"
             for line in names_sqlite(path)]
    assert not found, "sqlite3 named outside store/ (use store.open, Store, DatabaseError):\n" + "\n".join(found)


def opens_the_database(path: str) -> list[int]:
    """Lines that open the database some other way than `store.open`: `db.connect(…)`,
    `db.connect_readonly(…)`, or importing those from `claude_mem.store.db`."""
    lines = []
    for node in ast.walk(tree(path)):
        if (isinstance(node, ast.Attribute) and node.attr in ("connect", "connect_readonly")
                and isinstance(node.value, ast.Name) and node.value.id == "db"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == f"{PACKAGE}.store.db":
            lines.append(node.lineno)
    return lines


def test_one_way_into_the_store() -> None:
    found = [f"{os.path.relpath(path, SRC)}:{line}" for module, path in MODULES.items() if part(module) != "store"
             for line in opens_the_database(path)]
    assert not found, "open the database with store.open(data_dir):\n" + "\n".join(found)


# Files that may spell the observation's columns, and why: its migrations are literal SQL by design
# (DESIGN §2a), and the original claude-mem's schema is a foreign one that happens to share names.
SPELLS_COLUMNS = {
    "store/migrations.py": "literal SQL, never built from constants other code imports",
    "store/foreign.py": "the original claude-mem's tables, not ours",
}
OBSERVATION_WORDS = ("type", "title", "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified")
# The names no other table has: a string or a tuple of strings naming most of them spells the list.
DISTINCT_WORDS = {"subtitle", "narrative", "facts", "concepts", "files_read", "files_modified"}


def docstrings(module: ast.Module) -> set[int]:
    """ids of the docstring nodes of a module, its classes and functions (prose, not column lists)."""
    found = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match)


def spells_observation_columns(path: str) -> list[int]:
    """Lines of simple statements whose strings (SQL text, tuples of names, dict keys, call arguments)
    name most of the observation's columns."""
    module = tree(path)
    prose = docstrings(module)
    lines = []
    for statement in ast.walk(module):
        if not isinstance(statement, ast.stmt) or isinstance(statement, COMPOUND):
            continue
        words: set[str] = set()
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
                words.update(re.findall(r"[a-z_]+", node.value))
        if len(words & DISTINCT_WORDS) >= 5:
            lines.append(statement.lineno)
    return lines


def test_the_observation_columns_are_spelled_once() -> None:
    """`store/rows.py` types the row once; every reader, writer, exporter, importer and codec derives its
    column list from it, so a new column is one change."""
    from claude_mem.store.rows import OBSERVATION_CONTENT

    assert tuple(OBSERVATION_CONTENT) == OBSERVATION_WORDS
    spelled = [f"{os.path.relpath(path, os.path.join(SRC, PACKAGE))}:{line}" for path in MODULES.values()
               for line in spells_observation_columns(path)
               if os.path.relpath(path, os.path.join(SRC, PACKAGE)) not in SPELLS_COLUMNS]
    assert spelled == [], "derive the observation's columns from claude_mem.store.rows:\n" + "\n".join(spelled)


def test_the_column_detector_finds_lists() -> None:
    sample = ast.parse('"""title, subtitle, narrative, facts, concepts, files_read"""\n'
                       'a = ("subtitle", "narrative", "facts", "concepts", "files_read")\n'
                       'b = "SELECT subtitle, narrative, facts, concepts, files_modified FROM observations"\n'
                       'c = "o.subtitle, o.narrative"\n')
    tree.cache_clear()
    path = os.path.join(os.path.dirname(__file__), "fixtures", "_columns_sample.py")
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(ast.unparse(sample))
        assert spells_observation_columns(path) == [2, 3]
    finally:
        os.unlink(path)
        tree.cache_clear()
