"""Failure signatures (issue 31): what makes two failures of a tool "the same failure".

`signature(tool_name, tool_input, error)` reduces a failed tool call to two short keys:

- the *command* signature (Bash only): the command line normalized by `normalize_command` — the
  program and its subcommand kept (`pytest`, `npm run test`, `cargo build`, `docker compose up`),
  flags and plain words kept, numbers / hashes / ids / quoted strings / temp names abstracted, path
  arguments dropped (`pytest tests/a.py` is `pytest`: a path says where, not what), wrappers and env
  assignments dropped (`cd X &&`, `timeout 60`, `uv run`, `poetry run`, `npx`, `X=1`, `| tail -20`, `2>&1`);
- the *error* signature: the decisive error lines (`E   ModuleNotFoundError: …`, `error[E0432]: …`,
  `npm ERR! code ERESOLVE`, `fatal: …`, `ERROR: relation "…" does not exist`, `error TS2322: …`) picked
  by `decisive_lines`, with line numbers, addresses, timestamps, durations, paths' directories,
  UUIDs, hashes and counts abstracted (ports after a host and error codes are kept: they are the point).

Each key is the first 16 hex digits of the SHA-256 of the normalized text (`command_norm`,
`error_norm` keep the text for display and debugging). `command_signature` is the same
normalization for a command that succeeded (the resolution side).

Stdlib only and light (it runs in the post-tool hook): no `re` import — the few patterns come from
`fastpath.patterns` (compiled once per machine), and the command side uses no pattern at all, so a
successful Bash call pays nothing but string operations. Bounded whatever the input: a command is
read up to COMMAND_MAX_CHARS, an error up to ERROR_HEAD_CHARS + ERROR_TAIL_CHARS, a line up to
LINE_MAX_CHARS; no pattern can backtrack catastrophically. Never raises on any text.
"""

from __future__ import annotations

from claude_mem.capture.digest import sha256_hex

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

# Input read (the rest is never looked at): a command's head, an error's head and tail.
COMMAND_MAX_CHARS = 8192
ERROR_HEAD_CHARS = 8192
ERROR_TAIL_CHARS = 32768
LINE_MAX_CHARS = 300
HEAD_LINES, TAIL_LINES = 200, 800  # of the error read, the lines looked at
MAX_TRIES = 16  # lines of one rank normalized while looking for DECISIVE_LINES distinct ones
# Output sizes.
COMMAND_TEXT_CHARS = 200
ERROR_TEXT_CHARS = 300
NORM_LINE_CHARS = 200
DECISIVE_LINES = 2
GENERIC_LETTERS = 24  # decisive lines with fewer letters are signed with the failing test or file too
# Errors about the code itself (any line can raise them): signed with the failing test or frame too.
_CODE_ERRORS = ("TypeError", "AttributeError", "KeyError", "IndexError", "NameError", "UnboundLocalError",
                "ZeroDivisionError", "AssertionError", "assert ", "ReferenceError", "RecursionError",
                "SyntaxError", "IndentationError", "panic: runtime error")
HASH_CHARS = 16

# --- the command side (no `re`: it also runs on every successful Bash call) ---------------------

