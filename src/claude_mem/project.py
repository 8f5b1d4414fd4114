"""Project identity: which project a directory belongs to, and what to call it.

The key is the absolute path of the repository root, found by walking up to the git directory
without running git (a subprocess costs more than the whole hook budget). Worktrees share the
project of their main worktree; a directory outside git is its own project. Beside the root, the
repository's normalised remote URL (read from its git config file) lets the store recognise a moved
or re-cloned checkout as the project it already knows (`store.projects`). Stdlib only.
"""

import os

from claude_mem.fastpath.patterns import regex


def _read_first_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError:
        return None


def _locate_from_gitfile(worktree: str, gitfile: str) -> tuple[str, str | None]:
    """(project root, git dir holding its config) for a `.git` *file* (linked worktree or submodule)."""
    line = _read_first_line(gitfile) or ""
    if not line.startswith("gitdir:"):
        return worktree, None
    gitdir = line[len("gitdir:"):].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.join(worktree, gitdir)
    gitdir = os.path.realpath(gitdir)
    common = _read_first_line(os.path.join(gitdir, "commondir"))
    if not common:
        # A submodule (or a plain separate git dir): the checkout is its own project.
        return worktree, gitdir
    common_dir = os.path.realpath(common if os.path.isabs(common) else os.path.join(gitdir, common))
    if os.path.basename(common_dir) == ".git":
        return os.path.dirname(common_dir), common_dir
    return common_dir, common_dir  # a bare repository: its directory is the project


def locate(path: str) -> tuple[str, str | None]:
    """(project root, the git directory whose `config` names its remotes, or None outside git)."""
    start = os.path.realpath(os.path.abspath(os.path.expanduser(path or ".")))
    current = start
    while True:
        dotgit = os.path.join(current, ".git")
        if os.path.isdir(dotgit):
            return current, dotgit
        if os.path.isfile(dotgit):
            return _locate_from_gitfile(current, dotgit)
        parent = os.path.dirname(current)
        if parent == current:
            return start, None
        current = parent


def project_root(path: str) -> str:
    """The project key for `path`: the main repository root, or `path` itself outside git."""
    return locate(path)[0]


# A git config is a few hundred bytes; reading more than this is never needed to find a remote.
CONFIG_READ_LIMIT = 256 * 1024
_SECTION = r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]'
_SCP_LIKE = r"^(?:[^@/\s]+@)?([A-Za-z0-9.-]+):(?!//)(.+)$"


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, a trailing comment dropped (enough for URLs)."""
    value, quoted, out = raw.strip(), False, []
    index = 0
    while index < len(value):
        char = value[index]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and index + 1 < len(value):
            index += 1
            out.append(value[index])
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


def remotes(config_text: str) -> list[tuple[str, str]]:
    """(remote name, url) of every `[remote "NAME"] url = …` in a git config text, in file order."""
    found: list[tuple[str, str]] = []
    section: str | None = None
    for line in config_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            match = regex(_SECTION).match(stripped)
            section = match.group(2) if match and match.group(1).lower() == "remote" and match.group(2) else None
            continue
        if section is None or "=" not in stripped:
            continue
        key, _, raw = stripped.partition("=")
        if key.strip().lower() == "url":
            url = _config_value(raw)
            if url:
                found.append((section, url))
    return found


def normalise_remote(url: str) -> str | None:
    """One spelling for every way of writing a repository's address: `host/path` in lower case,
    without scheme, user, password or token, port, `.git` suffix or trailing slash (`file:///path`
    for a repository on this machine). None for a relative path or anything that is not a URL."""
    url = url.strip()
    if not url or any(char.isspace() or ord(char) < 32 for char in url):
        return None
    scheme_end = url.find("://")
    if url.startswith("/") or url.lower().startswith("file://"):
        path = url[7:] if url.lower().startswith("file://") else url
        path = os.path.normpath(path.split("?", 1)[0])
        if not path.startswith("/") or path == "/":
            return None
        return "file://" + _strip_git(path.rstrip("/"))
    if scheme_end > 0:
        authority, _, path = url[scheme_end + 3:].partition("/")
        host = authority.rpartition("@")[2]  # credentials stripped: never stored
        host = host[: host.find("]") + 1] if host.startswith("[") else host.partition(":")[0]
    else:
        match = regex(_SCP_LIKE).match(url)
        if not match or "/" in url.split(":", 1)[0]:
            return None  # a relative local path (`../repo`, `repos/app.git`)
        host, path = match.group(1), match.group(2)
    path = _strip_git(path.split("?", 1)[0].split("#", 1)[0].strip("/"))
    host = host.rstrip(".")
    if not host or not path:
        return None
    return f"{host}/{path}".lower()


def _strip_git(path: str) -> str:
    return path[:-4].rstrip("/") if path.lower().endswith(".git") else path


def remote_of(git_dir: str | None) -> str | None:
    """The normalised URL of the repository's `origin` remote, else of its first remote; None when
    it has none, or its config cannot be read."""
    if git_dir is None:
        return None
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as handle:
            text = handle.read(CONFIG_READ_LIMIT)
    except (OSError, ValueError):
        return None
    found = remotes(text)
    ordered = [url for name, url in found if name == "origin"] + [url for _, url in found]
    for url in ordered:
        normalised = normalise_remote(url)
        if normalised:
            return normalised
    return None


def start_dir(cwd: str | None, env: dict[str, str] | None = None) -> str:
    """Where a Claude Code session runs: `CLAUDE_PROJECT_DIR` if set, else the payload cwd."""
    environ = os.environ if env is None else env
    return environ.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd()


def identity(cwd: str | None, env: dict[str, str] | None = None) -> tuple[str, str | None]:
    """(project root, normalised remote or None) of a Claude Code session; `store.projects` turns
    the pair into the project key (a moved checkout keeps its first-known key)."""
    root, git_dir = locate(start_dir(cwd, env))
    return root, remote_of(git_dir)


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
