"""Confined read-only SQL (`query_sql`): one statement from a model, run on the generator's private
copy within SQLite's own guards and a budget of time, steps and memory.

Where it runs. On the copy's own connection, inside a savepoint rolled back after it. A separate
connection would be the simpler sandbox, but none sees what the generator has changed: the trial
keeps one transaction open from start to end (sessions/trial.py), another connection sees only what
is committed, `backup()` refuses a source in a write transaction, and `serialize()` of a trial's
copy (made by `deserialize`, so held by SQLite's memdb) returns its memory image without the pages
the open transaction holds in its cache: a snapshot that misses recent writes (the tests show it),
or mixes pages from before and after them. So the confinement is put on the connection for
the statement and taken off after it whatever happens, ctrl+c included: the copy goes back to its
trial, or to the pool of copies, exactly as it was.

The guard is the authorizer: it allows a SELECT, reads of this database's tables, the pure
functions of `ALLOWED_FUNCTIONS`, recursive CTEs and the read-only pragmas of `ALLOWED_PRAGMAS`, and
refuses everything else (ATTACH, VACUUM, writes, schema changes, transactions and savepoints, other
pragmas, functions that reach files, extensions or pointers) with a message naming what was
refused. The rest is defence in depth: `query_only`, no database may be attached, values, LIKE
patterns and statements capped in length, temporary storage in memory (a sort or a temporary index
never opens a file), and the savepoint.

The budget: a progress handler stops the statement past its time, its SQLite steps, or the memory
the process gained while it ran; ctrl+c stops it too, and is raised again. SQLite does not call it
while it prepares a statement, where one construct takes time exponential in its size: common
table expressions that reference each other (each reference is a copy of the CTE, and of those it
references); a statement whose references would make more than MAX_CTE_COPIES copies is refused
before SQLite sees it.

The answer: BLOBs as hex with their length, non-finite floats as text, capped in rows and in bytes.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

TIME_BUDGET_SECONDS = 5.0  # wall time of one statement
STEP_BUDGET = 200_000_000  # SQLite virtual-machine steps of one statement (about the rows it visits)
MEMORY_BUDGET_BYTES = 256_000_000  # memory the process may gain while one statement runs
ROW_LIMIT = 200  # rows an answer holds
BYTE_LIMIT = 64_000  # bytes of JSON an answer's columns and rows hold
BLOB_HEX_BYTES = 256  # bytes of a BLOB shown as hex; its length is always given
# One string or BLOB: also what one SQLite operation can cost, since instr() and replace() compare
# their arguments in O(n*m) inside one step, out of the progress handler's reach (0.2 s at 100 KB).
VALUE_LENGTH_LIMIT = 100_000
LIKE_PATTERN_LIMIT = 1_000  # bytes of a LIKE or GLOB pattern (matching is O(value * pattern) in one step)
SQL_LENGTH_LIMIT = 100_000  # bytes of one statement
MAX_CTE_COPIES = 1_000  # copies of common table expressions a statement may make (see the docstring)

PROGRESS_EVERY = 1_000  # SQLite steps between two checks of the budget (a few percent of a statement's time)
MEMORY_CHECK_SECONDS = 0.001  # least time between two readings of the process's memory (each ~5 us)

SQL_ERROR = "sql_error"  # the code of every answer that is not rows (a refusal, a budget, SQLite's own error)
SAVEPOINT = "ebench_query_sql"

ALLOWED_PRAGMAS = frozenset(
    # data_version: FTS5 reads it before each search of an index
    {"data_version", "foreign_key_list", "index_info", "index_list", "index_xinfo", "table_info", "table_xinfo"}
)
# Pure functions: they read their arguments only. Left out on purpose: load_extension, fts3_tokenizer
# and fts5 (they load code or hand out pointers), sqlite_log, the rtree and fts3 helpers, printf and
# format (`printf('%.*c', 2e9, 'x')` loops 20 s inside one step, out of the progress handler's reach),
# and any function a later SQLite or an extension adds until it is looked at.
_PURE_FUNCTIONS = """
    -> ->> abs acos acosh asin asinh atan atan2 atanh avg bm25 ceil ceiling char coalesce concat concat_ws cos cosh
    count cume_dist current_date current_time current_timestamp date datetime degrees dense_rank exp first_value
    floor glob group_concat hex highlight ifnull iif instr json json_array json_array_length
    json_error_position json_extract json_group_array json_group_object json_insert json_object json_patch
    json_pretty json_quote json_remove json_replace json_set json_type json_valid jsonb jsonb_array jsonb_extract
    jsonb_group_array jsonb_group_object jsonb_insert jsonb_object jsonb_patch jsonb_remove jsonb_replace jsonb_set
    julianday lag last_value lead length like likelihood likely ln log log10 log2 lower ltrim match max min mod
    nth_value ntile nullif octet_length percent_rank pi pow power quote radians random randomblob rank
    replace round row_number rtrim sign sin sinh snippet soundex sqlite_version sqrt strftime string_agg substr
    substring sum tan tanh time timediff total trim trunc typeof unhex unicode unixepoch unlikely upper zeroblob
