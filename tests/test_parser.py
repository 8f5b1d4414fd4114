"""The reply contract parser: the recorded replies behave as their README says; nothing makes it raise."""

import os

from hypothesis import given
from hypothesis import strategies as st

from claude_mem.observer.contract import reply_xml
from claude_mem.observer.parser import ParsedObservation, normalise_type, parse
from conftest import FIXTURES

REPLIES = os.path.join(FIXTURES, "observer-replies")


def reply(name: str):
    with open(os.path.join(REPLIES, name), encoding="utf-8") as handle:
        return parse(handle.read())


def test_clean_reply_has_every_field():
    parsed = reply("01-clean.xml")
    assert parsed.ok and not parsed.skipped and parsed.summary is None
    [obs] = parsed.observations
    assert obs.type == "bugfix"
    assert obs.title == "Fixed hello.txt greeting written by the setup script"
    assert obs.subtitle == "setup wrote the wrong greeting; replaced it in place"
    assert obs.narrative.startswith("The setup script created hello.txt")
    assert obs.facts == ('hello.txt line 1 is now "goodbye from fake model"', "the test command exited 0 after the edit")
    assert obs.concepts == ("problem-solution", "what-changed")
    assert obs.files_read == ("hello.txt",) and obs.files_modified == ("hello.txt",)


def test_prose_and_fences_are_ignored():
    parsed = reply("02-prose-and-fences.txt")
    assert [o.type for o in parsed.observations] == ["decision", "discovery"]
    first, second = parsed.observations
    assert first.files_modified == ("src/claude_mem/store/db.py",) and first.files_read == ()
    assert second.subtitle == "" and second.files_read == () and second.files_modified == ()
    assert second.concepts == ("gotcha",)
    assert "That's all" not in second.narrative


def test_summary_has_all_eight_fields():
    parsed = reply("03-summary.xml")
    assert parsed.ok and parsed.observations == []
    summary = parsed.summary
    assert summary.request.startswith("Change the greeting in hello.txt")
    assert summary.investigated == "hello.txt and the test command"
    assert summary.learned and summary.completed and summary.next_steps == "None requested"
    assert summary.files_read == ("hello.txt",) and summary.files_edited == ("hello.txt",)
    assert summary.notes == "The second line of hello.txt was left as is"


def test_skip_is_a_success_without_observations():
    parsed = reply("04-nothing-worth-keeping.txt")
    assert parsed.ok and parsed.skipped and parsed.observations == [] and parsed.summary is None


def test_malformed_recovers_what_is_valid_and_never_stores_an_untitled_observation():
    parsed = reply("05-malformed.txt")
    assert [o.title for o in parsed.observations] == ["Added retry with backoff & jitter to the queue"]
    [obs] = parsed.observations
    assert obs.narrative == "Retries now wait 1 s, 2 s, 4 s (plus jitter) before an event is marked failed."
    assert obs.facts == ("max attempts is 3",)
    assert any("without title" in p for p in parsed.problems)


def test_unknown_type_is_normalised_and_logged(caplog):
    with caplog.at_level("INFO", logger="claude_mem.observer"):
        parsed = reply("06-unknown-type.xml")
    assert [o.type for o in parsed.observations] == ["change"]
    assert "performance-improvement" in caplog.text


def test_nothing_valid_is_a_failed_attempt():
    for text in ("", "sure, here you go", "<observation><title>t</title></observation>", "<summary></summary>",
                 "<observation><type>bugfix</type><narrative>n</narrative><title>  </title></observation>"):
        assert not parse(text).ok, text


def test_type_normalisation():
    assert normalise_type(" BugFix ") == "bugfix"
    assert normalise_type("bug-fix") == "bugfix"
    assert normalise_type("new feature") == "feature"
    assert normalise_type("architectural decision") == "decision"
    assert normalise_type("performance-improvement") == "change"
    assert normalise_type("") is None


def test_entities_and_self_closing_fields():
    parsed = parse("<observation><type>change</type><title>a &lt;b&gt; &amp; c</title><files_read/>"
                   "<narrative>x</narrative></observation><skip />")
    assert parsed.observations[0].title == "a <b> & c" and parsed.skipped


text_field = st.text(alphabet=st.characters(blacklist_characters="<>&\r", blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
                     min_size=1, max_size=60).filter(lambda s: s.strip())


@given(st.text(max_size=2000))
def test_never_raises_on_any_text(text):
    parsed = parse(text)
    assert all(o.title and o.narrative for o in parsed.observations)


@given(st.lists(st.sampled_from([
    "<observation>", "</observation>", "<summary>", "</summary>", "<title>", "</title>", "<narrative>",
    "</narrative>", "<type>", "bugfix", "</type>", "<facts>", "<fact>", "</fact>", "</facts>", "<skip/>",
    "```xml", "text & more", "<files_read>", "<file>", "</file>", "\n", "<", ">", "</", "/>",
]), max_size=60))
def test_never_raises_on_tag_soup(parts):
    parsed = parse("".join(parts))
    assert all(o.title.strip() and o.narrative.strip() for o in parsed.observations)


@given(st.lists(st.tuples(st.sampled_from(["bugfix", "feature", "refactor", "change", "discovery", "decision"]),
                          text_field, text_field, st.lists(text_field, max_size=3)), min_size=1, max_size=4))
def test_round_trip(items):
    observations = [ParsedObservation(type=t, title=" ".join(title.split()), narrative=" ".join(n.split()),
                                      facts=tuple(dict.fromkeys(" ".join(f.split()) for f in facts)))
                    for t, title, n, facts in items]
    parsed = parse("Some prose.\n```xml\n" + reply_xml(observations, None) + "\n```")
    expected = list(dict.fromkeys(observations))
    assert parsed.observations == expected
