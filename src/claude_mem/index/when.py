"""The time a question names, as a window the ranking can favour (issue 29, "time in the question").

`time_hint(text, now, latest)` reads "in March 2023", "the week before August 3, 2023", "two weeks
ago", "recently" or "before the migration" and returns a `TimeHint`: a window of store timestamps
(`since` inclusive, `until` exclusive), open on one side for before/after/since/until, or an anchor
event when what follows "before"/"after" is not a date. None when the text names no time.

The rules, chosen once:
- Calendar days are those of `now`'s time zone (a naive `now` is local time, as `domain.iso_from`
  reads it); `since`/`until` are midnights of those days in the store's format (UTC, milliseconds).
- A month, day or season without a year is the most recent one that starts on or before `latest`
  (the newest row the caller knows of; default `now`); "Feb 29" is the latest leap day.
- Words relative to now count from `now`'s day: "last week" is the previous Monday-to-Sunday week,
  "the past week" the last 7 days, "last Friday" the Friday before today, "recently"/"lately" the
  last `SOFT_DAYS` days. "N units ago" and "N units before <date>" are a window one unit wide
  centred on that point (a single day for days); "a few"/"several"/"a couple of" widen it.
- Several times named: a calendar date beats a time relative to now, which beats "recently"; an
  anchor event counts only when no time does; among equals the first in the text wins (a union of
  unrelated dates would favour the months between them). "between X and Y" / "from X to Y" is one
  window; "X" takes "Y"'s year when it names none.
- The future names no window ("tomorrow", "next week", "next March"): memory is of the past.
- Dates are read day-first ("7 July 2023"), month-first ("July 7, 2023") or year-first ("2023-07-07",
  "2023/07/07"); "07/07/2023" is not read (which of day and month comes first is a guess). "Q3 2023"
  is a quarter; "N units back" is "N units ago".
- A bare month, weekday, season, quarter or year needs a cue word before it ("in", "during", "since",
  "early", "the end of", ...): "March of the penguins", "port 8080" and "version 2023.1.4" name no
  time. A bare year is 1900-2199 and not followed by a lower-case word other than a stop-word ("in
  2023 we moved" is a year, "over 2000 commits" and "in 2000 ms" are counts); a lower-case month
  abbreviation ("mar", "jan") is never read alone.
- An impossible date ("32 March", "Feb 30", "2023-13-01", a window past year 9999) names nothing,
  and its words are not read again as a looser time ("32 March 2023" is not "March 2023").

Stdlib only, and no pattern nests a repetition: any text is read in time linear in its length.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from claude_mem.domain import iso_from
from claude_mem.index.fts import STOPWORDS

# "recently", "lately", "the other day": the last two weeks.
SOFT_DAYS = 14
# An anchor event ("before the migration") is at most this many words.
ANCHOR_WORDS = 6


@dataclass(frozen=True)
class TimeHint:
    """The time a question names. `relation` is "in" (a window), "before" (open at the start) or
    "after" (open at the end). With `anchor`, the time is an event's ("before the migration" →
    "the migration") and `since`/`until` are None."""

    since: str | None  # inclusive, the store's timestamp format
    until: str | None  # exclusive
    spans: tuple[tuple[int, int], ...]  # character ranges of the text that named the time
    relation: str
    anchor: str | None = None
    phrase: str = ""  # the words that named it, for a note to the user ("in July 2023")


# -- vocabulary -------------------------------------------------------------------------------------

_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_LOOSE_NUMBERS = {"couple": 2, "few": 3, "several": 4}
# Half the width of the window centred on "N units ago" (days); a loose number takes a whole unit.
_HALF_WIDTH = {"day": 0, "week": 3, "month": 15, "year": 182}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
# Words that end an anchor event: a new clause starts ("before the deploy when the tests failed").
_CLAUSE_WORDS = frozenset("""and but or so because when while if then that which who whom where whereas than
    though although since until unless whether how what why""".split())

_FLAGS = re.IGNORECASE | re.VERBOSE
_MONTH = r"""(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?
             |sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?"""
_YEAR = r"(?P<year>[0-9]{4})(?![0-9])"
_DAY = r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?(?![0-9])"
_WEEKDAY = r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_COUNT = (r"[0-9]{1,4}|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several|an?|one|two|three|four|five|six|seven|eight|nine"
          r"|ten|eleven|twelve")
_NUM = rf"(?P<n>{_COUNT})"
_UNIT = r"(?P<unit>day|week|month|year)s?"
# The word after a bare year: "in 2023 we moved", "in 2023 Caroline moved" read it as a year; "over
# 2000 commits", "in 2000 ms" as a count.
_NEXT_WORD = re.compile(r"[ \t]*([^\W\d_]+)")

# Each pattern names one kind of time by itself; `_PREFIX` then reads the words before it.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern, _FLAGS)) for kind, pattern in (
    ("iso", r"(?<![\w.\-/])(?P<year>[0-9]{4})(?P<sep>[-/])(?P<mnum>[0-9]{1,2})(?:(?P=sep)(?P<day>[0-9]{1,2})(?![0-9]))?"
            r"(?![0-9\-/])"),
    ("day_month", rf"(?<![\w.]){_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s*{_YEAR})?"),
    ("month_day", rf"\b{_MONTH}\s+{_DAY}(?:,?\s*{_YEAR})?"),
    ("month_year", rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}"),
    ("month", rf"\b(?:(?P<rel>last|this|next)\s+)?{_MONTH}"),
    ("year", r"(?<![\w.\-/#:$])(?P<year>(?:19|20|21)[0-9]{2})(?![0-9\-/:%]|\.[0-9])"),
    ("quarter", r"\bQ(?P<quarter>[1-4])(?:\s+|-)?(?P<year>[0-9]{4})?(?![0-9])"),
    ("season", rf"\b(?:(?P<rel>last|this|past|next)\s+)?(?P<season>spring|summer|fall|autumn|winter)"
               rf"(?:,?\s+(?:of\s+)?{_YEAR})?\b"),
    ("weekday", rf"\b(?:(?P<rel>last|this\s+past|next)\s+)?{_WEEKDAY}\b"),
    ("today", r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b"),
    ("yesterday", r"\b(?:yesterday|last\s+night)\b"),
    ("future", r"\b(?:tomorrow|next\s+(?:week|weekend|month|year))\b"),
    ("period", r"\b(?P<the>the\s+)?(?P<which>this|last|previous|past)\s+(?P<unit>week|weekend|month|year)\b"),
    ("last_n", rf"\b(?:the\s+)?(?:last|past|previous)\s+{_NUM}\s+{_UNIT}\b"),
    ("ago", rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|back)\b"),
    ("soft", r"\b(?:recently|lately|the\s+other\s+day|of\s+late)\b"),
))

# The words just before a time that narrow, shift or open it, or only cue it ("in", "during").
# Searched ending where the time starts; the leftmost match wins, so "two weeks before" is a shift
# and not "before", and "the beginning of" is read before the "in" that precedes it.
_PREFIX = re.compile(rf"""(?<!\w)(?:
    (?P<shift_n>{_COUNT})\s+(?P<shift_unit>day|week|month|year)s?\s+(?P<shift_dir>before|after|prior\s+to|earlier\s+than|later\s+than)
  | (?:the\s+)?(?P<adj_unit>day|week|month|year)\s+(?P<adj_dir>before|after|prior\s+to)
  | (?:the|last)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+(?P<wd_dir>before|after|prior\s+to|on)
  | (?:the\s+|last\s+)?weekend\s+(?P<we_dir>before|after|prior\s+to|of)
  | (?:the\s+)?(?P<nth>first|second|third|fourth|last)\s+week\s+of
  | (?P<week_of>(?:the\s+)?week\s+of)
  | (?:the\s+)?(?P<half>first|second)\s+half\s+of
  | (?P<part>early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of|(?:the\s+)?(?:early|middle|late)\s+part\s+of)
  | (?P<rel>before|prior\s+to|earlier\s+than|after|later\s+than|since|until|till|til|by|as\s+of|up\s+to|through)(?:\s+the)?
  | (?P<cue>in|on|during|over|around|throughout|circa|within)(?:\s+the)?
)[\s,\-]*$""", _FLAGS)
_RANGE_START = re.compile(r"(?<!\w)(?:between|from)\s+$", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"\s*(?:and|to|until|till|through|thru|-|–|—)\s*", re.IGNORECASE)
_ANCHOR = re.compile(r"(?<!\w)(?P<rel>before|after|prior\s+to)\s+", re.IGNORECASE)
_ANCHOR_END = re.compile(r"[.,;:!?()\[\]{}\"“”]")
_WORD = re.compile(r"[\w'’\-]+")
_PREFIX_REACH = 60  # characters before a time that `_PREFIX` reads
_PREFIX_STEPS = 4  # "since the beginning of the first half of" is as deep as it goes


@dataclass(frozen=True)
class _Found:
    """One time found in the text: its span and days (`since` inclusive, `until` exclusive)."""

    start: int
    end: int
    since: date | None
    until: date | None
    relation: str = "in"
    unit: str = "day"  # day, week, weekend, month, season, year, range, soft: what a prefix may narrow
    rank: int = 2  # 2 a calendar date, 1 relative to now, 0 "recently"
    valid: bool = True  # False: an impossible date, kept only so that its words name nothing else
    needs_cue: bool = False
    cued: bool = False  # a cue word ("in") was read: the words before it are not about this time
    recipe: tuple[str, int, int] | None = None  # ("month"|"day"|"season", month, day) of a date without a year
    year: int | None = None  # the year the text gave


def time_hint(text: str, now: datetime, latest: datetime | None = None) -> TimeHint | None:
    """The time `text` names, or None (see the module's rules). Never raises on any string."""
    if not isinstance(text, str) or not text:
        return None
    latest_day = _in_frame(latest, now).date() if latest is not None else now.date()
    found = _times(text, now.date(), latest_day)
    kept = _without_overlaps(found)
    usable = [item for item in kept if item.valid]
    if usable:
        best = max(usable, key=lambda item: (item.rank, -item.start))
        return _hint(text, best, now)
    return _anchor(text, kept)


# -- finding times ----------------------------------------------------------------------------------

def _times(text: str, today: date, latest: date) -> list[_Found]:
    atoms: list[_Found] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            try:
                item = _atom(kind, match, today, latest)
            except (ValueError, OverflowError):
                item = _Found(match.start(), match.end(), None, None, valid=False)
            if item is not None:
                atoms.append(item)
    atoms += _ranges(text, atoms, latest)
    found = []
    for atom in atoms:
        item = _with_prefixes(text, atom)
        if item.valid and item.needs_cue:
            continue
        if item.valid and not _in_range(item):
            item = replace(item, valid=False)
        found.append(item)
    return found


def _atom(kind: str, match: re.Match[str], today: date, latest: date) -> _Found | None:
    """The time one pattern's match names; None when it is not a time after all."""
    group = match.groupdict()
    start, end = match.start(), match.end()
    year = int(group["year"]) if group.get("year") else None
    if kind in ("iso", "day_month", "month_day", "month_year", "month"):
        month = int(group["mnum"]) if kind == "iso" else _MONTHS[group["month"][:3].lower()]
        day = int(group["day"]) if group.get("day") else None
        rel = (group.get("rel") or "").lower()
        if rel == "next":
            return _Found(start, end, None, None, valid=False)
        if kind == "month" and not rel and len(group["month"].rstrip(".")) == 3 and group["month"] != "may" \
                and not group["month"][0].isupper():
            return None  # "mar", "jan", "dec": words before they are months
        if rel:  # "last May": the May before this month; "this May": this year's
            this_year = date(today.year, month, 1)
            first = this_year if rel == "this" or this_year < date(today.year, today.month, 1) else \
                date(today.year - 1, month, 1)
            return _Found(start, end, first, _add_months(first, 1), unit="month", rank=1)
        if day is not None:
            when = date(year, month, day) if year is not None else _latest_day(month, day, latest)
            return _Found(start, end, when, when + timedelta(days=1), year=year,
                          recipe=None if year is not None else ("day", month, day))
        first = date(year, month, 1) if year is not None else _latest_month(month, latest)
        return _Found(start, end, first, _add_months(first, 1), unit="month", year=year, needs_cue=kind == "month",
                      recipe=None if year is not None else ("month", month, 0))
    if kind == "year":
        assert year is not None
        word = _NEXT_WORD.match(match.string, end)
        if word and word.group(1)[0].islower() and word.group(1) not in STOPWORDS:
            return None  # a count: "over 2000 commits"
        return _Found(start, end, date(year, 1, 1), date(year + 1, 1, 1), unit="year", year=year, needs_cue=True)
    if kind == "quarter":  # Q3 2023; "in Q3": the latest that has started
        month = 3 * int(group["quarter"]) - 2
        first = date(year, month, 1) if year is not None else _latest_month(month, latest)
        return _Found(start, end, first, _add_months(first, 3), unit="season", year=year, needs_cue=year is None)
    if kind == "season":
        return _season(match, today, latest, year)
    if kind == "weekday":
        return _weekday(match, today)
    if kind in ("today", "yesterday"):
        which = today - timedelta(days=kind == "yesterday")
        return _Found(start, end, which, which + timedelta(days=1), rank=1)
    if kind == "future":
        return _Found(start, end, None, None, valid=False)
    if kind == "period":
        return _period(match, today)
    if kind in ("last_n", "ago"):
        count, loose = _count(group["n"])
        unit = group["unit"].lower()
        if kind == "last_n":
            return _Found(start, end, _add(today, -count, unit), today + timedelta(days=1), unit="range", rank=1)
        return _centred(start, end, _add(today, -count, unit), unit, loose, rank=1)
    # "recently", "lately"
    return _Found(start, end, today - timedelta(days=SOFT_DAYS), today + timedelta(days=1), unit="soft", rank=0)


def _season(match: re.Match[str], today: date, latest: date, year: int | None) -> _Found:
    start, end = match.start(), match.end()
    season = match.group("season").lower()
    rel = (match.group("rel") or "").lower()
    if rel == "next":
        return _Found(start, end, None, None, valid=False)
    if year is not None:
        first = _season_start(season, year)
    elif rel == "this":  # this year's (this winter: the one that ends early next year, or under way)
        first = _season_start(season, today.year + (season == "winter" and today.month > 2))
    elif rel:  # "last summer": the latest that is over
        first = _latest_season(season, today)
        if _add_months(first, 3) > today:
            first = _add_months(first, -12)
    else:
        first = _latest_season(season, latest)
    return _Found(start, end, first, _add_months(first, 3), unit="season", rank=2 if year or not rel else 1,
                  year=year, needs_cue=not rel and year is None,
                  recipe=None if year is not None or rel else ("season", _SEASON_START[season], 0))


def _weekday(match: re.Match[str], today: date) -> _Found:
    rel = " ".join((match.group("rel") or "").lower().split())
    if rel == "next":
        return _Found(match.start(), match.end(), None, None, valid=False)
    wanted = _WEEKDAYS.index(match.group("weekday").lower())
    # "last Friday" is before today; "on Friday" may be today
    day = today - timedelta(days=(today.weekday() - wanted) % 7 or (7 if rel else 0))
    return _Found(match.start(), match.end(), day, day + timedelta(days=1), rank=1, needs_cue=not rel)


def _period(match: re.Match[str], today: date) -> _Found:
    start, end = match.start(), match.end()
    which, unit = match.group("which").lower(), match.group("unit").lower()
    rolling = which == "past" or (match.group("the") is not None and which == "last")
    tomorrow = today + timedelta(days=1)
    if rolling and unit != "weekend":  # "the past week": the last 7 days
        return _Found(start, end, _add(today, -1, unit), tomorrow, unit="range", rank=1)
    back = 0 if which == "this" else 1
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday() + 7 * back)
        if unit == "weekend":
            return _Found(start, end, monday + timedelta(days=5), monday + timedelta(days=7), unit="weekend", rank=1)
        return _Found(start, end, monday, monday + timedelta(days=7), unit="week", rank=1)
    if unit == "month":
        first = _add_months(date(today.year, today.month, 1), -back)
        return _Found(start, end, first, _add_months(first, 1), unit="month", rank=1)
    return _Found(start, end, date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1), unit="year", rank=1)


