"""meeting: an enterprise collaboration platform in the spirit of Tencent Meeting."""

from __future__ import annotations

from ...engine.domain import Domain, package_description, package_source_files
from .checks import CHECKS
from .data import GENERATORS
from .schema import SCHEMA
from .tools import TOOLS

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
    description=package_description(__file__),
    actor_table="employees",
    actor_noun="employee",
    actor_label_sql="SELECT name || ' (' || employee_no || ', ' || title || ')' FROM employees WHERE id = ?",
    faker_locales=["zh_CN", "en_US", "en_GB", "en_IN"],
    templates_module=f"{__name__}.templates",
    parts_module=f"{__name__}.parts",
    tool_cases_module=f"{__name__}.tool_cases",
    source_files=package_source_files(__file__),
)
