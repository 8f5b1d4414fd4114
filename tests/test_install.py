"""`claude-mem install` / `uninstall`: real files in a temp HOME and project, compared byte for byte.

Hooks and MCP server go where Claude Code reads them per scope; foreign entries and every other key
stay; install → uninstall gives back the very bytes; bad files are refused with nothing written.
The installed hook commands are run through `sh -c` as Claude Code runs them."""

import json
import os
import pty
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.runtime import claude_config, config_files
from claude_mem.runtime.claude_config import Install
from claude_mem.runtime.environment import PACKAGE_PARENT
from claude_support import run_claude
from conftest import REPO
from fakes.anthropic_api import SEARCH_TOOL, FakeAnthropic
from hook_support import HOOKS_JSON, events, load, rows
from mcp_support import seed

EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"]
ODD = b'{"model":"opus",\t"env" : {"A":"\xc3\xa9"},\n\n   "hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo theirs"}]}]}}'
ODD_STATE = b'{\n    "numStartups": 3,\n    "projects": {"/elsewhere": {"allowedTools": []}},\n    "mcpServers": {}\n}'


@pytest.fixture
def home(isolated_env, tmp_path, monkeypatch):
    """A temp HOME (conftest) with no CLAUDE_CONFIG_DIR, and the current directory in a project in it."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project = tmp_path / "work" / "shop"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    monkeypatch.chdir(project)
    return tmp_path / "home"


def run(*args, check=True):
    result = CliRunner().invoke(cli, list(args))
    if check:
        assert result.exit_code == 0, result.output
    return result


def snapshot(*roots) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under `roots`: what "nothing was written" compares."""
    found: dict[str, bytes | None] = {}
    for root in map(str, roots):
        for folder, dirs, names in os.walk(root):
            found.update({os.path.join(folder, name): None for name in dirs})
            for name in names:
                path = os.path.join(folder, name)
                found[path] = open(path, "rb").read() if not os.path.islink(path) else os.readlink(path).encode()
    return found


def read_json(path) -> dict:
    return json.loads(open(path, encoding="utf-8").read())


def our_groups(settings: dict, event: str) -> list[dict]:
    return [g for g in settings["hooks"][event] if any(claude_config.is_our_hook(h) for h in g["hooks"])]


def files_of(scope: str, home, project) -> tuple[str, str, tuple]:
    """(hooks file, MCP file, keys to the servers) of a scope, spelled out independently of the code."""
    if scope == "user":
        return str(home / ".claude" / "settings.json"), str(home / ".claude.json"), ("mcpServers",)
    if scope == "project":
        return str(project / ".claude" / "settings.json"), str(project / ".mcp.json"), ("mcpServers",)
    return str(project / ".claude" / "settings.local.json"), str(home / ".claude.json"), ("projects", str(project), "mcpServers")


def servers(path, keys) -> dict:
    data = read_json(path)
    for key in keys:
        data = data[key]
    return data


# -- what goes where ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_each_scope_gets_our_hooks_and_server_where_claude_code_reads_them(home, scope):
    project = home.parent / "work" / "shop"
    os.chdir(project / "src")  # local servers are keyed by the git root, settings read from the cwd
    hooks_file, mcp_file, keys = files_of(scope, home, project)
    if scope != "user":
        hooks_file = hooks_file.replace(str(project), str(project / "src"))
    if scope == "project":
        mcp_file = str(project / "src" / ".mcp.json")
    result = run("install", "--scope", scope)
    assert f"Installed claude-mem into Claude Code ({scope} scope)" in result.output
    assert "mcp__memory__search" in result.output
    settings = read_json(hooks_file)
    assert list(settings["hooks"]) == EVENTS
    for event in EVENTS:
        [group] = our_groups(settings, event)
        [handler] = group["hooks"]
        assert handler["type"] == "command" and handler["timeout"] == 30
        assert handler["command"].startswith(f"CLAUDE_MEM_MCP_SERVER=memory {sys.executable} -I -S -c ")
    assert servers(mcp_file, keys) == {"memory": {
        "type": "stdio", "command": sys.executable, "args": ["-I", "-m", "claude_mem.mcp_server"],
        "env": {"CLAUDE_MEM_MCP_SERVER": "memory"}}}
    created = snapshot(home, project)
    assert not [path for path in created if path.endswith(".claude-mem-tmp")]


