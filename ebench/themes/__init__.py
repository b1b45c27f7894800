"""The app's themes, as data: one TOML file per theme.

The built-in themes are the `*.toml` files beside this module; users add their own as TOML files
in `<data dir>/themes/` (same format, see `ebench-dark.toml`). Besides Textual's colours, a theme
sets the diff colours as theme variables (`$diff-matched`, `$diff-missing`, `$diff-unexpected`,
`$diff-wrong`), so every view of a diff follows the theme.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.theme import Theme

from ..errors import InputError

DEFAULT_THEME = "ebench-dark"
HERE = Path(__file__).parent

# What a theme that leaves them out (or a Textual built-in theme) gets for the diff colours.
DIFF_VARIABLES = {
    "diff-matched": "#4FB477",
    "diff-missing": "#E8A33D",
    "diff-unexpected": "#E0575B",
    "diff-wrong": "#C77DDB",
}

_COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface", "panel", "boost")


class ThemeFileError(InputError, ValueError):
    pass


@dataclass
class ThemeSet:
    themes: list[Theme] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # user theme files that could not be read


def parse_theme(data: dict[str, Any], source: str) -> Theme:
    """A Textual theme from a theme file's table; ThemeFileError names what is wrong."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{source}: 'name' must be a non-empty string")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{source}: 'primary' (a colour) is required")
    unknown = sorted(set(data) - {"name", "dark", "variables", *_COLOURS})
    if unknown:
        raise ThemeFileError(f"{source}: unknown keys {', '.join(unknown)}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{source}: [variables] must map names to colour strings")
    colours = {key: data[key] for key in _COLOURS if key in data}
    bad = [key for key, value in colours.items() if not isinstance(value, str)]
    if bad:
        raise ThemeFileError(f"{source}: {', '.join(bad)} must be colour strings")
    from textual.color import Color, ColorParseError

    for key, value in [*colours.items(), *variables.items()]:
        try:
            Color.parse(value)
        except ColorParseError:
            raise ThemeFileError(f"{source}: {key} = {value!r} is not a colour") from None
    return Theme(name=name.strip(), dark=bool(data.get("dark", True)), variables={**DIFF_VARIABLES, **variables}, **colours)


def load_theme_file(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeFileError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path}: not valid TOML: {exc}") from None
    return parse_theme(data, str(path))


def builtin_themes() -> list[Theme]:
    return [load_theme_file(path) for path in sorted(HERE.glob("*.toml"))]


def user_themes(folder: Path) -> ThemeSet:
    """The themes in a folder; a bad file is reported and skipped, never fatal."""
    found = ThemeSet()
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.toml")):
        try:
            found.themes.append(load_theme_file(path))
        except ThemeFileError as exc:
            found.errors.append(str(exc))
    return found


def all_themes(user_folder: Path | None) -> ThemeSet:
    found = ThemeSet(builtin_themes())
    if user_folder is not None:
        users = user_themes(user_folder)
        found.themes.extend(users.themes)
        found.errors.extend(users.errors)
    return found
