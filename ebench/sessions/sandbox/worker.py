# ruff: noqa: UP031, SIM905, SIM105  (a standalone stdlib-only script: kept plain and dependency-free)
"""Stage 2 of the sandbox: the zygote, and the workers it forks (standard library only).

Exec'd by confine.py as `python -I -S -B -c <this source> CONFIG_JSON`, with the zygote's OS layers
already applied. The zygote preloads the modules a block may use, then waits on its control socket:
for each request it forks one worker, handing it the two pipes that came with the request. The
worker applies the block's resource limits (memory, CPU, files, no processes), closes every other
descriptor, forgets the modules the zygote used for itself, reads the tool specs, builds one proxy
function per tool, installs the audit hook and waits for the block. Each worker runs exactly one
block and exits, so nothing (variables, monkeypatches, threads) survives from one block to the
next; a fork copies the zygote as it was before any block ran. Tool calls go to the parent over a
pipe: 4-byte big-endian length + UTF-8 JSON. The zygote never reaps a worker until the parent asks
(so a worker's pid cannot be reused while the parent may still signal it).

The audit hook is the backbone: it cannot be removed, it keeps no state that the block can
reach (every name it uses is a default argument, so neither its globals nor the builtins
module can change what it does) and it allows only a short list of events.
"""

import sys

# -- modules a block may import without touching the disk again -----------------------------
PRELOAD = (
    "json",
    "re",
    "math",
    "cmath",
    "statistics",
    "collections",
    "collections.abc",
    "itertools",
    "functools",
    "operator",
    "datetime",
    "time",
    "calendar",
    "decimal",
    "fractions",
    "random",
    "string",
    "textwrap",
    "heapq",
    "bisect",
    "copy",
    "pprint",
    "reprlib",
    "difflib",
    "enum",
    "dataclasses",
    "typing",
    "types",
    "abc",
    "numbers",
    "unicodedata",
    "hashlib",
    "base64",
    "binascii",
    "struct",
    "array",
    "csv",
    "io",
    "traceback",
    "linecache",
    "inspect",
    "ast",
    "keyword",
    "tokenize",
    "contextlib",
    "weakref",
    "uuid",
    "zlib",
    "graphlib",
    "locale",
    "codecs",
    "encodings.idna",
    "pydoc",
    "gc",
    "errno",
    "atexit",
    "symtable",
    "warnings",
    "queue",
    "threading",
    "html",
    "shlex",
)

# Modules a block may never load (by top-level name, or the file name of an extension module).
BLOCKED_MODULES = frozenset(
    """
ctypes _ctypes _ctypes_test cffi _cffi_backend _posixsubprocess subprocess multiprocessing
_multiprocessing _posixshmem socket _socket ssl _ssl select selectors asyncio _asyncio mmap sqlite3
_sqlite3 fcntl termios tty pty resource signal _signal _xxsubinterpreters _xxinterpchannels
_testcapi _testinternalcapi _testbuffer _testmultiphase _testimportmultiple _testclinic
_xxtestfuzz xxlimited xxlimited_35 xxsubtype readline _curses _curses_panel curses _tkinter tkinter
syslog nis spwd crypt _crypt pwd grp _imp _io _thread _tracemalloc faulthandler posix nt
_winapi winreg msvcrt _lsprof ossaudiodev audioop webbrowser http ftplib smtplib poplib
imaplib nntplib telnetlib xmlrpc socketserver wsgiref zipimport venv ensurepip
idlelib turtle turtledemo sysconfig site
""".split()
)

# Functions of posix/os that raise no audit event but must not be callable.
REMOVED_OS_FUNCTIONS = (
    "mknod",
    "mkfifo",
    "chroot",
    "setuid",
    "setgid",
    "seteuid",
    "setegid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "initgroups",
    "kill",
    "killpg",
    "fork",
    "forkpty",
    "register_at_fork",
    "system",
    "popen",
    "posix_spawn",
    "posix_spawnp",
    "execv",
    "execve",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execvp",
    "execvpe",
    "spawnv",
    "spawnve",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "spawnvp",
    "spawnvpe",
    "pidfd_open",
    "memfd_create",
    "eventfd",
    "setns",
    "unshare",
    "login_tty",
    "openpty",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "setpriority",
    "nice",
)