def test_hooks_match_the_plugin_hooks_json():
    plugin = read_json(HOOKS_JSON)["hooks"]
    install = Install(sys.executable, PACKAGE_PARENT)
    assert list(plugin) == [event for event, _, _ in claude_config.HOOKS]
    for event, hook, matcher in claude_config.HOOKS:
        [group] = plugin[event]
        [handler] = group["hooks"]
        ours = install.hook_group(hook, matcher)
        assert group.get("matcher") == ours.get("matcher") and handler["timeout"] == ours["hooks"][0]["timeout"]
        assert handler["command"].split()[-1] == hook == ours["hooks"][0]["command"].split()[-1]


def test_claude_config_dir_is_honoured(home, tmp_path, monkeypatch):
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    run("install")
    assert list(read_json(config / "settings.json")["hooks"]) == EVENTS
    assert "memory" in read_json(config / ".claude.json")["mcpServers"]
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()


def test_second_install_changes_nothing_and_says_so(home, data_dir):
    run("install")
    before = snapshot(home, data_dir)
    again = run("install")
    assert "already installed" in again.output and "nothing changed" in again.output
    assert snapshot(home, data_dir) == before  # no write, no new backup
    assert json.loads(run("install", "--json").output)["changed"] is False


def test_an_older_entry_of_ours_is_replaced_in_place_of_adding_a_second(home):
    old = Install("/opt/old venv/bin/python", "/opt/old venv/lib/site-packages")
    settings = {"hooks": {event: [old.hook_group(hook, matcher)] for event, hook, matcher in claude_config.HOOKS}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"memory": old.server_entry()}}))
    result = run("install")
    assert "updated" in result.output
    fresh = read_json(home / ".claude" / "settings.json")
    for event in EVENTS:
        [group] = our_groups(fresh, event)
        assert sys.executable in group["hooks"][0]["command"] and "old venv" not in json.dumps(fresh)
    assert read_json(home / ".claude.json")["mcpServers"]["memory"]["command"] == sys.executable


def test_every_changed_file_is_backed_up_first(home, data_dir):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(ODD)
    (home / ".claude.json").write_bytes(ODD_STATE)
    report = json.loads(run("install", "--json").output)
    backups = {entry["path"]: entry["backup"] for entry in report["files"]}
    assert open(backups[str(home / ".claude" / "settings.json")], "rb").read() == ODD
    assert open(backups[str(home / ".claude.json")], "rb").read() == ODD_STATE
    assert all(path.startswith(str(data_dir / "install" / "backups")) for path in backups.values())
    # Uninstall backs up what it changes too (the file as install left it), beside install's backups.
    uninstalled = run("uninstall").output.replace("\n", "")
    assert re.search(re.escape(f"backup {data_dir / 'install' / 'backups'}/") + r"\S+-\.claude\.json", uninstalled)


