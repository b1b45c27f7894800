# ruff: noqa: UP031, SIM905, SIM105  (a standalone stdlib-only script: kept plain and dependency-free)
"""Stage 1 of the sandbox's zygote: apply the OS layers, then exec the zygote (worker.py).

Run by path as `python -I -S -B confine.py CONFIG_JSON` (standard library only, never imports
ebench). It forbids files and core dumps (rlimits), then, each layer probed and skipped when the
kernel or the platform refuses it: no_new_privs, a new network namespace, Landlock (read-only
access to the standard library and the shared libraries Python needs; no TCP; no signals or
abstract unix sockets outside the sandbox) and a seccomp filter (no sockets, no kill, no namespace
or mount calls, no vfork; fork stays allowed, the zygote's one job). Then it execs `python -c
<worker.py's source>` (the file itself is unreadable then), which inherits every layer, and so do
the workers it forks; each worker sets the block's own resource limits itself (worker.py). ctypes
is used here only, before the exec, so it is never loaded in the zygote nor in a worker.
"""

from __future__ import annotations

import json
import os
import sys

# typing stays unimported at run time (this script starts every sandbox worker); mypy reads the block anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from ctypes import CDLL
    from typing import Any


def zygote_limits() -> None:
    """The zygote writes no file and dumps no core; the block's own limits (memory, CPU, files,
    processes) are set by each worker after the fork (worker.py), since the zygote must fork."""
    import resource

    for which in (resource.RLIMIT_FSIZE, resource.RLIMIT_CORE):
        resource.setrlimit(which, (0, 0))


def _libc() -> tuple[Any, CDLL]:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return ctypes, libc


def no_new_privs(ctypes: Any, libc: CDLL) -> bool:
    PR_SET_NO_NEW_PRIVS = 38
    return bool(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)


def new_netns(ctypes: Any, libc: CDLL) -> bool:
    CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000
    if libc.unshare(CLONE_NEWNET) == 0:
        return True
    return bool(libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0)


# -- Landlock ---------------------------------------------------------------------------------
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_ALL_V1 = (1 << 13) - 1
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def landlock(ctypes: Any, libc: CDLL, read_paths: Iterable[str], exec_paths: Iterable[str], list_paths: Iterable[str] = ()) -> bool:
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"):
        return False
    abi = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return False
    handled = FS_ALL_V1
    if abi >= 2:
        handled |= FS_REFER
    if abi >= 3:
        handled |= FS_TRUNCATE
    if abi >= 5:
        handled |= FS_IOCTL_DEV

    class Attr(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]

    attr = Attr(handled, 0, 0)
    size = 8
    if abi >= 4:
        attr.net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return False
    try:
        rules = [(p, FS_READ_FILE | FS_READ_DIR) for p in read_paths]
        rules += [(p, FS_READ_FILE | FS_EXECUTE) for p in exec_paths]
        rules += [(p, FS_READ_DIR) for p in list_paths]  # the stdlib's own listing (not its files)
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= FILE_RIGHTS
                rule = Beneath(rights & handled, fd)
                libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        return bool(libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) == 0)
    finally:
        os.close(ruleset)


# -- seccomp ----------------------------------------------------------------------------------
# x86_64 system call numbers denied with EPERM (the zygote's fork and clone stay allowed; a worker's
# forks are stopped by its RLIMIT_NPROC of 0 (any user but root) and by the audit hook).
X86_64_DENY = {
    "socket": 41,
    "connect": 42,
    "accept": 43,
    "bind": 49,
    "listen": 50,
    "socketpair": 53,
    "vfork": 58,
    "kill": 62,
    "ptrace": 101,
    "mknod": 133,
    "chroot": 161,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "reboot": 169,
    "init_module": 175,
    "delete_module": 176,
    "tkill": 200,
    "tgkill": 234,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "mknodat": 259,
    "unshare": 272,
    "accept4": 288,
    "rt_tgsigqueueinfo": 297,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "bpf": 321,
    "execveat": 322,
    "userfaultfd": 323,
    "pidfd_send_signal": 424,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "pidfd_open": 434,
    "rt_sigqueueinfo": 129,
}
SYS_CLONE3 = 435
AUDIT_ARCH_X86_64 = 0xC000003E


