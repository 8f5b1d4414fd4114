"""Time in the question (issue 29, item 3) on LoCoMo: can a time prior help, and where?

`python -m bench when [--data FILE] [--json]`. Each question of categories 1-4 is read by
`index.when.time_hint` with `now` and `latest` both the time of its conversation's last session (when
the questions are asked). Per category: how many questions get a hint (a window, or an anchor event
such as "after the accident"), and for those with a window how often it holds the date of every
session that holds the evidence (`D8:6` is in session 8: `session_8_date_time`), how often it holds
at least one, and how narrow it is: median days (closed windows; before/after windows are open and
counted apart) and the median share of the conversation's sessions that fall in it. Beside it: the
median span of a conversation, for scale, and the parse time.

Windows that move with `now` ("recently", "last year") are counted apart from calendar dates: on
LoCoMo `now` is the last session, while the question meant the session it was asked about. A
calendar window that misses the evidence is the case to look at before a prior uses it: an event is
told after it happens ("dinner on May 3" is in the session of May 4), so the evidence is also
counted within a week after the window's end.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone

from claude_mem.domain import iso_from
from claude_mem.index.when import TimeHint, time_hint

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "locomo", "locomo-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MISSES_SHOWN = 12
# An event is often told days after it happened: the window stretched this far after its end.
SLACK = timedelta(days=7)


def session_times(conversation: dict) -> dict[int, datetime]:
    """Session number → its time ("1:56 pm on 8 May, 2023", read as UTC)."""
    found = {}
    for key, value in conversation.items():
        number = re.fullmatch(r"session_(\d+)_date_time", key)
        if number and value:
            moment = datetime.strptime(" ".join(value.split()), "%I:%M %p on %d %B, %Y")
            found[int(number.group(1))] = moment.replace(tzinfo=timezone.utc)
    return found


def evidence_sessions(evidence: list[str]) -> list[int]:
    """`["D8:6", "D9:17; D10:2"]` → `[8, 9, 10]` (ids that name no session are left out)."""
    return sorted({int(number) for item in evidence for number in re.findall(r"D(\d+):\d+", item)})


def holds(hint: TimeHint, moment: datetime, slack: timedelta = timedelta(0)) -> bool:
    """Whether `moment` is in the window, or at most `slack` after its end."""
    stamp = iso_from(moment)
    return (hint.since is None or hint.since <= stamp) and (hint.until is None or iso_from(moment - slack) < hint.until)


def width_days(hint: TimeHint) -> float | None:
    if hint.since is None or hint.until is None:
        return None
    since, until = (datetime.fromisoformat(stamp.replace("Z", "+00:00")) for stamp in (hint.since, hint.until))
    return (until - since).total_seconds() / 86400


def share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def main(argv: list[str]) -> dict[str, object]:
    path = argv[argv.index("--data") + 1] if "--data" in argv else DATA
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    rows: list[dict] = []  # one per question: its category and what the hint did
    spans, parse_us, misses = [], [], []
    for sample in samples:
        sessions = session_times(sample["conversation"])
        if not sessions:
            continue
        now = max(sessions.values())
        spans.append((now - min(sessions.values())).days)
        for qa in sample["qa"]:
            name = CATEGORIES.get(qa.get("category"))
            wanted = [sessions[number] for number in evidence_sessions(qa.get("evidence") or []) if number in sessions]
            if name is None or not wanted:
                continue
            started = time.perf_counter()
            hint = time_hint(qa["question"], now, latest=now)
            parse_us.append((time.perf_counter() - started) * 1e6)
            row = {"category": name, "hint": hint}
            if hint is not None and hint.anchor is None:
                # A window that moves with `now` (latest kept) is relative to now: "recently", "last year".
                later = time_hint(qa["question"], now + timedelta(days=400), latest=now)
                row.update(relative=later is None or (later.since, later.until) != (hint.since, hint.until),
                           all=all(holds(hint, moment) for moment in wanted),
                           any=any(holds(hint, moment) for moment in wanted),
                           all_week_after=all(holds(hint, moment, SLACK) for moment in wanted), days=width_days(hint),
                           sessions_inside=sum(holds(hint, moment) for moment in sessions.values()) / len(sessions))
                if not row["all"] and not row["relative"] and len(misses) < MISSES_SHOWN:
                    misses.append({"question": qa["question"], "phrase": hint.phrase, "since": hint.since,
                                   "until": hint.until, "evidence_sessions": [iso_from(m)[:10] for m in wanted]})
            rows.append(row)
    categories = {name: figures(
        [row for row in rows if name == "all" or row["category"] == name]) for name in [*CATEGORIES.values(), "all"]}
    return {
        "data": os.path.basename(path),
        "conversations": len(samples),
        "median_conversation_days": statistics.median(spans) if spans else None,
        "parse_us_p50": round(statistics.median(parse_us), 1) if parse_us else None,
        "categories": categories,
        "calendar_misses": misses,
    }


def figures(rows: list[dict]) -> dict[str, object]:
    windows = [row for row in rows if "all" in row]
    calendar = [row for row in windows if not row["relative"]]
    days = [row["days"] for row in windows if row["days"] is not None]
    return {
        "questions": len(rows),
        "hinted": sum(row["hint"] is not None for row in rows),
        "anchors": sum(row["hint"] is not None and row["hint"].anchor is not None for row in rows),
        "windows": len(windows),
        "window_holds_all_evidence": share([row["all"] for row in windows]),
        "window_holds_any_evidence": share([row["any"] for row in windows]),
        "median_window_days": round(statistics.median(days), 1) if days else None,
        # how far a filter on the window would narrow the search: the share of the conversation's sessions in it
        "median_sessions_inside": round(statistics.median(row["sessions_inside"] for row in windows), 3) if windows else None,
        "open_windows": len(windows) - len(days),
        "calendar_windows": len(calendar),
        "calendar_holds_all_evidence": share([row["all"] for row in calendar]),
        "calendar_holds_all_within_a_week_after": share([row["all_week_after"] for row in calendar]),
    }


if __name__ == "__main__":
    result = main(sys.argv[1:])
    print(json.dumps(result) if "--json" in sys.argv else json.dumps(result, indent=2))