# Events a block may raise; everything else is denied. Path events are checked further.
ALLOWED_EVENTS = frozenset(
    """
import open os.listdir os.scandir glob.glob glob.glob/2 os.walk os.fwalk compile exec
object.__getattr__ object.__setattr__ object.__delattr__ sys._getframe builtins.id time.sleep
array.__new__ function.__new__ marshal.dumps pickle.find_class copy.copy sys.excepthook
sys.unraisablehook cpython._PySys_ClearAuditHooks cpython.PyInterpreterState_Clear
code.__reduce__ sys.getrecursionlimit
""".split()
)

DENIED_MESSAGE = "exec_code sandbox: {} is not allowed (only the tools reach the world)"
MAX_ARG_DEPTH = 100  # levels of lists and dicts in a tool call's arguments (the tools take 2)


def make_hook(roots, denied_roots, blocked, allowed, message):
    """The audit hook. Everything it uses is bound here as a default argument (fast locals),
    so nothing the block can reach (globals, builtins, modules) changes its behaviour."""
    import posix

    def hook(
        event,
        args,
        _roots=tuple(roots),
        _denied=tuple(denied_roots),
        _blocked=blocked,
        _allowed=allowed,
        _msg=message,
        _str=str,
        _int=int,
        _type=type,
        _tuple=tuple,
        _Perm=PermissionError,
        _stat=posix.stat,
        _fmt=str.format,
        _list=list,
        _len=len,
        _O_WRITE=posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND,
        _path_events=frozenset(("open", "os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.walk", "os.fwalk")),
    ):
        if _type(event) is not _str or event not in _allowed:
            raise _Perm(_fmt(_msg, event if _type(event) is _str else "this event"))
        if event == "import":
            name = args[0] if _type(args) is _tuple and args else None
            if _type(name) is not _str or name.partition(".")[0] in _blocked:
                raise _Perm(_fmt(_msg, "importing " + (name if _type(name) is _str else "this module")))
            filename = args[1] if _len(args) > 1 else None
            if filename is None:
                return
            if _type(filename) is not _str:
                raise _Perm(_fmt(_msg, "importing " + name))
            if filename.rpartition("/")[2].partition(".")[0] in _blocked:
                raise _Perm(_fmt(_msg, "importing " + name))
            path = filename
        elif event in _path_events:
            path = args[0] if _type(args) is _tuple and args else None
            if event == "open":
                mode = args[1] if _len(args) > 1 else None
                flags = args[2] if _len(args) > 2 else 0
                if (
                    (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode))
                    or (mode is not None and _type(mode) is not _str)
                    or _type(flags) is not _int
                    or flags & _O_WRITE
                ):
                    raise _Perm(_fmt(_msg, "writing files"))
            if _type(path) is not _str:
                raise _Perm(_fmt(_msg, event + " on this path"))
        else:
            return
        # A path must be absolute, without '..', inside the standard library.
        if not path.startswith("/") or "\x00" in path:
            raise _Perm(_fmt(_msg, event + " outside the Python standard library"))
        parts = _list()
        for part in path.split("/"):
            if part == "" or part == ".":
                continue
            if part == "..":
                raise _Perm(_fmt(_msg, event + " with '..'"))
            parts.append(part)
        norm = "/" + "/".join(parts)
        inside = False
        for root in _roots:
            if norm == root or norm.startswith(root + "/"):
                inside = True
        for root in _denied:
            if norm == root or norm.startswith(root + "/"):
                inside = False
        if not inside:
            raise _Perm(_fmt(_msg, event + " outside the Python standard library"))
        if event == "open" or event == "import":
            kind = _stat(norm).st_mode & 0o170000
            if kind != 0o100000 and kind != 0o040000:  # regular files and directories only
                raise _Perm(_fmt(_msg, "opening special files"))

    return hook


# -- the block's world: proxies, ToolError, output ---------------------------------------------


class ToolError(Exception):
    """A tool returned an error: `.code` (e.g. not_found, invalid_arguments) and `.message`."""

    def __init__(self, code, message):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self):
        return "[%s] %s" % (self.code, self.message)


class LimitReached(BaseException):
    """Raised into the block when a limit is reached; `except Exception` does not catch it."""

    def __init__(self, limit, message):
        super().__init__(message)
        self.limit = limit
        self.message = message


