"""loans: a public library's member app, the worked example of a domain outside ebench.

The package's entry point (pyproject.toml, group "ebench.domains") names `DOMAIN`; ebench finds
it there, and everything else (tools, templates, tool cases) through it.
"""

from __future__ import annotations

from pathlib import Path

from ebench.api import Domain

from .checks import CHECKS
from .data import GENERATORS
from .schema import SCHEMA
from .tools import TOOLS

_HERE = Path(__file__).parent

DESCRIPTION = """You are the assistant in the member app of Riverside Public Library. You act for one
library member (the current user) through the app's tools: search the catalogue, look a book up,
list the member's loans (books out now, or returned) and holds, renew or return a loan, place or
cancel a hold. A renewal moves a loan's due date 14 days later. Listings come in pages of 20;
read every page when the request concerns all of something. Dates are YYYY-MM-DD and "before" a
day excludes that day. The library's clock is frozen: now is 2026-06-01 12:00:00, and "today"
means 2026-06-01. Act only on what the member asks; change nothing else."""

DOMAIN = Domain(
    name="loans",
    title="Library loans",
    version="1",
    default_seed=20260601,
    now="2026-06-01 12:00:00",
    schema=SCHEMA,
    generators=GENERATORS,
    checks=CHECKS,
    tools=TOOLS,
    description=DESCRIPTION,
    actor_table="members",
    actor_noun="member",
    actor_label_sql="SELECT name FROM members WHERE id = ?",
    templates_module=f"{__name__}.templates",
    tool_cases_module=f"{__name__}.tool_cases",
    source_files=[_HERE / "schema.py", _HERE / "data.py", _HERE / "checks.py"],
)
