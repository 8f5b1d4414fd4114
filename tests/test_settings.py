import json
import os
import re

import pytest

from claude_mem import settings
from conftest import REPO


def test_defaults_when_nothing_is_set(data_dir, monkeypatch):
    monkeypatch.delenv("CLAUDE_MEM_AUTOSTART")  # conftest turns autostart off for every test
    values = settings.load()
    for key, default in settings.DEFAULTS.items():
        if key != "data_dir":
            assert values[key] == default, key
    assert values["data_dir"] == str(data_dir)


def test_precedence_env_over_file_over_default(data_dir, monkeypatch):
    settings.update_file({"provider": "openai", "max_attempts": "7"})
    assert settings.load()["provider"] == "openai"
    assert settings.load()["max_attempts"] == 7
    assert settings.source_of("provider") == "file"
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    assert settings.load()["provider"] == "offline"
    assert settings.source_of("provider") == "env"
    assert settings.source_of("log_level") == "default"


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("autostart", "0", False),
        ("autostart", "yes", True),
        ("prompt_context", "true", True),
        ("max_attempts", "5", 5),
        ("retry_backoff_seconds", "0.01", 0.01),
        ("skip_tools", "A, B,,C", ["A", "B", "C"]),
        ("skip_tools", '["X"]', ["X"]),
        ("excluded_projects", "", []),
        ("worker_port", "0", 0),
        ("worker_port", "", None),
    ],
)
def test_env_values_are_coerced_to_the_default_type(monkeypatch, key, raw, expected):
    monkeypatch.setenv("CLAUDE_MEM_" + key.upper(), raw)
    assert settings.load(strict=True)[key] == expected


@pytest.mark.parametrize(
    ("key", "raw"),
    [("max_attempts", "many"), ("autostart", "perhaps"), ("worker_port", "-1"), ("retry_backoff_seconds", "x"),
     ("skip_tools", '["unclosed'), ("max_attempts", True)],
)
def test_bad_values_are_clear_errors_in_strict_mode_and_defaults_otherwise(monkeypatch, key, raw):
    with pytest.raises(settings.SettingsError, match=key):
        settings.coerce(key, raw)
    if isinstance(raw, str):
        monkeypatch.setenv("CLAUDE_MEM_" + key.upper(), raw)
        assert settings.load()[key] == settings.DEFAULTS[key]
        with pytest.raises(settings.SettingsError):
            settings.load(strict=True)


