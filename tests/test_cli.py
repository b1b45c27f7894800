"""The `ebench` command line, driven through typer's runner (and a subprocess for start-up)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ebench.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(autouse=True)
def _world(music_world):
    """CLI tests run against the session's built world."""
    return music_world


def test_help_lists_the_command_groups():
    result = run("--help")
    assert result.exit_code == 0
    assert "domains" in result.output and "tools" in result.output


def test_help_imports_no_heavy_module():
    """`ebench --help` must stay fast: litellm, mcp, textual and Faker are imported lazily."""
    probe = (
        "import sys\n"
        "from ebench.cli import app\n"
        "try:\n    app(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print('HEAVY:' + ','.join(m for m in ('litellm', 'mcp', 'textual', 'faker') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "HEAVY:\n" in out or out.rstrip().endswith("HEAVY:")


def test_domains_list_json(music_world):
    result = run("domains", "list", "--json")
    assert result.exit_code == 0, result.output
    (music,) = [d for d in json.loads(result.output) if d["name"] == "music"]
    assert music["built"] and music["current"]
    assert music["path"] == str(music_world)
    assert music["tools"] == 33


def test_domains_build_skips_a_current_world_and_rebuilds_with_force(music_world):
    result = run("domains", "build", "--domain", "music", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"built": [], "up_to_date": ["music"]}
    before = hashlib.sha256(music_world.read_bytes()).hexdigest()
    result = run("domains", "build", "--domain", "music", "--force", "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["built"]
    assert report["domain"] == "music" and report["rows"] > 18_000 and report["repaired"] > 0
    assert {c["kind"] for c in report["checks"]} == {"chronology", "clock", "aggregate", "status"}
    # Same seed: the rebuilt file is byte-identical.
    assert hashlib.sha256(music_world.read_bytes()).hexdigest() == before


def test_domains_build_prints_the_validation_report():
    result = run("domains", "build", "--domain", "music", "--force")
    assert result.exit_code == 0, result.output
    assert "validation and repair" in result.output
    assert "values repaired; the world is consistent" in result.output


def test_domains_stats_json_and_table():
    result = run("domains", "stats", "--domain", "music", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (music,) = data["domains"]
    assert music["tables"] == 16 and music["orphans"] == 0 and music["users"] == 54
    assert music["rows"] == sum(t["rows"] for t in music["per_table"])
    assert data["total"]["rows"] == music["rows"]
    table = run("domains", "stats", "--domain", "music")
    assert table.exit_code == 0 and "orphans" in table.output and f"{music['rows']:,}" in table.output


def test_domains_schema():
    result = run("domains", "schema", "music", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fill_order"][0] == "genres"
    songs = next(t for t in data["tables"] if t["name"] == "songs")
    assert set(songs["depends_on"]) == {"albums", "artists", "genres"}
    assert "songs.album_id -> albums.id" in data["foreign_keys"]
    text = run("domains", "schema", "music")
    assert text.exit_code == 0
    assert "fill order:" in text.output and "dependency graph" in text.output


def test_tools_list_json():
    result = run("tools", "list", "--domain", "music", "--json")
    assert result.exit_code == 0, result.output
    tools = json.loads(result.output)
    assert len(tools) == 33
    names = {t["name"]: t for t in tools}
    assert names["create_playlist"]["kind"] == "write"
    assert names["search_songs"]["parameters"]["properties"]["genre"]["type"] == "string"
    assert sum(t["kind"] == "write" for t in tools) >= 8
    assert "search_songs" in run("tools", "list", "-d", "music").output


def test_tools_call_prints_the_result_and_never_touches_the_world(music_world):
    before = hashlib.sha256(music_world.read_bytes()).hexdigest()
    result = run("tools", "call", "--domain", "music", "--actor", "1", "create_playlist", '{"name": "From the CLI"}')
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["name"] == "From the CLI"
    assert hashlib.sha256(music_world.read_bytes()).hexdigest() == before
    # A second call starts from the world again: the playlist does not exist there.
    again = run("tools", "call", "-d", "music", "-a", "1", "create_playlist", '{"name": "From the CLI"}')
    assert again.exit_code == 0, again.output


def test_tools_call_errors_are_results_with_exit_code_1():
    result = run("tools", "call", "-d", "music", "-a", "1", "get_song", '{"song_id": "seven"}')
    assert result.exit_code == 1
    assert json.loads(result.output)["error"]["code"] == "invalid_arguments"
    result = run("tools", "call", "-d", "music", "-a", "1", "get_sogn", "{}")
    assert result.exit_code == 1
    assert "get_song" in json.loads(result.output)["error"]["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tools", "call", "-d", "music", "-a", "9999", "get_my_profile"), "No listener with id 9999"),
        (("tools", "list", "-d", "nowhere"), "unknown domain 'nowhere'"),
        (("domains", "stats", "--domain", "nowhere"), "unknown domain 'nowhere'"),
        (("domains", "schema", "nowhere"), "unknown domain 'nowhere'"),
        (("domains", "schema", "[red]x[/]"), "unknown domain '[red]x[/]'"),
        (("run", "--batch", "--solver", "noop", "--split", "nope"), "--split 'nope': one of suite, ask, composed"),
        (("run", "--batch", "--solver", "noop", "--split", "ask", "--tasks-dir", "."), "--split and --tasks-dir both name the tasks"),
        (("play", "--split", "ask", "--tasks-dir", "."), "--split and --tasks-dir both name the tasks"),
    ],
)
def test_expected_errors_are_one_line_without_traceback(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_a_world_built_with_another_seed_is_its_own_file(music, tmp_path, monkeypatch):
    monkeypatch.setenv("EBENCH_HOME", str(tmp_path))
    seed = music.default_seed + 11
    assert run("domains", "build", "--domain", "music", "--seed", str(seed), "--json").exit_code == 0
    listed = [r for r in json.loads(run("domains", "list", "--json").output) if r["name"] == "music"]
    # the default world is not built over (nor replaced by) the other seed's
    assert {(r["seed"], r["built"], r["default"]) for r in listed} == {(music.default_seed, False, True), (seed, True, False)}
    assert next(r for r in listed if r["seed"] == seed)["current"]
    result = run("domains", "stats", "--domain", "music", "--seed", str(seed), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["domains"][0]["seed"] == seed
    assert not (tmp_path / "worlds" / "music.sqlite").exists()


def test_tools_describe():
    result = run("tools", "describe", "-d", "music", "add_song_to_playlist")
    assert result.exit_code == 0, result.output
    assert "(write)" in result.output and "playlist_id" in result.output and "expired" in result.output
    data = json.loads(run("tools", "describe", "-d", "music", "search_songs", "--json").output)
    assert data["name"] == "search_songs" and data["kind"] == "read"
    assert data["parameters"]["properties"]["sort_by"]["enum"][0] == "relevance"
    missing = run("tools", "describe", "-d", "music", "search_song")
    assert missing.exit_code == 2 and "search_songs" in missing.stderr


def test_a_failing_build_is_reported_and_keeps_the_old_world(music, music_world, monkeypatch):
    """A generator that writes an orphan: the build stops with a clear error, no traceback,
    and the world that was there is untouched (builds write aside and rename at the end)."""
    before = hashlib.sha256(music_world.read_bytes()).hexdigest()

    def orphan_likes(ctx):
        yield {"user_id": 1, "comment_id": 10**9, "liked_at": music.now}

    monkeypatch.setitem(music.generators, "comment_likes", orphan_likes)
    result = run("domains", "build", "--domain", "music", "--force")
    assert result.exit_code == 1
    assert "building music failed" in result.stderr and "comment_likes" in result.stderr
    assert "FOREIGN KEY" in result.stderr and "Traceback" not in result.stderr
    assert hashlib.sha256(music_world.read_bytes()).hexdigest() == before
    assert not list(music_world.parent.glob(".*.tmp"))


def test_ctrl_c_during_a_build_keeps_the_old_world(music, music_world, tmp_path):
    """SIGINT while the world is being written: exit non-zero, no traceback, old world intact."""
    import os
    import shutil
    import signal
    import time

    home = tmp_path / "home"
    (home / "worlds").mkdir(parents=True)
    shutil.copy(music_world, home / "worlds" / "music.sqlite")
    before = hashlib.sha256((home / "worlds" / "music.sqlite").read_bytes()).hexdigest()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ebench", "domains", "build", "--domain", "music", "--force"],
        env={**os.environ, "EBENCH_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not list((home / "worlds").glob(".*.tmp")) and time.monotonic() < deadline:  # wait until it is writing
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "Traceback" not in err
    assert hashlib.sha256((home / "worlds" / "music.sqlite").read_bytes()).hexdigest() == before
    assert not list((home / "worlds").glob(".*.tmp"))


def test_split_names_a_shipped_task_set(tmp_path):
    from ebench.tasks.suite import SPLITS, load_suite

    out = tmp_path / "run"
    result = run("run", "--batch", "--solver", "oracle", "--split", "ask", "--domain", "music", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    asked = {t.id for t in load_suite(SPLITS["ask"], domain="music").tasks}
    ran = {json.loads(line)["task"] for line in (out / "results.jsonl").read_text().splitlines()}
    assert ran == asked and all(json.loads(line)["passed"] for line in (out / "results.jsonl").read_text().splitlines())