"""
ALLOWED_FUNCTIONS = frozenset(_PURE_FUNCTIONS.split())
# Table-valued functions a query may read (`_declare_table_functions` connects them before the guard is on).
ALLOWED_TABLE_FUNCTIONS = ("json_each", "json_tree", *(f"pragma_{name}" for name in sorted(ALLOWED_PRAGMAS - {"data_version"})))
SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})

_LIMITS = {
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_LENGTH: VALUE_LENGTH_LIMIT,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: LIKE_PATTERN_LIMIT,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: SQL_LENGTH_LIMIT,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,  # a sort stays on the caller's thread, within the progress handler's reach
}
_TEMP_STORE_MEMORY = 2
_WRITES = {sqlite3.SQLITE_INSERT: "INSERT", sqlite3.SQLITE_UPDATE: "UPDATE", sqlite3.SQLITE_DELETE: "DELETE"}
_ONLY_READS = "query_sql only reads (make changes with the public tools)"
_THIS_WORLD = "query_sql reads this world's tables only"


@dataclass(frozen=True)
class SqlBudget:
    """What one statement may take and give: wall time, SQLite steps, memory gained, rows and bytes of answer."""

    seconds: float = TIME_BUDGET_SECONDS
    steps: int = STEP_BUDGET
    memory_bytes: int = MEMORY_BUDGET_BYTES
    rows: int = ROW_LIMIT
    answer_bytes: int = BYTE_LIMIT


def run_readonly(conn: sqlite3.Connection, sql: Any, budget: SqlBudget | None = None) -> dict[str, Any]:
    """One read-only statement on `conn`, confined: {"columns", "rows", "truncated"} (and
    "truncated_because" when it is), or {"error": {"code", "message"}} for a statement refused, past
    its budget or wrong. Raises only KeyboardInterrupt (ctrl+c during the statement), after `conn` is
    restored; ValueError for a `conn` whose temporary storage cannot be kept in memory (a caller's bug).
    `conn` ends as it began: its rows, its open transaction, its pragmas, limits and handlers."""
    if not isinstance(sql, str):
        return _error("query_sql takes one argument, 'sql' (a string).", code="invalid_arguments")
    size = len(sql.encode("utf-8", "surrogatepass"))
    if size > SQL_LENGTH_LIMIT:
        return _error(f"the statement is {size:,} bytes: query_sql takes at most {SQL_LENGTH_LIMIT:,}")
    copies = cte_copies(sql)
    if copies > MAX_CTE_COPIES:
        return _error(
            f"the statement's common table expressions would be copied about {copies:,} times (each reference copies "
            f"the CTE and those it references), past query_sql's {MAX_CTE_COPIES:,}: reference each CTE fewer times"
        )
    statement = _Statement(conn, sql, budget or SqlBudget())
    with _confined(conn, statement):
        return statement.answer()


class _Statement:
    """One statement: the authorizer and progress handler that confine it, and the answer built from its rows."""

    def __init__(self, conn: sqlite3.Connection, sql: str, budget: SqlBudget) -> None:
        self.conn = conn
        self.sql = sql
        self.budget = budget
        self.refused: str | None = None  # why the authorizer refused, for the message
        self.stopped: str | None = None  # which budget stopped the statement
        self.interrupted = False  # ctrl+c arrived in a callback, which must not raise
        self.steps = 0
        self.deadline = 0.0
        self.memory_at_start: int | None = None
        self.next_memory_check = 0.0
        self.tables: set[str] = set()

    def start(self) -> None:
        """Called once the confinement is on, just before the statement runs."""
        self.tables = {name.lower() for (name,) in self.conn.execute("SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view')")}
        self.tables |= SCHEMA_TABLES | set(ALLOWED_TABLE_FUNCTIONS)
        self.memory_at_start = _resident_bytes()
        self.deadline = time.monotonic() + self.budget.seconds

    def answer(self) -> dict[str, Any]:
        cursor = None
        try:
            cursor = self.conn.execute(self.sql)
            columns = [c[0] for c in cursor.description or []]
            return self._rows(cursor, columns)
        except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError, MemoryError) as exc:  # Warning: more than one statement
            return _error(self._message(exc))
        finally:
            if cursor is not None:
                cursor.close()  # no statement left running when the savepoint is rolled back

    def _rows(self, cursor: sqlite3.Cursor, columns: list[str]) -> dict[str, Any]:
        rows: list[list[Any]] = []
        size = len(json.dumps(columns, ensure_ascii=False).encode())
        if size > self.budget.answer_bytes:
            return _error(f"the names of the columns take {size:,} bytes, past an answer's {self.budget.answer_bytes:,}: name them shorter")
        because = None
        for row in cursor:  # one row at a time: the progress handler runs between them too
            if len(rows) == self.budget.rows:
                because = f"only the first {self.budget.rows} rows are sent"
                break
            cells = [_cell(value) for value in row]
            size += len(json.dumps(cells, ensure_ascii=False).encode())
            if size > self.budget.answer_bytes:
                because = f"an answer holds at most {self.budget.answer_bytes:,} bytes; select fewer or shorter columns"
                break
            rows.append(cells)
        answer: dict[str, Any] = {"columns": columns, "rows": rows, "truncated": because is not None}
        if because:
            answer["truncated_because"] = because
        return answer

    def _message(self, exc: BaseException) -> str:
        """The error's message; raises KeyboardInterrupt when ctrl+c stopped the statement."""
        unexplained = isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted" and not self.stopped
        if self.interrupted or unexplained:
            # sqlite3 swallows an exception raised in a callback (it only stops the statement). An
            # interruption no budget made is such an exception, and the one that can reach a
            # callback is ctrl+c, arrived just before its `try`.
            raise KeyboardInterrupt from None
        if self.refused:
            return self.refused
        if _leading_keyword(self.sql) == "VACUUM":  # refused by SQLite before the authorizer sees it (in a transaction)
            return f"VACUUM is not allowed: {_THIS_WORLD} and opens no file"
        if self.stopped:
            return self.stopped
        if isinstance(exc, sqlite3.DataError | OverflowError) or "too big" in str(exc):
            return f"{exc}: query_sql builds no string or BLOB longer than {VALUE_LENGTH_LIMIT:,} bytes"
        if "LIKE or GLOB pattern too complex" in str(exc):
            return f"{exc}: query_sql takes LIKE and GLOB patterns of at most {LIKE_PATTERN_LIMIT:,} bytes"
        if isinstance(exc, MemoryError):
            return "the statement ran out of memory"
        return str(exc)

    def progress(self) -> int:
        try:
            self.steps += PROGRESS_EVERY
            now = time.monotonic()
            if self.steps > self.budget.steps:
                self.stopped = (
                    f"the statement was stopped past its step budget ({self.budget.steps:,} SQLite steps): narrow it, or add a LIMIT"
                )
            elif now > self.deadline:
                self.stopped = f"the statement was stopped past its time budget ({self.budget.seconds:g} s): narrow it, or add a LIMIT"
            elif now >= self.next_memory_check and self.memory_at_start is not None:
                self.next_memory_check = now + MEMORY_CHECK_SECONDS
                gained = (_resident_bytes() or 0) - self.memory_at_start
                if gained > self.budget.memory_bytes:
                    self.stopped = (
                        f"the statement was stopped past its memory budget ({self.budget.memory_bytes / 1e6:g} MB): "
                        "narrow it, or add a LIMIT"
                    )
            return 1 if self.stopped else 0
        except KeyboardInterrupt:  # sqlite3 would swallow it: stop the statement, raise it after
            self.interrupted = True
            return 1

    def authorize(self, action: int, arg1: str | None, arg2: str | None, database: str | None, source: str | None) -> int:
        try:
            refusal = _refusal(action, arg1, arg2, database, self.tables, self.sql)
        except KeyboardInterrupt:  # as in progress()
            self.interrupted = True
            return sqlite3.SQLITE_DENY
        if refusal is None:
            return sqlite3.SQLITE_OK
        self.refused = self.refused or refusal
        return sqlite3.SQLITE_DENY


@contextmanager
def _confined(conn: sqlite3.Connection, statement: _Statement) -> Iterator[None]:
    """`conn` confined for `statement`, then restored: each step that changes it registers its undo
    first, and every undo runs, in reverse order, however the statement ended."""
    undo: list[Callable[[], object]] = []
    try:
        _declare_table_functions(conn)
        for limit, value in _LIMITS.items():
            undo.append(functools.partial(conn.setlimit, limit, conn.getlimit(limit)))
            conn.setlimit(limit, value)
        temp_store = conn.execute("PRAGMA temp_store").fetchone()[0]
        if temp_store != _TEMP_STORE_MEMORY:
            undo.append(lambda: conn.execute(f"PRAGMA temp_store={temp_store}"))
            _keep_temp_store_in_memory(conn)
        undo.append(lambda: conn.execute(f"RELEASE {SAVEPOINT}"))
        undo.append(lambda: conn.execute(f"ROLLBACK TO {SAVEPOINT}"))
        conn.execute(f"SAVEPOINT {SAVEPOINT}")
        query_only = conn.execute("PRAGMA query_only").fetchone()[0]
        undo.append(lambda: conn.execute(f"PRAGMA query_only={query_only}"))
        conn.execute("PRAGMA query_only=ON")
        text_factory = conn.text_factory
        undo.append(lambda: setattr(conn, "text_factory", text_factory))
        conn.text_factory = _text  # text that is not UTF-8 is answered, not an error
        statement.start()
        undo.append(lambda: conn.set_authorizer(None))
        conn.set_authorizer(statement.authorize)
        undo.append(lambda: conn.set_progress_handler(None, 0))
        conn.set_progress_handler(statement.progress, PROGRESS_EVERY)
        yield
    finally:
        _undo(undo)


def _undo(steps: list[Callable[[], object]]) -> None:
    """Run every step, last first. ctrl+c during one is held until all have run: a copy left
    confined (read-only, its handlers on) would break its trial, or the next one from the pool."""
    interrupted: KeyboardInterrupt | None = None
    for step in reversed(steps):
        for _attempt in range(3):  # each step can be repeated; a third ctrl+c in a row gives up on it
            try:
                step()
                break
            except KeyboardInterrupt as exc:
                interrupted = exc
            except sqlite3.Error:
                break  # the savepoint is gone: SQLite rolled the transaction back after an out-of-memory error
    if interrupted is not None:
        raise interrupted


def _declare_table_functions(conn: sqlite3.Connection) -> None:
    """Use each allowed table-valued function, and each virtual table (the search indexes), once:
    SQLite connects one on its first use, which the authorizer would see as a write to the schema."""
    for function in ALLOWED_TABLE_FUNCTIONS:
        conn.execute(f"SELECT * FROM {function}('{{}}') LIMIT 0").fetchall()
    virtual = conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
    for (name,) in virtual.fetchall():
        quoted = name.replace('"', '""')
        conn.execute(f'SELECT * FROM main."{quoted}" LIMIT 0').fetchall()


def _keep_temp_store_in_memory(conn: sqlite3.Connection) -> None:
    """Switch `conn`'s temporary storage to memory. SQLite drops every temporary table when the
    setting changes (and refuses to in a transaction): a connection that has some is refused."""
    if any(name == "temp" for _, name, _ in conn.execute("PRAGMA database_list")):
        raise ValueError(
            "query_sql needs a connection whose temporary storage is in memory (PRAGMA temp_store=MEMORY) before it has temporary tables"
        )
    conn.execute("PRAGMA temp_store=MEMORY")


def _refusal(action: int, arg1: str | None, arg2: str | None, database: str | None, tables: set[str], sql: str) -> str | None:
    """Why the authorizer refuses this action, or None when it allows it."""
    if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE):
        return None
    if action == sqlite3.SQLITE_READ:
        if database is None:  # a CTE's or a subquery's columns
            return None
        if database == "main" and (arg1 or "").lower() in tables:
            return None
        return f"reading {database}.{arg1} is not allowed: {_THIS_WORLD}"
    if action == sqlite3.SQLITE_FUNCTION:
        return None if (arg2 or "").lower() in ALLOWED_FUNCTIONS else f"the function {arg2}() is not allowed in query_sql"
    if action == sqlite3.SQLITE_PRAGMA:
        if (arg1 or "").lower() in ALLOWED_PRAGMAS:
            return None
        allowed = ", ".join(sorted(ALLOWED_PRAGMAS))
        return f"PRAGMA {arg1} is not allowed: query_sql allows only the read-only pragmas {allowed}"
    if action == sqlite3.SQLITE_ATTACH:  # VACUUM (INTO) attaches its target first
        statement = "VACUUM" if _leading_keyword(sql) == "VACUUM" else "ATTACH"
        return f"{statement} is not allowed: {_THIS_WORLD} and opens no file"
    if action == sqlite3.SQLITE_DETACH:
        return f"DETACH is not allowed: {_THIS_WORLD}"
    if action in _WRITES:
        keyword = _leading_keyword(sql)
        if (arg1 or "").lower() not in SCHEMA_TABLES | {"sqlite_temp_master", "sqlite_temp_schema"}:
            return f"{_WRITES[action]} is not allowed: {_ONLY_READS}"
        if keyword in ("SELECT", "WITH", "VALUES"):  # SQLite declaring a table-valued function on its first use
            return f"this table-valued function is not allowed: query_sql's are {', '.join(ALLOWED_TABLE_FUNCTIONS)}"
        return f"{keyword or 'changing the schema'} is not allowed: {_ONLY_READS}"  # CREATE, DROP, ...
    if action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT):
        return f"transaction statements ({_leading_keyword(sql)}) are not allowed: each query_sql statement stands alone"
    return f"{_leading_keyword(sql) or 'this statement'} is not allowed: {_ONLY_READS}"


