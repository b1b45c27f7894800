"""What a member can do in the library's app, acting as themself: look books up, see their loans
and holds, renew or return a loan, place or cancel a hold."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from ebench.api import ToolEnv, ToolError, ToolRegistry, not_found, paginate

TOOLS = ToolRegistry("loans")
RENEWAL_DAYS = 14

BOOK_SELECT = """SELECT b.id AS book_id, b.title, b.author_id, a.name AS author, b.genre, b.published_year
FROM books b JOIN authors a ON a.id = b.author_id"""
LOAN_SELECT = """SELECT l.id AS loan_id, l.book_id, b.title, b.genre, l.borrowed_on, l.due_on, l.returned_on, l.renewals
FROM loans l JOIN books b ON b.id = l.book_id"""
HOLD_SELECT = """SELECT h.id AS hold_id, h.book_id, b.title, b.genre, h.placed_at
FROM holds h JOIN books b ON b.id = h.book_id"""


def _own_loan(env: ToolEnv, loan_id: int) -> dict[str, Any]:
    loan = env.one(f"{LOAN_SELECT} WHERE l.id = ? AND l.member_id = ?", (loan_id, env.actor_id))
    if loan is None:
        raise not_found("loan of yours", loan_id)
    return loan


@TOOLS.read
def get_my_profile(env: ToolEnv) -> dict[str, Any]:
    """The current member's profile, with how many books they have out and how many holds."""
    member = env.one("SELECT id AS member_id, name, email, joined_on FROM members WHERE id = ?", (env.actor_id,))
    assert member is not None
    member["books_out"] = env.scalar("SELECT COUNT(*) FROM loans WHERE member_id = ? AND returned_on IS NULL", (env.actor_id,))
    member["holds"] = env.scalar("SELECT COUNT(*) FROM holds WHERE member_id = ?", (env.actor_id,))
    member["today"] = env.now[:10]
    return member


@TOOLS.read
def search_books(env: ToolEnv, query: str = "", genre: str | None = None, page: int = 1) -> dict[str, Any]:
    """Books whose title or author contains `query` (case-insensitive), in pages of 20.

    Args:
        query: Part of a title or an author's name; empty lists every book.
        genre: Only books of this genre (fiction, mystery, history, science, poetry).
        page: The page, from 1.
    """
    pattern = f"%{query.strip()}%"
    where = "WHERE (b.title LIKE ? OR a.name LIKE ?)" + (" AND b.genre = ?" if genre else "")
    params = [pattern, pattern, *([genre] if genre else [])]
    return paginate(env, f"{BOOK_SELECT} {where}", params, page, "b.title, b.id")


@TOOLS.read
def get_book(env: ToolEnv, book_id: int) -> dict[str, Any]:
    """A book and whether it is on the shelf (nobody has it out).

    Args:
        book_id: The book's id.
    """
    book = env.one(f"{BOOK_SELECT} WHERE b.id = ?", (book_id,))
    if book is None:
        raise not_found("book", book_id)
    book["on_shelf"] = not env.scalar("SELECT 1 FROM loans WHERE book_id = ? AND returned_on IS NULL", (book_id,))
    return book


@TOOLS.read
def list_my_loans(env: ToolEnv, status: Literal["open", "returned", "all"] = "open", page: int = 1) -> dict[str, Any]:
    """The current member's loans, soonest due first, in pages of 20.

    Args:
        status: "open" (books out now), "returned", or "all".
        page: The page, from 1.
    """
    where = {"open": " AND l.returned_on IS NULL", "returned": " AND l.returned_on IS NOT NULL", "all": ""}[status]
    return paginate(env, f"{LOAN_SELECT} WHERE l.member_id = ?{where}", [env.actor_id], page, "l.due_on, l.id")


@TOOLS.read
def list_my_holds(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """The current member's holds, oldest first, in pages of 20.

    Args:
        page: The page, from 1.
    """
    return paginate(env, f"{HOLD_SELECT} WHERE h.member_id = ?", [env.actor_id], page, "h.placed_at, h.id")


@TOOLS.write
def renew_loan(env: ToolEnv, loan_id: int) -> dict[str, Any]:
    """Renew a book the current member has out: it is due 14 days later than it was.

    Args:
        loan_id: The loan's id.
    """
    loan = _own_loan(env, loan_id)
    if loan["returned_on"] is not None:
        raise ToolError("conflict", f"Loan {loan_id} was returned on {loan['returned_on']}; only a book you have out can be renewed.")
    due = (datetime.strptime(loan["due_on"], "%Y-%m-%d") + timedelta(days=RENEWAL_DAYS)).strftime("%Y-%m-%d")
    env.conn.execute("UPDATE loans SET due_on = ?, renewals = renewals + 1 WHERE id = ?", (due, loan_id))
    return _own_loan(env, loan_id)


@TOOLS.write
def return_book(env: ToolEnv, loan_id: int) -> dict[str, Any]:
    """Return a book the current member has out (it is returned today).

    Args:
        loan_id: The loan's id.
    """
    loan = _own_loan(env, loan_id)
    if loan["returned_on"] is not None:
        raise ToolError("conflict", f"Loan {loan_id} was already returned on {loan['returned_on']}.")
    env.conn.execute("UPDATE loans SET returned_on = ? WHERE id = ?", (env.now[:10], loan_id))
    return _own_loan(env, loan_id)


@TOOLS.write
def place_hold(env: ToolEnv, book_id: int) -> dict[str, Any]:
    """Place a hold on a book for the current member.

    Args:
        book_id: The book's id.
    """
    if env.scalar("SELECT 1 FROM books WHERE id = ?", (book_id,)) is None:
        raise not_found("book", book_id)
    if env.scalar("SELECT 1 FROM holds WHERE member_id = ? AND book_id = ?", (env.actor_id, book_id)):
        raise ToolError("conflict", f"You already have a hold on book {book_id}.")
    cur = env.conn.execute("INSERT INTO holds (member_id, book_id, placed_at) VALUES (?, ?, ?)", (env.actor_id, book_id, env.now))
    return env.one(f"{HOLD_SELECT} WHERE h.id = ?", (cur.lastrowid,)) or {}


@TOOLS.write
def cancel_hold(env: ToolEnv, hold_id: int) -> dict[str, Any]:
    """Cancel one of the current member's holds.

    Args:
        hold_id: The hold's id.
    """
    hold = env.one(f"{HOLD_SELECT} WHERE h.id = ? AND h.member_id = ?", (hold_id, env.actor_id))
    if hold is None:
        raise not_found("hold of yours", hold_id)
    env.conn.execute("DELETE FROM holds WHERE id = ?", (hold_id,))
    return {"cancelled": hold}
