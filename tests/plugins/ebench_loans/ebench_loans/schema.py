"""The library's tables: members borrow books, place holds on them; books have authors."""

from __future__ import annotations

from ebench.api import INTEGER, TEXT, Column, Schema, Table

GENRES = ("fiction", "mystery", "history", "science", "poetry")
DAY_CHECK = "GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'"


def pk() -> Column:
    return Column("id", INTEGER, primary_key=True)


def day(name: str, not_null: bool = True, doc: str = "") -> Column:
    return Column(name, TEXT, not_null=not_null, check=f"{name} {DAY_CHECK}", doc=doc)


SCHEMA = Schema(
    (
        Table("authors", "Writers of the library's books.", (pk(), Column("name", TEXT, not_null=True))),
        Table(
            "books",
            "Titles in the catalogue.",
            (
                pk(),
                Column("title", TEXT, not_null=True),
                Column("author_id", INTEGER, not_null=True, references="authors"),
                Column("genre", TEXT, not_null=True, check=f"genre IN ({', '.join(repr(g) for g in GENRES)})"),
                Column("published_year", INTEGER, not_null=True),
            ),
        ),
        Table(
            "members",
            "Library card holders (the actors).",
            (pk(), Column("name", TEXT, not_null=True), Column("email", TEXT, not_null=True, unique=True), day("joined_on")),
        ),
        Table(
            "loans",
            "A book a member borrowed; open until returned.",
            (
                pk(),
                Column("member_id", INTEGER, not_null=True, references="members"),
                Column("book_id", INTEGER, not_null=True, references="books"),
                day("borrowed_on"),
                day("due_on"),
                day("returned_on", not_null=False, doc="NULL while the book is out"),
                Column("renewals", INTEGER, not_null=True, default=0, check="renewals >= 0"),
            ),
            indexes=(("member_id", "due_on"),),
        ),
        Table(
            "holds",
            "A member's reservation of a book, placed at a moment.",
            (
                pk(),
                Column("member_id", INTEGER, not_null=True, references="members"),
                Column("book_id", INTEGER, not_null=True, references="books"),
                Column("placed_at", TEXT, not_null=True),
            ),
            unique=(("member_id", "book_id"),),
        ),
    )
)