def main():
    import json

    cfg = json.loads(sys.argv[1])
    sys.dont_write_bytecode = True
    failed = []
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            failed.append(name)
    serve(cfg, failed)


def serve(cfg, failed):
    """The zygote's loop: one request, one reply, until the parent closes its end."""
    import json
    import os

    keep = frozenset(sys.modules)  # what a worker may have loaded: the preloaded modules, nothing of the zygote's own
    may_drop = readable_by_anyone(cfg["stdlib"])
    import resource
    import socket

    control = socket.socket(fileno=cfg["control"])
    control.send(json.dumps({"t": "zygote", "pid": os.getpid()}).encode())
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 2)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)  # the parent is gone (or closed the pool): its workers' pipes close too
        request = json.loads(data)
        if request["t"] == "fork":
            request["drop_root"] = may_drop
            pid = os.fork()
            if pid == 0:
                try:
                    rfd, wfd, limited = enter_worker(control, fds, request, keep, resource)
                except BaseException:
                    os._exit(71)
                del control, resource, socket
                work(rfd, wfd, dict(cfg["isolation"], rlimits=limited), cfg["stdlib"], cfg["denied"], failed)
                os._exit(0)
            for fd in fds:
                os.close(fd)
            reply = {"pid": pid}
        elif request["t"] == "reap":
            reply = {"code": reap(request["pid"], request["wait"])}
        else:
            reply = {"error": "unknown request"}
        control.send(json.dumps(reply).encode())


def reap(pid, wait):
    """The exit code of worker `pid` (negative: the signal), None while it runs (with `wait` false)."""
    import os

    try:
        done, status = os.waitpid(pid, 0 if wait else os.WNOHANG)
    except ChildProcessError:
        return "unknown"
    return os.waitstatus_to_exitcode(status) if done else None


def enter_worker(control, fds, request, keep, resource):
    """In a freshly forked worker: keep only the two pipes, set the block's limits, and drop the
    modules only the zygote used. Returns (read fd, write fd, whether the limits hold)."""
    import os

    control.close()
    if len(fds) != 2:
        os._exit(72)
    rfd, wfd = fds
    low = 3
    for fd in sorted(fds):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    limited = set_resource_limits(resource, request)
    drop_root(request.get("drop_root", False))
    for name in list(sys.modules):
        if name not in keep:
            del sys.modules[name]
    if not limited:
        os.write(2, b"sandbox: the resource limits (memory, CPU) could not be set\n")
        os._exit(71)
    return rfd, wfd, limited


# Root ignores RLIMIT_NPROC: a worker forked as root becomes a user of its own (this base plus its
# pid, so no two live workers share a uid), for whom the limit of 0 processes holds in the kernel.
# A block may import standard modules the zygote did not preload, so this needs a standard library
# any user can read; a private one (a Python installed under /root) keeps the worker root, and the
# audit hook alone stops its forks.
WORKER_UID_BASE = 1 << 30


def readable_by_anyone(roots):
    """Whether every directory in `roots`, and each one above it, lets any user in and list it."""
    import os

    for root in roots:
        path = os.path.abspath(root)
        while True:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                return False
            if mode & 0o005 != 0o005:
                return False
            if path == os.path.dirname(path):
                break
            path = os.path.dirname(path)
    return True


def drop_root(may_drop):
    """As root, with a standard library anyone can read, become an unprivileged user of the
    worker's own; elsewhere nothing to do. A kernel that refuses (a user namespace without that uid
    mapped) leaves the audit hook as the fork guard."""
    import os

    if not may_drop or os.geteuid() != 0:
        return
    uid = WORKER_UID_BASE + os.getpid()
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError:
        pass


def set_resource_limits(resource, cfg):
    """The block's own limits (memory, CPU, files, processes). Not an optional layer: every
    block's limits must hold whichever isolation layers the kernel allows, so a worker that
    cannot set them refuses to start. A hard limit already lower than ours is kept. No processes
    (RLIMIT_NPROC 0) is what stops a fork in the kernel here, for any user but root (the zygote
    itself must fork, so its seccomp filter allows it; the audit hook stops forks for everyone)."""
    mem = cfg["memory_bytes"]
    cpu = cfg["cpu_seconds"]
    pairs = [
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_CPU, cpu, cpu + 2),
        (resource.RLIMIT_FSIZE, 0, 0),
        (resource.RLIMIT_NOFILE, cfg["max_files"], cfg["max_files"]),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_NPROC, 0, 0),
    ]
    for which, soft, hard in pairs:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))
    soft_as, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft_as != resource.RLIM_INFINITY and soft_as <= mem