def test_foreign_hooks_and_other_keys_are_kept(home):
    theirs = {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit.sh", "timeout": 5}]}
    settings = {"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PostToolUse": [theirs], "PreToolUse": [theirs]},
                "statusLine": {"type": "command", "command": "claude-mem statusline"}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    state = {"numStartups": 7, "projects": {"/x": {"mcpServers": {"db": {"command": "pg"}}}},
             "mcpServers": {"github": {"type": "http", "url": "https://example.invalid/mcp"}}}
    (home / ".claude.json").write_text(json.dumps(state))
    run("install")
    after = read_json(home / ".claude" / "settings.json")
    assert after["permissions"] == settings["permissions"] and after["statusLine"] == settings["statusLine"]
    assert after["hooks"]["PreToolUse"][0] == theirs and len(after["hooks"]["PreToolUse"]) == 2
    assert after["hooks"]["PostToolUse"][0] == theirs and len(after["hooks"]["PostToolUse"]) == 2
    state_after = read_json(home / ".claude.json")
    assert state_after["numStartups"] == 7 and state_after["projects"] == state["projects"]
    assert list(state_after["mcpServers"]) == ["github", "memory"]
    run("uninstall")
    assert read_json(home / ".claude" / "settings.json") == settings and read_json(home / ".claude.json") == state


# -- the round trip ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_install_then_uninstall_gives_back_the_same_bytes(home, scope):
    project = home.parent / "work" / "shop"
    hooks_file, mcp_file, _ = files_of(scope, home, project)
    os.makedirs(os.path.dirname(hooks_file), exist_ok=True)
    open(hooks_file, "wb").write(ODD)
    open(mcp_file, "wb").write(ODD_STATE)
    before = snapshot(home, project)
    run("install", "--scope", scope)
    assert snapshot(home, project) != before
    result = run("uninstall", "--scope", scope)
    assert "restored" in result.output
    assert snapshot(home, project) == before


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_files_and_folders_install_created_are_removed_again(home, scope):
    project = home.parent / "work" / "shop"
    before = snapshot(home, project)
    run("install", "--scope", scope)
    hooks_file, mcp_file, _ = files_of(scope, home, project)
    assert os.path.exists(hooks_file) and os.path.exists(mcp_file)
    assert "removed" in run("uninstall", "--scope", scope).output
    assert snapshot(home, project) == before


def test_user_and_local_share_claude_json_and_come_out_one_at_a_time(home):
    (home / ".claude.json").write_bytes(ODD_STATE)
    run("install", "--scope", "user")
    run("install", "--scope", "local")
    run("uninstall", "--scope", "local")
    state = read_json(home / ".claude.json")
    assert "memory" in state["mcpServers"] and str(home.parent / "work" / "shop") not in state["projects"]
    run("uninstall", "--scope", "user")
    assert (home / ".claude.json").read_bytes() == ODD_STATE


def test_edits_made_after_install_survive_uninstall(home):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(ODD)
    run("install")
    settings = read_json(home / ".claude" / "settings.json")
    settings["theme"] = "dark"
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "echo mine too"}]})
    (home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=4))
    assert "updated" in run("uninstall").output
    left = read_json(home / ".claude" / "settings.json")
    assert left["theme"] == "dark" and left["model"] == "opus" and left["env"] == {"A": "é"}
    assert [g["hooks"][0]["command"] for g in left["hooks"]["Stop"]] == ["echo theirs", "echo mine too"]
    assert list(left["hooks"]) == ["Stop"] and "claude_mem" not in json.dumps(left)


def test_uninstall_finds_our_entries_without_install_state(home, data_dir):
    """State lost (another data dir, a purge): our entries are still recognised by what they run."""
    run("install")
    shutil.rmtree(data_dir / "install")
    run("uninstall")
    assert "claude_mem" not in (home / ".claude" / "settings.json").read_text()
    assert read_json(home / ".claude.json") == {}


def test_uninstall_with_nothing_installed_says_so(home, data_dir):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(ODD)
    before = snapshot(home)
    result = run("uninstall")
    assert "not installed" in result.output and "nothing to remove" in result.output
    assert snapshot(home) == before and not data_dir.exists()


# -- refusals: nothing written anywhere ----------------------------------------------------------------------

BAD = {
    "not JSON": (b'{"hooks": {', "is not valid JSON (line 1"),
    "a JSON array": (b'[{"hooks": {}}]', "holds a list, not a JSON object"),
    "duplicate keys": (b'{"hooks": {}, "hooks": {"Stop": []}}', "appears twice"),
    "hooks not an object": (b'{"hooks": ["Stop"]}', '"hooks" is a list, not an object'),
    "NaN": (b'{"cleanupPeriodDays": NaN}', "NaN is not JSON"),
    "not UTF-8": (b'{"model": "\xff"}', "is not UTF-8"),
}


@pytest.mark.parametrize("name", list(BAD))
@pytest.mark.parametrize("which", ["settings", "state"])
def test_a_file_it_cannot_read_is_refused_with_nothing_written(home, data_dir, name, which):
    raw, message = BAD[name]
    if which == "state" and name == "hooks not an object":
        raw, message = b'{"mcpServers": []}', "mcpServers is a list, not an object"
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(raw if which == "settings" else ODD)
    (home / ".claude.json").write_bytes(raw if which == "state" else ODD_STATE)
    before = snapshot(home.parent)
    for args in (["install"], ["install", "--dry-run"]):
        result = run(*args, check=False)
        assert result.exit_code == 1
        path = home / ".claude" / "settings.json" if which == "settings" else home / ".claude.json"
        assert f"{path}" in result.output and message in result.output and "nothing was changed" in result.output
        assert snapshot(home.parent) == before