def _leading_keyword(sql: str) -> str:
    """The statement's first word (after comments), upper-case: what a refusal names."""
    stripped = re.sub(r"^(\s|--[^\n]*(\n|$)|/\*.*?\*/)*", "", sql, flags=re.DOTALL)
    match = re.match(r"[A-Za-z]+", stripped)
    return match.group(0).upper() if match else ""


# SQLite's tokens, as far as names go: a name may be a word, or quoted in any of SQLite's four ways
# (a 'string' names a table in FROM too). A word is what SQLite's tokenizer takes for one: ASCII
# letters, digits, _ and $, and every character past ASCII (a no-break space included).
_TOKENS = re.compile(
    r"""(?P<space>[ \t\n\f\r]+|--[^\n]*|/\*.*?(?:\*/|\Z))
      |(?P<name>'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?|[A-Za-z0-9_$\x80-\U0010ffff]+)
      |(?P<mark>.)""",
    re.VERBOSE | re.DOTALL,
)


def cte_copies(sql: str) -> int:
    """An upper bound of the copies of common table expressions SQLite makes to prepare `sql`: each
    reference to a CTE copies it, with a copy of each CTE its body references, and so on. Found on
    the tokens, without parsing; names are compared ignoring case, more widely than SQLite does, so
    that the bound only grows."""
    tokens = [_token(m) for m in _TOKENS.finditer(sql) if m.lastgroup != "space"]
    bodies: dict[str, list[str]] = {}
    definitions: set[int] = set()
    for i, (is_name, text) in enumerate(tokens):
        if not is_name or i == 0 or tokens[i - 1] not in ((True, "with"), (True, "recursive"), (False, ",")):
            continue
        start = _cte_body_start(tokens, i + 1)
        if start is not None:
            definitions.add(i)
            bodies.setdefault(text, []).extend(name for is_name, name in _group(tokens, start) if is_name)
    if not bodies:
        return 0
    cost: dict[str, int] = {}

    def copies(name: str) -> int:
        if name not in cost:
            cost[name] = 1  # what a reference to itself (a recursive CTE) or a cycle (which SQLite refuses) costs
            cost[name] = 1 + sum(copies(ref) for ref in bodies[name] if ref in bodies and ref != name)
        return cost[name]

    return sum(copies(text) for i, (is_name, text) in enumerate(tokens) if is_name and text in bodies and i not in definitions)


