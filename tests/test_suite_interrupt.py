"""The test suite itself stops on ctrl+c, even when the code under test catches it (an in-process
batch ends as "interrupted" and returns): the tests/conftest.py rule, tried on a session of two tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = Path(__file__).resolve().parent / "conftest.py"


def pytest_session(folder: Path) -> subprocess.CompletedProcess:
    """A test session over `folder` (its tests and a copy of this suite's conftest), in a process of its own."""
    shutil.copy(CONFTEST, folder / "conftest.py")
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-q", str(folder)]
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=120)


def test_ctrl_c_caught_by_the_code_under_test_still_stops_the_session(tmp_path):
    ran_on = tmp_path / "second-test-ran"
    (tmp_path / "test_two.py").write_text(
        textwrap.dedent(f"""
        import os, signal, time

        def test_the_code_under_test_swallows_ctrl_c():
            try:  # as an in-process `ebench run --batch` does: it stops, keeps its trials and returns
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            except KeyboardInterrupt:
                pass

        def test_the_next_one():
            open({str(ran_on)!r}, "w").close()
        """)
    )
    result = pytest_session(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr  # pytest's "interrupted"
    assert "interrupted by ctrl+c" in result.stdout
    assert not ran_on.exists()


def test_a_ctrl_c_a_test_sends_itself_on_purpose_does_not_stop_the_session(tmp_path):
    (tmp_path / "test_two.py").write_text(
        textwrap.dedent("""
        import time
        import pytest

        def test_sends_itself_ctrl_c(send_ctrl_c):
            with pytest.raises(KeyboardInterrupt):
                send_ctrl_c()
                time.sleep(5)

        def test_the_next_one():
            pass
        """)
    )
    result = pytest_session(tmp_path)
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout + result.stderr
