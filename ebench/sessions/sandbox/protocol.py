"""The parent's side of the pipe protocol: frames in, validated messages out.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. The worker is
hostile: every frame is size-checked, decoded with json only (nothing is ever evaluated), and
checked against the shape its type allows. Anything else is a ProtocolError and the worker dies.
The text it sends may hold lone surrogates (the block printed them); `clean_text` escapes them
before they reach the solver or the session.
"""

from __future__ import annotations

import json
from typing import Any


class ProtocolError(Exception):
    """The worker sent something the protocol does not allow."""


def encode(msg: dict[str, Any]) -> bytes:
    data = json.dumps(msg, ensure_ascii=False, default=_unjsonable).encode("utf-8", "surrogatepass")
    return len(data).to_bytes(4, "big") + data


def _unjsonable(value: Any) -> Any:
    return repr(value)


def clean_text(text: str) -> str:
    """Text from the worker as valid Unicode: a lone surrogate becomes its escape (\\ud800), as
    the block would see it printed with backslashreplace."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class FrameReader:
    """Accumulates bytes and yields complete frames, refusing oversized ones."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.buffer += data
        messages = []
        while len(self.buffer) >= 4:
            size = int.from_bytes(self.buffer[:4], "big")
            if size > self.max_bytes:
                raise ProtocolError(f"a message of {size} bytes exceeds the limit of {self.max_bytes}")
            if len(self.buffer) < 4 + size:
                break
            raw = bytes(self.buffer[4 : 4 + size])
            del self.buffer[: 4 + size]
            messages.append(decode(raw))
        return messages


def decode(raw: bytes) -> dict[str, Any]:
    try:
        msg = json.loads(raw.decode("utf-8", "surrogatepass"))
    except RecursionError:  # the worker never nests this deep (it refuses such tool arguments)
        raise ProtocolError("a message is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"a message is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(msg, dict) or not isinstance(msg.get("t"), str):
        raise ProtocolError("a message is not an object with a type")
    check = _CHECKS.get(msg["t"])
    if check is None:
        raise ProtocolError(f"unknown message type {msg['t'][:40]!r}")
    check(msg)
    return msg


def _need(msg: dict[str, Any], key: str, kinds: tuple[type, ...], optional: bool = False) -> None:
    if key not in msg:
        if optional:
            return
        raise ProtocolError(f"{msg['t']} message lacks {key!r}")
    value = msg[key]
    if isinstance(value, bool) and bool not in kinds:
        raise ProtocolError(f"{msg['t']}.{key} has the wrong type")
    if not isinstance(value, kinds):
        raise ProtocolError(f"{msg['t']}.{key} has the wrong type")


def _ready(msg: dict[str, Any]) -> None:
    _need(msg, "isolation", (dict,))
    if not all(isinstance(k, str) and isinstance(v, bool) for k, v in msg["isolation"].items()):
        raise ProtocolError("ready.isolation must map names to booleans")


def _call(msg: dict[str, Any]) -> None:
    _need(msg, "id", (int,))
    _need(msg, "tool", (str,))
    _need(msg, "args", (dict,))


def _out(msg: dict[str, Any]) -> None:
    _need(msg, "data", (str,))


def _done(msg: dict[str, Any]) -> None:
    _need(msg, "ok", (bool,))
    for key in ("value", "error", "limit"):
        _need(msg, key, (str, type(None)))


_CHECKS = {"ready": _ready, "call": _call, "out": _out, "done": _done}
