"""Arguments for the tool latency benchmark (benchmarks/tool_calls.py): `cases` maps a label to a
call's arguments, `LOOKUPS` names the tools held to the lookup goal."""

from __future__ import annotations

import sqlite3

# The actor measured: the member with the most holds (the longest listing).
ACTOR_SQL = "SELECT member_id FROM holds GROUP BY member_id ORDER BY COUNT(*) DESC, member_id LIMIT 1"
LOOKUPS = {"get_my_profile", "get_book"}


def cases(conn: sqlite3.Connection, actor: int) -> dict[str, dict]:
    def one(sql: str, *params: object) -> object:
        return conn.execute(sql, params).fetchone()[0]

    loan = one("SELECT id FROM loans WHERE member_id = ? AND returned_on IS NULL LIMIT 1", actor)
    unheld = one("SELECT id FROM books WHERE id NOT IN (SELECT book_id FROM holds WHERE member_id = ?) LIMIT 1", actor)
    return {
        "get_my_profile": {},
        "search_books": {"query": ""},
        "get_book": {"book_id": one("SELECT MIN(id) FROM books")},
        "list_my_loans": {"status": "all"},
        "list_my_holds": {},
        "renew_loan": {"loan_id": loan},
        "return_book": {"loan_id": loan},
        "place_hold": {"book_id": unheld},
        "cancel_hold": {"hold_id": one("SELECT id FROM holds WHERE member_id = ? LIMIT 1", actor)},
    }
