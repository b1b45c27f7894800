"""`query_sql`, the generator's privileged tool, attacked (issue 28, section 1): a hostile statement
can neither read nor create a file outside the generator's private copy, nor change that copy or
its connection, nor run past its budget of time, steps and memory, nor outlive ctrl+c; what it is
refused is an answer naming what was refused, recorded in the session (tasks/readonly_sql.py).

The statements run on a real trial copy (a deserialized image, in its open transaction, with an
uncommitted write) of the music world, whose search index is an FTS5 table."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ebench.engine.domain_registry import domain_names, get_domain
from ebench.sessions.trial import trial_copy
from ebench.tasks.readonly_sql import (
    BLOB_HEX_BYTES,
    BYTE_LIMIT,
    MAX_CTE_COPIES,
    ROW_LIMIT,
    SqlBudget,
    _resident_bytes,
    cte_copies,
    run_readonly,
)

EDITED = "UPDATE songs SET title = title || ' (edited)' WHERE id = 1"  # the generator's own, uncommitted write


@pytest.fixture(scope="module")
def copy(music_world: Path) -> Iterator[sqlite3.Connection]:
    """A trial's copy as the generator has it: in its one transaction, with a write made in it."""
    conn = trial_copy(get_domain("music"))
    conn.execute("BEGIN")
    conn.execute(EDITED)
    yield conn
    conn.execute("ROLLBACK")
    conn.close()


def state(conn: sqlite3.Connection) -> dict[str, Any]:
    """All a statement could leave behind on the connection: databases, pragmas, limits, handlers'
    effects, the transaction and what it holds."""
    return {
        "databases": conn.execute("PRAGMA database_list").fetchall(),
        "pragmas": [conn.execute(f"PRAGMA {name}").fetchone() for name in ("writable_schema", "query_only", "temp_store", "foreign_keys")],
        "limits": [conn.getlimit(limit) for limit in range(12)],
        "in_transaction": conn.in_transaction,
        "edited": conn.execute("SELECT title FROM songs WHERE id = 1").fetchone(),
        "changes": conn.total_changes,
        "songs": conn.execute("SELECT count(*) FROM songs").fetchone(),
        "text_factory": conn.text_factory,
    }


def error_of(answer: dict[str, Any]) -> str:
    assert set(answer) == {"error"}, answer
    assert answer["error"]["code"] == "sql_error"
    return answer["error"]["message"]


