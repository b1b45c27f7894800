"""A scripted generator and an agreeing verifier for `ebench tasks synthesize` against FakeOpenAI
(tests/test_synthesize.py, benchmarks/synthesis_overhead.py).

The moba player ACTOR opens a custom room with a password and invites each clanmate not in a
match (INVITEES): five changed rows, a created id the invitations depend on, no count or id stated.
`room_generator` plays the generator model; `fresh_room_generator` gives every conversation a room
of its own name, so that each draft is a new task; `room_solver` plays a verifier that reads the
room's name and password from the request and does the same.
"""

from __future__ import annotations

import itertools
import json
import re
import string
from collections.abc import Callable
from typing import Any

from .fake_openai import Reply, completion, error, turn_of

ACTOR = 16  # a moba player with three clanmates not in a match (33, 124, 162)
INVITEES = (33, 124, 162)
REQUEST = "Open a custom room called '{name}' with password {password} and invite each clanmate who is not in a match."
ROOM = {"name": "Synth Night", "mode": "custom", "password": "9137"}
QUERY = REQUEST.format(**ROOM)

Responder = Callable[[dict[str, Any]], Reply]


def room_generator(request: str | None, room: dict[str, Any] = ROOM) -> Responder:
    """A generator model: inspect with query_sql, create `room`, invite with the id the tool
    returned, submit `request`; with None it submits an empty-handed draft at once."""
    if request is None:
        return lambda body: completion(None, [("submit_task", {"request": "Tidy up my rooms."})])
    return _generator(lambda: room, lambda made: request)


def fresh_room_generator() -> Responder:
    """A generator whose every conversation opens a room named anew ('Synth Night A', 'B', ...;
    letters, not numbers, which the checks would read as counts) and asks for it."""
    numbers = itertools.count()

    def new_room() -> dict[str, Any]:
        return {**ROOM, "name": f"Synth Night {_letters(next(numbers))}"}

    return _generator(new_room, lambda made: REQUEST.format(**made))


def room_solver() -> Responder:
    """A verifier that solves any request of REQUEST's form: the room, then the invitations."""

    def respond(body: dict[str, Any]) -> Reply:
        request = next((m.get("content") or "" for m in body["messages"] if m.get("role") == "user"), "")
        found = re.search(r"called '(.+?)' with password (\S+) and invite", request)
        if found is None:
            return completion("I do not know this task.")
        turn = turn_of(body)
        if turn == 1:
            return completion(None, [("create_room", {**ROOM, "name": found[1], "password": found[2]})])
        if turn == 2:
            made = json.loads(body["messages"][-1]["content"])["room_id"]
            return completion(None, [("invite_to_room", {"room_id": made, "player_id": p}) for p in INVITEES])
        return completion("Done.")

    return respond


def _generator(new_room: Callable[[], dict[str, Any]], request_for: Callable[[dict[str, Any]], str]) -> Responder:
    def respond(body: dict[str, Any]) -> Reply:
        turn = turn_of(body)
        if turn == 1:
            return completion(None, [("query_sql", {"sql": "SELECT COUNT(*) FROM players"})])
        if turn == 2:
            return completion(None, [("create_room", new_room())])
        if turn == 3:
            made = json.loads(body["messages"][-1]["content"])["room_id"]
            return completion(None, [("invite_to_room", {"room_id": made, "player_id": p}) for p in INVITEES])
        return completion(None, [("submit_task", {"request": request_for(_room_made(body)), "summary": "room plus invitations"})])

    return respond


def _room_made(body: dict[str, Any]) -> dict[str, Any]:
    """The arguments of the create_room call earlier in the conversation."""
    for message in body["messages"]:
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] == "create_room":
                return dict(json.loads(call["function"]["arguments"]))
    return dict(ROOM)


def _letters(number: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA, ..."""
    text = ""
    number += 1
    while number:
        number, rest = divmod(number - 1, 26)
        text = string.ascii_uppercase[rest] + text
    return text


def verifier_players(agree: Responder) -> dict[str, Responder]:
    """The verifiers a test names by model: `agree` and `agree-2` (another model, so another vote)
    solve, `disagree` declines, `broken`'s API is down."""
    return {
        "agree": agree,
        "agree-2": agree,
        "disagree": lambda body: completion("I would rather not."),
        "broken": lambda body: error(500, "the verifier's API is down"),
    }


def by_model(players: dict[str, Responder]) -> Responder:
    """One fake server for every role: each request is answered by the player its model names."""
    return lambda body: players[body["model"]](body)
