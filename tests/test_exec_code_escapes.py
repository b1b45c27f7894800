"""exec_code escape attempts: each fails with a clear error and leaves the world, the task files
and the trial copy untouched. Every attempt runs twice: with every OS layer this machine offers,
and with the audit hook alone (the backbone must stop them all by itself)."""

from __future__ import annotations

import hashlib
import os
import sysconfig
from pathlib import Path

import pytest

import ebench
from ebench.sessions.sandbox import ExecCode, Limits

REPO = Path(ebench.__file__).resolve().parent.parent
TASKS = Path(ebench.__file__).resolve().parent / "tasks" / "data"
STDLIB = sysconfig.get_paths()["stdlib"]
SECRET = "sk-test-must-never-reach-the-worker"


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module", params=["all_layers", "audit_hook_only"])
def sandbox(request, music, music_world):
    from ebench.engine.world import scratch_copy

    os.environ["OPENAI_API_KEY"] = SECRET  # the parent has a secret; the worker must not see it
    conn = scratch_copy(music_world)
    env = music.env(conn, 1)
    layers = None if request.param == "all_layers" else ()
    kwargs = {} if layers is None else {"layers": layers}
    runner = ExecCode(
        lambda n, a: music.tools.call(env, n, a),
        music.tools,
        limits=Limits(wall_seconds=3, memory_mb=256, output_chars=10_000, tool_calls=30),
        **kwargs,
    )
    yield runner, conn, music_world
    runner.close()
    conn.close()
    os.environ.pop("OPENAI_API_KEY", None)


def attempt(sandbox, code: str):
    """Run `code`; check that nothing changed; return the result."""
    runner, conn, world = sandbox
    before = (hashlib.sha256(Path(world).read_bytes()).hexdigest(), _tree_hash(TASKS), conn.serialize())
    result = runner.run(code)
    after = (hashlib.sha256(Path(world).read_bytes()).hexdigest(), _tree_hash(TASKS), conn.serialize())
    assert before[0] == after[0], "the world file changed"
    assert before[1] == after[1], "the task files changed"
    assert before[2] == after[2], "the trial copy changed"
    assert runner.run("1 + 1").value == "2", "the next block must still work"
    return result


def denied(result, *words: str) -> None:
    assert not result.ok, result
    assert result.error
    text = result.error.lower()
    assert any(w.lower() in text for w in words or ("sandbox",)), result.error


def test_read_a_task_file(sandbox):
    task = next(TASKS.rglob("*.json"))
    denied(attempt(sandbox, f"open({str(task)!r}).read()"))
    denied(attempt(sandbox, f"import io\nio.open_code({str(task)!r}).read()"))
    denied(attempt(sandbox, f"import _io\n_io.FileIO({str(task)!r}).read()"))
    denied(attempt(sandbox, f"import os\nos.read(os.open({str(task)!r}, os.O_RDONLY), 100)"))


def test_open_the_world_database(sandbox):
    _, _, world = sandbox
    denied(attempt(sandbox, f"open({str(world)!r}, 'rb').read(100)"))
    denied(attempt(sandbox, f"open({STDLIB + '/../../../../../' + str(world)!r}, 'rb').read(100)"))


def test_import_sqlite3_and_connect(sandbox):
    _, _, world = sandbox
    denied(attempt(sandbox, f"import sqlite3\nsqlite3.connect({str(world)!r}).execute('select 1')"))
    denied(attempt(sandbox, "import importlib\nimportlib.import_module('_sqlite3')"))


def test_load_a_forbidden_extension_module_under_another_name(sandbox):
    so = next(Path(STDLIB, "lib-dynload").glob("_sqlite3*.so"), None) or next(Path(STDLIB, "lib-dynload").glob("_ctypes*.so"))
    code = (
        "import importlib.machinery as m, importlib.util as u\n"
        f"spec = u.spec_from_file_location('harmless', {str(so)!r}, loader=m.ExtensionFileLoader('harmless', {str(so)!r}))\n"
        "u.module_from_spec(spec)"
    )
    denied(attempt(sandbox, code))


def test_list_directories(sandbox):
    for path in ("/", os.path.expanduser("~"), str(REPO), str(TASKS), "/proc/self"):
        denied(attempt(sandbox, f"import os\nos.listdir({path!r})"))
        denied(attempt(sandbox, f"import os\nlist(os.scandir({path!r}))"))
    denied(attempt(sandbox, f"import glob\nglob.glob({str(REPO) + '/*'!r})"))
    denied(attempt(sandbox, f"import pathlib\nlist(pathlib.Path({str(REPO)!r}).iterdir())"))