REFUSED = [
    ("ATTACH '{dir}/secret.sqlite' AS s", "ATTACH is not allowed"),
    ("ATTACH 'file:{dir}/uri.sqlite?mode=rwc' AS s", "ATTACH is not allowed"),
    ("ATTACH 'relative.sqlite' AS s", "ATTACH is not allowed"),
    ("ATTACH ':memory:' AS m", "ATTACH is not allowed"),
    ("VACUUM INTO '{dir}/copy.sqlite'", "VACUUM is not allowed"),
    ("VACUUM INTO 'relative-copy.sqlite'", "VACUUM is not allowed"),
    ("VACUUM", "VACUUM is not allowed"),
    ("DETACH main", "DETACH is not allowed"),
    ("PRAGMA journal_mode=WAL", "PRAGMA journal_mode is not allowed"),
    ("PRAGMA main.journal_mode=WAL", "PRAGMA journal_mode is not allowed"),
    ("PRAGMA writable_schema=ON", "PRAGMA writable_schema is not allowed"),
    ("PRAGMA query_only=OFF", "PRAGMA query_only is not allowed"),
    ("PRAGMA temp_store_directory='{dir}'", "PRAGMA temp_store_directory is not allowed"),
    ("PRAGMA foreign_keys=OFF", "PRAGMA foreign_keys is not allowed"),
    ("SELECT load_extension('{dir}/evil')", "load_extension() is not allowed"),
    ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer() is not allowed"),
    ("SELECT fts5(NULL)", "fts5() is not allowed"),
    ("SELECT readfile('/etc/passwd')", "readfile"),  # the sqlite3 shell's, not in the library
    ("SELECT writefile('{dir}/written', 'x')", "writefile"),
    ("SELECT edit('text')", "edit"),
    ("SELECT changes()", "changes() is not allowed"),
    ("SELECT printf('%.*c', 900000000, 'x')", "printf() is not allowed"),  # 10 s in one step, past any handler
    ("SELECT format('%.*c', 900000000, 'x')", "format() is not allowed"),
    ("SELECT 1; SELECT 2", "one statement"),
    ("INSERT INTO songs (id, title) VALUES (999999, 'x')", "INSERT is not allowed"),
    ("UPDATE songs SET title = 'x'", "UPDATE is not allowed"),
    ("DELETE FROM songs", "DELETE is not allowed"),
    ("REPLACE INTO genres SELECT * FROM genres", "INSERT is not allowed"),
    ("CREATE TEMP TABLE t (x)", "CREATE is not allowed"),
    ("CREATE TABLE t (x)", "CREATE is not allowed"),
    ("CREATE TEMP VIEW v AS SELECT 1", "CREATE is not allowed"),
    ("CREATE VIRTUAL TABLE v USING fts5(a)", "CREATE is not allowed"),
    ("DROP TABLE songs", "DROP is not allowed"),
    ("ALTER TABLE songs ADD COLUMN z", "ALTER is not allowed"),
    ("ANALYZE", "ANALYZE is not allowed"),
    ("REINDEX", "REINDEX is not allowed"),
    ("BEGIN", "transaction statements (BEGIN) are not allowed"),
    ("COMMIT", "transaction statements (COMMIT) are not allowed"),
    ("ROLLBACK", "transaction statements (ROLLBACK) are not allowed"),
    ("SAVEPOINT s", "transaction statements (SAVEPOINT) are not allowed"),
    ("RELEASE ebench_query_sql", "transaction statements (RELEASE) are not allowed"),
    ("ROLLBACK TO ebench_query_sql", "transaction statements (ROLLBACK) are not allowed"),
    ("SELECT * FROM temp.sqlite_master", "reading temp.sqlite_temp_master is not allowed"),
    ("SELECT * FROM pragma_database_list", "table-valued function is not allowed"),
    ("SELECT * FROM dbstat", "table-valued function is not allowed"),
    ("SELECT zeroblob(900000000)", "string or BLOB longer than 100,000 bytes"),
    ("SELECT randomblob(2000000000)", "string or BLOB longer than 100,000 bytes"),
    ("SELECT length(randomblob(2e9))", "string or BLOB longer than 100,000 bytes"),
    ("SELECT 'a' LIKE '" + "%a" * 600 + "'", "LIKE and GLOB patterns of at most 1,000 bytes"),
    ("SELECT '" + "x" * 100_001 + "'", "query_sql takes at most 100,000"),
]


@pytest.mark.parametrize(("sql", "named"), REFUSED, ids=[sql[:40] for sql, _ in REFUSED])
def test_a_hostile_statement_is_refused_by_name_and_leaves_the_copy_as_it_was(copy, tmp_path, monkeypatch, sql, named):
    monkeypatch.chdir(tmp_path)  # relative paths land here, where nothing may appear
    before = state(copy)
    started = time.monotonic()
    answer = run_readonly(copy, sql.format(dir=tmp_path))
    assert named in error_of(answer)
    assert time.monotonic() - started < 30  # refused at once, never after running (a bound that only catches a hang)
    assert state(copy) == before
    assert json.loads(json.dumps(answer)) == answer
    assert os.listdir(tmp_path) == []


def test_no_attack_opens_or_creates_a_file_and_the_world_file_is_untouched(copy, music_world, tmp_path, monkeypatch):
    """Every attack of the list, and the reads of everything the copy holds, in a row: the folder
    they aim at (the working directory too) stays empty, the world's file keeps its bytes and time."""
    monkeypatch.chdir(tmp_path)
    world = music_world.read_bytes(), music_world.stat().st_mtime_ns
    siblings = sorted(os.listdir(music_world.parent))
    for sql, _ in REFUSED:
        run_readonly(copy, sql.format(dir=tmp_path))
    for (table,) in copy.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        assert "error" not in run_readonly(copy, f'SELECT * FROM "{table}"')
    assert os.listdir(tmp_path) == []
    assert (music_world.read_bytes(), music_world.stat().st_mtime_ns) == world
    assert sorted(os.listdir(music_world.parent)) == siblings  # no -wal, -shm or -journal beside it


