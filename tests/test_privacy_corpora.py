"""Redaction measured as an attacker would, on the held-out corpus (bench/privacy/secrets.py) and the
tests' own (tests/secret_corpus.py), with the harness of `python -m bench privacy`.

End to end: every secret in every placement through the real hook processes, the worker's pipeline
(real `openai` client → loopback fake that records every request), a backup and the next session's
context; nothing of any secret may be in any byte of the data dir, any request or that context.
Then look-alikes kept, each held-out format in every placement in process (fast, names the format),
and bounded time on inputs built to make a redactor slow.
"""

import math

import pytest
from bench.plugin_hooks import hook_handler
from bench.privacy import harness, pathological
from bench.privacy.lookalikes import LOOKALIKES as HELD_OUT_LOOKALIKES
from bench.privacy.placements import PLACEMENTS
from bench.privacy.secrets import SECRETS as HELD_OUT_SECRETS

from secret_corpus import LOOKALIKES as TESTS_LOOKALIKES
from secret_corpus import SECRETS as TESTS_SECRETS

HELD_OUT = harness.entries(HELD_OUT_SECRETS)


def describe(leaked: dict) -> str:
    return "\n".join(f"{name} ({where['family'] or 'tests'}): stored in {', '.join(where['stored_in']) or 'nothing'}; "
                     f"sent {where['sent']}; shown {where['shown']}" for name, where in leaked.items())


def assert_not_vacuous(found: dict, secrets: int, placements: int) -> None:
    assert not found["hook_failures"], found["hook_failures"]
    assert found["hook_calls"] == placements * math.ceil(secrets / harness.CHUNK)
    assert found["events_done"] >= 0.9 * found["hook_calls"], found["events"]
    assert found["requests"] > 0 and found["observations"] > 0 and found["context_chars"] > 0
    assert any(path.startswith("backups") for path in found["files"])
    assert {"claude-mem.db", "claude-mem.db-wal", "logs/worker.log"} <= set(found["files"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["held-out", "tests"])
def test_no_secret_is_stored_sent_or_shown(name, data_dir):
    secrets = HELD_OUT_SECRETS if name == "held-out" else TESTS_SECRETS
    found = harness.through_hooks(str(data_dir), secrets)

    assert_not_vacuous(found, len(secrets), len(PLACEMENTS))
    assert found["redacted_in_requests"]  # the observer was shown the redacted text
    counts = found["counts"]
    assert counts["stored"] == counts["sent"] == counts["shown"] == 0, (
        f"{len(found['leaked'])} of {counts['formats']} formats leaked:\n{describe(found['leaked'])}")


def test_the_harness_finds_a_secret_no_redactor_could_know(data_dir):
    """A made-up "format" (plain words) proves the harness can fail: stored, sent and shown."""
    canary = ("made-up", "made-up words", "we named the release mauve wombat lantern", "mauve wombat lantern")
    found = harness.through_hooks(str(data_dir), [canary], placements=["bash-command"])

    assert_not_vacuous(found, 1, 1)
    where = found["formats"]["made-up words"]
    assert "claude-mem.db" in where["stored_in"] and any(path.startswith("backups") for path in where["stored_in"])
    assert where["sent"] and where["shown"]  # the fake observer named the command in a title
    assert found["counts"] == {"secrets": 1, "formats": 1, "stored": 1, "sent": 1, "shown": 1}
    assert harness.capture_leaks([canary]) == [("made-up words", placement) for placement in PLACEMENTS]


def test_held_out_lookalikes_are_kept():
    kept = harness.lookalikes_kept(HELD_OUT_LOOKALIKES)

    assert kept["total"] == len(HELD_OUT_LOOKALIKES) and kept["total"] >= 100
    masked = "\n".join(f"{m['kind']} ({m['where']}): {m['before']!r} → {m['after']!r}" for m in kept["masked"])
    assert kept["ratio"] >= 0.99, f"{len(kept['masked'])} masked:\n{masked}"


def test_the_tests_lookalikes_are_all_kept():
    kept = harness.lookalikes_kept(TESTS_LOOKALIKES)
    assert kept["kept"] == kept["total"] == len(TESTS_LOOKALIKES), kept["masked"]


def test_the_held_out_corpus_is_there():
    assert len(HELD_OUT) >= 300 and len({entry.name for entry in HELD_OUT}) == len(HELD_OUT)


@pytest.mark.parametrize("entry", HELD_OUT, ids=[entry.name for entry in HELD_OUT])
def test_held_out_secret_is_redacted_in_every_placement(entry):
    leaks = harness.capture_leaks([entry])
    assert not leaks, f"{entry.name} ({entry.family}) leaked through {', '.join(p for _, p in leaks)}"


@pytest.mark.parametrize("name", ["held-out", "tests"])
def test_a_second_redaction_pass_changes_nothing_capture_stored(name):
    """The worker cleans every batch once more and counts what changes as caught late: a redactor
    that marks its own markers (`https://[REDACTED:x]@host` read as user:password) counts phantoms."""
    changes = harness.second_pass(HELD_OUT if name == "held-out" else TESTS_SECRETS)
    assert not changes, "\n".join(f"{c['name']} in {c['placement']}: {c['before']!r} → {c['after']!r}" for c in changes[:20])


# -- pathological inputs --------------------------------------------------------------------------------

IN_PROCESS_LIMIT_S = 30  # a hang guard, far above the bench's target (5 s); the child is killed past it
HOOK_TIMEOUT_S = hook_handler("post-tool")["timeout"]  # past it Claude Code kills the hook: the event is lost


@pytest.mark.timeout(IN_PROCESS_LIMIT_S + 30)
@pytest.mark.parametrize("name", list(pathological.PATHOLOGICAL))
def test_redaction_of_a_pathological_input_ends(name):
    result = pathological.time_in_child(name, IN_PROCESS_LIMIT_S)
    assert result.get("timed_out_after_s") is None, f"privacy.clean on {name}: still running after {IN_PROCESS_LIMIT_S} s"
    # Python's own json refuses to parse this depth, so no hook ever hands it to clean_tree.
    allowed = {None, "RecursionError"} if "nested" in name else {None}
    assert result["error"] in allowed, result


@pytest.mark.timeout(HOOK_TIMEOUT_S + 30)
@pytest.mark.parametrize("name", list(pathological.PATHOLOGICAL))
def test_the_hook_keeps_a_pathological_input_and_exits_0_within_its_timeout(name, data_dir):
    result = pathological.through_hook(pathological.PATHOLOGICAL[name]().stdin, str(data_dir), HOOK_TIMEOUT_S)
    assert result["exit"] == 0, f"post-tool hook on {name}: {result}"
    assert result["outcome"] in ("stored", "quarantined"), f"post-tool hook on {name}: {result}"  # a broken hook exits 0 too
