"""Extension points: observer providers and worker services that other distributions add.

A distribution declares them as entry points in its metadata (in its pyproject.toml):

    [project.entry-points."claude_mem.providers"]
    mine = "my_package.observer:make_provider"    # (settings mapping) -> a Provider (observer.provider)

    [project.entry-points."claude_mem.worker_services"]
    mine = "my_package.services:make_service"     # () -> a Service the worker starts and stops

A provider plugin is chosen like a built-in one (`provider = mine`); `--help` and the docs list the
built-in ones only. Every installed worker service runs in every worker. Stdlib only and lazy:
`importlib.metadata` is imported on first use, and the `provider` setting looks here only for a
name that is not built in, so the hooks and the CLI never pay for a scan of installed distributions.
"""

PROVIDERS = "claude_mem.providers"
WORKER_SERVICES = "claude_mem.worker_services"

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy only: the hooks import this module
    from importlib.metadata import EntryPoint


def _found(group: str) -> "dict[str, EntryPoint]":
    from importlib.metadata import entry_points

    return {entry.name.strip().lower(): entry for entry in entry_points(group=group)}


def names(group: str) -> "tuple[str, ...]":
    """The names installed distributions register in `group`, sorted (lower-cased, as settings are)."""
    return tuple(sorted(_found(group)))


def load(group: str, name: str) -> object:
    """What the entry point `name` of `group` refers to; LookupError when no distribution has it."""
    entry = _found(group).get(name)
    if entry is None:
        raise LookupError(f"no installed plugin registers {name!r} in {group}")
    return entry.load()


def load_all(group: str) -> "list[tuple[str, object]]":
    """(name, loaded object or the exception that loading raised) of every entry point in `group`."""
    loaded: list[tuple[str, object]] = []
    for name, entry in sorted(_found(group).items()):
        try:
            loaded.append((name, entry.load()))
        except Exception as exc:  # a broken plugin is reported by the caller, never fatal
            loaded.append((name, exc))
    return loaded