# Programs that only prepare the real command: dropped from a `&&` / `;` chain (unless alone).
_NOISE = frozenset({
    "cd", "pushd", "popd", "export", "source", ".", "set", "unset", "echo", "printf", "true", ":", "sleep",
    "clear", "ls", "pwd", "alias", "which", "type", "date", "mkdir", "shopt", "trap", "wait", "exit",
})
# Programs that only filter another's output: dropped from a pipeline (unless alone).
_FILTERS = frozenset({
    "cat", "tail", "head", "grep", "egrep", "fgrep", "rg", "tee", "less", "more", "sort", "uniq", "wc", "awk",
    "sed", "cut", "tr", "xargs", "column", "jq", "echo", "printf", "nl", "fold", "ts", "col", "strings",
})
# Shell words that open or close a compound command: skipped at a segment's start.
_KEYWORDS = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!", "{", "}", "(", ")", "time"})
_COMPOUND_HEADS = frozenset({"for", "case", "select", "done", "fi", "esac", "function"})
# Wrappers that run the command that follows them: value-taking flags of each, then the command.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nohup": frozenset(), "command": frozenset(), "exec": frozenset(), "stdbuf": frozenset(),
    "xvfb-run": frozenset({"-a", "-s", "-n"}), "caffeinate": frozenset(), "ionice": frozenset({"-c", "-n"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}), "bunx": frozenset(), "pnpx": frozenset(),
    "dotenv": frozenset({"-e", "-f"}),
}
# `X run …`, `X exec …`: a tool environment running the command that follows.
_RUNNERS: dict[str, frozenset[str]] = {
    "uv": frozenset({"--with", "--python", "-p", "--package", "--env-file", "--extra", "--group", "--project",
                     "--directory"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "pipenv": frozenset(), "pdm": frozenset(), "hatch": frozenset({"-e", "--env"}), "rye": frozenset(),
    "conda": frozenset({"-n", "--name", "-p", "--prefix"}), "mamba": frozenset({"-n", "--name", "-p", "--prefix"}),
    "bundle": frozenset(), "pnpm": frozenset(), "yarn": frozenset(), "pixi": frozenset({"-e", "--environment"}),
}
_RUNNER_VERBS = frozenset({"run", "exec", "dlx"})
# Programs whose first bare word is a subcommand (kept in `program`), and their value-taking
# global flags (so `git -C dir push` names `git push`).
_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"}),
    "npm": frozenset({"--prefix", "-w", "--workspace"}), "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "yarn": frozenset({"--cwd"}), "bun": frozenset({"--cwd"}), "deno": frozenset(),
    "cargo": frozenset({"-C", "--manifest-path", "-p", "--package", "-Z"}), "go": frozenset({"-C"}),
    "docker": frozenset({"-H", "--host", "--context", "-c", "--config", "--log-level"}),
    "docker-compose": frozenset({"-f", "--file", "-p", "--project-name", "--env-file"}),
    "podman": frozenset(), "kubectl": frozenset({"-n", "--namespace", "--context", "--kubeconfig"}),
    "helm": frozenset({"-n", "--namespace", "--kube-context"}), "pip": frozenset(), "uv": frozenset(),
    "poetry": frozenset({"-C", "--directory"}), "pipenv": frozenset(), "pdm": frozenset(), "hatch": frozenset(),
    "conda": frozenset(), "apt": frozenset(), "apt-get": frozenset(), "brew": frozenset(), "gh": frozenset({"-R"}),
    "terraform": frozenset({"-chdir"}), "dotnet": frozenset(), "mvn": frozenset({"-f", "-pl"}),
    "gradle": frozenset({"-p"}), "gradlew": frozenset({"-p"}), "make": frozenset({"-C", "-f", "-j", "--directory"}),
    "rake": frozenset(), "rails": frozenset(), "mix": frozenset(), "alembic": frozenset({"-c", "--config"}),
    "prisma": frozenset(), "composer": frozenset(), "systemctl": frozenset(), "manage.py": frozenset(),
    "django-admin": frozenset(), "flask": frozenset({"--app"}), "nx": frozenset(), "turbo": frozenset(),
    "tox": frozenset({"-e"}), "nox": frozenset(), "rustup": frozenset(), "bundle": frozenset(),
    "gem": frozenset(), "vercel": frozenset(), "supabase": frozenset(), "aws": frozenset({"--profile", "--region"}),
    "gcloud": frozenset({"--project"}), "firebase": frozenset(), "dbt": frozenset(), "sqlx": frozenset(),
    "diesel": frozenset(), "migrate": frozenset(), "ansible": frozenset(), "vagrant": frozenset(),
    "claude-mem": frozenset(), "swift": frozenset(), "zig": frozenset(), "nix": frozenset(), "just": frozenset(),
}
# Subcommands with a second level kept too (`docker compose up`, `go mod tidy`, `npm run test`).
_SECOND_LEVEL = frozenset({
    ("docker", "compose"), ("docker", "buildx"), ("docker", "image"), ("docker", "container"),
    ("docker", "network"), ("docker", "volume"), ("docker", "system"), ("podman", "compose"),
    ("go", "mod"), ("go", "work"), ("go", "tool"), ("npm", "run"), ("pnpm", "run"), ("yarn", "run"),
    ("bun", "run"), ("deno", "task"), ("kubectl", "get"), ("kubectl", "apply"), ("kubectl", "rollout"),
    ("gh", "pr"), ("gh", "run"), ("gh", "repo"), ("git", "stash"), ("git", "remote"), ("git", "submodule"),
    ("uv", "pip"), ("poetry", "self"), ("supabase", "db"), ("prisma", "migrate"), ("prisma", "db"),
    ("rustup", "target"), ("rustup", "component"), ("cargo", "sqlx"), ("dotnet", "ef"), ("sqlx", "migrate"),
    ("diesel", "migration"), ("aws", "s3"), ("gcloud", "run"),
})
_NPM_ALIASES = {"test": "run test", "t": "run test", "tst": "run test", "start": "run start",
                "stop": "run stop", "restart": "run restart", "run-script": "run", "rum": "run", "urn": "run",
                "i": "install", "add": "install", "isntall": "install", "un": "uninstall", "rm": "uninstall",
                "remove": "uninstall", "x": "exec"}
_PYTHONS = frozenset({"python", "python2", "python3", "py", "pypy", "pypy3"})
_FILE_EXTENSIONS = frozenset({
    "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "yaml", "yml", "toml", "txt", "md", "rs",
    "go", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "sh", "bash", "sql", "lock", "cfg", "ini",
    "env", "log", "csv", "html", "css", "scss", "xml", "proto", "tf", "vue", "svelte", "ipynb", "db", "sqlite",
    "gz", "zip", "tar", "whl", "swift", "cs", "dart", "ex", "exs", "lua", "pl", "r", "scala", "conf", "out",
})
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n", "(", ")")
_SEPARATORS = frozenset({"&&", "||", ";;", ";", "&", "\n", "(", ")"})
_HEX = frozenset("0123456789abcdefABCDEF")
_QUOTED = "\x01"  # marks a quoted part of a word: an argument, abstracted as `<str>`; a program, unquoted
# Flags saying where a program runs (`git -C dir`, `make -C dir`, `npm --prefix dir`): dropped with their value.
_DIRECTORY_FLAGS = frozenset({"-C", "--directory", "--cwd", "--prefix", "--dir", "--manifest-path", "--project",
                              "--git-dir", "--work-tree", "-chdir"})


def _tokens(command: str) -> list[tuple[str, str]]:
    """A shell command → (kind, text) tokens: "w" word (a quoted part without a space kept between two
    _QUOTED marks, "<str>" for one with a space, "<sub>" for a command substitution), "op" an operator, "redir" a redirection with
    its target. One pass, no backtracking; here-document bodies and comments dropped."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(command)
    word: list[str] = []
    in_word = False
    heredocs: list[str] = []
    pending_heredoc = False

    def flush() -> None:
        nonlocal in_word
        if in_word:
            tokens.append(("w", "".join(word)))
            word.clear()
            in_word = False

    while i < n:
        ch = command[i]
        if ch == "\n" and heredocs:
            flush()
            tokens.append(("op", "\n"))
            i += 1
            for delimiter in heredocs:  # skip each body up to its delimiter line
                while i < n:
                    end = command.find("\n", i)
                    end = n if end < 0 else end
                    line = command[i:end].strip()
                    i = end + 1
                    if line == delimiter:
                        break
            heredocs.clear()
            continue
        if ch in " \t\r":
            flush()
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                word.append(command[i + 1])
                in_word = True
            i += 2
            continue
        if ch in "'\"":
            end = command.find(ch, i + 1) if ch == "'" else _closing_quote(command, i + 1)
            end = n if end < 0 else end
            inner = command[i + 1:end]
            if pending_heredoc:
                heredocs.append(inner.strip())
                pending_heredoc = False
                tokens.append(("redir", "<<"))
                i = end + 1
                continue
            word.append(_QUOTED + inner + _QUOTED if inner and inner.isprintable() and " " not in inner else "<str>")
            in_word = True
            i = end + 1
            continue
        if ch == "$" and i + 1 < n and command[i + 1] == "(" or ch == "`":
            end = _closing_paren(command, i + 2) if ch == "$" else command.find("`", i + 1)
            end = n if end < 0 else end
            word.append("<sub>")
            in_word = True
            i = end + 1
            continue
        if ch == "#" and not in_word:
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "<>" or (ch in "0123456789&" and not in_word and i + 1 < n and command[i + 1] in "<>"):
            flush()
            i = _redirection(command, i, tokens)
            if tokens and tokens[-1] == ("redir", "<<?"):
                tokens.pop()
                pending_heredoc = True
                while i < n and command[i] in " \t":
                    i += 1
                if i < n and command[i] not in "'\"":
                    start = i
                    while i < n and command[i] not in " \t\n;&|<>()":
                        i += 1
                    heredocs.append(command[start:i])
                    pending_heredoc = False
                    tokens.append(("redir", "<<"))
            continue
        if ch in "&|;\n()":
            flush()
            for operator in _OPERATORS:
                if command.startswith(operator, i):
                    tokens.append(("op", operator))
                    i += len(operator)
                    break
            continue
        word.append(ch)
        in_word = True
        i += 1
    flush()
    return tokens


def _closing_quote(text: str, start: int) -> int:
    """The index of the `"` closing a double-quoted string opened before `start` (backslashes escape)."""
    i = start
    while True:
        end = text.find('"', i)
        if end < 0:
            return -1
        backslashes = 0
        while end - 1 - backslashes >= start and text[end - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return end
        i = end + 1


def _closing_paren(text: str, start: int) -> int:
    """The index of the `)` closing a `$(` whose body starts at `start` (nesting counted, quotes skipped)."""
    depth, i, n = 1, start, len(text)
    while i < n:
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "'\"":
            end = text.find(ch, i + 1)
            if end < 0:
                return -1
            i = end
        i += 1
    return -1


def _redirection(command: str, i: int, tokens: list[tuple[str, str]]) -> int:
    """Read a redirection (`2>&1`, `> out.log`, `&>> x`, `< in`, `<<EOF`) at `i`: append it as one
    token ("<<?" for a here-document whose delimiter follows) and return the index after it."""
    n = len(command)
    start = i
    while i < n and command[i] in "0123456789&":
        i += 1
    if command.startswith("<<<", i):
        i += 3
    elif command.startswith("<<", i):
        i += 2
        if i < n and command[i] == "-":
            i += 1
        tokens.append(("redir", "<<?"))
        return i
    else:
        while i < n and command[i] in "<>|&":
            i += 1
    if command[i - 1] == "&" and i < n and (command[i].isdigit() or command[i] == "-"):  # 2>&1, >&-
        while i < n and (command[i].isdigit() or command[i] == "-"):
            i += 1
        tokens.append(("redir", command[start:i]))
        return i
    while i < n and command[i] in " \t":
        i += 1
    if i < n and command[i] in "'\"":  # a quoted target
        end = command.find(command[i], i + 1)
        i = n if end < 0 else end + 1
    else:
        while i < n and command[i] not in " \t\n;&|<>()":
            i += 1
    tokens.append(("redir", command[start:i]))
    return i


def _segments(tokens: list[tuple[str, str]]) -> list[list[list[str]]]:
    """Tokens → chain of pipelines → commands (lists of words); redirections dropped."""
    chain: list[list[list[str]]] = []
    pipeline: list[list[str]] = []
    words: list[str] = []
    for kind, text in tokens:
        if kind == "w":
            words.append(text)
        elif kind == "op" and text in ("|", "|&"):
            pipeline.append(words)
            words = []
        elif kind == "op" and text in _SEPARATORS:
            pipeline.append(words)
            chain.append(pipeline)
            pipeline, words = [], []
    pipeline.append(words)
    chain.append(pipeline)
    result = []
    for pipe in chain:
        commands = [_strip_keywords(words) for words in pipe]
        commands = [words for words in commands if words]
        if commands:
            result.append(commands)
    return result


def _strip_keywords(words: list[str]) -> list[str]:
    start = 0
    while start < len(words) and words[start] in _KEYWORDS:
        start += 1
    words = words[start:]
    if words and words[0] in _COMPOUND_HEADS:
        return []
    return words


def _basename(word: str) -> str:
    return word.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or word


def _is_assignment(word: str) -> bool:
    name, eq, value = word.partition("=")
    return (bool(eq) and bool(name) and not value.startswith("=") and (name[0].isalpha() or name[0] == "_")
            and name.replace("_", "a").isalnum())


def _program_word(word: str) -> str:
    """A program as typed → its canonical name (`.venv/bin/python3.11` → `python`)."""
    base = _basename(word.replace(_QUOTED, ""))
    if base.endswith(".exe"):
        base = base[:-4]
    stem = base.rstrip("0123456789.")
    if stem in _PYTHONS:
        return "python"
    if stem in ("pip", "pip3"):
        return "pip"
    if base in ("gradlew", "gradlew.bat", "mvnw"):
        return "gradle" if base.startswith("gradlew") else "mvn"
    return base


def _skip_flags(words: list[str], i: int, valued: frozenset[str]) -> int:
    """The index of the first word at or after `i` that is not a flag (nor a flag's value)."""
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if word.startswith("-") and len(word) > 1:
            i += 2 if (word in valued and "=" not in word) else 1
            continue
        if word.startswith("+"):  # cargo +nightly
            i += 1
            continue
        return i
    return i


def _unwrap(words: list[str]) -> list[str]:
    """Env assignments (`PGPASSWORD=… psql`) and wrappers (`timeout 60`, `uv run`, `npx -y`) dropped."""
    i = 0
    for _ in range(8):  # wrappers nest (`sudo env X=1 timeout 5 uv run …`): a few levels
        while i < len(words) and _is_assignment(words[i]):
            i += 1
        if i >= len(words):
            break
        program = _program_word(words[i])
        if program in _WRAPPERS:
            i = _skip_flags(words, i + 1, _WRAPPERS[program])
            if program == "timeout" and i < len(words) and words[i][:1].isdigit():
                i += 1
            continue
        if program in _RUNNERS:
            verb_at = _skip_flags(words, i + 1, _RUNNERS[program])
            if verb_at < len(words) and words[verb_at] in _RUNNER_VERBS:
                after = _skip_flags(words, verb_at + 1, _RUNNERS[program])
                # `yarn run test` / `pnpm run build` run a package script, not a program
                if program in ("yarn", "pnpm") and words[verb_at] == "run":
                    break
                if after < len(words):
                    i = after
                    continue
        break
    return words[i:]


def _arg(word: str) -> str:
    """One argument → its abstraction (paths, numbers, hashes, ids, values), or the word itself."""
    if not word:
        return "<str>"
    if "<sub>" in word:
        return "<sub>"
    if _QUOTED in word or "<str>" in word:
        return word.partition("=")[0] + "=<str>" if _is_assignment(word) or word.startswith("-") and "=" in word \
            else "<str>"
    if word.startswith("-") and len(word) > 1 and not word[1:2].isdigit():
        name, eq, value = word.partition("=")
        return name + "=" + _arg(value) if eq else word
    if _is_assignment(word):
        return word.partition("=")[0] + "=<v>"
    if "://" in word:
        return "<url>"
    if word.startswith("$"):
        return word if word[1:].replace("_", "a").replace("{", "").replace("}", "").isalnum() else "<v>"
    if "/" in word or "\\" in word or word.startswith("~") or "::" in word or word.startswith("."):
        return "<path>"
    stem, dot, extension = word.rpartition(".")
    if dot and stem and extension.lower() in _FILE_EXTENSIONS:
        return "<path>"
    digits = sum(ch.isdigit() for ch in word)
    if digits == len(word) or (digits and word.replace(".", "").replace("-", "").isdigit()):
        return "<n>"
    if len(word) >= 7 and digits and all(ch in _HEX for ch in word):
        return "<hash>"
    if word.count("-") == 4 and len(word) == 36:
        return "<id>"
    if word.startswith("tmp") and digits and len(word) >= 8:
        return "<tmp>"
    if digits and any(ch in word for ch in "=<>@~^"):  # a version spec: requests==2.31.0, node@18
        cut = min(word.find(ch) for ch in "=<>@~^" if ch in word)
        return word[:cut] + _numbers(word[cut:], 1) if cut > 0 else _numbers(word, 1)
    if digits >= 6:  # an id, a timestamp or a long number inside a word
        return "<id>"
    return word


def _without_directory(flags: list[str]) -> list[str]:
    """Global flags before a subcommand without the ones naming a directory (and their values)."""
    kept, skip = [], False
    for word in flags:
        if skip:
            skip = False
        elif word in _DIRECTORY_FLAGS:
            skip = True
        elif word.partition("=")[0] not in _DIRECTORY_FLAGS:
            kept.append(word)
    return kept


def _command_words(words: list[str]) -> tuple[str, list[str]]:
    """One command's words → (program with subcommand, normalized words)."""
    rest = _unwrap(words)
    if not rest:
        return "", []
    program = _program_word(rest[0])
    args = rest[1:]
    head = [program]
    if program == "python":
        at = _skip_flags(args, 0, frozenset({"-W", "-X", "-c"}))
        module_at = next((k for k, word in enumerate(args[:at]) if word == "-m"), -1)
        if module_at >= 0 and module_at + 1 < len(args):
            return _command_words(args[module_at + 1:])  # python -m pytest → pytest
        if "-c" in args[:at]:
            head, args = ["python", "-c"], ["<str>"]
        elif at < len(args):
            script = _basename(args[at])
            program, head, args = "python " + script, ["python", script], args[at + 1:]
    if program in ("node", "deno", "bun", "ruby", "perl", "php", "bash", "sh", "zsh") and args \
            and not args[0].startswith("-") and program not in _SUBCOMMANDS:
        script = _basename(args[0])
        head, args = [program, script], args[1:]
    elif program in _SUBCOMMANDS or head[-1] in _SUBCOMMANDS:
        at = _skip_flags(args, 0, _SUBCOMMANDS.get(program, _SUBCOMMANDS.get(head[-1], frozenset())))
        if at < len(args):
            sub = args[at].replace(_QUOTED, "")
            if program == "npm" or (program in ("pnpm", "yarn") and sub in ("t", "i", "add", "rm", "un")):
                sub = _NPM_ALIASES.get(sub, sub)
            skip = 1
            if program in ("yarn", "pnpm") and sub == "run" and at + 1 < len(args):
                sub = args[at + 1]  # yarn run test ≡ yarn test
                skip = 2
            if "/" in sub or "\\" in sub or sub.startswith("."):
                sub = ""
            parts = sub.split()
            rest_args = _without_directory(args[:at]) + args[at + skip:]
            if parts and (program, parts[0]) in _SECOND_LEVEL and len(parts) == 1:
                at2 = _skip_flags(rest_args, at, _SUBCOMMANDS.get(parts[0], frozenset()) | frozenset({"-f", "--file",
                                                                                                    "-p", "-n"}))
                if at2 < len(rest_args) and "/" not in rest_args[at2] and not rest_args[at2][:1].isdigit():
                    parts.append(rest_args[at2])
                    rest_args = rest_args[:at2] + rest_args[at2 + 1:]
            head = head + parts
            args = rest_args
    normalized = [_arg(word) for word in args]
    collapsed: list[str] = []
    for word in normalized:  # `pytest tests/a.py b.py` ≡ `pytest tests/` ≡ `pytest`: paths say where, not what
        if word == "<path>" or (word.startswith("<") and collapsed and collapsed[-1] == word):
            continue
        collapsed.append(word)
    return " ".join(head), head + collapsed


def normalize_command(command: str) -> tuple[str, str]:
    """A shell command → (program, normalized command). Both "" for an empty command."""
    if not isinstance(command, str):
        return "", ""
    tokens = _tokens(command[:COMMAND_MAX_CHARS])
    kept: list[tuple[str, list[str]]] = []
    for pipeline in _segments(tokens):
        parsed = [_command_words(words) for words in pipeline]
        parsed = [item for item in parsed if item[0]] or parsed[:1]
        main = next((item for item in parsed if item[0].split(" ")[0] not in _FILTERS), parsed[0])
        kept.append(main)
    useful = [item for item in kept if item[0] and item[0].split(" ")[0] not in _NOISE | _FILTERS]
    chosen = useful or kept[-1:]
    if not chosen:
        return "", ""
    program = chosen[-1][0]
    norm = " && ".join(" ".join(words) for _, words in chosen)
    return program, norm


def command_signature(command: str) -> str:
    """The command signature (16 hex) of a shell command, "" for an empty one: equal for two
    commands that differ only in what `normalize_command` abstracts."""
    norm = normalize_command(command)[1]
    return _hash(norm) if norm else ""


def _hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "replace"))[:HASH_CHARS]