def test_read_installed_packages_and_ebench_source(sandbox):
    site = sysconfig.get_paths()["purelib"]
    denied(attempt(sandbox, f"import os\nos.listdir({site!r})"))
    denied(attempt(sandbox, f"open({str(Path(ebench.__file__))!r}).read()"))
    denied(attempt(sandbox, "import ebench"), "no module named", "sandbox")


def test_open_a_socket(sandbox):
    denied(attempt(sandbox, "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)"))
    denied(attempt(sandbox, "import urllib.request\nurllib.request.urlopen('http://example.com', timeout=1)"))


def test_spawn_a_process(sandbox):
    denied(attempt(sandbox, "import subprocess\nsubprocess.run(['id'])"))
    denied(attempt(sandbox, "import os\nos.system('id')"))
    denied(attempt(sandbox, "import os\nos.fork()"))
    denied(attempt(sandbox, "import os\nos.posix_spawn('/bin/sh', ['sh', '-c', 'id'], {})"))
    denied(attempt(sandbox, "import os\nos.execv('/bin/sh', ['sh'])"))
    denied(attempt(sandbox, "import posix\nposix.fork()"))
    denied(attempt(sandbox, "import _posixsubprocess"))


def test_ctypes_and_cffi(sandbox):
    denied(attempt(sandbox, "import ctypes\nctypes.CDLL(None).system(b'id')"))
    denied(attempt(sandbox, "import _ctypes"))
    denied(attempt(sandbox, "import cffi"), "sandbox", "no module named")


def test_fork_bomb(sandbox):
    denied(attempt(sandbox, "import os\nwhile True:\n    os.fork()"))


def test_endless_loop(sandbox):
    result = attempt(sandbox, "while True:\n    pass")
    assert result.limit == "time"


def test_memory_bomb(sandbox):
    # The memory limit holds in every mode (it is the block's limit, not an optional layer), so the
    # allocation fails at once however fast the machine is: never a race with the wall-time kill.
    result = attempt(sandbox, "x = bytearray(2 * 1024**3)")
    assert (result.ok, result.limit) == (False, "memory"), result
    assert "Memory limit" in result.error
    # growing step by step stops at the limit too (256 MB here), well before 2 GB
    result = attempt(sandbox, "chunks = []\nwhile True:\n    chunks.append(bytearray(8 * 1024**2))")
    assert (result.ok, result.limit) == (False, "memory"), result


def test_huge_output(sandbox):
    result = attempt(sandbox, "print('x' * 10**8)")
    assert result.limit == "output" and len(result.stdout) < 11_000


def test_tamper_with_the_proxy(sandbox):
    # garbage on every inherited descriptor: the parent refuses it and kills the worker
    result = attempt(
        sandbox,
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'\\xff' * 64)\n    except OSError:\n        pass\nimport time\ntime.sleep(1)",
    )
    assert not result.ok and result.limit in ("protocol", "crash")
    # a forged, well-formed call out of sequence
    forge = (
        "import os, json\nmsg = json.dumps({'t': 'call', 'id': 99, 'tool': 'delete_playlist', 'args': {'playlist_id': 1}}).encode()\n"
        "for fd in range(3, 64):\n    try:\n        os.write(fd, len(msg).to_bytes(4, 'big') + msg)\n    except OSError:\n        pass\n"
        "import time\ntime.sleep(1)"
    )
    result = attempt(sandbox, forge)
    assert not result.ok and result.limit in ("protocol", "crash")
    # an oversized frame
    result = attempt(
        sandbox,
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, (2**31).to_bytes(4, 'big'))\n    except OSError:\n        pass\nimport time\ntime.sleep(1)",
    )
    assert not result.ok and result.limit in ("protocol", "crash")
    # reaching the channel through the garbage collector
    denied(attempt(sandbox, "import gc\ngc.get_referrers(search_songs)"))
    denied(attempt(sandbox, "import gc\ngc.get_objects()"))


FORGE = (
    "import os, json\n"
    "def forge(frame):\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            os.write(fd, len(frame).to_bytes(4, 'big') + frame)\n"
    "        except OSError:\n"
    "            pass\n"
)


def test_forge_protocol_frames(sandbox):
    # JSON nested deeper than the parent's json can read: the block is stopped, the parent carries on
    result = attempt(sandbox, FORGE + "forge(b'[' * 3_000_000)\nimport time\ntime.sleep(2)")
    assert result.limit == "protocol" and "nested too deeply" in result.error
    # a forged end message, then the block goes on (and its real end follows)
    result = attempt(
        sandbox,
        FORGE + "forge(json.dumps({'t': 'done', 'ok': True, 'value': \"'forged'\", "
        "'error': None, 'limit': None}).encode())\nimport time\ntime.sleep(0.5)\n'real'",
    )
    assert result.limit == "protocol" and "end message" in result.error and result.value is None
    # a forged end message of the wrong shape, and one with lone surrogates
    result = attempt(sandbox, FORGE + "forge(json.dumps({'t': 'done', 'ok': 'yes'}).encode())\nimport time\ntime.sleep(2)")
    assert result.limit == "protocol"
    result = attempt(sandbox, FORGE + "forge(json.dumps({'t': 'out', 'data': '\\ud800'}).encode())\nprint('after')")
    assert result.ok and result.stdout == "\\ud800after\n"


