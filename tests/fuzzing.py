"""Garbage in, clear error out: the shared hypothesis harness that fuzzes every tool of a domain.

A model can send anything. For every tool, hypothesis draws argument objects that are mostly
plausible (ids from pools chosen to make the product rules bite, dates, enum members, long and
odd strings) and sometimes garbage (wrong JSON types, unknown keys, out-of-range numbers, not
an object at all) or hostile (NUL characters, lone surrogates, megabytes of text, JSON nested
thousands deep, integers of thousands of digits), as objects or as the JSON text a model sends.
Each call must succeed or return an error with a known, non-internal code; a refused write, and
any read, must leave the database exactly as it was.

Changes are seen through temporary triggers that log every row change into a temp table. The
log lives in the same transaction: a tool's rolled-back savepoint erases its entries too, so
after a refused call a non-empty log means a change survived. (Cheaper than copying the world.)

A domain's test module binds the suite's fixture and tests to its own names:

    globals().update(fuzz_suite("meeting", actor=1, id_pools={"room_id": "SELECT ..."}, ...))
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import types
import typing
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import INT64_MAX, INT64_MIN, MAX_TEXT, WRITE

KNOWN_ERRORS = {"invalid_arguments", "invalid_value", "not_found", "forbidden", "conflict"}
COMMON_ODD_TEXTS = ["", " ", "%", "_", "'", '"', "\\", "NULL", "' OR 1=1 --", "🎵", "Ω≈ç√", "\n", "0", "-1"]


def nested(depth: int, kind: str = "list") -> typing.Any:
    """A value nested `depth` levels deep, built without recursion."""
    value: typing.Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


# What a hostile or broken model sends: each must be refused as bad arguments, never crash the engine.
HOSTILE_TEXTS = [
    "\x00",
    "rock\x00",
    "\x00' OR 1=1 --",
    "\ud800",
    "love \udfff",
    "\ud83c",
    "\udc80\x00",
    "x" * 1_000_000,
    "%" * 100_000,
    "_\\" * 20_000,
    "🎵" * 300_000,
    '"' * 60_000,
    "x" * (MAX_TEXT + 1),
]
# The longest texts the engine lets through, as hard as they get for SQL (LIKE escapes, 4-byte
# characters, FTS phrases): tools must answer them, never fail inside SQLite.
LONGEST_TEXTS = ["%" * MAX_TEXT, "🎵" * MAX_TEXT, "_\\" * (MAX_TEXT // 2), '"' * MAX_TEXT, "a\u2028b" * (MAX_TEXT // 3)]
HOSTILE_VALUES = [
    nested(50),
    nested(5000),
    nested(50, "dict"),
    nested(5000, "dict"),
    10**5000,
    -(10**5000),
    {"\ud800": 1},
    {"\x00": "\x00"},
    {"k" * 100_000: 1},
    list(range(100_000)),
    ["\ud800"] * 3,
]
# Arguments as JSON text, the form a model's tool call carries them in.
HOSTILE_JSON = [
    "[" * 100_000,
    '{"a":' * 100_000,
    "[" * 100_000 + "]" * 100_000,
    '{"x": ' + "9" * 5000 + "}",
    '{"x": "\\ud800"}',
    '{"\\u0000": 1}',
    "\x00",
    '{"x": NaN}',
    '{"x": Infinity}',
    '{"x": 1e999}',
    '{"x": "' + "y" * 2_000_000 + '"}',
    "\ud800",
]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(INT64_MIN * 2, INT64_MAX * 2),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
garbage = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6
) | st.sampled_from(HOSTILE_VALUES + HOSTILE_TEXTS)

# derandomize: CI runs the same examples every time, so a failure is reproducible.
FUZZ = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}


def _pick_branch(branches: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """An even choice between strategies (st.one_of does not weigh its branches evenly)."""
    return st.sampled_from(sorted(branches)).flatmap(branches.__getitem__)


def _plausible(name: str, annotation, pools: dict[str, list[int]], texts: st.SearchStrategy) -> st.SearchStrategy:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        origin = typing.get_origin(annotation)
    if annotation is int:
        return st.sampled_from(pools[name]) if pools.get(name) else st.integers(-3, 300)
    if annotation is str:
        return texts
    if annotation is bool:
        return st.booleans()
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(annotation))
    if origin is list:
        (item,) = typing.get_args(annotation) or (typing.Any,)
        # A list parameter named `x_ids` draws from the pool of `x_id`.
        singular = name[:-1] if name.endswith("s") else name
        return st.lists(_plausible(singular, item, pools, texts), max_size=6)
    return garbage


def _argument(name: str, annotation, pools, texts) -> st.SearchStrategy:
    plausible = _plausible(name, annotation, pools, texts)
    # 4 in 5 plausible.
    return st.sampled_from([True, True, True, True, False]).flatmap(lambda fits: plausible if fits else garbage)


def install_change_log(conn: sqlite3.Connection, domain_name: str) -> None:
    conn.execute("CREATE TEMP TABLE change_log (tbl TEXT NOT NULL)")
    for table in get_domain(domain_name).schema.tables:
        for event in ("INSERT", "UPDATE", "DELETE"):
            conn.execute(
                f"CREATE TEMP TRIGGER log_{table.name}_{event.lower()} AFTER {event} ON main.{table.name} "
                f"BEGIN INSERT INTO change_log VALUES ('{table.name}'); END"
            )


def fuzz_suite(
    domain_name: str,
    *,
    actor: int,
    id_pools: dict[str, str],
    odd_texts: list[str] = (),  # type: ignore[assignment]
    boundary_lengths: list[int] = (),  # type: ignore[assignment]
    read_examples: int = 25,
    write_examples: int = 80,
) -> dict[str, Callable]:
    """The `fuzz_world` fixture and three tests: reads, writes (refusals change nothing), pools' sanity.

    `id_pools` maps an argument name (`room_id`) to SQL returning candidate ids; `:a` is the actor.
    Arguments without a pool get small integers, so pools should cover every id argument.
    """
    domain = get_domain(domain_name)  # collection time: no world needed
    reads = [t.name for t in domain.tools if t.kind != WRITE]
    writes = [t.name for t in domain.tools if t.kind == WRITE]
    texts = _pick_branch(
        {
            "odd": st.sampled_from(COMMON_ODD_TEXTS + list(odd_texts) + HOSTILE_TEXTS + LONGEST_TEXTS),
            "boundary": st.sampled_from(list(boundary_lengths) or [1, 100, 1000]).map(lambda n: "x" * n),
            "free": st.text(max_size=40),
        }
    )

    @pytest.fixture(scope="module")
    def fuzz_world(request: pytest.FixtureRequest):
        from ebench.engine.world import scratch_copy

        conn = scratch_copy(request.getfixturevalue(f"{domain_name}_world"))
        pools = {name: [r[0] for r in conn.execute(sql, {"a": actor})] for name, sql in id_pools.items()}
        install_change_log(conn, domain_name)
        yield conn, pools
        conn.close()

    def fuzz_once(conn: sqlite3.Connection, pools: dict[str, list[int]], tool_name: str, data) -> None:
        tool = domain.tools.get(tool_name)
        args: typing.Any = {
            p.name: data.draw(_argument(p.name, p.annotation, pools, texts), label=p.name)
            for p in tool.params
            if p.required or data.draw(st.booleans())
        }
        if data.draw(st.integers(0, 9)) == 0:
            args[data.draw(st.text(min_size=1, max_size=8))] = data.draw(garbage)
        if data.draw(st.integers(0, 19)) == 0:
            args = data.draw(garbage)  # not even an object
        form = data.draw(st.integers(0, 19))  # not 0: hypothesis draws the smallest value too often
        if form == 7:
            args = data.draw(st.sampled_from(HOSTILE_JSON))  # broken JSON text
        elif form == 13:
            ascii_only = data.draw(st.booleans())
            # The same arguments as the JSON text a model sends (when JSON can express them).
            with contextlib.suppress(ValueError, RecursionError):
                args = json.dumps(args, ensure_ascii=ascii_only)
        env = domain.env(conn, actor)
        conn.execute("SAVEPOINT fuzz")
        try:
            result = domain.tools.call(env, tool_name, args)
            changed = [r[0] for r in conn.execute("SELECT tbl FROM change_log")]
            if not result.ok:
                assert result.error_code in KNOWN_ERRORS, (args, result.error_code, result.error_message)
                assert result.error_message
                assert changed == [], (args, result.error_code, f"a refused call changed {changed}")
            elif tool.kind != WRITE:
                assert changed == [], (args, f"a read tool changed {changed}")
        finally:
            conn.execute("ROLLBACK TO fuzz")  # every example starts from the same world
            conn.execute("RELEASE fuzz")

    @pytest.mark.parametrize("tool_name", reads)
    @settings(max_examples=read_examples, **FUZZ)
    @given(data=st.data())
    def test_read_tools_give_a_result_or_a_clear_error(request, tool_name, data):
        conn, pools = request.getfixturevalue("fuzz_world")
        fuzz_once(conn, pools, tool_name, data)

    @pytest.mark.parametrize("tool_name", writes)
    @settings(max_examples=write_examples, **FUZZ)
    @given(data=st.data())
    def test_write_tools_give_a_result_or_a_clear_error_and_refusals_change_nothing(request, tool_name, data):
        conn, pools = request.getfixturevalue("fuzz_world")
        fuzz_once(conn, pools, tool_name, data)

    def test_every_pool_finds_ids(request):
        """The pools must hold what makes the rules bite, or the fuzzing proves little."""
        _, pools = request.getfixturevalue("fuzz_world")
        assert all(pools[name] for name in id_pools), {name: len(ids) for name, ids in pools.items()}
        id_args = {p.name for t in domain.tools for p in t.params if p.name.endswith("_id")}
        assert id_args <= set(id_pools), f"id arguments without a pool: {sorted(id_args - set(id_pools))}"

    return {
        "fuzz_world": fuzz_world,
        "test_read_tools_give_a_result_or_a_clear_error": test_read_tools_give_a_result_or_a_clear_error,
        "test_write_tools_give_a_result_or_a_clear_error_and_refusals_change_nothing": test_write_tools_give_a_result_or_a_clear_error_and_refusals_change_nothing,
        "test_every_pool_finds_ids": test_every_pool_finds_ids,
    }