def _ranges(text: str, atoms: list[_Found], latest: date) -> list[_Found]:
    """ "between X and Y", "from X to Y": one window from X's start to Y's end."""
    by_start: dict[int, list[_Found]] = {}
    for atom in atoms:
        by_start.setdefault(atom.start, []).append(atom)
    merged = []
    for first in atoms:
        opener = _RANGE_START.search(text, max(0, first.start - 12), first.start)
        join = _RANGE_JOIN.match(text, first.end)
        if not (opener and join and first.valid and first.relation == "in"):
            continue
        for last in by_start.get(join.end(), []):
            if not last.valid:
                continue
            try:
                first_, last_ = _same_year(first, last, latest)
            except (ValueError, OverflowError):
                continue
            assert first_.since is not None and last_.until is not None
            merged.append(_Found(opener.start(), last.end, first_.since, last_.until, unit="range",
                                 rank=max(first.rank, last.rank), valid=first_.since < last_.until))
    return merged


def _same_year(first: _Found, last: _Found, latest: date) -> tuple[_Found, _Found]:
    """ "between August 11 and August 15 2023": the side without a year takes the other's."""
    if first.recipe and last.year is not None:
        moved = _resolve(first.recipe, last.year)
        assert last.since is not None and moved.since is not None
        if moved.since > last.since:
            moved = _resolve(first.recipe, last.year - 1)
        return replace(first, since=moved.since, until=moved.until), last
    if last.recipe and first.year is not None:
        moved = _resolve(last.recipe, first.year)
        assert first.since is not None and moved.since is not None
        if moved.since < first.since:
            moved = _resolve(last.recipe, first.year + 1)
        return first, replace(last, since=moved.since, until=moved.until)
    return first, last


