"""moba: a MOBA game platform in the spirit of Honor of Kings."""

from __future__ import annotations

from ...engine.domain import Domain, package_description, package_source_files
from .checks import CHECKS
from .data import GENERATORS
from .schema import SCHEMA
from .tools import TOOLS

DOMAIN = Domain(
    name="moba",
    title="MOBA game platform",
    version="1",
    default_seed=20261015,
    now="2026-10-15 21:00:00",
    schema=SCHEMA,
    generators=GENERATORS,
    checks=CHECKS,
    tools=TOOLS,
    description=package_description(__file__),
    actor_table="players",
    actor_noun="player",
    actor_label_sql="SELECT nickname || ' (' || region || ', ' || tier || ')' FROM players WHERE id = ?",
    faker_locales=["en_US", "en_GB", "zh_CN", "zh_TW", "ko_KR", "ja_JP", "id_ID", "vi_VN", "de_DE", "es_MX", "pt_BR", "tr_TR"],
    templates_module=f"{__name__}.templates",
    parts_module=f"{__name__}.parts",
    tool_cases_module=f"{__name__}.tool_cases",
    source_files=package_source_files(__file__),
)
