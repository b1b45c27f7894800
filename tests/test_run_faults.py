"""Run directories and the environment fail; the commands say so in one line and lose nothing.

One writer per run (a lock, recovered when its holder is killed), `--out` checked, a torn or
damaged results file read line by line and repaired on resume, a batch of infrastructure errors
exits non-zero, and a full disk or a read-only folder is one line (exit 74) with the run
resumable afterwards. The disk faults use a small tmpfs in a private mount namespace
(`unshare`), so they need no privileges beyond what the kernel grants unprivileged users."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.runs import load_run

runner = CliRunner()
ORACLE = ["run", "--batch", "--solver", "oracle", "--domain", "music", "--trials", "2"]


@pytest.fixture(scope="module")
def worlds(music_world, meeting_world, moba_world):
    return True


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The real `ebench` in a fresh process (its own top-level error handling included)."""
    return subprocess.run(
        [sys.executable, "-m", "ebench", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout
    )


def one_line(stderr: str) -> str:
    """The one error line (a progress bar's last state may stand above it)."""
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("trials ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def comparable(out: Path) -> list[tuple]:
    return sorted(
        (r.task, r.trial, r.passed, r.termination, r.tool_calls, json.dumps(r.to_dict()["grade"], sort_keys=True))
        for r in load_run(out).results
    )


@pytest.fixture(scope="module")
def whole(tmp_path_factory, worlds):
    out = tmp_path_factory.mktemp("whole") / "run"
    result = runner.invoke(app, [*ORACLE, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out


# -- one writer ----------------------------------------------------------------------------


def test_a_second_batch_on_the_same_run_is_refused_and_a_killed_holders_lock_is_recovered(tmp_path, worlds):
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from ebench.sessions.runs import RunLock
        RunLock(Path({str(out)!r})).acquire()
        print("locked", flush=True)
        time.sleep(600)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        refused = cli(*ORACLE, "--out", str(out))
        assert refused.returncode == 2
        assert f"is being written by ebench batch pid {holder.pid}" in one_line(refused.stderr)
        assert not (out / "results.jsonl").exists()
    finally:
        holder.kill()  # SIGKILL: no clean-up runs
        holder.wait()
    resumed = cli(*ORACLE, "--out", str(out), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["passed"] == json.loads(resumed.stdout)["scored"] > 0


def test_out_must_be_a_run_directory_an_empty_folder_or_new(tmp_path, worlds):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    result = cli(*ORACLE, "--out", str(afile))
    assert result.returncode == 2 and "is a file, not a folder" in one_line(result.stderr)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.tex").write_text("mine")
    result = cli(*ORACLE, "--out", str(busy))
    assert result.returncode == 2 and "not a run directory" in one_line(result.stderr)
    assert sorted(p.name for p in busy.iterdir()) == ["thesis.tex"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(*ORACLE, "--out", str(empty), "--json").returncode == 0


# -- damaged files ---------------------------------------------------------------------------


def test_a_torn_last_line_is_repaired_on_resume(tmp_path, whole):
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    resumed = cli(*ORACLE, "--out", str(out), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert "torn last line" in resumed.stderr and json.loads(resumed.stdout)["trials_run"] == 1
    assert all(json.loads(line) for line in results.read_text().splitlines())
    assert comparable(out) == comparable(whole)


def test_damaged_results_lines_are_skipped_with_a_warning_and_the_rest_used(tmp_path, whole):
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    damaged = [
        lines[0],
        b"\xff\xfe not utf-8\n",
        lines[1],
        "caf\u00e9".encode()[:-1] + b"\n",
        b"{not json\n",
        b'{"task": 7, "trial": "one"}\n',
        *lines[2:],
    ]
    results.write_bytes(b"".join(damaged))
    report = cli("report", str(out), "--json")
    assert report.returncode == 0, report.stderr
    warnings = [line for line in report.stderr.splitlines() if line.startswith("warning:")]
    assert [w.split("results.jsonl:")[1].split(":")[0] for w in warnings] == ["2", "4", "5", "6"]
    overall = json.loads(report.stdout)["runs"][0]["metrics"]["overall"]
    assert overall["trials"] == len(lines)  # every readable result is used
    regraded = cli("regrade", str(out), "--json")
    assert regraded.returncode == 0, regraded.stderr
    assert len(json.loads(regraded.stdout)["problems"]) == 4


def test_a_manifest_of_the_wrong_shape_is_a_one_line_error(tmp_path, whole):
    out = tmp_path / "run"
    shutil.copytree(whole, out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["config"] = 5
    (out / "manifest.json").write_text(json.dumps(manifest))
    for args in (["report", str(out)], [*ORACLE, "--out", str(out)], ["regrade", str(out)]):
        result = cli(*args)
        assert result.returncode == 2 and "the manifest's 'config' must be a JSON object" in one_line(result.stderr)


def test_a_batch_where_every_trial_is_an_infrastructure_error_exits_non_zero(tmp_path, worlds):
    folder = tmp_path / "tasks" / "music"
    folder.mkdir(parents=True)
    task = json.loads(Path(os.environ["EBENCH_TASKS"], "music", "music-0005.json").read_text())
    task["actor"] = 999_999  # the world has no such listener: the trial cannot start
    (folder / "music-0005.json").write_text(json.dumps(task))
    result = cli("run", "--batch", "--solver", "oracle", "--tasks-dir", str(tmp_path / "tasks"), "--out", str(tmp_path / "run"), "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["infra_errors"] == 1  # stdout still holds only the JSON summary
    assert "every trial that ran (1) ended in an infrastructure error" in one_line(result.stderr)


# -- a full disk, a read-only folder ---------------------------------------------------------


def _namespace_available() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True, timeout=30)
    return probe.returncode == 0


needs_namespace = pytest.mark.skipif(not _namespace_available(), reason="this kernel allows no private mount namespace (unshare -rm)")


def in_namespace(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a shell script as root of a private user and mount namespace (mounts vanish with it)."""
    path = tmp_path / "script.sh"
    path.write_text(script)
    return subprocess.run(
        ["unshare", "-rm", "sh", str(path)], capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHON": sys.executable}
    )


@needs_namespace
def test_a_full_disk_mid_batch_is_one_line_and_the_run_resumes_to_the_same_results(tmp_path, whole):
    disk, saved = tmp_path / "disk", tmp_path / "saved"
    disk.mkdir()
    args = " ".join(ORACLE) + " --concurrency 1"  # trials in order: the disk fills at the same one every time
    result = in_namespace(
        textwrap.dedent(f"""
        set -u
        mount -t tmpfs -o size=200k tmpfs {disk}
        "$PYTHON" -m ebench {args} --out {disk}/run > {tmp_path}/full.out 2> {tmp_path}/full.err
        echo $? > {tmp_path}/full.code
        find {disk}/run -name '*.tmp' > {tmp_path}/full.tmp
        mount -o remount,size=64m {disk}
        "$PYTHON" -m ebench {args} --out {disk}/run --json > {tmp_path}/resumed.out 2> {tmp_path}/resumed.err
        echo $? > {tmp_path}/resumed.code
        cp -r {disk}/run {saved}
        """),
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "full.code").read_text().strip() == "74"
    assert "the disk is full" in one_line((tmp_path / "full.err").read_text())
    assert (tmp_path / "full.tmp").read_text() == ""  # no half-written manifest.json.tmp left behind
    assert (tmp_path / "resumed.code").read_text().strip() == "0", (tmp_path / "resumed.err").read_text()
    kept = json.loads((tmp_path / "resumed.out").read_text())["trials_kept"]
    assert 0 < kept < len(load_run(whole).results)  # some trials were kept from before the disk filled
    assert comparable(saved) == comparable(whole)


@needs_namespace
def test_a_read_only_data_directory_or_out_folder_is_one_line(tmp_path, worlds):
    home, out = tmp_path / "home", tmp_path / "ro"
    home.mkdir()
    out.mkdir()
    result = in_namespace(
        textwrap.dedent(f"""
        mount -t tmpfs -o ro tmpfs {home}
        mount -t tmpfs -o ro tmpfs {out}
        EBENCH_HOME={home} "$PYTHON" -m ebench domains build --domain music > /dev/null 2> {tmp_path}/build.err
        echo $? > {tmp_path}/build.code
        "$PYTHON" -m ebench {" ".join(ORACLE)} --out {out}/run > /dev/null 2> {tmp_path}/run.err
        echo $? > {tmp_path}/run.code
        """),
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    for name in ("build", "run"):
        assert (tmp_path / f"{name}.code").read_text().strip() == "74", name
        assert "read-only" in one_line((tmp_path / f"{name}.err").read_text())


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    import errno

    from ebench.sessions.runs import write_json_atomic

    path = tmp_path / "manifest.json"
    write_json_atomic(path, {"old": True})
    real_write = Path.write_text

    def full_disk(self, text, *args, **kwargs):
        real_write(self, text[:5], *args, **kwargs)  # part of it reached the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_json_atomic(path, {"new": True})
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_a_damaged_session_file_is_read_line_by_line(tmp_path, whole):
    from ebench.sessions.record import read_session
    from ebench.sessions.timeline import Timeline

    out = tmp_path / "run"
    shutil.copytree(whole, out)
    path = out / "sessions" / "music-0005" / "1.jsonl"
    lines = path.read_bytes().split(b"\n")
    # a cut UTF-8 sequence, a line that is not JSON, one that is not an event, and a torn end
    damaged = [lines[0], "caf\u00e9".encode()[:-1], lines[1], b"{oops", b"[1, 2]", *lines[2:-1]]
    path.write_bytes(b"\n".join(damaged) + b"\n" + lines[-2][:20])
    session = read_session(path)
    assert [w.split("1.jsonl:")[1].split(":")[0] for w in session.warnings] == ["2", "4", "5", str(len(damaged) + 1)]
    assert len(session.events) == len(lines) - 1  # every event kept (split leaves a last empty piece; the torn copy is skipped)
    timeline = Timeline(session)
    try:
        assert timeline.leaves  # the recorded calls still step
    finally:
        timeline.close()
    regraded = cli("regrade", str(out), "--json")
    assert regraded.returncode == 0, regraded.stderr
    problems = json.loads(regraded.stdout)["problems"]
    assert sum("1.jsonl:" in p for p in problems) == 4