# --- the error side -------------------------------------------------------------------------------

# Rank 1: a line stating the cause. Rank 2: a line summing up a failure (FAILED …, make: ***).
# Rank 3: a line only saying a step failed (npm's lifecycle lines, cargo's "could not compile").
_CAUSE = (
    r"[ \t]*(?:#\d+ [\d.]+ )?(?:"
    r"(?P<generic>(?:error: )?(?:npm (?:ERR!|error) code \d|could not compile|aborting due to|subprocess-exited-with-error|"
    r"Command failed with exit code|Process completed with exit code|command failed|"
    r"Lifecycle script|failed with exit code|Tests?: +\d|FAILED \(|BUILD FAILED|npm (?:ERR!|error) code ELIFECYCLE|"
    r"npm (?:ERR!|error) (?:errno|path|command|Lifecycle|A complete log|Error: command failed|$|This is probably|"
    r"Failed at the|Exit status)))"
    r"|(?P<cause>\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]? +(?:\[?[\w.-]+\]? +)?(?:ERROR|FATAL|CRITICAL|SEVERE)\b"
    r"|E {2,}\S|(?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)\b(?::|$| \[)"
    r"|error(?:\[E\d+\])?:|ERROR:|FATAL:|(?:ERROR|FATAL|CRITICAL) \[|FAILED:|[Ff]atal(?: error)?:|panic:|Panic|PANIC|"
    r"npm (?:ERR!|error) code |psql: error|Error response from daemon|Uncaught |\u25cf |! \[rejected\]|"
    r"\S+\.go:\d+(?::\d+)?: |\S+:\d+:\d+: (?:fatal )?error|\S+\(\d+,\d+\): error |"
    r"error TS\d+|Segmentation fault|Killed|Aborted|Assertion failed|thread '[^']*' panicked|"
    r"[\w./-]+: (?:line \d+: )?(?:\S+: )?(?:command not found|No such file or directory|Permission denied)|"
    r"sh: \d+: |\S+: not found|Cannot find module|Module not found|SyntaxError|"
    r"unable to |Unable to |cannot |Cannot |could not |Could not |failed to |Failed to )"
    r"|(?P<summary>(?:FAILED|ERROR) \S+ - |--- FAIL: |FAIL\t|FAIL |make(?:\[\d+\])?: \*\*\* |"
    r"> Task \S+ FAILED|error Command failed|ERR_PNPM_\w+|npm (?:ERR!|error) |ELIFECYCLE))"
)
_CAUSE_ANYWHERE = ("error TS", "command not found", "No such file or directory", "Permission denied",
                   "Cannot find module", "address already in use", "EADDRINUSE", "ECONNREFUSED",
                   "Connection refused", "does not exist", "not found", "Out of memory", "out of memory")
