"""music: a streaming platform in the spirit of QQ Music."""

from __future__ import annotations

from ...engine.domain import Domain, package_description, package_source_files
from .checks import CHECKS
from .data import GENERATORS
from .schema import SCHEMA
from .tools import SONG_SEARCH, TOOLS

DOMAIN = Domain(
    name="music",
    title="Music streaming platform",
    version="1",
    default_seed=20260115,
    now="2026-10-15 20:30:00",
    schema=SCHEMA,
    generators=GENERATORS,
    checks=CHECKS,
    tools=TOOLS,
    description=package_description(__file__),
    actor_table="users",
    actor_noun="listener",
    actor_label_sql="SELECT display_name || ' (@' || username || ')' FROM users WHERE id = ?",
    search_indexes=[SONG_SEARCH],
    faker_locales=["en_US", "en_GB", "ko_KR", "ja_JP", "zh_CN", "zh_TW", "es_ES", "es_MX", "pt_BR", "fr_FR", "de_DE", "sv_SE"],
    templates_module=f"{__name__}.templates",
    parts_module=f"{__name__}.parts",
    tool_cases_module=f"{__name__}.tool_cases",
    source_files=package_source_files(__file__),
)
