"""The time a question names (issue 29, "time in the question"): `index.when.time_hint` on every form
it reads, with a fixed `now` (Friday 20 October 2023, 15:00 UTC), the exact window it gives, the
words it points at, None where nothing names a time, and hostile input."""

import re
import time
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_mem.domain import parse_time
from claude_mem.index.when import SOFT_DAYS, TimeHint, time_hint
from test_architecture import HOOK_ENTRY, closure, imports, is_stdlib

NOW = datetime(2023, 10, 20, 15, 0, tzinfo=timezone.utc)  # a Friday
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def day(text: str | None) -> str | None:
    """`2023-03-01` → the store's stamp of that UTC midnight."""
    return None if text is None else f"{text}T00:00:00.000Z"


def check(text: str, since: str | None, until: str | None, relation: str = "in", phrase: str | None = None,
          now: datetime = NOW, latest: datetime | None = None) -> TimeHint:
    hint = time_hint(text, now, latest)
    assert hint is not None, text
    assert (hint.since, hint.until, hint.relation) == (day(since), day(until), relation), (text, hint)
    expected = text if phrase is None else phrase
    assert hint.phrase == expected
    (start, end), = hint.spans
    assert text[start:end] == expected and text.index(expected) == start  # the span points at those words
    return hint


ABSOLUTE = [
    # text, since, until (exclusive)
    ("in March", "2023-03-01", "2023-04-01"),
    ("in November", "2022-11-01", "2022-12-01"),  # the latest November not after `latest` (now)
    ("in March 2023", "2023-03-01", "2023-04-01"),
    ("March 2023", "2023-03-01", "2023-04-01"),
    ("May of 2022", "2022-05-01", "2022-06-01"),
    ("on 7 July, 2023", "2023-07-07", "2023-07-08"),
    ("7 July 2023", "2023-07-07", "2023-07-08"),
    ("July 7, 2023", "2023-07-07", "2023-07-08"),
    ("July 7th", "2023-07-07", "2023-07-08"),
    ("on 8th December, 2022", "2022-12-08", "2022-12-09"),
    ("December 1,2022", "2022-12-01", "2022-12-02"),
    ("on Aug 15th", "2023-08-15", "2023-08-16"),
    ("2023-07-07", "2023-07-07", "2023-07-08"),
    ("2023-07", "2023-07-01", "2023-08-01"),
    ("2023/07/07", "2023-07-07", "2023-07-08"),
    ("Q3 2023", "2023-07-01", "2023-10-01"),
    ("in Q4", "2023-10-01", "2024-01-01"),  # the latest fourth quarter that has started: under way on 20 October
    ("in Q1", "2023-01-01", "2023-04-01"),
    ("in 2023", "2023-01-01", "2024-01-01"),
    ("summer 2021", "2021-06-01", "2021-09-01"),
    ("in summer 2021", "2021-06-01", "2021-09-01"),
    ("winter 2022", "2021-12-01", "2022-03-01"),  # the winter that ends in 2022
    ("during the summer", "2023-06-01", "2023-09-01"),
    ("in the winter", "2022-12-01", "2023-03-01"),  # the latest winter that has started
    ("the first half of September 2022", "2022-09-01", "2022-09-16"),
    ("the second half of 2022", "2022-07-01", "2023-01-01"),
    ("the beginning of November 2022", "2022-11-01", "2022-11-11"),
    ("in the beginning of November 2022", "2022-11-01", "2022-11-11"),
    ("the end of November 2022", "2022-11-21", "2022-12-01"),
    ("the middle of May 2022", "2022-05-11", "2022-05-21"),
    ("early May", "2023-05-01", "2023-05-11"),
    ("mid-May", "2023-05-11", "2023-05-21"),
    ("mid May 2022", "2022-05-11", "2022-05-21"),
    ("late May", "2023-05-21", "2023-06-01"),
    ("early 2023", "2023-01-01", "2023-05-01"),
    ("the week of July 7, 2023", "2023-07-03", "2023-07-10"),  # Monday to Monday
    ("the second week of November 2022", "2022-11-08", "2022-11-15"),
    ("in the second week of November", "2022-11-08", "2022-11-15"),
    ("the last week of February 2023", "2023-02-22", "2023-03-01"),
    ("between August 11 and August 15 2023", "2023-08-11", "2023-08-16"),  # the first takes the second's year
    ("from March to May 2023", "2023-03-01", "2023-06-01"),
    ("from December to February 2023", "2022-12-01", "2023-03-01"),
    ("Feb 29", "2020-02-29", "2020-03-01"),  # the latest leap day
]


