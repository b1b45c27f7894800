"""Task templates of the library: each pairs a SQL generator (`draft`, privileged reads of the
world) with a public solver (`solve`, the member's tools only). The only module of the domain
that imports the template-writing part of ebench.api (Template, Draft, PublicAPI...)."""

from __future__ import annotations

from typing import Any

from ebench.api import Condition, Draft, GenContext, NoTarget, PublicAPI, Step, Template, pretty_day


class LibraryTemplate(Template):
    """`make` draws one member; `draft` tries a few members before giving up."""

    tries = 10

    def make(self, ctx: GenContext, member: int) -> Draft:
        raise NotImplementedError

    def draft(self, ctx: GenContext) -> Draft:
        members = ctx.column("SELECT id FROM members ORDER BY id")
        reason = NoTarget("no member")
        for _ in range(self.tries):
            try:
                return self.make(ctx, ctx.choice(members, "member"))
            except NoTarget as exc:
                reason = exc
        raise reason


def _cut(days: list[str], at_least: int) -> str:
    """The first day (of sorted `days`) with at least `at_least` items strictly before it and one on
    it, so that "before" and "on or before" select different items."""
    for i in range(at_least, len(days)):
        if days[i] != days[i - 1]:
            return days[i]
    raise NoTarget("no day splits the items")


class RenewDueBefore(LibraryTemplate):
    name = "renew_due_before"
    # Two conditions: a task needs two that bite (or a step that uses an id an earlier one created).
    conditions = (Condition("due_before", "boundary"), Condition("not_genre", "filter"))
    clauses = {"day": "due_before", "genre": "not_genre"}  # every stated value bites
    phrasings = (
        "Please renew every book I have out that is due before {day}, except the {genre} ones.",
        "I'm travelling soon: renew all my loans with a due date earlier than {day}, but leave the {genre} books alone.",
        "Everything I borrowed that falls due before {day} needs renewing, apart from {genre}. Can you do that?",
    )

    def make(self, ctx: GenContext, member: int) -> Draft:
        loans = ctx.rows(
            "SELECT l.id, l.due_on, b.genre FROM loans l JOIN books b ON b.id = l.book_id "
            "WHERE l.member_id = ? AND l.returned_on IS NULL ORDER BY l.due_on, l.id",
            member,
        )
        day = _cut([loan["due_on"] for loan in loans], ctx.rng.randint(3, 5))
        due = [loan for loan in loans if loan["due_on"] < day]
        genre = ctx.choice(sorted({loan["genre"] for loan in due}), "genre")
        chosen = [loan["id"] for loan in due if loan["genre"] != genre]
        if not chosen:
            raise NoTarget("nothing left to renew")
        steps = [Step("renew_loan", {"loan_id": loan}) for loan in chosen]
        query = self.phrase(ctx, day=pretty_day(day), genre=genre)
        return Draft(member, query, steps, stated={"day": day, "genre": genre}, hidden=[len(chosen)], targets=(("member", member),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        for loan in api.all_pages("list_my_loans", status="open"):
            if api.compare("due_before", loan["due_on"], "<", stated["day"]) and api.keep("not_genre", loan["genre"] != stated["genre"]):
                api.call("renew_loan", loan_id=loan["loan_id"])


class CancelGenreHoldsBefore(LibraryTemplate):
    name = "cancel_genre_holds_before"
    conditions = (Condition("genre", "filter"), Condition("placed_before", "boundary"))
    clauses = {"genre": "genre", "day": "placed_before"}
    phrasings = (
        "Cancel my holds on {genre} books that I placed before {day}.",
        "I've lost interest in the {genre} titles I reserved before {day}; drop those holds, please.",
        "Clear out every {genre} hold of mine placed earlier than {day}.",
    )

    def make(self, ctx: GenContext, member: int) -> Draft:
        genre = ctx.choice(ctx.column("SELECT DISTINCT genre FROM books ORDER BY genre"), "genre")
        holds = ctx.rows(
            "SELECT h.id, substr(h.placed_at, 1, 10) AS day, b.genre FROM holds h JOIN books b ON b.id = h.book_id "
            "WHERE h.member_id = ? ORDER BY h.placed_at, h.id",
            member,
        )
        day = _cut([h["day"] for h in holds if h["genre"] == genre], 3)
        if not any(h["genre"] != genre and h["day"] < day for h in holds):
            raise NoTarget("the genre excludes nothing")
        chosen = [h["id"] for h in holds if h["genre"] == genre and h["day"] < day]
        steps = [Step("cancel_hold", {"hold_id": hold}) for hold in chosen]
        query = self.phrase(ctx, genre=genre, day=pretty_day(day))
        return Draft(member, query, steps, stated={"genre": genre, "day": day}, hidden=[len(chosen)], targets=(("member", member),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        for hold in api.all_pages("list_my_holds"):
            if api.keep("genre", hold["genre"] == stated["genre"]) and api.compare(
                "placed_before", hold["placed_at"][:10], "<", stated["day"]
            ):
                api.call("cancel_hold", hold_id=hold["hold_id"])


TEMPLATES = [RenewDueBefore, CancelGenreHoldsBefore]