def open_temp_files() -> set[str]:
    """The temporary files SQLite has open in this process (they are unlinked at once: only the
    process's descriptors show them)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if "etilqs_" in target:  # SQLite's prefix for the names of temporary files
            found.add(target)
    return found


def temp_files_while(run: Callable[[], object]) -> set[str]:
    """The temporary files seen open, from another thread, while `run` runs (SQLite releases the
    GIL while it steps: the watcher looks many times during a statement that sorts for a second)."""
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(open_temp_files())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run()
    finally:
        done.set()
        watcher.join()
    return seen


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads the process's descriptors from /proc (Linux)")
def test_a_large_sort_keeps_its_temporary_storage_in_memory(music_world):
    """The sort that opened a temporary file in /var/tmp on the trial's own connection (its small
    page cache spills) opens none through query_sql, which keeps temporary storage in memory."""
    sort = "SELECT a.id, b.id FROM songs a, songs b ORDER BY random()"
    conn = trial_copy(get_domain("music"))
    conn.execute("BEGIN")
    try:
        budget = SqlBudget(seconds=1.0, steps=10**12)
        answer: dict[str, Any] = {}
        confined = temp_files_while(lambda: answer.update(run_readonly(conn, sort, budget)))
        assert "budget" in error_of(answer)
        assert confined == set()

        # The control: the same sort, unconfined, on the same kind of connection, opens one (where
        # this SQLite keeps temporary storage in files by default, as Debian's and Python's do).
        options = {row[0] for row in conn.execute("PRAGMA compile_options")}
        if options & {"TEMP_STORE=2", "TEMP_STORE=3"}:
            return
        deadline = time.monotonic() + 1.0
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)

        def unconfined() -> None:
            with pytest.raises(sqlite3.OperationalError, match="interrupted"):
                conn.execute(sort).fetchall()

        assert temp_files_while(unconfined) != set()
    finally:
        conn.set_progress_handler(None, 0)
        conn.execute("ROLLBACK")
        conn.close()


def test_the_generator_reads_its_own_uncommitted_writes_where_a_snapshot_would_not(copy):
    """Why query_sql runs on the copy's own connection: a snapshot of a trial copy (serialize, then
    deserialize) misses what its open transaction wrote; query_sql sees it."""
    assert run_readonly(copy, "SELECT title FROM songs WHERE id = 1")["rows"] == [
        [copy.execute("SELECT title FROM songs WHERE id = 1").fetchone()[0]]
    ]
    assert run_readonly(copy, "SELECT title FROM songs WHERE id = 1")["rows"][0][0].endswith(" (edited)")
    snapshot = sqlite3.connect(":memory:")
    snapshot.deserialize(copy.serialize())
    assert not snapshot.execute("SELECT title FROM songs WHERE id = 1").fetchone()[0].endswith(" (edited)")
    snapshot.close()


def test_reads_of_the_schema_the_search_index_and_json_are_allowed(copy):
    before = state(copy)
    schema = run_readonly(copy, "SELECT name, sql FROM sqlite_master WHERE name = 'songs'")
    assert schema["rows"][0][0] == "songs" and "CREATE TABLE" in schema["rows"][0][1]
    columns = run_readonly(copy, "SELECT name FROM pragma_table_info('songs')")
    assert ["title"] in columns["rows"]
    assert run_readonly(copy, "PRAGMA table_info(songs)")["rows"][1][1] == "title"
    assert run_readonly(copy, "PRAGMA index_list(songs)")["columns"][:2] == ["seq", "name"]
    assert run_readonly(copy, """SELECT key, value FROM json_each('{"a": 1, "b": [2]}')""")["rows"] == [["a", 1], ["b", "[2]"]]
    assert run_readonly(copy, """SELECT count(*) FROM json_tree('{"a": {"b": 1}}')""")["rows"] == [[3]]
    title = copy.execute("SELECT title FROM songs WHERE id = 2").fetchone()[0]
    word = max(title.split(), key=len)  # the search index is trigram: three letters or more
    assert len(word) >= 3
    found = run_readonly(copy, f"SELECT rowid, title FROM _ebench_search_songs WHERE _ebench_search_songs MATCH '\"{word}\"' ORDER BY rank")
    assert "error" not in found and [2, title] in found["rows"]
    marked = run_readonly(copy, f"SELECT highlight(_ebench_search_songs, 0, '[', ']') FROM _ebench_search_songs('\"{word}\"')")
    assert f"[{word}]".lower() in " ".join(r[0] for r in marked["rows"]).lower()
    with_ctes = run_readonly(
        copy,
        "WITH long AS (SELECT id FROM songs WHERE duration_sec > 200), "
        "recent AS MATERIALIZED (SELECT id FROM long WHERE id > 10) SELECT count(*) FROM recent JOIN long USING (id)",
    )
    assert "error" not in with_ctes
    assert state(copy) == before


@pytest.mark.parametrize("domain_name", domain_names())
def test_every_table_of_every_world_is_readable(domain_name):
    conn = trial_copy(get_domain(domain_name))
    conn.execute("BEGIN")
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
        for table in tables:
            answer = run_readonly(conn, f'SELECT * FROM "{table}"')
            assert "error" not in answer, (table, answer)
            assert answer["rows"] or not conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone(), table
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_a_cached_write_statement_is_authorized_again(copy):
    """A statement the copy's connection prepared before (the tracker's, in Python's statement
    cache) is prepared anew under the guard when the model sends its very text."""
    touched = copy.execute("SELECT count(*) FROM _ebench_touched").fetchone()[0]
    assert touched > 0  # the uncommitted write was logged
    copy.execute("SAVEPOINT cache_it")
    copy.execute("DELETE FROM _ebench_touched")  # now in the statement cache
    copy.execute("ROLLBACK TO cache_it")
    copy.execute("RELEASE cache_it")
    assert "DELETE is not allowed" in error_of(run_readonly(copy, "DELETE FROM _ebench_touched"))
    assert copy.execute("SELECT count(*) FROM _ebench_touched").fetchone()[0] == touched


def test_blobs_come_back_as_hex_with_their_length_and_every_answer_is_json(copy):
    answer = run_readonly(copy, "SELECT X'00ff', randomblob(1000), zeroblob(0), 1e999, -1e999, CAST(X'ff' AS TEXT), NULL")
    row = answer["rows"][0]
    assert row[0] == {"blob_hex": "00ff", "bytes": 2}
    assert row[1]["bytes"] == 1000 and len(row[1]["blob_hex"]) == 2 * BLOB_HEX_BYTES
    assert row[2] == {"blob_hex": "", "bytes": 0}
    assert row[3:] == ["inf", "-inf", "\ufffd", None]
    assert json.loads(json.dumps(answer, allow_nan=False)) == answer


def test_an_answer_is_capped_in_rows_and_in_bytes(copy):
    many = run_readonly(copy, "SELECT id FROM songs")
    assert len(many["rows"]) == ROW_LIMIT and many["truncated"] and "rows" in many["truncated_because"]
    assert run_readonly(copy, "SELECT id FROM songs ORDER BY id", SqlBudget(rows=5))["rows"] == [[1], [2], [3], [4], [5]]
    exact = run_readonly(copy, "SELECT id FROM songs LIMIT 7", SqlBudget(rows=7))
    assert len(exact["rows"]) == 7 and not exact["truncated"] and "truncated_because" not in exact
    wide = run_readonly(copy, "SELECT hex(randomblob(2500)) AS wide FROM songs")
    assert wide["truncated"] and "bytes" in wide["truncated_because"]
    assert 0 < len(wide["rows"]) < ROW_LIMIT
    assert len(json.dumps({"columns": wide["columns"], "rows": wide["rows"]}).encode()) <= BYTE_LIMIT + 100
    named = run_readonly(copy, "SELECT 1 AS " + "n" * 80_000)
    assert "names of the columns" in error_of(named)


def test_a_cartesian_join_is_stopped_by_its_step_budget(copy):
    before = state(copy)
    answer = run_readonly(copy, "SELECT count(*) FROM songs a, songs b, songs c", SqlBudget(steps=1_000_000, seconds=600))
    assert "step budget (1,000,000 SQLite steps)" in error_of(answer)
    assert state(copy) == before


def test_a_query_that_never_ends_is_stopped_by_its_time_budget(copy):
    never = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    assert "time budget (0.2 s)" in error_of(run_readonly(copy, never, SqlBudget(seconds=0.2, steps=10**15)))
    assert "step budget" in error_of(run_readonly(copy, never, SqlBudget(steps=1_000_000, seconds=600)))


def test_the_default_budget_stops_a_cartesian_join_over_the_largest_table(copy):
    largest = max(
        (name for (name,) in copy.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")),
        key=lambda name: copy.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0],
    )
    started = time.monotonic()
    answer = run_readonly(copy, f'SELECT count(*) FROM "{largest}" a, "{largest}" b, "{largest}" c')
    assert "budget" in error_of(answer)
    assert time.monotonic() - started < 60  # stopped at all: 5 s, or its 200 million steps (a bound that only catches a hang)


@pytest.mark.skipif(_resident_bytes() is None, reason="the process's memory cannot be read here")
def test_a_statement_that_hoards_memory_is_stopped_by_its_memory_budget(copy):
    """A sort of 90 KB values over a cartesian join would take gigabytes within the default time
    budget; here a sort and a DISTINCT that would hold about 140 MB are stopped at 32 MB (and
    without the guard would only end, not exhaust the machine)."""
    budget = SqlBudget(memory_bytes=32_000_000, seconds=120, steps=10**15)
    hoard = "SELECT length(b) FROM (SELECT zeroblob(90000) || x'00' AS b FROM (SELECT id FROM songs LIMIT 1500) ORDER BY random()) LIMIT 1"
    assert "memory budget (32 MB)" in error_of(run_readonly(copy, hoard, budget))
    distinct = "SELECT count(DISTINCT b) FROM (SELECT randomblob(1000) AS b FROM songs a, songs b LIMIT 140000)"
    assert "memory budget (32 MB)" in error_of(run_readonly(copy, distinct, budget))


def chain_of_ctes(depth: int, references: int = 2) -> str:
    """CTEs each referencing the one before `references` times: SQLite's preparation copies them
    references ** depth times, before any progress handler runs (depth 22: 40 s, 24: minutes)."""
    ctes = ["c0(x) AS (SELECT 1)"]
    for i in range(1, depth):
        joined = ", ".join(f"c{i - 1} t{k}" for k in range(references))
        ctes.append(f"c{i}(x) AS (SELECT t0.x FROM {joined})")
    return "WITH " + ", ".join(ctes) + f" SELECT count(*) FROM c{depth - 1}"


def test_a_statement_whose_ctes_would_take_exponential_time_to_prepare_is_refused(copy):
    started = time.monotonic()
    quoted = chain_of_ctes(30).replace("WITH c0(x)", 'WITH "C0"(x)').replace("FROM c0 t0, c0 t1", "FROM [c0] t0, `C0` t1")
    for sql in (chain_of_ctes(40), chain_of_ctes(12, references=3), quoted):
        assert "common table expressions" in error_of(run_readonly(copy, sql))
    assert time.monotonic() - started < 30  # refused before SQLite prepares it (a bound that only catches a hang)
    assert run_readonly(copy, chain_of_ctes(6))["rows"] == [[1]]  # 2**6 copies is nothing


def test_cte_copies_follows_names_however_they_are_written():
    assert cte_copies("SELECT 1") == 0
    assert cte_copies("WITH a AS (SELECT 1) SELECT * FROM a") == 1
    assert cte_copies("WITH a AS (SELECT 1), b AS (SELECT * FROM a, a) SELECT * FROM b") == 5  # b's 3, and the 2 references to a
    assert cte_copies("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r") == 2
    quoted = "WITH \"A\" AS (SELECT 1), [b] AS NOT MATERIALIZED (SELECT * FROM `a`, 'a') SELECT * FROM B"
    assert cte_copies(quoted) == cte_copies("WITH a AS (SELECT 1), b AS (SELECT * FROM a, a) SELECT * FROM b")
    hidden = "WITH a AS (SELECT 1) /* a a a */ SELECT * FROM a -- a a\n"
    assert cte_copies(hidden) == 1  # comments are not references
    assert cte_copies(chain_of_ctes(12)) > MAX_CTE_COPIES > cte_copies(chain_of_ctes(7))


def test_ctrl_c_stops_a_running_statement_and_the_copy_is_restored(copy):
    """SIGINT, sent once the statement is running on this (the main) thread, is raised here
    promptly, not when the statement would have ended, and the copy is as it was."""
    main = threading.main_thread()
    assert threading.current_thread() is main
    never = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    before = state(copy)

    def interrupt_once_running() -> None:
        # the statement is running once the main thread is inside run_readonly's `answer`
        waited_until = time.monotonic() + 60
        while time.monotonic() < waited_until:
            frame = sys._current_frames().get(main.ident or 0)
            names = []
            while frame is not None:
                names.append(frame.f_code.co_name)
                frame = frame.f_back
            if "answer" in names:
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.001)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # pytest-xdist's workers may ignore it
    sender = threading.Thread(target=interrupt_once_running)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            sender.start()
            run_readonly(copy, never, SqlBudget(seconds=120, steps=10**15))
            time.sleep(60)  # not reached: a signal that missed the statement still ends the wait
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 60  # not the 120 s of its budget (a bound that only catches a hang)
    assert state(copy) == before


def test_refusals_reach_the_generator_and_its_session_and_a_blob_ends_no_draft(tmp_path, monkeypatch):
    """A hostile generator over the real model-solver machinery (the local fake API): its ATTACH is
    answered with an error naming it, its BLOB as hex, both recorded as privileged calls; it goes on
    and submits its task, and no file appears where it aimed."""
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.record import SessionWriter, read_session
    from ebench.sessions.synthesize import GeneratorSolver
    from ebench.sessions.trial import Trial, TrialLimits
    from ebench.testing.fake_openai import FakeOpenAI, Script, completion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    secret = tmp_path / "secret.sqlite"
    attach = f"ATTACH '{secret}' AS s"
    script = Script(
        [
            completion(None, [("query_sql", {"sql": attach})]),
            completion(None, [("query_sql", {"sql": "SELECT X'00ff' AS raw"})]),
            completion(None, [("submit_task", {"request": "Rename my first playlist.", "summary": "x"})]),
        ]
    )
    session = tmp_path / "generator.jsonl"
    with FakeOpenAI(script) as fake:
        solver = GeneratorSolver(LLMConfig(model="openai/hostile", api_base=fake.base_url, retries=0))
        trial = Trial(None, domain=get_domain("music"), actor=1, writer=SessionWriter(session, []))
        try:
            made = asyncio.run(solver.generate(trial, TrialLimits(), "cross_step_dependency"))
        finally:
            trial.close()
        sent = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert made.request == "Rename my first playlist." and str(made.outcome.termination) == "agent_stopped"
    refused, blob = (json.loads(m["content"]) for m in sent)
    assert "ATTACH is not allowed" in refused["error"]["message"]
    assert blob["rows"] == [[{"blob_hex": "00ff", "bytes": 2}]]
    noted = [e for e in read_session(session).events if e.event == "privileged_call" and e.tool == "query_sql"]
    assert [e.args["sql"] for e in noted] == [attach, "SELECT X'00ff' AS raw"]
    assert "ATTACH is not allowed" in noted[0].result["error"]["message"]
    assert noted[1].result["rows"] == [[{"blob_hex": "00ff", "bytes": 2}]]
    assert not secret.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["generator.jsonl"]