def seccomp(ctypes: Any, libc: CDLL) -> bool:
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return False
    import errno

    LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06
    ALLOW, ERRNO, KILL = 0x7FFF0000, 0x00050000, 0x80000000
    prog = [
        (LD_W_ABS, 0, 0, 4),  # arch
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, KILL),
        (LD_W_ABS, 0, 0, 0),  # nr
        (0x35, 0, 1, 0x40000000),  # jge x32 ABI -> deny
        (RET_K, 0, 0, ERRNO | errno.EPERM),
        (JEQ_K, 0, 1, SYS_CLONE3),  # clone3 -> ENOSYS: glibc falls back to clone
        (RET_K, 0, 0, ERRNO | errno.ENOSYS),
    ]
    for nr in sorted(set(X86_64_DENY.values())):
        prog.append((JEQ_K, 0, 1, nr))
        prog.append((RET_K, 0, 0, ERRNO | errno.EPERM))
    prog.append((RET_K, 0, 0, ALLOW))

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    # An array type is a Structure class times a length; mypy cannot see ctypes' metaclass through the module passed in.
    filters = (Filter * len(prog))(*[Filter(*ins) for ins in prog])  # type: ignore[operator]
    fprog = Prog(len(prog), filters)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    return bool(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)


def low_descriptors(fds: list[int]) -> list[int]:
    """The control socket moved to the lowest free descriptor (3, usually): the parent's numbers can
    be anything (a process with many sockets open); the zygote then keeps few descriptors, so the
    pipes it hands each worker sit low too, where the worker's limit on open files leaves them."""
    moved = []
    for fd in fds:
        low = os.dup(fd)
        os.set_inheritable(low, True)
        moved.append(low)
    for fd in fds:
        if fd not in moved:
            os.close(fd)
    return moved


def main() -> None:
    cfg = json.loads(sys.argv[1])
    (cfg["control"],) = low_descriptors([cfg["control"]])
    applied: dict[str, bool] = {}

    def layer(name: str, func: Callable[..., object], *args: object) -> None:
        if name not in cfg["layers"]:
            applied[name] = False
            return
        try:
            applied[name] = bool(func(*args))
        except Exception:
            applied[name] = False

    with open(cfg["worker"], encoding="utf-8") as f:  # read now: Landlock will hide the ebench tree
        worker_source = f.read()
    try:
        zygote_limits()
    except Exception:
        os.write(2, b"sandbox: the resource limits could not be set\n")
        os._exit(71)
    ctypes: Any
    libc: CDLL | None
    try:
        ctypes, libc = _libc()
    except Exception:
        ctypes = libc = None
    if libc is not None:
        layer("no_new_privs", no_new_privs, ctypes, libc)
        layer("netns", new_netns, ctypes, libc)
        layer("landlock", landlock, ctypes, libc, cfg["read_paths"], cfg["exec_paths"], cfg["stdlib"])
        layer("seccomp", seccomp, ctypes, libc)
    else:
        for name in ("no_new_privs", "netns", "landlock", "seccomp"):
            applied[name] = False
    if cfg.get("require") and not all(applied.get(n) for n in cfg["require"]):
        missing = [n for n in cfg["require"] if not applied.get(n)]
        os.write(2, ("sandbox: required layers unavailable: %s\n" % ", ".join(missing)).encode())
        os._exit(70)
    argv = [
        cfg["python"],
        "-I",
        "-S",
        "-B",
        "-c",
        worker_source,
        json.dumps({"control": cfg["control"], "isolation": applied, "stdlib": cfg["stdlib"], "denied": cfg["denied"]}),
    ]
    os.execve(cfg["python"], argv, {})


if __name__ == "__main__":
    main()