def test_a_read_only_file_is_refused_with_nothing_written(home):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(ODD)
    os.chmod(home / ".claude" / "settings.json", 0o444)
    before = snapshot(home.parent)
    result = run("install", check=False)
    assert result.exit_code == 1 and "is read-only" in result.output and "chmod u+w" in result.output
    assert snapshot(home.parent) == before and not (home / ".claude.json").exists()


def test_a_huge_file_is_refused_unread(home, data_dir):
    with open(home / ".claude.json", "wb") as handle:
        handle.truncate(config_files.MAX_BYTES + 1)  # sparse: costs no disk
    result = run("install", check=False)
    assert result.exit_code == 1 and "64 MB" in result.output and str(home / ".claude.json") in result.output
    assert not (home / ".claude").exists() and not data_dir.exists()
    assert os.path.getsize(home / ".claude.json") == config_files.MAX_BYTES + 1


def test_a_large_file_within_the_limit_round_trips(home):
    big = {"projects": {f"/p/{i}": {"history": ["x" * 200] * 20} for i in range(1500)}}
    raw = json.dumps(big).encode()
    assert len(raw) > 5_000_000
    (home / ".claude.json").write_bytes(raw)
    run("install")
    assert read_json(home / ".claude.json")["projects"] == big["projects"]
    run("uninstall")
    assert (home / ".claude.json").read_bytes() == raw


def test_a_foreign_memory_server_is_not_replaced(home):
    foreign = b'{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}'
    (home / ".claude.json").write_bytes(foreign)
    before = snapshot(home.parent)
    result = run("install", check=False)
    assert result.exit_code == 1 and "not claude-mem's" in result.output and "claude mcp remove memory" in result.output
    assert snapshot(home.parent) == before