def test_remove_or_bypass_the_audit_hook(sandbox):
    # a new hook is refused (CPython then returns silently): it never runs
    result = attempt(sandbox, "import sys\nseen = []\nsys.addaudithook(lambda e, a: seen.append(e))\ncompile('1', 'x', 'eval')\nseen")
    assert result.ok and result.value == "[]"
    denied(attempt(sandbox, "import sys\nsys.settrace(lambda *a: None)"))
    denied(attempt(sandbox, "import sys\nsys.setprofile(lambda *a: None)"))
    denied(attempt(sandbox, "import marshal\nmarshal.loads(marshal.dumps((lambda: 0).__code__))"))
    denied(attempt(sandbox, "(lambda: 0).__code__.replace(co_code=b'\\x00' * 8)"))
    denied(attempt(sandbox, "import _imp, importlib.machinery as m\n_imp.create_builtin(m.ModuleSpec('posix', None))"))
    denied(attempt(sandbox, "import sys\ndel sys.modules['posix']\nimport posix"))
    # builtins replaced by the block do not change what the hook does
    denied(attempt(sandbox, "import builtins\nbuiltins.type = lambda *a: str\nbuiltins.len = lambda *a: 0\nopen('/etc/hostname').read()"))
    # the file object class found through __subclasses__ still goes through the hook
    denied(
        attempt(
            sandbox,
            "io = [c for c in object.__subclasses__() if c.__name__ == '_IOBase'][0]\n"
            "fileio = [c for c in io.__subclasses__() if c.__name__ == '_RawIOBase'][0].__subclasses__()\n"
            "[c for c in fileio if c.__name__ == 'FileIO'][0]('/etc/hostname').read()",
        )
    )


def test_write_a_file(sandbox):
    denied(attempt(sandbox, "open('/tmp/ebench-escape', 'w').write('x')"))
    denied(attempt(sandbox, f"open({STDLIB + '/ebench_escape.py'!r}, 'w').write('x')"))
    denied(attempt(sandbox, "import os\nos.open('/tmp/ebench-escape', os.O_WRONLY | os.O_CREAT)"))
    denied(attempt(sandbox, "import os\nos.mkdir('/tmp/ebench-escape-dir')"))
    denied(attempt(sandbox, f"import os\nos.mknod({STDLIB + '/disk'!r})"))
    assert not os.path.exists("/tmp/ebench-escape") and not os.path.exists(STDLIB + "/ebench_escape.py")


def test_environment_and_proc_hold_no_secrets(sandbox):
    result = attempt(sandbox, "import os\ndict(os.environ)")
    assert result.ok and SECRET not in result.value and "OPENAI" not in result.value
    assert set(eval(result.value)) <= {"LC_CTYPE"}  # set by CPython's locale coercion, nothing inherited
    denied(attempt(sandbox, "open('/proc/self/environ', 'rb').read()"))
    denied(attempt(sandbox, "open('/proc/1/environ', 'rb').read()"))


def test_signal_the_parent(sandbox):
    pid = os.getpid()
    denied(attempt(sandbox, f"import os\nos.kill({pid}, 9)"))
    denied(attempt(sandbox, f"import os\nos.killpg(os.getpgid({pid}), 9)"))
    denied(attempt(sandbox, "import signal\nsignal.pthread_kill(1, 9)"))
    assert os.getpid() == pid  # still here


def test_special_files_and_dot_dot(sandbox):
    denied(attempt(sandbox, "open('/dev/sda', 'rb')"))
    denied(attempt(sandbox, f"open({STDLIB + '/../../../../etc/passwd'!r}).read()"))
    denied(attempt(sandbox, "open('relative.txt')"))


def test_the_standard_library_still_works(sandbox):
    code = (
        "import statistics, json, collections, datetime, decimal, re, itertools\n"
        "import zoneinfo, sched, fnmatch\n"  # not preloaded: compiled from source under the hook
        "statistics.mean([1, 2, 3]), json.dumps({'a': 1}), fnmatch.fnmatch('ab', 'a*')"
    )
    result = attempt(sandbox, code)
    assert result.ok, result.error
    assert result.value == "(2, '{\"a\": 1}', True)"
