"""Redaction measured as an attacker would (issue 11): ~120 real-format fake credentials in every place a
session puts them, `<private>` spans that nest and straddle fields, and the look-alikes that must survive.

The end-to-end test runs the real hook processes, the real observer pipeline against the loopback
Anthropic fake, a backup and `remember`, then searches every byte of the data dir and every request
the "LLM" received."""

import asyncio
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_mem import privacy
from claude_mem import settings as settings_module
from claude_mem.capture import payload as capture_payload
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.anthropic import AnthropicProvider
from claude_mem.recall.remember import remember
from claude_mem.store import backup, db
from fakes.anthropic_api import FakeAnthropic
from hook_support import all_files, load, run_hook
from observer_support import connect, drain
from secret_corpus import LOOKALIKES, PLACEMENTS, SECRETS

LIMIT = 20_000


def record_for(placement: str, text: str) -> dict:
    hook, build = PLACEMENTS[placement]
    return capture_payload.build_record(hook, {**build(text), "session_id": "s-1", "cwd": "/p"}, "/p", LIMIT)


def leaked(secret: str, haystack: str) -> bool:
    return secret in haystack or json.dumps(secret)[1:-1] in haystack


def test_the_corpus_is_broad():
    formats = {name for name, _text, _secret in SECRETS}
    assert len(SECRETS) >= 110 and len(formats) >= 100 and len(LOOKALIKES) >= 60
    assert len(PLACEMENTS) >= 10


@pytest.mark.parametrize("name,text,secret", SECRETS, ids=[f"{i}-{s[0]}" for i, s in enumerate(SECRETS)])
def test_no_secret_survives_capture_in_any_placement(name, text, secret):
    for placement in PLACEMENTS:
        stored = json.dumps(record_for(placement, text), ensure_ascii=False)
        assert not leaked(secret, stored), f"{name} leaked through {placement}"
        assert "[REDACTED:" in stored, placement


@pytest.mark.parametrize("text", LOOKALIKES, ids=[f"lookalike-{i}" for i in range(len(LOOKALIKES))])
def test_lookalikes_survive(text):
    assert privacy.redact(text) == text
    record = record_for("read", text)
    assert record["payload"]["tool_response"]["file"]["content"] == text


def test_a_key_block_written_one_patch_line_per_item_is_caught():
    block = "\n".join(["-----BEGIN RSA PRIVATE KEY-----"] + ["MIIEow" + "Ab9" * 20 + str(i) for i in range(10)]
                      + ["-----END RSA PRIVATE KEY-----"])
    for placement in ("edit-structured-patch", "edit-original-file", "edit-new-string"):
        stored = json.dumps(record_for(placement, block))
        assert "Ab9Ab9Ab9" not in stored, placement
    lines = record_for("edit-structured-patch", block)["payload"]["tool_response"]["structuredPatch"][0]["lines"]
    assert lines[0] == "+[REDACTED:private-key]" and len(lines) == 12  # the shape of the patch is kept


@pytest.mark.timeout(30)  # a hang guard: nested quantifiers once backtracked for minutes on this input
@pytest.mark.parametrize("lines", [12, 18, 40])
def test_a_key_block_as_patch_lines_without_its_end_is_hidden_and_does_not_hang(lines):
    body = ["MIIEow" + "Qx7" * 20 + str(i) for i in range(lines)]
    diff = "diff --git a/id_rsa b/id_rsa\n+++ b/id_rsa\n@@ -0,0 +1,27 @@\n+-----BEGIN RSA PRIVATE KEY-----\n"
    for text in (diff + "\n".join("+" + line for line in body),
                 "\n".join("+" + line for line in body) + "\n+-----END RSA PRIVATE KEY-----\nafter"):
        assert "Qx7Qx7" not in privacy.redact(text)
        assert "Qx7Qx7" not in json.dumps(record_for("bash-output", text))


def test_a_key_block_without_its_end_is_still_hidden():
    head = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join("b3BlbnNzaC1rZXk" + "Qx7" * 15 for _ in range(4))
    assert "Qx7Qx7" not in privacy.redact(head + "\n")
    tail = "\n".join("b3BlbnNzaC1rZXk" + "Qx7" * 15 for _ in range(4)) + "\n-----END OPENSSH PRIVATE KEY-----"
    assert "Qx7Qx7" not in privacy.redact("…cut…\n" + tail)


def tool(tool_input: object, response: object) -> dict:
    return capture_payload.build_record("post-tool", {"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/p",
                                                      "tool_name": "Bash", "tool_input": tool_input,
                                                      "tool_response": response}, "/p", LIMIT)["payload"]


def test_private_spans_nest_straddle_fields_and_ignore_case():
    body = tool({"command": "echo a <private>SPAN-ONE"}, {"stdout": "SPAN-TWO</private> b", "stderr": ""})
    assert "SPAN-" not in json.dumps(body) and body["tool_input"]["command"] == "echo a "
    assert body["tool_response"]["stdout"] == " b"
    nested = privacy.strip_private("x <private>a <PRIVATE>b</Private> LEAK?</private> y")
    assert nested == "x  y"
    split = tool({"lines": ["keep", "<private>one", "two", "three</private>", "after"]}, {})
    assert split["tool_input"]["lines"] == ["keep", "", "", "", "after"]
    spaced = privacy.strip_private("a < private >hidden< / private > b")
    assert spaced == "a  b"