def test_dry_run_prints_the_diff_and_writes_nothing(home, data_dir):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_bytes(ODD)
    before = snapshot(home.parent)
    result = CliRunner().invoke(cli, ["install", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"--- {home / '.claude' / 'settings.json'}" in result.stdout and "--- /dev/null" in result.stdout
    assert f"+++ {home / '.claude.json'}" in result.stdout and '+      "command": "' + sys.executable in result.stdout
    assert "-" + ODD.decode().splitlines()[0] in result.stdout and "nothing was written" in result.stderr
    assert snapshot(home.parent) == before and not data_dir.exists()
    report = json.loads(run("install", "--dry-run", "--json").output)
    assert report["dry_run"] and all(entry["diff"].startswith("---") for entry in report["files"])
    assert snapshot(home.parent) == before


# -- the hooks it writes work, and fast enough to be worth it ------------------------------------------------

def hook_command(settings_file, event: str) -> str:
    [group] = our_groups(read_json(settings_file), event)
    return group["hooks"][0]["command"]


def run_command(command: str, payload: dict, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false"}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True, env=env,
                          cwd=cwd, timeout=60)


def test_the_installed_hooks_capture_and_name_the_installed_tools(home, data_dir):
    project = home.parent / "work" / "shop"
    run("install")
    settings_file = home / ".claude" / "settings.json"
    start = {**load("SessionStart.json"), "cwd": str(project)}
    result = run_command(hook_command(settings_file, "SessionStart"), start, project)
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "no memory stored yet" in context
    tool = {**load("PostToolUse.json"), "cwd": str(project), "session_id": start["session_id"]}
    assert run_command(hook_command(settings_file, "PostToolUse"), tool, project).returncode == 0
    assert [e["kind"] for e in events(data_dir)] == ["tool"]
    assert rows(data_dir, "SELECT project FROM sessions") == [(str(project),)]


def test_the_context_names_the_tools_as_the_install_registers_them(home, data_dir):
    project = home.parent / "work" / "shop"
    seed(data_dir, str(project), str(home.parent / "billing"))
    run("install")
    start = {**load("SessionStart.json"), "cwd": str(project)}
    installed = run_command(hook_command(home / ".claude" / "settings.json", "SessionStart"), start, project)
    context = json.loads(installed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "mcp__memory__search" in context and "mcp__memory__get_observations" in context
    assert "mcp__plugin_" not in context
    from hook_support import run_hook  # the plugin's launcher: the plugin's names stay the default

    plugin = run_hook("session-start", {**start, "session_id": "another"}, {"CLAUDE_PLUGIN_ROOT": REPO})
    assert "mcp__plugin_persistent-memory_memory__search" in json.loads(plugin.stdout)["hookSpecificOutput"]["additionalContext"]


def test_paths_with_spaces_and_quotes_survive_the_shell(home, data_dir, tmp_path):
    odd = tmp_path / "it's a dir $HOME"
    odd.mkdir()
    os.symlink(PACKAGE_PARENT, odd / "site packages")
    os.symlink(sys.executable, odd / "py thon")
    command = Install(str(odd / "py thon"), str(odd / "site packages")).hook_command("post-tool")
    project = home.parent / "work" / "shop"
    tool = {**load("PostToolUse.json"), "cwd": str(project)}
    result = run_command(command, tool, project)
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    assert [e["kind"] for e in events(data_dir)] == ["tool"]


def test_a_missing_install_never_exits_2(home, tmp_path):
    """Exit code 2 would feed stderr back to the model (and loop on Stop): a removed package exits 1."""
    gone = Install(sys.executable, str(tmp_path / "uninstalled")).hook_command("stop")
    result = run_command(gone, load("Stop.json"), tmp_path)
    assert result.returncode == 1 and b"ModuleNotFoundError" in result.stderr


def test_the_installed_hook_loads_no_site_packages(home):
    """Same cost as the plugin's launcher: `-I -S`, the package directory appended after the stdlib."""
    command = Install(sys.executable, PACKAGE_PARENT).hook_command("post-tool")
    probe = command.replace("sys.exit(run_from_argv(sys.argv[1:]))",
                            "import claude_mem.hooks.runner; print(sys.path[-1], sys.flags.isolated, sys.flags.no_site,"
                            ' "site" in sys.modules, any(p.endswith("site-packages") for p in sys.path[:-1]))')
    result = subprocess.run(["/bin/sh", "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == [PACKAGE_PARENT, "1", "1", "False", "False"], result.stderr


# -- uninstall: the worker, --purge --------------------------------------------------------------------------

def make_data_dir(data_dir) -> None:
    run("migrate")
    assert (data_dir / "claude-mem.db").exists()
    (data_dir / "venv" / "bin").mkdir(parents=True)
    (data_dir / "venv" / "bin" / "python").write_text("")


def test_purge_with_yes_deletes_the_data_dir(home, data_dir):
    make_data_dir(data_dir)
    run("install")
    result = run("uninstall", "--purge", "--yes")
    assert f"deleted {data_dir}" in result.output and "worker was not running" in result.output
    assert not data_dir.exists() and not (home / ".claude").exists()


def test_purge_without_yes_and_without_a_terminal_refuses(home, data_dir):
    make_data_dir(data_dir)
    run("install")
    before = snapshot(home.parent)
    result = run("uninstall", "--purge", check=False)
    assert result.exit_code == 1 and "--yes" in result.output and "no terminal" in result.output
    assert snapshot(home.parent) == before


def test_purge_refuses_a_folder_that_is_not_our_data_dir(home, tmp_path, monkeypatch):
    elsewhere = tmp_path / "photos"
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(elsewhere))
    for target in (elsewhere, home):
        monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(target))
        before = snapshot(tmp_path)
        result = run("uninstall", "--purge", "--yes", check=False)
        assert result.exit_code == 1 and "--purge refused" in result.output
        assert snapshot(tmp_path) == before


def uninstall_in_a_terminal(answer: bytes, cwd) -> tuple[int, str]:
    """`claude-mem uninstall --purge` with a pseudo-terminal as stdin, the answer typed in advance."""
    main, terminal = pty.openpty()
    try:
        os.write(main, answer + b"\n")
        result = subprocess.run([sys.executable, "-m", "claude_mem", "uninstall", "--purge"], stdin=terminal,
                                capture_output=True, text=True, cwd=cwd, timeout=120)
        return result.returncode, result.stdout + result.stderr
    finally:
        os.close(main)
        os.close(terminal)


def test_purge_asks_in_a_terminal(home, data_dir):
    make_data_dir(data_dir)
    project = home.parent / "work" / "shop"
    code, output = uninstall_in_a_terminal(b"n", project)
    assert code == 1 and "Aborted" in output and data_dir.exists()
    code, output = uninstall_in_a_terminal(b"y", project)
    assert code == 0 and f"deleted {data_dir}" in output and not data_dir.exists()


def test_uninstall_stops_the_worker(home, data_dir, monkeypatch):
    from claude_mem.runtime import control

    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "0")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")
    run("install")
    state, _ = control.start(str(data_dir))
    try:
        result = run("uninstall")
        assert f"worker stopped (pid {state.pid})" in result.output
        assert not control.state(str(data_dir)).running
    finally:
        control.stop(str(data_dir), timeout=20)


# -- the real Claude Code ------------------------------------------------------------------------------------

INSTALLED = "mcp__memory__"
AS_PLUGIN = SEARCH_TOOL.removesuffix("search")  # how the fake's scenarios know the memory tools


class InstalledToolsFake(FakeAnthropic):
    """The fake's scripted memory scenarios, with the tools named as a regular install names them."""

    def answer(self, body):
        text, blocks, stop = super().answer(json.loads(json.dumps(body).replace(INSTALLED, AS_PLUGIN)))
        for block in blocks:
            if block.get("type") == "tool_use":
                block["name"] = block["name"].replace(AS_PLUGIN, INSTALLED)
        return text, blocks, stop


@pytest.mark.slow
def test_real_claude_code_runs_what_install_registered(home, data_dir):
    """`claude-mem install --scope user` in a temp HOME, then a real `claude -p` (no plugin): the session is
    captured by the installed hooks, the model is offered mcp__memory__*, and its search gets our answer."""
    project = home.parent / "work" / "shop"
    seeded = seed(data_dir, str(project), str(home.parent / "billing"))
    (home / ".claude").mkdir()  # -p mode refuses a tool that is not allowed; the user's settings allow ours
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": [INSTALLED + "search"]}}))
    run("install", "--scope", "user")
    with InstalledToolsFake() as fake:
        # Claude Code may send its first requests before the MCP server has connected (a slow start
        # under load): the model works, a second per step, until the tools are offered, then searches.
        result = run_claude("please wait for the memory tools, then search memory for spool ingest", fake.url,
                            str(project), str(home), {"CLAUDE_MEM_AUTOSTART": "false"}, plugin_dir=None)
        bodies = [request.body for request in fake.posts("/v1/messages") if isinstance(request.body, dict)]
    assert result.returncode == 0, result.stderr[-2000:]
    done = re.fullmatch(r"Done: scenario finished after (\d+) tool call\(s\)", json.loads(result.stdout)["result"])
    assert done, result.stdout
    main = [body for body in bodies if body.get("tools")]
    offered = {tool.get("name") for tool in main[-1]["tools"]}
    assert {INSTALLED + "search", INSTALLED + "timeline", INSTALLED + "get_observations"} <= offered
    assert not [tool for body in main for tool in body["tools"] if str(tool.get("name")).startswith("mcp__plugin_")]
    # The session-start context (installed hook) and the server's instructions name the tools as offered.
    first = json.dumps(main[0])
    assert "Details on demand" in first and INSTALLED + "get_observations" in first and "mcp__plugin_" not in first
    results = [block for body in main for message in body["messages"] if isinstance(message.get("content"), list)
               for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]
    content = results[-1]["content"]
    shown = content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content)
    assert not results[-1].get("is_error"), shown
    assert shown.startswith('Search "spool ingest" in project shop:') and f"#{seeded['detailed']} " in shown
    # Captured by the installed hooks: the prompt, the MCP call itself, the turn's end and the session's.
    captured = [event for event in events(data_dir) if event["payload"].get("session_id") != "sess-detailed"]
    calls = int(done.group(1))
    assert [event["kind"] for event in captured] == ["prompt", *["tool"] * calls, "summarize", "session_end"]
    assert [event["payload"]["tool_name"] for event in captured[1:-2]] == ["Bash"] * (calls - 1) + [INSTALLED + "search"]
    assert ("completed",) in rows(data_dir, "SELECT status FROM sessions WHERE cwd = ?", (str(project),))
    run("uninstall")
