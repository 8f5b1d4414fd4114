"""Project identity: which project a directory belongs to, and what to call it.

The key is the absolute path of the repository root, found by walking up to the git directory
without running git (a subprocess costs more than the whole hook budget). Worktrees share the
project of their main worktree; a directory outside git is its own project. Stdlib only.
"""

import os


def _read_first_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError:
        return None


def _root_from_gitfile(worktree: str, gitfile: str) -> str:
    """The main repository root for a `.git` *file* (linked worktree or submodule)."""
    line = _read_first_line(gitfile) or ""
    if not line.startswith("gitdir:"):
        return worktree
    gitdir = line[len("gitdir:"):].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.join(worktree, gitdir)
    gitdir = os.path.realpath(gitdir)
    common = _read_first_line(os.path.join(gitdir, "commondir"))
    if not common:
        # A submodule (or a plain separate git dir): the checkout is its own project.
        return worktree
    common_dir = os.path.realpath(common if os.path.isabs(common) else os.path.join(gitdir, common))
    if os.path.basename(common_dir) == ".git":
        return os.path.dirname(common_dir)
    return common_dir  # a bare repository: its directory is the project


def project_root(path: str) -> str:
    """The project key for `path`: the main repository root, or `path` itself outside git."""
    start = os.path.realpath(os.path.abspath(os.path.expanduser(path or ".")))
    current = start
    while True:
        dotgit = os.path.join(current, ".git")
        if os.path.isdir(dotgit):
            return current
        if os.path.isfile(dotgit):
            return _root_from_gitfile(current, dotgit)
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def project_for(cwd: str | None, env: dict[str, str] | None = None) -> str:
    """The project of a Claude Code session: `CLAUDE_PROJECT_DIR` if set, else the payload cwd."""
    environ = os.environ if env is None else env
    return project_root(environ.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd())


def display_names(keys: list[str]) -> dict[str, str]:
    """Short names for project keys: the folder name, with parents added until names are unique."""
    keys = sorted(set(keys))
    depth = {key: 1 for key in keys}
    while True:
        names = {key: _tail(key, depth[key]) for key in keys}
        clashes: dict[str, list[str]] = {}
        for key, name in names.items():
            clashes.setdefault(name, []).append(key)
        grew = False
        for group in clashes.values():
            if len(group) > 1:
                for key in group:
                    if _tail(key, depth[key] + 1) != _tail(key, depth[key]):
                        depth[key] += 1
                        grew = True
        if not grew:
            return names


def _tail(path: str, parts: int) -> str:
    pieces = [piece for piece in path.split(os.sep) if piece]
    if not pieces:
        return path
    return "/".join(pieces[-parts:])


def display_name(key: str, all_keys: list[str]) -> str:
    return display_names([*all_keys, key])[key]