OPEN = [
    ("before March 2023", None, "2023-03-01", "before"),
    ("prior to March 2023", None, "2023-03-01", "before"),
    ("after March 2023", "2023-04-01", None, "after"),
    ("since March 2023", "2023-03-01", None, "after"),
    ("since the beginning of March 2023", "2023-03-01", None, "after"),
    ("until March 2023", None, "2023-04-01", "before"),
    ("by July 10, 2022", None, "2022-07-11", "before"),
    ("as of December 2022", None, "2023-01-01", "before"),
    ("after yesterday", "2023-10-20", None, "after"),
]


@pytest.mark.parametrize(("text", "since", "until", "relation"), OPEN)
def test_before_after_since_until_open_one_side(text, since, until, relation):
    check(text, since, until, relation)


RELATIVE = [
    ("today", "2023-10-20", "2023-10-21"),
    ("this morning", "2023-10-20", "2023-10-21"),
    ("yesterday", "2023-10-19", "2023-10-20"),
    ("last night", "2023-10-19", "2023-10-20"),
    ("the day before yesterday", "2023-10-18", "2023-10-19"),
    ("this week", "2023-10-16", "2023-10-23"),  # Monday to Monday
    ("last week", "2023-10-09", "2023-10-16"),
    ("the past week", "2023-10-13", "2023-10-21"),  # the last 7 days and today
    ("this weekend", "2023-10-21", "2023-10-23"),
    ("last weekend", "2023-10-14", "2023-10-16"),
    ("this month", "2023-10-01", "2023-11-01"),
    ("last month", "2023-09-01", "2023-10-01"),
    ("the past month", "2023-09-20", "2023-10-21"),
    ("this year", "2023-01-01", "2024-01-01"),
    ("last year", "2022-01-01", "2023-01-01"),
    ("last summer", "2023-06-01", "2023-09-01"),  # the latest summer that is over
    ("this winter", "2023-12-01", "2024-03-01"),
    ("last May", "2023-05-01", "2023-06-01"),
    ("0 days ago", "2023-10-20", "2023-10-21"),
    ("3 days ago", "2023-10-17", "2023-10-18"),
    ("two weeks ago", "2023-10-03", "2023-10-10"),  # a week centred on 6 October
    ("2 weeks back", "2023-10-03", "2023-10-10"),
    ("a month ago", "2023-09-05", "2023-10-06"),
    ("two years ago", "2021-04-21", "2022-04-21"),
    ("a few days ago", "2023-10-16", "2023-10-19"),  # loose: a unit either side of 3 days ago
    ("in the last 3 days", "2023-10-17", "2023-10-21"),
    ("last Friday", "2023-10-13", "2023-10-14"),  # today is a Friday: the one before
    ("on Friday", "2023-10-20", "2023-10-21"),
    ("last Monday", "2023-10-16", "2023-10-17"),
    ("recently", "2023-10-06", "2023-10-21"),
    ("lately", "2023-10-06", "2023-10-21"),
]


def test_recently_is_the_soft_window():
    hint = time_hint("recently", NOW)
    assert hint is not None and hint.since == day(str((NOW - timedelta(days=SOFT_DAYS)).date()))


SHIFTED = [
    ("two weeks before August 11, 2023", "2023-07-25", "2023-08-01"),  # a week centred on 28 July
    ("three days after May 3, 2023", "2023-05-06", "2023-05-07"),
    ("the week before August 3, 2023", "2023-07-27", "2023-08-03"),
    ("the week before 9 June 2023", "2023-06-02", "2023-06-09"),
    ("the day after July 4, 2023", "2023-07-05", "2023-07-06"),
    ("the Sunday before October 25, 2022", "2022-10-23", "2022-10-24"),
    ("last weekend before April 10, 2023", "2023-04-08", "2023-04-10"),  # 10 April 2023 is a Monday
    ("the weekend after April 10, 2023", "2023-04-15", "2023-04-17"),
    ("last Friday on 23 January, 2022", "2022-01-21", "2022-01-22"),
]


@pytest.mark.parametrize(("text", "since", "until"), ABSOLUTE + RELATIVE + SHIFTED)
def test_each_form_names_its_window(text, since, until):
    check(text, since, until)


