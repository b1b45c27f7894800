"""Seeded generators, one per table. Every member has books out (some overdue) and a queue of
holds, spread over a few weeks so that dates repeat: the templates' boundaries need that."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from ebench.api import FillContext, Row

from .schema import GENRES

LOAN_DAYS = 21


def _today(ctx: FillContext) -> datetime:
    return datetime.strptime(ctx.now[:10], "%Y-%m-%d")


def _day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def authors(ctx: FillContext) -> Iterator[Row]:
    for i in range(1, 41):
        yield {"id": i, "name": ctx.faker.name()}


def books(ctx: FillContext) -> Iterator[Row]:
    author_ids = ctx.ids("authors")
    for i in range(1, 241):
        title = ctx.faker.catch_phrase().title()
        yield {
            "id": i,
            "title": title,
            "author_id": ctx.rng.choice(author_ids),
            "genre": ctx.rng.choice(GENRES),
            "published_year": ctx.rng.randint(1950, 2026),
        }


def members(ctx: FillContext) -> Iterator[Row]:
    for i in range(1, 41):
        name = ctx.faker.name()
        joined = _today(ctx) - timedelta(days=ctx.rng.randint(400, 3000))
        yield {"id": i, "name": name, "email": f"member{i}@library.example", "joined_on": _day(joined)}


def loans(ctx: FillContext) -> Iterator[Row]:
    today = _today(ctx)
    book_ids = ctx.ids("books")
    for member in ctx.ids("members"):
        chosen = ctx.rng.sample(book_ids, 20)
        for n, book in enumerate(chosen):
            if n < 12:  # out now: borrowed within the last five weeks, some overdue
                borrowed = today - timedelta(days=ctx.rng.randint(1, 35))
                returned = None
            else:
                borrowed = today - timedelta(days=ctx.rng.randint(60, 360))
                returned = _day(borrowed + timedelta(days=ctx.rng.randint(3, 25)))
            due = borrowed + timedelta(days=LOAN_DAYS)
            yield {"member_id": member, "book_id": book, "borrowed_on": _day(borrowed), "due_on": _day(due), "returned_on": returned}


def holds(ctx: FillContext) -> Iterator[Row]:
    today = _today(ctx)
    book_ids = ctx.ids("books")
    for member in ctx.ids("members"):
        for book in sorted(ctx.rng.sample(book_ids, ctx.rng.randint(14, 22))):
            placed = today - timedelta(days=ctx.rng.randint(1, 20), minutes=ctx.rng.randint(0, 1439))
            yield {"member_id": member, "book_id": book, "placed_at": placed.strftime("%Y-%m-%d %H:%M:%S")}


GENERATORS = {"authors": authors, "books": books, "members": members, "loans": loans, "holds": holds}
