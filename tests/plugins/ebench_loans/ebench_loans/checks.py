"""Rules the built world keeps: nothing borrowed before the member joined, no hold placed after
the library's clock, every return on or after its loan."""

from __future__ import annotations

from ebench.api import Check, NotAfterNow, NotBefore, Rule

CHECKS: list[Check] = [
    NotBefore("loans", "borrowed_on", "member_id", "members", "joined_on", fmt="date"),
    NotAfterNow("holds", "placed_at"),
    Rule(
        "returned after borrowed",
        "a loan is returned on or after the day it was borrowed",
        "loans",
        "returned_on IS NOT NULL AND returned_on < borrowed_on",
        None,
    ),
]