_Token = tuple[bool, str]  # (is a name, its text: a name unquoted and lower-case, a mark as itself)


def _token(match: re.Match[str]) -> _Token:
    text = match.group()
    if match.lastgroup == "mark":
        return False, text
    if text[0] in "'\"`[":
        closing = "]" if text[0] == "[" else text[0]
        text = text[1:-1] if len(text) > 1 and text.endswith(closing) else text[1:]
        if closing != "]":
            text = text.replace(closing * 2, closing)
    return True, text.lower()


def _cte_body_start(tokens: list[_Token], i: int) -> int | None:
    """The index of the "(" opening a CTE's body when tokens[i:] go on from a CTE's name
    ([( columns )] AS [NOT] [MATERIALIZED] ( ...), else None."""
    if i < len(tokens) and tokens[i] == (False, "("):
        i += len(_group(tokens, i)) + 2
    if i >= len(tokens) or tokens[i] != (True, "as"):
        return None
    i += 1
    for word in ("not", "materialized"):
        if i < len(tokens) and tokens[i] == (True, word):
            i += 1
    return i if i < len(tokens) and tokens[i] == (False, "(") else None


def _group(tokens: list[_Token], start: int) -> list[_Token]:
    """The tokens between the "(" at `start` and the ")" that closes it (or the end)."""
    depth = 0
    for end in range(start, len(tokens)):
        depth += (tokens[end] == (False, "(")) - (tokens[end] == (False, ")"))
        if depth == 0:
            return tokens[start + 1 : end]
    return tokens[start + 1 :]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _cell(value: Any) -> Any:
    """A value as JSON carries it: a BLOB as the hex of its first BLOB_HEX_BYTES bytes and its length,
    a non-finite float as text (JSON has no infinity)."""
    if isinstance(value, bytes):
        return {"blob_hex": value[:BLOB_HEX_BYTES].hex(), "bytes": len(value)}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _read_statm() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


def _peak_rss() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KB elsewhere


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# The process's resident memory now (Linux), else its peak so far (the budget then bounds how far a
# statement raises the peak), else unknown (no memory budget: time and steps still bound a statement).
_resident_bytes: Callable[[], int | None] = _read_statm if _read_statm() is not None else _peak_rss


def _error(message: str, *, code: str = SQL_ERROR) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
