"""The user's preferences, kept in `<data dir>/settings.toml`: a typed model (`AppSettings`).

The file is a flat TOML table. The fields the app reads are typed (the theme); any other key of a
string, integer or boolean is kept as it was, so a file written by a newer ebench loses nothing when
an older one saves it. Reading never raises: a missing file is the defaults, a damaged one is the
defaults and a one-line reason, a value of the wrong type is dropped with a one-line reason.
Writing is atomic (a temporary file in the same directory, then `os.replace`), so a crash mid-write
leaves the old file whole.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from .paths import write_text_atomically

FILENAME = "settings.toml"

Value = str | int | bool


def _without_default(schema: JsonDict) -> None:
    schema.pop("default", None)  # an unset field is absent from the file, not null: TOML has no null


class AppSettings(BaseModel):
    """The settings file's table: the fields the app reads, and the keys it keeps for others."""

    model_config = ConfigDict(extra="allow", title="ebench app settings (<data dir>/settings.toml, a TOML table)")

    # Keys the app does not read: kept, when they are a string, an integer or a boolean.
    __pydantic_extra__: dict[str, StrictStr | StrictInt | StrictBool] = Field(init=False)

    theme: StrictStr | SkipJsonSchema[None] = Field(
        default=None,
        description="the theme last chosen in the app (F10, the palette); `--theme` wins for one run and is not saved",
        json_schema_extra=_without_default,
    )

    def values(self) -> dict[str, Value]:
        """What the file holds: the fields set, then the other keys."""
        return self.model_dump(exclude_none=True)


def settings_path(home: Path) -> Path:
    return home / FILENAME


def load_settings(path: Path) -> tuple[AppSettings, str | None]:
    """The settings in `path` and None, or the defaults (or what was usable) and why not all was read."""
    if not path.is_file():
        return AppSettings(), None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return AppSettings(), f"{path}: ignored: {exc}"
    try:
        return AppSettings.model_validate(data), None
    except ValidationError as exc:
        bad = sorted({str(error["loc"][0]) for error in exc.errors() if error["loc"]})
    kept = {key: value for key, value in data.items() if key not in bad}
    wanted = ", ".join(f"{key} ({_expected(key)})" for key in bad)
    return AppSettings.model_validate(kept), f"{path}: ignored {wanted}"


def _expected(key: str) -> str:
    """What a key of the file must hold, in words."""
    return "a string" if key in AppSettings.model_fields else "a string, integer or boolean"


def dumps(values: Mapping[str, Value]) -> str:
    """TOML for a flat table of strings, integers and booleans (JSON's string escapes are TOML's)."""
    lines = []
    for key, value in sorted(values.items()):
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


def save_settings(path: Path, settings: AppSettings) -> None:
    """Write `settings` to `path` atomically; raises OSError when it cannot."""
    text = dumps(settings.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, text, prefix=".settings-")


def settings_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the settings table (TOML's table is JSON's object)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **AppSettings.model_json_schema()}
