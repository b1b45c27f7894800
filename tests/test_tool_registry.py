"""The tool registry: schemas from signatures, argument validation, atomic writes."""

from __future__ import annotations

import inspect
import sqlite3
from typing import Literal

import pytest

from ebench.engine.tools import ToolEnv, ToolError, ToolRegistry, parse_docstring

REG = ToolRegistry("test")


@REG.read
def find_items(
    env: ToolEnv,
    name: str,
    limit: int = 10,
    ratio: float = 0.5,
    exact: bool = False,
    ids: list[int] | None = None,
    kind: Literal["a", "b"] = "a",
    owner_id: int | None = None,
) -> dict:
    """Find items by name.

    Longer explanation that the model also sees.

    Args:
        name: Words to find.
        limit: How many at most, a number that is
            explained over two lines.
        ratio: A ratio.
        exact: Exact matches only.
        ids: Only these items.
        kind: The kind.
        owner_id: Only this owner's.
    """
    return {"name": name, "limit": limit, "ratio": ratio, "exact": exact, "ids": ids, "kind": kind, "owner_id": owner_id}


@REG.write
def add_two(env: ToolEnv, value: int) -> dict:
    """Insert two rows, then fail if the value is negative (after the first insert).

    Args:
        value: The value.
    """
    env.conn.execute("INSERT INTO t (v) VALUES (?)", (value,))
    if value < 0:
        raise ToolError("invalid_value", "negative")
    if value == 13:
        env.conn.execute("INSERT INTO missing_table VALUES (1)")  # a bug: internal_error
    env.conn.execute("INSERT INTO t (v) VALUES (?)", (value + 1,))
    return {"ok": True}


@pytest.fixture()
def env() -> ToolEnv:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE t (v INTEGER)")
    return ToolEnv(conn, actor_id=1, now="2026-01-01 00:00:00")


def test_schema_comes_from_the_signature_and_docstring():
    tool = REG.get("find_items")
    assert tool.kind == "read"
    assert tool.summary == "Find items by name."
    assert "Longer explanation" in tool.description and "Args:" not in tool.description
    props = tool.parameters["properties"]
    assert tool.parameters["required"] == ["name"]
    assert tool.parameters["additionalProperties"] is False
    assert props["name"] == {"type": "string", "description": "Words to find."}
    assert props["limit"] == {
        "type": "integer",
        "description": "How many at most, a number that is explained over two lines.",
        "default": 10,
    }
    assert props["ratio"]["type"] == "number"
    assert props["exact"] == {"type": "boolean", "description": "Exact matches only.", "default": False}
    assert props["ids"] == {"type": "array", "items": {"type": "integer"}, "description": "Only these items."}
    assert props["kind"] == {"enum": ["a", "b"], "type": "string", "description": "The kind.", "default": "a"}
    assert props["owner_id"] == {"type": "integer", "description": "Only this owner's."}
    schema = tool.openai_schema()
    assert schema["type"] == "function" and schema["function"]["name"] == "find_items"
    assert schema["function"]["parameters"] is tool.parameters


def test_declaration_errors():
    reg = ToolRegistry("x")

    def undocumented(env, a: int) -> dict:
        return {}

    with pytest.raises(TypeError, match="needs a docstring"):
        reg.read(undocumented)

    def arg_not_documented(env, a: int) -> dict:
        """Does things."""

    with pytest.raises(TypeError, match="not documented"):
        reg.read(arg_not_documented)

    def untyped(env, a) -> dict:
        """Does things.

        Args:
            a: An a.
        """

    with pytest.raises(TypeError, match="type annotation"):
        reg.read(untyped)

    def odd_type(env, a: dict) -> dict:
        """Does things.

        Args:
            a: An a.
        """

    with pytest.raises(TypeError, match="unsupported"):
        reg.read(odd_type)
    reg.read(find_items)
    with pytest.raises(ValueError, match="declared twice"):
        reg.read(find_items)


def test_parse_docstring_sections():
    summary, description, args = parse_docstring(
        """Do it.

        More.

        Args:
            a: First.
            b (int): Second,
                continued.

        Returns:
            Things.
        """
    )
    assert summary == "Do it."
    assert args == {"a": "First.", "b": "Second, continued."}
    assert "Returns:" in description and "First." not in description


def test_valid_call_passes_arguments_and_defaults(env):
    result = REG.call(env, "find_items", {"name": "x", "ids": [1, 2.0], "owner_id": None, "kind": "b"})
    assert result.ok, result.error_message
    assert result.value == {"name": "x", "limit": 10, "ratio": 0.5, "exact": False, "ids": [1, 2], "kind": "b", "owner_id": None}
    assert isinstance(result.value["ids"][1], int)  # 2.0 became 2
    assert REG.call(env, "find_items", '{"name": "y", "limit": 3.0}').value["limit"] == 3
    assert REG.call(env, "find_items", {"name": "y", "ratio": 2}).value["ratio"] == 2


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "missing required argument(s): name"),
        ({"name": "x", "colour": 1}, "does not take 'colour'"),
        ({"name": 3}, "'name' must be a string"),
        ({"name": "x", "limit": "3"}, "'limit' must be an integer, got string"),
        ({"name": "x", "limit": True}, "'limit' must be an integer, got boolean"),
        ({"name": "x", "limit": 2.5}, "'limit' must be an integer"),
        ({"name": "x", "exact": "yes"}, "'exact' must be true or false"),
        ({"name": "x", "ids": 3}, "'ids' must be an array"),
        ({"name": "x", "ids": [1, "2"]}, "item 1 must be an integer"),
        ({"name": "x", "kind": "c"}, '\'kind\' must be one of "a", "b"'),
        ({"name": "x", "owner_id": "me"}, "'owner_id' must be an integer"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, got array"),
    ],
)
def test_invalid_arguments_are_reported_not_raised(env, args, fragment):
    result = REG.call(env, "find_items", args)
    assert not result.ok
    assert result.error_code == "invalid_arguments"
    assert fragment in result.error_message
    assert result.payload() == {"error": {"code": "invalid_arguments", "message": result.error_message}}


