"""The user's preferences, kept in `<data dir>/settings.toml`: the theme, and room for more.

A flat TOML table of string, integer and boolean keys. Reading never raises: a missing file is no
settings, a damaged one is no settings and a one-line reason. Writing is atomic (a temporary file
in the same directory, then `os.replace`), so a crash mid-write leaves the old file whole.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from ..paths import write_text_atomically

FILENAME = "settings.toml"

Value = str | int | bool


def settings_path(home: Path) -> Path:
    return home / FILENAME


def load_settings(path: Path) -> tuple[dict[str, Value], str | None]:
    """The settings in `path` and None, or no settings and why the file was ignored."""
    if not path.is_file():
        return {}, None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: ignored: {exc}"
    settings = {str(k): v for k, v in data.items() if isinstance(v, str | int | bool)}
    if len(settings) != len(data):
        return settings, f"{path}: only string, integer and boolean values are read; others ignored"
    return settings, None


def dumps(settings: dict[str, Value]) -> str:
    """TOML for a flat table of strings, integers and booleans (JSON's string escapes are TOML's)."""
    lines = []
    for key, value in sorted(settings.items()):
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, str):
            text = json.dumps(value, ensure_ascii=False)
        else:
            raise TypeError(f"setting {key!r}: unsupported value {value!r}")
        lines.append(f"{json.dumps(key, ensure_ascii=False)} = {text}\n")
    return "".join(lines)


def save_settings(path: Path, settings: dict[str, Value]) -> None:
    """Write `settings` to `path` atomically; raises OSError when it cannot."""
    text = dumps(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, text, prefix=".settings-")