_IGNORED_STARTS = ("Traceback (most recent call last)", "hint:", "npm ERR! A complete log", "npm error A complete log",
                   "at ", "File \"", "^", "~", "During handling of", "The above exception", "note:", "help:",
                   "-->", "|", "= note", "= help", "Run `", "For more information")
_ANSI = r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\r"
# One pass over a line: the first alternative that matches at a position wins.
_VARYING = (
    r"(?P<time>\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?|"
    r"(?<![\w:])\d\d?:\d\d:\d\d(?:[.,]\d+)?)"
    r"|(?P<uuid>(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-]))"
    r"|(?P<url>(?<![\w+.-])[a-zA-Z][\w+.-]{0,15}://[^\s'\"<>)\]]+)"
    r"|(?P<port>(?<![\w.:])(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::1?|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})?"
    r":(?P<portnum>\d{2,5})(?![\d:.]))"
    r"|(?P<code>(?<!\w)(?i:errno|exit code|exit status|status code|error code|code|status|signal|returned|port)[ :=]+-?\d+)"
    r"|(?P<ip>(?<![\w.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w.]))"
    r"|(?P<addr>0x[0-9a-fA-F]+)"
    r"|(?P<dur>(?<![\w.])(?:\d+(?:\.\d+)?(?:ms|us|\u00b5s|ns|h|m|s)){2,}(?!\w))"
    r"|(?P<tmp>(?<![\w.-])tmp[\w-]{5,}(?![\w-]))"
    r"|(?P<path>(?<![\w.~@+-])[\w.~@+-]*(?:[/\\][\w.~@+-]*)+)"
    r"|(?P<hex>(?<!\w)[0-9a-fA-F]{7,}(?!\w))"
    r"|(?P<num>(?<!\w)\d+(?:\.\d+)*)"
)