def work(rfd, wfd, isolation, stdlib, denied_roots, failed):
    """One worker: the tool proxies, the audit hook, then the block; never returns."""
    import ast
    import inspect
    import io
    import json
    import linecache
    import os
    import traceback

    read, write = os.read, os.write
    dumps, loads = json.dumps, json.loads

    def send(msg):
        data = dumps(msg, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass")
        data = len(data).to_bytes(4, "big") + data
        while data:
            n = write(wfd, data)
            data = data[n:]

    def recv():
        header = b""
        while len(header) < 4:
            chunk = read(rfd, 4 - len(header))
            if not chunk:
                os._exit(0)
            header += chunk
        size = int.from_bytes(header, "big")
        parts = []
        while size:
            chunk = read(rfd, min(size, 1 << 20))
            if not chunk:
                os._exit(0)
            parts.append(chunk)
            size -= len(chunk)
        return loads(b"".join(parts))

    init = recv()
    limits = init["limits"]
    max_output = limits["output_chars"]

    # Output: buffered, flushed before each tool call and at the end, capped.
    class Output(io.TextIOBase):
        def __init__(self):
            self.buf = []
            self.size = 0
            self.total = 0

        def writable(self):
            return True

        def write(self, s):
            if not isinstance(s, str):
                raise TypeError("write() argument must be str, not %s" % type(s).__name__)
            room = max_output - self.total
            self.total += len(s)
            if room > 0:
                piece = s[:room]
                self.buf.append(piece)
                self.size += len(piece)
                if self.size >= 8192:
                    self.flush()
            if self.total > max_output:
                raise LimitReached(
                    "output",
                    "Output limit reached: the block printed more than %d "
                    "characters and was stopped. Print less (aggregate, slice, count)." % max_output,
                )
            return len(s)

        def flush(self):
            if self.buf:
                send({"t": "out", "data": "".join(self.buf)})
                self.buf = []
                self.size = 0

    out = Output()

    state = {"calls": 0}

    def call(tool, args):
        try:
            dumps(args)
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError("%s: arguments must be JSON values (str, int, float, bool, None, list, dict): %s" % (tool, exc)) from None
        # The parent refuses a message nested deeper than its json can read: say so here.
        stack = [(args, 0)]
        while stack:
            value, depth = stack.pop()
            if isinstance(value, (list, dict)):
                if depth >= MAX_ARG_DEPTH:
                    raise TypeError("%s: arguments are nested more than %d levels deep" % (tool, MAX_ARG_DEPTH))
                stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
        out.flush()
        state["calls"] += 1
        send({"t": "call", "id": state["calls"], "tool": tool, "args": args})
        reply = recv()
        if reply.get("limit"):
            raise LimitReached(reply["limit"], reply["error"]["message"])
        if reply["ok"]:
            return reply["value"]
        raise ToolError(reply["error"]["code"], reply["error"]["message"])

    def make_proxy(spec):
        params = []
        for p in spec["params"]:
            default = inspect.Parameter.empty if p["required"] else p.get("default")
            params.append(inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
        try:
            sig = inspect.Signature(params)
        except ValueError:  # a required argument after an optional one: keyword-only
            sig = inspect.Signature([p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params])
        name = spec["name"]

        def proxy(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError("%s(): %s" % (name, exc)) from None
            return call(name, dict(bound.arguments))

        proxy.__name__ = proxy.__qualname__ = name
        proxy.__doc__ = spec.get("description") or ""
        proxy.__signature__ = sig
        proxy.__module__ = "tools"
        return proxy

    tools = {spec["name"]: make_proxy(spec) for spec in init["tools"]}
    import pydoc

    def help(obj=None):  # noqa: A001 - the builtin is installed by site, which -S skips
        """Show the documentation of a tool function (or any object)."""
        if obj is None:
            print("Tools: " + ", ".join(sorted(tools)) + ". help(tool) shows one.")
            return
        print(pydoc.plain(pydoc.render_doc(obj, "Help on %s:")))

    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError, "help": help}
    namespace.update(tools)

    # Imports after the hook compile from source (bytecode would need marshal.loads, denied:
    # a crafted code object is a native escape), and the dangerous loader entry points go.
    from importlib import machinery

    class SourceOnlyLoader(machinery.SourceFileLoader):
        def get_code(self, fullname):
            source = self.get_data(self.path)
            return compile(source, self.path, "exec", dont_inherit=True)

    loaders = [(machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES), (SourceOnlyLoader, machinery.SOURCE_SUFFIXES)]
    sys.path_hooks[:] = [machinery.FileFinder.path_hook(*loaders)]
    sys.path_importer_cache.clear()
    import _imp
    import posix

    def denied(what):
        def stub(*args, **kwargs):
            raise PermissionError(DENIED_MESSAGE.format(what))

        stub.__name__ = stub.__qualname__ = what.rpartition(".")[2]
        return stub

    # Replaced by stubs that raise, leaving no reference to the originals.
    for name in ("create_builtin", "exec_builtin", "init_frozen", "get_frozen_object"):
        if name in _imp.__dict__:
            _imp.__dict__[name] = denied("_imp." + name)
    for name in REMOVED_OS_FUNCTIONS:
        for module in (posix, os):
            if name in module.__dict__:
                module.__dict__[name] = denied("os." + name)

    sys.addaudithook(make_hook(stdlib, denied_roots, BLOCKED_MODULES, ALLOWED_EVENTS, DENIED_MESSAGE))
    del stdlib, denied_roots
    send({"t": "ready", "isolation": dict(isolation, audit_hook=True), "python": sys.version.split()[0], "preload_failed": failed})

    run = recv()
    code = run["code"]
    filename = "<exec_code>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    sys.stdout = sys.stderr = out
    result = {"t": "done", "ok": True, "value": None, "error": None, "limit": None}
    try:
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec")
        last_code = compile(last, filename, "eval") if last is not None else None
        del tree, last
        exec(body, namespace)
        if last_code is not None:
            value = eval(last_code, namespace)
            if value is not None:
                text = repr(value)
                if len(text) > max_output:
                    text = text[:max_output] + "... [value truncated: %d characters in all]" % len(text)
                result["value"] = text
    except BaseException as exc:  # noqa: BLE001 - everything the block raises is reported
        result["ok"] = False
        result["error"], result["limit"] = describe(exc, filename, traceback)
    try:
        out.flush()
    except BaseException:
        pass
    sys.stdout = sys.__stdout__
    sys.stderr = sys.__stderr__
    send(result)
    os._exit(0)


def describe(exc, filename, traceback):
    """(message, limit) for an exception raised by the block: a traceback of its own lines."""
    if isinstance(exc, LimitReached):
        return exc.message, exc.limit
    if isinstance(exc, MemoryError):
        return ("Memory limit reached: the block ran out of memory (MemoryError) and was stopped. Work on smaller pieces.", "memory")
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        lines = ["  line %s" % exc.lineno]
        if exc.text:
            lines.append("    " + exc.text.rstrip("\n").strip())
            if exc.offset:
                indent = len(exc.text.rstrip("\n")) - len(exc.text.rstrip("\n").lstrip())
                lines.append("    " + " " * max(0, exc.offset - 1 - indent) + "^")
        lines.append("%s: %s" % (type(exc).__name__, exc.msg))
        return "\n".join(lines), None
    try:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    except BaseException:
        frames = []
    lines = ["Traceback (most recent call last):"] if frames else []
    for f in frames:
        lines.append("  line %d, in %s" % (f.lineno, f.name))
        if f.line:
            lines.append("    " + f.line.strip())
    try:
        text = str(exc)
    except BaseException:
        text = "<exception text unavailable>"
    if len(text) > 4000:
        text = text[:4000] + "... [truncated]"
    name = type(exc).__name__
    lines.append("%s: %s" % (name, text) if text else name)
    limit = "forbidden" if isinstance(exc, PermissionError) and text.startswith("exec_code sandbox:") else None
    return "\n".join(lines), limit


if __name__ == "__main__":
    main()
