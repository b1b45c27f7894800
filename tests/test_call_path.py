"""The call path made cheaper writes the very same session bytes (issue 34 §2).

Session lines are made as bytes (orjson's own output, searched for what must be escaped without a
text round trip), written unbuffered in one write, and a payload's JSON made to measure it against
the recording caps goes into the line as made. Each must give the bytes the text encoder gave: the
reference below is the session line as ebench made it before (json.dumps for what orjson refuses,
secrets redacted in text, the raw line breaks and lone surrogates escaped).
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import ErrorCode
from ebench.sessions.events import ToolCallEvent, event_from, recorded_call
from ebench.sessions.payload_caps import RecordingBudget, RecordingCaps, marker
from ebench.sessions.record import (
    REDACTED,
    SessionWriter,
    _jsonable,
    _stdlib_line,
    _write_all,
    encoded_value,
    read_session,
    session_bytes,
    session_line,
    value_json,
)
from ebench.sessions.trial import ENCODED_REUSED, Trial

_OLD_UNSAFE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
_OLD_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def reference_line(record: dict[str, Any], secrets: list[str] = []) -> str:  # noqa: B006 (never changed)
    """The session line as the text encoder made it (ebench before the bytes path)."""
    try:
        line = orjson.dumps(record, default=_jsonable, option=_OLD_OPTIONS).decode()
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        line = _stdlib_line(record)
    for secret in secrets:
        if secret in line:
            line = line.replace(secret, REDACTED)
    if line.isascii():
        return line
    return _OLD_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@dataclasses.dataclass
class Point:
    x: int
    y: int

    def to_dict(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y}


VALUES: list[Any] = [
    None,
    True,
    3,
    2.5,
    float("nan"),
    "plain ascii",
    "Émile, Björk, Sigur Rós",  # Latin-1: no line break character can be in it
    "東京 🎵 — “quoted”",
    "a\u2028b\u2029c\x85d",  # raw line breaks: escaped
    "lone \ud800 surrogate",  # orjson refuses: json's line
    "nul \x00 and tab \t",
    {"rows": [{"name": "Zoë", "plays": 12}, {"name": "Åsa\u2028", "plays": 3}]},
    {1: "int key", (1, 2): "tuple key"},  # keys that are not strings
    {"big": 10**30},  # beyond 64 bits: json's line
    {"when": datetime.datetime(2024, 5, 1, 12, 0), "point": Point(1, 2), "set": {1}, "bytes": b"ab\xff"},
    nested(252),
    nested(253),  # as deep as orjson writes inside a line
    nested(254),  # one deeper: json's line, also when encoded beforehand
    nested(400),
]
SECRETS = [["sk-live-123456"], ["Zoë-secret-77"], ["sk-\ud800-lone"], []]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_a_session_line_is_the_text_encoders_line(value):
    for secrets in SECRETS:
        record = {"event": "tool_call", "t": 0.25, "result": value, "note": f"key {secrets[0] if secrets else ''} here"}
        expected = reference_line(record, secrets)
        assert session_line(record, secrets) == expected
        assert session_bytes(record, secrets) == expected.encode("utf-8")


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_a_payload_encoded_beforehand_goes_into_the_line_unchanged(value):
    record = {"event": "tool_call", "t": 0.25, "args": {"q": "é"}, "result": value}
    encoded = encoded_value(value)
    if encoded is None:  # orjson cannot write it inside a line: nothing is made beforehand
        assert orjson_refuses_in_a_line(value)
        return
    assert encoded.decode() == value_json(value)  # the measure the caps take is the same text
    assert session_bytes(record, [], {"result": encoded}) == reference_line(record).encode("utf-8")


def orjson_refuses_in_a_line(value: Any) -> bool:
    try:
        orjson.dumps({"result": value}, default=_jsonable, option=_OLD_OPTIONS)
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        return True
    return False


def test_the_caps_measure_by_the_encoding_and_mark_as_before():
    """keep_encoded: a value kept whole comes with its line JSON; one beyond the caps is the marker
    of its text (the JSON decoded), with nothing encoded; strings and numbers are not encoded."""
    page = {"items": [{"title": f"Song {i} — Zoë"} for i in range(40)]}  # about 1,000 bytes
    size = len(value_json(page).encode())
    budget = RecordingBudget(RecordingCaps(value=2 * size, block=8 * size, trial=4 * size + 600))
    small = {"artist_id": 3}
    assert budget.keep_encoded(small) == (small, False, encoded_value(small))
    assert budget.keep_encoded("text " * 100) == ("text " * 100, False, None)  # 500 bytes charged
    assert budget.keep_encoded(7) == (7, False, None)
    kept = [budget.keep_encoded(page) for _ in range(6)]
    assert [k[1] for k in kept] == [False] * 4 + [True] * 2  # 4 pages fit in the trial's budget
    assert all(k[2] == encoded_value(page) for k in kept[:4])
    assert kept[4][0] == kept[5][0] == marker(page, head=False) and kept[4][2] is None  # the trial's budget spent: no head
    fresh = RecordingBudget(RecordingCaps(value=2 * size, block=8 * size, trial=4 * size + 600))
    huge = {"x": "y" * 3 * size}  # over the value cap: its marker, with its head
    assert fresh.keep_encoded(huge) == (marker(huge), True, None) and fresh.keep(page) == (page, False)


def test_a_trials_calls_are_written_as_the_text_encoder_wrote_them(tmp_path, music_world):
    """Every line a trial writes (calls with results kept whole, truncated, in error, refused, with
    text beyond ASCII) is the line the text encoder makes of the event read back."""
    path = tmp_path / "s.jsonl"
    trial = Trial(
        None,
        domain=get_domain("music"),
        actor=1,
        writer=SessionWriter(path, ["sk-never-written"]),
        solver={"name": "test", "api_key": "sk-never-written"},
        recording=RecordingCaps(value=16_000, block=32_000, trial=20_000),
    )
    calls = [
        ("get_artist", {"artist_id": 3}),
        ("search_songs", {"query": "love"}),
        ("search_songs", {"page": 2}),
        ("get_song", {"song_id": "x"}),
        ("no_such_tool", {}),
        (["a", "list"], "{not json"),
        ("search_songs", {"query": "a\u2028b"}),
        ("get_my_profile", {}),
    ]
    for _ in range(3):
        for name, args in calls:
            trial.call(name, args)
    trial.close()
    lines = path.read_bytes().split(b"\n")[:-1]
    assert len(lines) == 1 + 3 * len(calls) and b"sk-never-written" not in path.read_bytes()
    events = read_session(path).events
    capped = reused = 0
    for line, event in zip(lines, events):
        assert line == reference_line(event.record(), ["sk-never-written"]).encode("utf-8")
        capped += bool(getattr(event, "capped", None))
        reused += not getattr(event, "capped", None) and len(value_json(getattr(event, "result", None))) >= ENCODED_REUSED
    assert capped and reused  # results recorded truncated, and whole ones written from the JSON the caps made


def test_a_line_is_written_whole_when_the_file_takes_it_in_parts(tmp_path):
    class Trickle(io.FileIO):
        def write(self, data: Any) -> int:
            return super().write(bytes(data)[:7])

    target = tmp_path / "f.jsonl"
    line = json.dumps({"event": "x", "text": "é" * 100}, ensure_ascii=False).encode() + b"\n"
    with Trickle(str(target), "w") as handle:
        _write_all(handle, line)
    assert target.read_bytes() == line


def test_the_writer_continues_a_file_and_keeps_its_lines(tmp_path):
    path: Path = tmp_path / "s.jsonl"
    first = SessionWriter(path)
    first.write("message", role="user", content="Zoë\u2028")
    first.close()
    second = SessionWriter(path, resume_at=1.0)
    second.write("message", role="user", content="again")
    second.close()
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and [json.loads(line)["content"] for line in lines[:-1]] == ["Zoë\u2028", "again"]
    assert "\u2028" not in path.read_text(encoding="utf-8")  # escaped in the line


_CALL = {
    "event": "tool_call",
    "t": 0.0,
    "id": "call-3",
    "tool": "get_song",
    "args": {"song_id": 4},
    "ok": True,
    "result": {"id": 4, "t": "x"},
}
_CALL_END = {"error_code": None, "seconds": 0.000012, "parent": None, "turn": 2}


@pytest.mark.parametrize(
    ("fields", "as_given"),
    [
        ({**_CALL, **_CALL_END}, True),  # made without validation
        ({**_CALL, **_CALL_END, "args_in": "message", "capped": ["result"]}, True),
        ({**_CALL, "ok": False, **_CALL_END, "parent": "call-2", "turn": None, "error_code": "not_found"}, True),
        ({**_CALL, "tool": ["a", "list"], "args": "{bad json", **_CALL_END}, True),  # whatever the solver sent
        # validated: a type the model converts, or a field the fast path does not know
        ({**_CALL, **_CALL_END, "error_code": ErrorCode.NOT_FOUND}, False),
        ({**_CALL, **_CALL_END, "turn": True}, False),
        ({**_CALL, **_CALL_END, "seconds": 1}, False),
        ({**_CALL, **_CALL_END, "capped": ("result",)}, False),
        (
            {**_CALL, **_CALL_END, "sent": {"tool": "x", "args": {}}, "injected": "rate_limited", "altered": ["shuffled"], "latency": 0.5},
            False,
        ),
        ({**_CALL, **_CALL_END, "someone_elses": 1}, False),
    ],
)
def test_a_call_made_without_validation_is_the_validated_model(fields, as_given):
    """`recorded_call` makes the model `event_from` validates: the same type, values, fields set,
    extra fields, dump and session line; made of the fields as given, the dict is the line the
    writer writes (stamped), as the model's record() would make it."""
    given = dict(fields)
    (fast, made_as_given), (checked, ok) = recorded_call(given), event_from(dict(fields))
    assert ok and type(fast) is type(checked) is ToolCallEvent and made_as_given == as_given
    assert fast == checked and fast.__dict__ == checked.__dict__
    assert {k: type(v) for k, v in fast.__dict__.items()} == {k: type(v) for k, v in checked.__dict__.items()}
    assert fast.model_fields_set == checked.model_fields_set and fast.__pydantic_extra__ == checked.__pydantic_extra__
    assert fast.record() == checked.record() and fast.model_dump() == checked.model_dump() and fast.to_dict() == checked.to_dict()
    assert session_bytes(fast.record()) == session_bytes(checked.record())
    if as_given and "args_in" not in given:
        given["t"] = fast.t = 1.25
        assert session_bytes(given) == session_bytes(fast.record())