def test_corrupt_settings_file(data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text("{not json")
    assert settings.load()["provider"] == "auto"
    with pytest.raises(settings.SettingsError, match="settings.json"):
        settings.load(strict=True)
    (data_dir / "settings.json").write_text("[1, 2]")
    with pytest.raises(settings.SettingsError, match="JSON object"):
        settings.load(strict=True)


def test_update_file_rejects_unknown_keys_and_data_dir(data_dir):
    with pytest.raises(settings.SettingsError, match="unknown"):
        settings.update_file({"no_such_key": 1})
    with pytest.raises(settings.SettingsError, match="CLAUDE_MEM_DATA_DIR"):
        settings.update_file({"data_dir": "/tmp"})
    assert not (data_dir / "settings.json").exists()


def test_settings_file_is_private_and_typed(data_dir):
    settings.update_file({"anthropic_api_key": "sk-ant-api03-secret", "backups_keep": "9"})
    path = data_dir / "settings.json"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert json.loads(path.read_text())["backups_keep"] == 9


def test_secrets_are_masked(monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_OPENAI_API_KEY", "sk-proj-abcdef123456")
    shown = settings.masked(settings.load())
    assert shown["openai_api_key"] == settings.MASK
    assert shown["anthropic_api_key"] == ""  # unset secrets stay visibly empty
    assert "sk-proj" not in json.dumps(shown)
    assert {key for key in settings.SPEC if settings.is_secret(key)} == {"anthropic_api_key", "openai_api_key",
                                                                         "team_database_url"}


def readme_default(key: str) -> str:
    """The default as the README writes it."""
    if key == "worker_port":
        return "38700 + uid % 100"
    default = settings.DEFAULTS[key]
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, list):
        return ",".join(default) if default else "(empty)"
    if default == "":
        return "(empty)"
    return str(default)


def test_readme_documents_every_setting_with_its_default():
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `([^`]*)` \|", readme, flags=re.M))
    for key in settings.SPEC:
        assert key in rows, f"README does not document setting {key}"
        assert rows[key] == readme_default(key), f"README default of {key} is stale"
    settings_section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", settings_section, flags=re.M))
    assert documented == set(settings.SPEC), "README documents settings that do not exist"


def test_provider_values_are_normalised_everywhere(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", " Claude ")
    assert settings.load()["provider"] == "claude" and settings.problems() == []
    monkeypatch.delenv("CLAUDE_MEM_PROVIDER")
    settings.update_file({"provider": "OpenAI", "log_level": "DEBUG"})
    assert settings.read_file() == {"provider": "openai", "log_level": "debug"}


def test_provider_choices_and_description_come_from_the_one_list():
    from claude_mem.domain import PROVIDERS

    assert settings.SETTINGS["provider"].choices == tuple(PROVIDERS)
    meaning = settings.SPEC["provider"][1]
    for name, description in PROVIDERS.items():
        assert f"{name} — {description}" in meaning
        assert settings.coerce("provider", name.upper()) == name


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("provider", "bogus", "not one of auto, claude, anthropic, openai or offline (or an installed plugin's name)"),
        ("log_level", "loud", "not one of debug, info, warning or error"),
        ("worker_port", 70000, "out of range (a whole number from 0 to 65535"),
        ("worker_port", "-1", "out of range"),
        ("max_attempts", 0, "out of range (a whole number from 1 to 20)"),
        ("lease_seconds", 10**30, "out of range (a whole number from 1 to 86400)"),
        ("max_field_chars", "9" * 5000, "not a whole number"),
        ("retry_backoff_seconds", 1e309, "not a number"),
        ("backups_keep", "-3", "out of range"),
        ("batch_max_events", 2.5, "not a whole number"),
        ("retry_backoff_seconds", -0.5, "out of range (a number from 0 to 3600)"),
        ("retry_backoff_seconds", "nan", "not a number"),
        ("autostart", "perhaps", "not true or false"),
        ("skip_tools", {"a": 1}, "not a list of strings"),
        ("openai_base_url", "ftp://host/v1", "not an http:// or https:// URL"),
        ("claude_model", ["a"], "not a string"),
    ],
)
def test_a_bad_value_is_refused_with_its_reason_and_nothing_is_written(data_dir, key, value, reason):
    settings.update_file({"backups_keep": 4})
    with pytest.raises(settings.SettingsError) as caught:
        settings.update_file({"max_observers": 3, key: value})
    assert key in str(caught.value) and reason in str(caught.value)
    assert settings.read_file() == {"backups_keep": 4}  # not even the good change beside it


@pytest.mark.parametrize(("key", "value"), [("worker_port", 0), ("worker_port", 65535), ("worker_port", None),
                                            ("backup_interval_hours", 0), ("retry_backoff_seconds", 0),
                                            ("retry_backoff_seconds", 3600), ("max_attempts", 20),
                                            ("anthropic_base_url", ""), ("openai_base_url", "https://api.openai.com/v1")])
def test_edge_values_inside_the_limits_are_accepted(data_dir, key, value):
    settings.update_file({key: value})
    assert settings.load()[key] == value and settings.problems() == []


def test_bad_values_already_stored_are_reported_never_silent(data_dir, monkeypatch):
    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text(json.dumps(
        {"max_attempts": "lots", "provider": "bogus", "backups_keep": 9, "no_such_key": 1}))
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "99999")
    monkeypatch.setenv("CLAUDE_MEM_BACKUPS_KEEP", "-1")
    values = settings.load()
    # usable values in place of the refused ones: the default, or the file's value when the env's is bad
    assert values["max_attempts"] == 3 and values["provider"] == "auto" and values["worker_port"] is None
    assert values["backups_keep"] == 9 and settings.source_of("backups_keep") == "file"
    found = settings.problems()
    assert len(found) == 5, found
    text = "\n".join(found)
    assert "max_attempts = 'lots' from file (settings.json) is refused: not a whole number" in text
    assert "provider = 'bogus' from file (settings.json) is refused: not one of auto" in text
    assert "using 'auto' from the default" in text
    assert "worker_port = '99999' from env (CLAUDE_MEM_WORKER_PORT) is refused: out of range" in text
    assert "backups_keep = '-1' from env (CLAUDE_MEM_BACKUPS_KEEP) is refused" in text
    assert "using 9 from settings.json" in text
    assert "unknown setting 'no_such_key' is ignored" in text
    with pytest.raises(settings.SettingsError, match="max_attempts|no_such_key"):
        settings.load(strict=True)


def test_a_refused_secret_is_never_quoted(data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text(json.dumps({"anthropic_api_key": ["sk-ant-api03-leak"]}))
    found = settings.problems()
    assert len(found) == 1 and "anthropic_api_key" in found[0] and "leak" not in found[0]
    with pytest.raises(settings.SettingsError) as caught:
        settings.coerce("openai_api_key", {"k": "sk-proj-leak"})
    assert "leak" not in str(caught.value)


def test_settings_module_stays_light():
    """The hooks load settings on every call: validation must not pull typing, dataclasses or logging."""
    import subprocess
    import sys

    probe = "import sys; import claude_mem.settings; print(sorted({'typing', 'dataclasses', 'logging'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {os.path.join(REPO, 'src')!r}); {probe}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