def test_a_date_without_a_year_is_the_latest_one_not_after_latest():
    may = datetime(2023, 5, 10, tzinfo=timezone.utc)
    check("in June", "2022-06-01", "2022-07-01", latest=may)
    check("in May", "2023-05-01", "2023-06-01", latest=may)
    check("on May 11", "2022-05-11", "2022-05-12", latest=may)
    check("on May 10", "2023-05-10", "2023-05-11", latest=may)
    check("in the second week of November", "2023-11-08", "2023-11-15", latest=datetime(2023, 12, 31, tzinfo=timezone.utc))
    # `latest` is for dates without a year; words relative to now still count from now
    check("yesterday", "2023-10-19", "2023-10-20", latest=may)


QUESTIONS = [
    # the words in a whole question, and what a question naming several times chooses
    ("What did we change in the cache in March 2023, and why?", "2023-03-01", "2023-04-01", "in", "in March 2023"),
    ("which tournament did Nate win in the beginning of November 2022?", "2022-11-01", "2022-11-11", "in",
     "in the beginning of November 2022"),
    ("Where was Tim in the week before 16 November 2023?", "2023-11-09", "2023-11-16", "in",
     "in the week before 16 November 2023"),
    ("Where did Caroline move from 4 years ago?", "2019-04-21", "2020-04-20", "in", "4 years ago"),
    # a calendar date beats a word relative to now, which beats "recently"; then the first wins
    ("What did Nate recently watch on October 6, 2022?", "2022-10-06", "2022-10-07", "in", "on October 6, 2022"),
    ("what broke last week, as mentioned on November 6, 2022?", "2022-11-06", "2022-11-07", "in", "on November 6, 2022"),
    ("what did I fix recently, yesterday maybe", "2023-10-19", "2023-10-20", "in", "yesterday"),
    ("in March 2023 or in May 2023", "2023-03-01", "2023-04-01", "in", "in March 2023"),
    ("in 2022 we moved the queue to SQLite", "2022-01-01", "2023-01-01", "in", "in 2022"),
    ("in 2022 Caroline moved", "2022-01-01", "2023-01-01", "in", "in 2022"),
    ("what broke after the migration in March 2023", "2023-03-01", "2023-04-01", "in", "in March 2023"),
    ("the tests we skipped before 2023-07-07", None, "2023-07-07", "before", "before 2023-07-07"),
]


@pytest.mark.parametrize(("text", "since", "until", "relation", "phrase"), QUESTIONS)
def test_the_time_inside_a_question(text, since, until, relation, phrase):
    check(text, since, until, relation, phrase)


@pytest.mark.parametrize(("text", "relation", "anchor", "phrase"), [
    ("what did we change before the migration?", "before", "the migration", "before the migration"),
    ("How did Melanie feel after the accident?", "after", "the accident", "after the accident"),
    ("prior to the big refactor, what was slow", "before", "the big refactor", "prior to the big refactor"),
    ("what did we do after the deploy when the tests failed", "after", "the deploy", "after the deploy"),
    ("after one two three four five six seven eight", "after", "one two three four five six",
     "after one two three four five six"),
])
def test_before_or_after_an_event_is_an_anchor(text, relation, anchor, phrase):
    hint = time_hint(text, NOW)
    assert hint is not None
    assert (hint.relation, hint.anchor, hint.since, hint.until, hint.phrase) == (relation, anchor, None, None, phrase)
    (start, end), = hint.spans
    assert text[start:end] == phrase


NO_TIME = [
    "", "the migration failed", "version 2023.1.4", "port 8080", "issue #2023", "the query took 2000 ms",
    "it ran in 2000 ms", "it ran in 2000ms", "over 2000 commits", "since 1999 requests failed",
    "07/07/2023",  # day or month first: a guess, so not read
    "Q3 results", "2019/20",
    # A bare month needs a cue word ("in March"): a title, a verb or a modal is not a time.
    "March of the penguins", "march the tests forward", "we may ship it", "in jan", "the fall of the cache",
    # The future names no window: memory is of the past.
    "what happens next week", "tomorrow", "next March",
    # Impossible dates name nothing, and their words are not read again as a looser time.
    "32 March", "32 March 2023", "on 32 March 2023", "Feb 30", "February 30, 2023", "2023-13-01", "2023-02-30",
    "before 32 March", "9999-12-31", "year 99999", "in 99999", "May 99999",
    # "after"/"before"/"since" followed by nothing an event could be
    "after all", "after how many weeks did Tim reconnect", "since starting boot camps", "how long ago was it",
    "a few days",
]


@pytest.mark.parametrize("text", NO_TIME)
def test_text_that_names_no_time(text):
    assert time_hint(text, NOW) is None