def test_an_unclosed_private_tag_hides_the_rest_of_the_payload():
    body = tool({"command": "deploy <Private> SECRET-REST"}, {"stdout": "MORE-SECRET", "stderr": "ALSO"})
    assert body["tool_input"]["command"] == "deploy "
    assert body["tool_response"] == {"stdout": "", "stderr": ""}


def test_a_fully_private_prompt_makes_the_turn_private():
    record = capture_payload.build_record("user-prompt", {"session_id": "s", "prompt": "<private>all of it</private>"},
                                          "/p", LIMIT)
    assert record["private"] and record["payload"]["prompt"] == ""


def test_huge_fields_are_redacted_at_both_ends_and_the_cut_counts_every_removed_char():
    secret = SECRETS[0][2]
    text = f"head {secret} " + "z" * 300_000 + f" {secret} tail"
    body = tool({"command": "cat big"}, {"stdout": text, "stderr": ""})
    stdout = body["tool_response"]["stdout"]
    assert secret not in stdout and stdout.count("[REDACTED:aws]") == 2
    kept = len(stdout) - len(capture_payload.CUT_MARK.format(0)) - 1
    removed = int(stdout.split("claude-mem cut ")[1].split(" ")[0])
    assert abs(kept + removed - len(text)) < 40  # markers are shorter than the secrets they replace


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)


def shape(value: object) -> object:
    if isinstance(value, dict):
        return [shape(item) for item in value.values()]
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


@given(json_values)
def test_clean_tree_keeps_the_shape_and_is_idempotent(value):
    once = privacy.clean_tree(value)
    assert privacy.clean_tree(once) == once
    if not isinstance(value, dict) or len({privacy.clean(str(k)) for k in value}) == len(value):
        assert shape(once) == shape(value) or isinstance(value, dict)


def test_a_secret_split_by_an_inserted_patch_line_at_any_line_is_caught():
    """Every secret, with an unrelated line inserted at every position (a patch interleaves context)."""
    leaks = []
    for name, text, secret in SECRETS:
        lines = text.split("\n")
        for at in range(len(lines) + 1) if "PRIVATE KEY" not in text else (0,):
            patch = lines[:at] + ["context line"] + lines[at:]
            if leaked(secret, json.dumps(record_for("edit-structured-patch", "\n".join(patch)))):
                leaks.append(f"{name} (line {at})")
    assert not leaks, leaks


# -- end to end -----------------------------------------------------------------------------------------

KEY = "sk-test-redaction-key"
CHUNK = 12  # secrets per payload: realistic files hold several


def test_no_secret_reaches_the_data_dir_or_the_llm(data_dir):
    """Every secret in every placement through the real hooks, then the observer (real `anthropic`
    client → loopback fake), a backup and `remember`; nothing of any secret anywhere."""
    session = load("session-edit/01-SessionStart.json")
    assert run_hook("session-start", session).returncode == 0
    texts = [text for _name, text, _secret in SECRETS]
    calls = 0
    for placement, (hook, build) in PLACEMENTS.items():
        for start in range(0, len(texts), CHUNK):
            body = build("\n\n".join(texts[start:start + CHUNK]))
            payload = {**body, "session_id": session["session_id"], "cwd": session["cwd"],
                       "tool_use_id": f"toolu_{placement}_{start}", "prompt_id": f"{placement}-{start}"}
            result = run_hook(hook, payload)
            assert result.returncode == 0, result.stderr
            calls += 1
    conn = connect(str(data_dir))
    with FakeAnthropic(api_key=KEY) as fake:
        values = settings_module.load()
        values.update(provider="anthropic", anthropic_api_key=KEY, anthropic_base_url=fake.url,
                      retry_backoff_seconds=0.0, observer_timeout_seconds=10)
        pipeline = Pipeline(conn, values, AnthropicProvider(values))
        asyncio.run(drain(pipeline))
        requests = [request.body for request in fake.posts()]
    for text in texts[:20]:
        remember(conn, f"note: {text} <private>PRIVATE-NOTE-CANARY</private>", "/home/dev/proj")
    done = conn.execute("SELECT COUNT(*) FROM pending_events WHERE status = 'done'").fetchone()[0]
    observations = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    conn.close()
    backup.snapshot(str(data_dir), keep=3)
    assert calls >= 100 and requests and done >= calls - 5 and observations > 20  # the test is not vacuous
    llm = "\n".join(json.dumps(body) if not isinstance(body, str) else body for body in requests)
    assert "[REDACTED:" in llm
    blobs = {os.path.relpath(path, data_dir): open(path, "rb").read() for path in all_files(data_dir)}
    assert any(name.startswith("backups") for name in blobs) and os.path.exists(db.db_path(str(data_dir)))
    found = []
    for name, _text, secret in SECRETS:
        if leaked(secret, llm):
            found.append(f"{name}: in a request to the LLM")
        for path, blob in blobs.items():
            if secret.encode() in blob or json.dumps(secret)[1:-1].encode() in blob:
                found.append(f"{name}: in {path}")
    assert b"PRIVATE-NOTE-CANARY" not in b"".join(blobs.values())
    assert not found, found