def _regex(pattern: str) -> Any:
    from claude_mem.fastpath import patterns

    return patterns.regex(pattern)


def _varying(match: Any) -> str:
    kind = match.lastgroup
    text: str = match.group(0)
    if kind == "time":
        return "<time>"
    if kind == "uuid":
        return "<uuid>"
    if kind == "url":
        return "<url>"
    if kind == "port":
        port: str = match.group("portnum")
        host = text[:-len(port) - 1]
        if host and host[0].isdigit() and host not in ("127.0.0.1", "0.0.0.0"):
            host = "<ip>"
        return host + ":" + port
    if kind == "code":
        return text
    if kind == "addr":
        return "<addr>"
    if kind == "dur":
        return "<dur>"
    if kind == "tmp":
        return "<tmp>" if any(ch.isdigit() for ch in text) else text
    if kind == "ip":
        return text if text in ("127.0.0.1", "0.0.0.0") else "<ip>"
    if kind == "path":
        base = text.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if not base or base.startswith("tmp") and any(ch.isdigit() for ch in base):
            return "<path>"
        return "<path>/" + _varying_words(base)
    if kind == "hex":
        if any(ch.isalpha() for ch in text):
            return "<hash>"
        return "<n>"
    return "<n>"


def _numbers(text: str, shortest: int) -> str:
    """`text` with each run of digits (and the dots between them) of at least `shortest` digits as `<n>`."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isdigit():
            j = i
            while j < n and (text[j].isdigit() or text[j] == "." and j + 1 < n and text[j + 1].isdigit()):
                j += 1
            run = text[i:j]
            out.append("<n>" if sum(ch.isdigit() for ch in run) >= shortest else run)
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _varying_words(text: str) -> str:
    """Numbers inside a file name of three digits or more (`migration_0042_users.sql`, `run-20240102.log`);
    shorter ones are kept (`test_v2.py`, `py311`)."""
    return _numbers(text, 3)


def normalize_line(line: str) -> str:
    """One error line with what varies between occurrences abstracted; whitespace collapsed."""
    line = line[:LINE_MAX_CHARS]
    line = str(_regex(_VARYING).sub(_varying, line))
    if line.startswith("#<n> "):  # BuildKit's step and time prefix (`#9 1.234 npm error …`)
        line = line[5:].removeprefix("<n> ")
    return " ".join(line.split())[:NORM_LINE_CHARS]


def _rank(line: str) -> int:
    match = _regex(_CAUSE).match(line)
    if match is not None:
        return {"cause": 1, "summary": 2, "generic": 3}.get(match.lastgroup or "", 3)
    for literal in _CAUSE_ANYWHERE:
        if literal in line:
            return 1
    return 0


def _lines(error: str) -> list[str]:
    """The error's lines worth reading: head and tail of a long text, control characters and ANSI
    colours removed, each line cut."""
    if len(error) > ERROR_HEAD_CHARS + ERROR_TAIL_CHARS:
        error = error[:ERROR_HEAD_CHARS] + "\n" + error[-ERROR_TAIL_CHARS:]
    if "\x1b" in error or "\r" in error:
        error = _regex(_ANSI).sub("", error)
    if "\x00" in error:
        error = error.replace("\x00", "")
    if "<tool_use_error>" in error:
        error = error.replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    if "\t" in error:
        error = error.replace("\t", " ")
    lines = error.split("\n")
    if len(lines) > HEAD_LINES + TAIL_LINES:
        lines = lines[:HEAD_LINES] + lines[-TAIL_LINES:]
    return [line[:LINE_MAX_CHARS] for line in lines]


def decisive_lines(error: str, output: bool = False) -> list[str]:
    """The raw lines of `error` that say what failed: the first DECISIVE_LINES distinct ones of the
    best rank found (the cause over a summary over a bare "it failed"), else the last non-empty
    lines of a command's output (a text with the Bash `Exit code N` header, or any when `output`),
    the first line of another text (a tool's own message)."""
    return _decisive(_lines(error), output)[0]


def _decisive(lines: list[str], output: bool = False) -> tuple[list[str], int]:
    """`decisive_lines` of the error's `lines`, and the index of the first one chosen (-1: none ranked)."""
    best, chosen, seen, tries, first = 4, [], set(), 0, -1  # type: tuple[int, list[str], set[str], int, int]
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith(_IGNORED_STARTS) or not line.isprintable():
            continue
        rank = _rank(line)
        if rank == 0 or rank > best or (rank == best and (len(chosen) >= DECISIVE_LINES or tries >= MAX_TRIES)):
            continue
        if rank < best:
            best, chosen, seen, tries, first = rank, [], set(), 0, index
        norm = normalize_line(line)  # two lines differing only in what varies count once
        tries += 1
        if norm not in seen:
            seen.add(norm)
            chosen.append(line)
    if chosen:
        return chosen, first
    head = next((text for text in map(_shown, lines) if text), "")
    if not head.startswith("Exit code ") and not output:
        return [head] if head else [], -1
    tail: list[str] = []  # the last lines of a Bash failure's output, read from its end
    for line in reversed(lines):
        text = _shown(line)
        if text and len(tail) < DECISIVE_LINES:
            tail.insert(0, text)
        if len(tail) >= DECISIVE_LINES:
            break
    if tail and tail[0] == head and len(tail) > 1:  # the header itself is no error line
        tail = tail[1:]
    return (tail if tail != [head] else [head]), -1


def _generic(norm: str) -> bool:
    """Whether normalized error lines say too little to tell one failure from another on their own:
    under GENERIC_LETTERS letters (`E assert <n> == <n>`, `error[E0308]: mismatched types`), or an error
    about the code itself that any line anywhere can raise (`TypeError: 'NoneType' object is not
    subscriptable`, `TypeError: Cannot read properties of undefined`), unlike a missing module or port."""
    first = norm.split("\n", 1)[0].removeprefix("E ").lstrip()
    if first.startswith(_CODE_ERRORS):
        return True
    for mark in ("<n>", "<path>", "<hash>", "<addr>", "<time>", "<uuid>", "<url>", "<ip>"):
        norm = norm.replace(mark, "")
    return sum(ch.isalpha() for ch in norm) < GENERIC_LETTERS


def _where(lines: list[str], first: int) -> str:
    """What places a generic error: the file rustc points at (`--> src/config.rs:3:5`), the failing test
    (`FAILED tests/x.py::test_login`, pytest's `____ test_login ____`, go's `--- FAIL: TestLoad`), the
    innermost frame of a Python traceback (`File "app/api.py", line 3, in create` → `api.py:create`) or
    the first of a Node.js stack outside node_modules (`at handler (/srv/app/routes.js:4:9)` → `routes.js`)."""
    for line in lines[first + 1:first + 4] if first >= 0 else ():
        text = line.strip()
        if text.startswith("--> "):
            return "at " + _varying_words(_basename(text[4:].split(":", 1)[0]))
    return _test_name(lines) or _frame(lines)


def _frame(lines: list[str]) -> str:
    python = node = ""
    for line in lines:
        text = line.strip()
        if text.startswith('File "') and '", line ' in text and ", in " in text:
            path, _, rest = text[6:].partition('", line ')
            function = rest.partition(", in ")[2].strip()
            if not path.startswith("<") and "site-packages" not in path and "/lib/python" not in path:
                python = f"at {_varying_words(_basename(path))}:{function[:60]}"
        elif not node and text.startswith("at ") and "node_modules" not in text and "node:" not in text:
            where = text.rpartition("(")[2].rstrip(")") if text.endswith(")") else text[3:]
            path = where.rsplit(":", 2)[0] if where.count(":") >= 2 else ""
            node = f"at {_varying_words(_basename(path))}" if path else ""
    return python or node


def _test_name(lines: list[str]) -> str:
    for line in lines:
        text = line.strip()
        name = ""
        if text.startswith("FAILED ") and "::" in text:
            name = text[7:].split(" ", 1)[0].rsplit("::", 1)[1]
        elif text.startswith("___") and text.endswith("___") and " collecting " not in text:
            name = text.strip("_ ").removeprefix("ERROR at setup of ").removeprefix("ERROR at teardown of ")
        elif text.startswith("--- FAIL: "):
            name = text[10:].split(" ", 1)[0]
        name = name.split("[", 1)[0]
        if name and name.replace("_", "a").replace(".", "a").isalnum():
            return "in " + name[:100]
    return ""


def _printable(text: str) -> str:
    return text if text.isprintable() else "".join(ch if ch.isprintable() else " " for ch in text)


def _shown(line: str) -> str:
    """A line as it can be shown: non-printable characters as spaces, whitespace collapsed."""
    return " ".join(_printable(line).split())


def signature(tool_name: str, tool_input: object, error: str) -> dict[str, str] | None:
    """The signature of one failed tool call, or None when there is nothing to sign:

    {"command": 16 hex of the normalized command ("" outside Bash), "error": 16 hex of the tool and the
     normalized decisive error lines, "program": "pytest" / "npm run test" / "cargo build" / the tool's
     name, "command_text": the real command cut to COMMAND_TEXT_CHARS, "error_text": the decisive lines,
     raw, cut to ERROR_TEXT_CHARS, "command_norm" / "error_norm": the normalized texts hashed}.

    For a tool other than Bash the error is signed with the tool's name and the base name of the
    file it names (`[Edit config.py] String to replace not found in file.`)."""
    try:
        return _signature(tool_name, tool_input, error)
    except (ValueError, TypeError, RecursionError, MemoryError, IndexError, AttributeError):
        return None  # never a hook failure: an unsignable input is simply not signed


def _signature(tool_name: str, tool_input: object, error: str) -> dict[str, str] | None:
    tool = tool_name if isinstance(tool_name, str) else ""
    tool = tool[:100]
    error = error if isinstance(error, str) else ""
    if len(error) > ERROR_HEAD_CHARS + ERROR_TAIL_CHARS:
        error = error[:ERROR_HEAD_CHARS] + "\n" + error[-ERROR_TAIL_CHARS:]
    command = ""
    if isinstance(tool_input, dict):
        value = tool_input.get("command")
        command = value[:COMMAND_MAX_CHARS] if isinstance(value, str) else ""
    if error.isspace() or not error:
        error = ""
    if not error and (not command or command.isspace()):
        return None
    program, command_norm = normalize_command(command) if tool == "Bash" or command else ("", "")
    every = _lines(error) if error else []
    lines, first = _decisive(every, tool == "Bash") if every else ([], -1)
    error_norm = "\n".join(normalize_line(line) for line in lines)
    if lines and _generic(error_norm):
        where = _where(every, first)
        error_norm += f"\n{where}" if where else ""
    label = tool
    if tool != "Bash" and isinstance(tool_input, dict):
        target = next((tool_input[key] for key in ("file_path", "notebook_path", "path", "url")
                       if isinstance(tool_input.get(key), str)), "")
        if target:
            label = f"{tool} {_varying_words(_basename(target[:4096]))}"
    if not program:
        program = tool
    return {
        "command": _hash(command_norm) if command_norm else "",
        "error": _hash(f"[{label}] {error_norm}"),
        "program": program[:100],
        "command_text": _printable(" ".join(command.split())[:COMMAND_TEXT_CHARS]),
        "error_text": _printable(" | ".join(lines))[:ERROR_TEXT_CHARS],
        "command_norm": command_norm[:1000],
        "error_norm": f"[{label}] {error_norm}"[:1000],
    }