def test_stamps_are_the_stores_format_and_parse_back():
    hint = time_hint("in March 2023", NOW)
    assert hint is not None and hint.since is not None and hint.until is not None
    assert STAMP.match(hint.since) and STAMP.match(hint.until)
    assert parse_time("2023-03-01T00:00:00Z") == hint.since  # what `--since 2023-03-01T00:00:00Z` stores
    assert hint.since < hint.until  # they sort as text


def test_days_are_those_of_nows_time_zone():
    paris = timezone(timedelta(hours=2))
    hint = time_hint("yesterday", datetime(2023, 10, 20, 1, 0, tzinfo=paris))  # 19 October 23:00 UTC
    assert hint is not None and (hint.since, hint.until) == ("2023-10-18T22:00:00.000Z", "2023-10-19T22:00:00.000Z")
    # `latest` in another zone is read in now's
    hint = time_hint("on May 10", datetime(2023, 5, 10, 12, tzinfo=paris),
                     latest=datetime(2023, 5, 9, 23, 30, tzinfo=timezone.utc))  # 10 May 01:30 in Paris
    assert hint is not None and hint.since == "2023-05-09T22:00:00.000Z"


def test_a_naive_now_is_local_time(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        hint = time_hint("in March 2023", datetime(2023, 10, 20, 12, 0))
        # midnight in New York: EST (UTC-5) on 1 March, EDT (UTC-4) on 1 April
        assert hint is not None and (hint.since, hint.until) == ("2023-03-01T05:00:00.000Z", "2023-04-01T04:00:00.000Z")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


# -- hostile input ------------------------------------------------------------------------------------

def test_lone_surrogates_and_control_characters():
    assert time_hint("\ud800 in March 2023 \udfff\x00", NOW) is not None
    assert time_hint("\ud800\udfff\x00\x1b[31m", NOW) is None


def test_ten_thousand_words():
    words = " ".join(["cache"] * 10_000)
    assert time_hint(words, NOW) is None
    hint = time_hint(words + " in March 2023", NOW)
    assert hint is not None and hint.spans == ((len(words) + 1, len(words) + 14),)


def test_extreme_now_does_not_raise():
    assert time_hint("tomorrow and yesterday and next year", datetime(9999, 12, 31, tzinfo=timezone.utc)) is not None
    assert time_hint("yesterday", datetime(1, 1, 1, tzinfo=timezone.utc)) is None  # before year 1
    assert time_hint("10000 years ago", NOW) is None


@pytest.mark.parametrize("unit", [
    "we fixed the cache in March and then ", "in ", "May ", "1 ", "before ", "-", "2023-", "the week before ",
    "between May 1 and ", "two weeks before ", "\ud800 ",
])
def test_time_grows_with_the_length_of_the_text_not_faster(unit):
    """No pattern backtracks badly: 100× the text costs about 100× the time (allowed: 1000×, for a
    shared machine's noise), never the blow-up of a nested repetition."""

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            time_hint(text, NOW)
            best = min(best, time.perf_counter() - started)
        return best

    text = unit * (100_000 // len(unit) + 1)
    assert cost(text[:100_000]) < 1000 * cost(text[:1_000]) + 0.05


@given(st.text(max_size=300))
def test_never_raises_and_a_hint_is_well_formed(text):
    for now in (NOW, datetime(2023, 10, 20, 15, 0)):
        hint = time_hint(text, now)
        if hint is None:
            continue
        assert hint.relation in ("in", "before", "after")
        for stamp in (hint.since, hint.until):
            assert stamp is None or STAMP.match(stamp)
        if hint.since is not None and hint.until is not None:
            assert hint.since < hint.until
        assert hint.anchor is not None or hint.since is not None or hint.until is not None
        assert all(0 <= start < end <= len(text) for start, end in hint.spans)


@given(st.lists(st.sampled_from(
    "in on before after since until the of early mid late end beginning first second half week weekend day "
    "month year ago last this next past between and from to March May Feb 29 30 31 32 0 1 7th 2023 9999 99999 "
    "2023-02-30 9999-12-31 summer winter Friday recently two a few couple several , . ? - yesterday 1999 2199".split()),
    max_size=10))
def test_never_raises_on_time_words_in_any_order(words):
    hint = time_hint(" ".join(words), NOW)
    if hint is not None and hint.since is not None and hint.until is not None:
        assert hint.since < hint.until


def test_it_is_stdlib_only_and_off_the_hook_path():
    """The parser is for search: no hook loads it (it needs `dataclasses` and `re`, which the hooks avoid)."""
    assert "claude_mem.index.when" not in closure(HOOK_ENTRY)
    assert all(name.startswith("claude_mem") or is_stdlib(name) for name in imports("claude_mem.index.when"))
