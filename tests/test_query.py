"""The engine's query helper: WHERE clauses built with their parameters, rows by id, date and text checks."""

from __future__ import annotations

import sqlite3

import pytest

from ebench.engine.query import (
    NamedWhere,
    Where,
    bool_columns,
    check_date,
    check_date_range,
    check_text,
    is_date,
    require,
    sql_literal,
)
from ebench.engine.tools import ErrorCode, ToolEnv, ToolError


@pytest.fixture
def env() -> ToolEnv:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE songs (id INTEGER PRIMARY KEY, title TEXT, plays INTEGER);"
        "INSERT INTO songs VALUES (1, 'Rain', 10), (2, 'Sun''s Out', 30), (3, 'Rainbow', 20);"
    )
    return ToolEnv(conn, actor_id=1, now="2026-10-20 12:00:00")


# -- Where ---------------------------------------------------------------------------------


def test_an_empty_where_renders_nothing_or_always_true():
    where = Where()
    assert (where.clause, where.condition, where.params) == ("", "1", [])
    assert (NamedWhere().clause, NamedWhere().params) == ("", {})


def test_positional_conditions_keep_their_parameters_in_order(env: ToolEnv):
    where = Where().add("title LIKE ?", "Rain%").add("plays >= ?", 15)
    assert where.clause == " WHERE title LIKE ? AND plays >= ?"
    assert where.condition == "title LIKE ? AND plays >= ?"
    assert where.params == ["Rain%", 15]
    assert env.all("SELECT id FROM songs" + where.clause, where.params) == [{"id": 3}]


def test_a_condition_may_bind_several_values_or_none():
    where = Where().add("id IN (?, ?)", 1, 2).add("plays > 0")
    assert (where.condition, where.params) == ("id IN (?, ?) AND plays > 0", [1, 2])


def test_named_parameters_include_those_bound_for_the_whole_statement(env: ToolEnv):
    where = NamedWhere(me=1).add("plays >= :least", least=20)
    assert where.params == {"me": 1, "least": 20}
    rows = env.all(f"SELECT id, id = :me AS mine FROM songs WHERE {where.condition} ORDER BY id", where.params)
    assert rows == [{"id": 2, "mine": 0}, {"id": 3, "mine": 0}]


def test_params_are_a_copy():
    where = Where().add("id = ?", 1)
    where.params.append(2)
    named = NamedWhere(u=1)
    named.params["u"] = 2
    assert (where.params, named.params) == ([1], {"u": 1})


# -- rows by id ----------------------------------------------------------------------------


def test_require_returns_the_row_or_refuses_as_not_found(env: ToolEnv):
    assert require(env, "songs", 2, "song") == {"id": 2, "title": "Sun's Out", "plays": 30}
    with pytest.raises(ToolError) as refused:
        require(env, "songs", 9, "song")
    assert (refused.value.code, refused.value.message) == (ErrorCode.NOT_FOUND, "No song with id 9.")


# -- dates and text ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["2024-05-31", "2024-02-29", "0001-01-01"])
def test_real_days_are_dates(text: str):
    assert is_date(text)
    assert check_date(text, "day", example="2024-05-31") == text


@pytest.mark.parametrize("text", ["2024-5-1", "2023-02-29", "2024-13-01", "2024-05-31 10:00", "", "yesterday", " 2024-05-31"])
def test_anything_else_is_refused_with_the_example(text: str):
    assert not is_date(text)
    with pytest.raises(ToolError) as refused:
        check_date(text, "released_after", example="2024-05-31")
    assert refused.value.code == ErrorCode.INVALID_VALUE
    assert refused.value.message == f"released_after must be a date like 2024-05-31, got {text!r}."


def test_a_date_left_out_is_none():
    assert check_date(None, "day", example="2024-05-31") is None
    check_date_range(None, None, "start_date", "end_date", example="2024-05-31")
    check_date_range("2024-05-31", None, "start_date", "end_date", example="2024-05-31")


def test_a_range_must_not_end_before_it_starts():
    check_date_range("2024-05-31", "2024-05-31", "start_date", "end_date", example="2024-05-31")
    with pytest.raises(ToolError) as refused:
        check_date_range("2024-06-01", "2024-05-31", "start_date", "end_date", example="2024-05-31")
    assert refused.value.message == "start_date (2024-06-01) is after end_date (2024-05-31)."
    with pytest.raises(ToolError) as refused:
        check_date_range("2024-06-01", "2024-6-2", "start_date", "end_date", example="2026-05-31")
    assert refused.value.message == "end_date must be a date like 2026-05-31, got '2024-6-2'."


def test_text_is_stripped_and_its_length_checked():
    assert check_text("  Road trip  ", "A playlist name", 60) == "Road trip"
    assert check_text("   ", "A note", 100, shortest=0) == ""
    for bad in ("   ", "x" * 61):
        with pytest.raises(ToolError) as refused:
            check_text(bad, "A playlist name", 60)
        assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_VALUE, "A playlist name must be 1 to 60 characters long.")


def test_sql_literal_quotes_for_sqlite(env: ToolEnv):
    for text in ["Sun's Out", "'", "''; DROP TABLE songs; --", "Ω"]:
        assert env.scalar(f"SELECT {sql_literal(text)}") == text
    title = sql_literal("Sun's Out")
    assert env.scalar(f"SELECT COUNT(*) FROM songs WHERE title = {title}") == 1


def test_bool_columns_turn_0_and_1_into_booleans_and_keep_null():
    shape = bool_columns("liked", "attended")
    assert shape({"liked": 1, "attended": None, "plays": 0}) == {"liked": True, "attended": None, "plays": 0}
    assert shape({"liked": 0}) == {"liked": False}
