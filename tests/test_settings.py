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
    assert {key for key in settings.SPEC if settings.is_secret(key)} == {"anthropic_api_key", "openai_api_key"}


def test_readme_documents_every_setting_with_its_default():
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `([^`]*)` \|", readme, flags=re.M))
    for key in settings.SPEC:
        assert key in rows, f"README does not document setting {key}"
        assert rows[key] == settings.describe_default(key), f"README default of {key} is stale"
    settings_section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", settings_section, flags=re.M))
    assert documented == set(settings.SPEC), "README documents settings that do not exist"