def _resolve(recipe: tuple[str, int, int], year: int) -> _Found:
    kind, month, day = recipe
    if kind == "day":
        first = date(year, month, day)
        return _Found(0, 0, first, first + timedelta(days=1))
    if kind == "season":
        first = date(year - 1 if month == 12 else year, month, 1)
        return _Found(0, 0, first, _add_months(first, 3))
    first = date(year, month, 1)
    return _Found(0, 0, first, _add_months(first, 1))


# -- the words before a time ------------------------------------------------------------------------

def _with_prefixes(text: str, item: _Found) -> _Found:
    for _ in range(_PREFIX_STEPS):
        if not item.valid or item.relation != "in" or item.cued:
            return item
        match = _PREFIX.search(text, max(0, item.start - _PREFIX_REACH), item.start)
        if match is None:
            return item
        try:
            changed = _apply(match, item)
        except (ValueError, OverflowError):
            return replace(item, start=match.start(), valid=False)
        if changed is None:
            return item
        item = replace(changed, start=match.start(), needs_cue=False)
    return item


def _apply(match: re.Match[str], item: _Found) -> _Found | None:
    """`item` as the words `match` read before it change it; None when they do not apply to it."""
    group = {name: value.lower() for name, value in match.groupdict().items() if value}
    since, until = item.since, item.until
    assert since is not None and until is not None
    if "shift_n" in group:
        count, loose = _count(group["shift_n"])
        later = group["shift_dir"] in ("after", "later than")
        point = _add(since, count if later else -count, group["shift_unit"])
        return _centred(item.start, item.end, point, group["shift_unit"], loose, rank=item.rank)
    if "adj_unit" in group:
        unit = group["adj_unit"]
        if group["adj_dir"] == "after":
            return replace(item, since=until, until=_add(until, 1, unit), unit=unit)
        return replace(item, since=_add(since, -1, unit), until=since, unit=unit)
    if "wd" in group:
        wanted = _WEEKDAYS.index(group["wd"])
        if group["wd_dir"] == "after":
            day = until + timedelta(days=(wanted - until.weekday()) % 7)
        else:
            day = since - timedelta(days=(since.weekday() - wanted) % 7 or 7)
        return replace(item, since=day, until=day + timedelta(days=1), unit="day")
    if "we_dir" in group:
        if group["we_dir"] == "after":
            saturday = until + timedelta(days=(5 - until.weekday()) % 7)
        elif group["we_dir"] == "of":
            saturday = since + timedelta(days=5 - since.weekday())
        else:  # the weekend that ends before `since`
            latest_end = since - timedelta(days=2)
            saturday = latest_end - timedelta(days=(latest_end.weekday() - 5) % 7)
        return replace(item, since=saturday, until=saturday + timedelta(days=2), unit="weekend")
    if "nth" in group:
        if item.unit != "month":
            return None
        if group["nth"] == "last":
            return replace(item, since=until - timedelta(days=7), unit="week")
        first = since + timedelta(days=7 * ("first", "second", "third", "fourth").index(group["nth"]))
        return replace(item, since=first, until=first + timedelta(days=7), unit="week")
    if "week_of" in group:
        if item.unit != "day":
            return None
        monday = since - timedelta(days=since.weekday())
        return replace(item, since=monday, until=monday + timedelta(days=7), unit="week")
    if "half" in group:
        return _piece(item, 0 if group["half"] == "first" else 1, 2)
    if "part" in group:
        word = group["part"].split()[-2] if " " in group["part"] else group["part"]
        index = 0 if word in ("early", "beginning", "start") else 1 if word in ("mid", "middle") else 2
        return _piece(item, index, 3)
    if "rel" in group:
        rel = " ".join(group["rel"].split())
        if rel in ("before", "prior to", "earlier than"):
            return replace(item, since=None, until=since, relation="before")
        if rel in ("after", "later than"):
            return replace(item, since=until, until=None, relation="after")
        if rel == "since":
            return replace(item, until=None, relation="after")
        return replace(item, since=None, relation="before")  # until, by, as of, up to, through
    return replace(item, cued=True)  # "in", "during": read no further


