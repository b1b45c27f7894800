"""meeting: an enterprise collaboration platform in the spirit of Tencent Meeting."""

from __future__ import annotations

from pathlib import Path

from ..engine.domain import Domain
from .checks import CHECKS
from .data import GENERATORS
from .schema import SCHEMA
from .tools import TOOLS

_HERE = Path(__file__).parent

DOMAIN = Domain(
    name="meeting",
    title="Enterprise meeting and collaboration platform",
    version="1",
    default_seed=20261015,
    now="2026-10-15 09:30:00",
    schema=SCHEMA,
    generators=GENERATORS,
    checks=CHECKS,
    tools=TOOLS,
    description=(_HERE / "description.md").read_text(encoding="utf-8").strip(),
    actor_table="employees",
    actor_noun="employee",
    actor_label_sql="SELECT name || ' (' || employee_no || ', ' || title || ')' FROM employees WHERE id = ?",
    faker_locales=["zh_CN", "en_US", "en_GB", "en_IN"],
    templates_module=f"{__name__}.templates",
    tool_cases_module=f"{__name__}.tool_cases",
    source_files=[
        _HERE / "schema.py",
        _HERE / "data.py",
        _HERE / "checks.py",
        _HERE / "vocabulary.py",
        _HERE.parent / "engine" / "fill.py",
        _HERE.parent / "engine" / "repair.py",
        _HERE.parent / "engine" / "moments.py",
    ],
)
