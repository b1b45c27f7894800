"""The benchmark's worlds as a whole: the paper's sizes, tool counts, and what every domain shares.

Per-domain rules are tested beside each domain (test_<domain>_world.py, test_<domain>_tools.py);
here every registered domain is held to the same contract, through the CLI a user would run.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import builtin_domain_names, domain_names, get_domain
from ebench.engine.tools import READ, WRITE
from ebench.engine.world import content_hash, ensure_world, scratch_copy

DOMAINS = domain_names()  # the contract every domain meets, a plug-in's too
BUILTIN = builtin_domain_names()  # the paper's sizes and totals are about the three shipped products


@pytest.fixture(scope="module")
def stats(ebench_home):
    result = CliRunner().invoke(app, ["domains", "stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return {d["domain"]: d for d in data["domains"]}, data["total"]


def test_the_three_products_of_the_paper_are_built_in():
    assert BUILTIN == ["music", "meeting", "moba"]
    assert DOMAINS[: len(BUILTIN)] == BUILTIN  # plug-ins, if any, come after them


@pytest.mark.parametrize("name", BUILTIN)
def test_each_world_has_the_papers_size(stats, name):
    """Section 3.5: 12-16 tables, 16-29 FKs, 72-168 columns, 18.6K-29.4K rows per domain."""
    world = stats[0][name]
    assert 12 <= world["tables"] <= 16
    assert 16 <= world["foreign_keys"] <= 29
    assert 72 <= world["columns"] <= 168
    assert 18_000 <= world["rows"] <= 29_400
    assert world["orphans"] == 0
    assert all(t["rows"] > 0 for t in world["per_table"]), [t["table"] for t in world["per_table"] if not t["rows"]]


def test_the_worlds_together_match_the_papers_totals(stats):
    per_domain, total = stats
    assert total["rows"] == sum(d["rows"] for d in per_domain.values())
    per_domain = {name: per_domain[name] for name in BUILTIN}
    assert sum(d["rows"] for d in per_domain.values()) >= 76_000
    assert sum(d["cells"] for d in per_domain.values()) >= 600_000
    users = {name: d["users"] for name, d in per_domain.items()}
    assert users["music"] == 54
    assert 160 <= users["moba"] <= 180  # about 170 players
    assert 980 <= users["meeting"] <= 1010  # about 995 employees


@pytest.mark.parametrize("name", BUILTIN)
def test_each_domain_offers_25_to_33_tools_with_at_least_8_writes(name):
    tools = list(get_domain(name).tools)
    assert 25 <= len(tools) <= 33
    assert sum(t.kind == WRITE for t in tools) >= 8
    assert {t.kind for t in tools} == {READ, WRITE}


@pytest.mark.parametrize("name", DOMAINS)
def test_each_domain_describes_itself_to_the_solver(name):
    domain = get_domain(name)
    assert len(domain.description) > 300
    assert "now" in domain.description.lower()
    # The description's "now" is the world's frozen clock, not the machine's.
    assert domain.now[:4] == "2026"


@pytest.mark.parametrize("name", DOMAINS)
def test_tool_schemas_are_valid_openai_function_specs(name):
    schemas = get_domain(name).tools.openai_schemas()
    names = [s["function"]["name"] for s in schemas]
    assert len(names) == len(set(names))
    for spec in schemas:
        fn = spec["function"]
        assert spec["type"] == "function" and fn["description"].strip()
        params = fn["parameters"]
        assert params["type"] == "object"
        assert set(params.get("required", [])) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop.get("description"), (fn["name"], prop)


@pytest.mark.parametrize("name", DOMAINS)
def test_the_world_file_is_never_modified_by_tool_calls(name, ebench_home):
    """Every write tool called on a scratch copy: the copy changes, the world file does not."""
    domain = get_domain(name)
    path = ensure_world(domain)
    before = path.read_bytes()
    conn = scratch_copy(path)
    initial = content_hash(conn)
    env = domain.env(conn, conn.execute(f"SELECT MIN(id) FROM {domain.actor_table}").fetchone()[0])
    for tool in domain.tools:
        domain.tools.call(env, tool.name, {})  # mostly refused for missing arguments; never a crash
    world = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert content_hash(world) != "" and path.read_bytes() == before
    world.close()
    conn.execute(f"DELETE FROM {domain.schema.fill_order()[-1]}")  # a change on the copy
    assert content_hash(conn) != initial
    assert path.read_bytes() == before
    conn.close()
