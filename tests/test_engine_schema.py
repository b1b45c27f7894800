"""The declarative schema: DDL, the dependency graph, fill order and its errors."""

from __future__ import annotations

import sqlite3

import pytest

from ebench.engine.schema import INTEGER, TEXT, Column, Schema, SchemaError, Table


def _t(name: str, *refs: str, self_ref: bool = False) -> Table:
    cols = [Column("id", INTEGER, primary_key=True)]
    cols += [Column(f"{r}_id", INTEGER, references=r) for r in refs]
    if self_ref:
        cols.append(Column("parent_id", INTEGER, references=name))
    return Table(name, f"{name} table", tuple(cols))


def test_fill_order_puts_parents_before_children_and_is_stable():
    # Declared in an order that is not topological: children first.
    schema = Schema((_t("comments", "songs", "users"), _t("songs", "albums"), _t("albums", "artists"), _t("users"), _t("artists")))
    order = schema.fill_order()
    for table in schema.tables:
        for fk in table.foreign_keys:
            assert order.index(fk.ref_table) < order.index(table.name), fk
    # Among ready tables, declaration order wins: the order is a function of the schema.
    assert order == ["users", "artists", "albums", "songs", "comments"]
    assert Schema(schema.tables).fill_order() == order


def test_self_reference_is_not_a_cycle():
    schema = Schema((_t("comments", "users", self_ref=True), _t("users")))
    assert schema.fill_order() == ["users", "comments"]
    assert schema.dependencies()["comments"] == ["users"]


def test_cycle_is_an_error_naming_the_tables():
    schema = Schema((_t("a", "c"), _t("b", "a"), _t("c", "b"), _t("root")))
    with pytest.raises(SchemaError) as err:
        schema.fill_order()
    message = str(err.value)
    assert "cycle" in message
    for name in ("a", "b", "c"):
        assert name in message
    assert "root" not in message


def test_unknown_referenced_table_is_an_error_naming_it():
    with pytest.raises(SchemaError, match=r"songs\.albums_id references unknown table 'albums'"):
        Schema((_t("songs", "albums"),))


def test_unknown_referenced_column_and_bad_declarations_are_errors():
    with pytest.raises(SchemaError, match="unknown column albums.code"):
        Schema(
            (_t("albums"), Table("songs", "", (Column("id", INTEGER, primary_key=True), Column("a", INTEGER, references="albums.code"))))
        )
    with pytest.raises(SchemaError, match="declared twice"):
        Schema((_t("a"), _t("a")))
    with pytest.raises(SchemaError, match="unknown type"):
        Table("t", "", (Column("id", "BLOB"),))
    with pytest.raises(SchemaError, match="has no column"):
        Table("t", "", (Column("id", INTEGER),), unique=(("nope",),))
    with pytest.raises(SchemaError, match="reserved"):
        Schema((_t("_ebench_x"),))


def test_ddl_creates_constraints_that_sqlite_enforces():
    schema = Schema(
        (
            Table("users", "", (Column("id", INTEGER, primary_key=True), Column("name", TEXT, not_null=True, unique=True))),
            Table(
                "posts",
                "",
                (
                    Column("id", INTEGER, primary_key=True),
                    Column("user_id", INTEGER, not_null=True, references="users"),
                    Column("score", INTEGER, not_null=True, check="score BETWEEN 0 AND 10"),
                ),
            ),
            Table(
                "likes",
                "",
                (Column("user_id", INTEGER, references="users"), Column("post_id", INTEGER, references="posts")),
                primary_key=("user_id", "post_id"),
            ),
        )
    )
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA foreign_keys=ON")
    for statement in schema.ddl():
        conn.execute(statement)
    conn.execute("INSERT INTO users VALUES (1, 'ann')")
    conn.execute("INSERT INTO posts VALUES (1, 1, 5)")
    conn.execute("INSERT INTO likes VALUES (1, 1)")
    bad = [
        "INSERT INTO users VALUES (2, 'ann')",  # unique
        "INSERT INTO users VALUES (3, NULL)",  # not null
        "INSERT INTO posts VALUES (2, 99, 5)",  # foreign key
        "INSERT INTO posts VALUES (3, 1, 11)",  # check
        "INSERT INTO likes VALUES (1, 1)",  # composite primary key
    ]
    for sql in bad:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(sql)
    # Every foreign key column is indexed (tools join on them).
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_posts_user_id", "idx_likes_post_id"} <= indexes


def test_music_schema_matches_the_papers_size(music):
    schema = music.schema
    assert 12 <= len(schema.tables) <= 16
    assert 16 <= len(schema.foreign_keys) <= 29
    assert schema.column_count >= 72
    assert schema.fill_order()[0] == "genres"
    volatile = {t.name: t.volatile_columns for t in schema.tables if t.volatile_columns}
    assert volatile == {"playlist_songs": ["position"]}