def test_unknown_tool_suggests_close_names(env):
    result = REG.call(env, "find_item", {})
    assert result.error_code == "unknown_tool"
    assert "find_items" in result.error_message


def test_failing_write_changes_nothing(env):
    assert REG.call(env, "add_two", {"value": 1}).ok
    assert env.conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2
    refused = REG.call(env, "add_two", {"value": -1})  # fails after its first insert
    assert refused.error_code == "invalid_value"
    crashed = REG.call(env, "add_two", {"value": 13})  # a bug inside the tool
    assert crashed.error_code == "internal_error" and "missing_table" in crashed.error_message
    assert env.conn.execute("SELECT v FROM t ORDER BY v").fetchall() == [(1,), (2,)]
    assert not env.conn.in_transaction  # no savepoint left open


def test_callables_are_the_tools_as_functions(env):
    funcs = REG.callables(env)
    assert set(funcs) == {"find_items", "add_two"}
    find = funcs["find_items"]
    assert find.__name__ == "find_items" and "Find items by name." in find.__doc__
    assert str(inspect.signature(find)).startswith("(*, name: str, limit: int = 10")
    assert find(name="x", limit=2)["limit"] == 2
    with pytest.raises(ToolError) as err:
        find(name="x", limit="two")
    assert err.value.code == "invalid_arguments"
    with pytest.raises(ToolError):
        funcs["add_two"](value=-5)
    assert env.conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # the failed write left nothing


@pytest.mark.parametrize("name", [["find_items"], {"a": 1}, None, 3])
def test_a_garbage_tool_name_is_an_unknown_tool(env, name):
    result = REG.call(env, name, {})
    assert result.error_code == "unknown_tool"


def test_paginate_with_positional_and_named_parameters_and_each_kind_of_count():
    import sqlite3

    from ebench.engine.tools import PAGE_SIZE, ToolEnv, paginate

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT)")
    conn.executemany("INSERT INTO t (k) VALUES (?)", [("a" if i % 3 else "b",) for i in range(100)])
    env = ToolEnv(conn=conn, actor_id=1, now="2026-01-01 00:00:00")
    expected = [r[0] for r in conn.execute("SELECT id FROM t WHERE k = 'a' ORDER BY id")]
    variants = [
        ("SELECT id FROM t WHERE k = ?", ["a"], None),
        ("SELECT id FROM t WHERE k = :k", {"k": "a"}, None),
        ("SELECT id FROM t WHERE k = :k", {"k": "a"}, "SELECT COUNT(*) FROM t WHERE k = :k"),
        ("SELECT id FROM t WHERE k = ?", ["a"], ("SELECT COUNT(*) FROM t WHERE k = ?", ["a"])),
        ("SELECT id FROM t WHERE k = ?", ["a"], len(expected)),
    ]
    for select, params, count in variants:
        pages = -(-len(expected) // PAGE_SIZE)
        seen = []
        for n in range(1, pages + 2):
            page = paginate(env, select, params, n, "id", count=count)
            assert (page["total"], page["total_pages"], page["page"]) == (len(expected), pages, n)
            seen += [r["id"] for r in page["items"]]
        assert seen == expected, (select, count)


def test_codes_and_kinds_are_enums_equal_to_their_strings(env):
    import json

    from ebench.engine.tools import ErrorCode, ToolKind

    assert {t.name: t.kind for t in REG} == {"find_items": ToolKind.READ, "add_two": ToolKind.WRITE}
    assert ToolKind.WRITE == "write" and f"{ToolKind.READ}" == "read"
    assert {str(c) for c in ErrorCode} == {
        "unknown_tool",
        "invalid_arguments",
        "invalid_value",
        "not_found",
        "forbidden",
        "conflict",
        "internal_error",
    }
    assert REG.call(env, "nope", {}).error_code is ErrorCode.UNKNOWN_TOOL
    refused = REG.call(env, "add_two", {"value": -1})  # a plain string code works as well
    assert refused.error_code == ErrorCode.INVALID_VALUE
    assert refused.to_json() == json.dumps({"error": {"code": "invalid_value", "message": refused.error_message}})


def test_value_mismatch_is_the_one_check_of_a_value_against_a_parameter():
    from ebench.engine.tools import INT64_MAX, Mismatch, value_mismatch

    params = {p.name: p for p in REG.get("find_items").params}
    assert params["owner_id"].accepts == {"type": "integer", "nullable": True}
    assert params["kind"].accepts == {"enum": ["a", "b"], "type": "string"}
    assert value_mismatch(params["owner_id"].accepts, None) is None
    assert value_mismatch(params["limit"].accepts, None) == Mismatch("integer", None)
    assert value_mismatch(params["limit"].accepts, 3.0) is None
    assert value_mismatch(params["limit"].accepts, INT64_MAX + 1) == Mismatch("integer", INT64_MAX + 1, out_of_range=True)
    assert value_mismatch(params["kind"].accepts, "c") == Mismatch("enum", "c", ("a", "b"))
    assert value_mismatch({"enum": [1, 2]}, True) == Mismatch("enum", True, (1, 2))  # true is not 1
    assert value_mismatch(params["ids"].accepts, [1, "2"]) == Mismatch("array", [1, "2"], item=1, inner=Mismatch("integer", "2"))
    assert value_mismatch({"type": "object"}, []) == Mismatch("object", [])
    assert value_mismatch({}, object()) is None  # no type: any value