def _piece(item: _Found, index: int, pieces: int) -> _Found | None:
    """The `index`th of `pieces` equal parts of a month, season or year (a month's thirds are the
    1st-10th, 11th-20th and 21st-end; its halves end on the 15th)."""
    since, until = item.since, item.until
    assert since is not None and until is not None
    if item.unit == "month":
        starts = (1, 11, 21) if pieces == 3 else (1, 16)
        first = since.replace(day=starts[index])
        last = since.replace(day=starts[index + 1]) if index + 1 < pieces else until
        return replace(item, since=first, until=last, unit="range")
    if item.unit in ("season", "year"):
        months = 12 if item.unit == "year" else 3
        if months % pieces == 0:
            step = months // pieces
            return replace(item, since=_add_months(since, step * index), until=_add_months(since, step * (index + 1)),
                           unit="month" if step == 1 else "range")
        days = (until - since).days
        return replace(item, since=since + timedelta(days=days * index // pieces),
                       until=since + timedelta(days=days * (index + 1) // pieces), unit="range")
    return None


# -- choosing one -----------------------------------------------------------------------------------

def _without_overlaps(found: list[_Found]) -> list[_Found]:
    """The longest time at each place, in text order; an impossible date keeps its place too."""
    kept: list[_Found] = []
    reached = -1
    for item in sorted(found, key=lambda item: (item.start, item.start - item.end)):
        if item.start >= reached:
            kept.append(item)
            reached = item.end
    return kept


def _hint(text: str, item: _Found, now: datetime) -> TimeHint:
    return TimeHint(since=_stamp(item.since, now), until=_stamp(item.until, now), spans=((item.start, item.end),),
                    relation=item.relation, phrase=" ".join(text[item.start:item.end].split()))


def _anchor(text: str, kept: list[_Found]) -> TimeHint | None:
    """ "before the migration": the first before/after followed by words that are not a time."""
    taken = [(item.start, item.end) for item in kept]
    for match in _ANCHOR.finditer(text):
        tail_end = match.end() + 200
        stop = _ANCHOR_END.search(text, match.end(), tail_end)
        limit = stop.start() if stop else min(len(text), tail_end)
        words: list[re.Match[str]] = []
        for word in _WORD.finditer(text, match.end(), limit):
            if word.group().lower() in _CLAUSE_WORDS or len(words) == ANCHOR_WORDS:
                break
            words.append(word)
        if not words or all(word.group().lower() in STOPWORDS for word in words):
            continue
        start, end = match.start(), words[-1].end()
        if any(start < other_end and other_start < end for other_start, other_end in taken):
            continue
        relation = "after" if match.group("rel").lower() == "after" else "before"
        return TimeHint(since=None, until=None, spans=((start, end),), relation=relation,
                        anchor=" ".join(word.group() for word in words), phrase=" ".join(text[start:end].split()))
    return None


# -- calendar arithmetic ----------------------------------------------------------------------------

def _in_frame(moment: datetime, now: datetime) -> datetime:
    """`moment` in `now`'s time zone (naive: local time)."""
    if now.tzinfo is None:
        return moment.astimezone().replace(tzinfo=None) if moment.tzinfo is not None else moment
    return moment.astimezone(now.tzinfo)


def _stamp(day: date | None, now: datetime) -> str | None:
    """Midnight starting `day` in `now`'s time zone, in the store's format."""
    return None if day is None else iso_from(datetime(day.year, day.month, day.day, tzinfo=now.tzinfo))


def _in_range(item: _Found) -> bool:
    """Whether the window's days can be written as store timestamps (years 1000-9999)."""
    return all(day is None or 1000 <= day.year <= 9999 for day in (item.since, item.until)) and (
        item.since is None or item.until is None or item.since < item.until)


def _add_months(day: date, count: int) -> date:
    year, month = divmod(day.year * 12 + day.month - 1 + count, 12)
    if not 1 <= year <= 9999:
        raise ValueError(f"year {year} is out of range")
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _add(day: date, count: int, unit: str) -> date:
    if unit in ("day", "week"):
        return day + timedelta(days=count * (7 if unit == "week" else 1))
    return _add_months(day, count * (12 if unit == "year" else 1))


def _centred(start: int, end: int, point: date, unit: str, loose: bool, rank: int) -> _Found:
    half = _UNIT_DAYS[unit] if loose else _HALF_WIDTH[unit]
    return _Found(start, end, point - timedelta(days=half), point + timedelta(days=half + 1), unit="range", rank=rank)


def _count(words: str) -> tuple[int, bool]:
    """("two" → 2, exact), ("a few" → 3, loose)."""
    last = words.lower().split()[-1]
    if last == "of":
        last = words.lower().split()[-2]
    if last.isdigit():
        return int(last), False
    if last in _LOOSE_NUMBERS:
        return _LOOSE_NUMBERS[last], True
    return _NUMBER_WORDS[last], False


def _latest_day(month: int, day: int, latest: date) -> date:
    """The latest `month`/`day` on or before `latest` (Feb 29: the latest leap day)."""
    for year in range(latest.year, latest.year - 9, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            if (month, day) != (2, 29):
                raise
            continue
        if found <= latest:
            return found
    raise ValueError(f"no {month}/{day} before {latest}")


def _latest_month(month: int, latest: date) -> date:
    return date(latest.year if month <= latest.month else latest.year - 1, month, 1)


def _season_start(season: str, year: int) -> date:
    """The first day of `season` `year` (winter 2022 runs from December 2021 to February 2022)."""
    month = _SEASON_START[season]
    return date(year - 1 if month == 12 else year, month, 1)


def _latest_season(season: str, latest: date) -> date:
    month = _SEASON_START[season]
    first = date(latest.year, month, 1)
    return first if first <= latest else date(latest.year - 1, month, 1)
