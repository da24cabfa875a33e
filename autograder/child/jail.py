"""Confining one child process on Linux: namespaces, a minimal file-system view, privilege drop.

Runs inside the zygote's forked processes (see :mod:`.zygote_child`), so it imports only the
standard library. The calls are the kernel's own (``unshare(2)``, ``mount(2)``,
``pivot_root(2)``, ``prctl(2)`` through :mod:`ctypes`; Python 3.11 has no ``os.unshare``),
the same mechanism bubblewrap and ``unshare(1)`` use.

Two steps, each in its own process:

1. :func:`enter_namespaces` (the supervisor): new mount, PID, network, IPC and UTS
   namespaces (plus a user namespace when not root). The supervisor's next child is PID 1 of
   the new PID namespace: when it ends, the kernel kills everything else in that namespace,
   so no daemon a submission starts can outlive it.
2. :func:`build_root` then :func:`drop_privileges` (the child, PID 1): a fresh ``tmpfs`` root
   holding read-only binds of the system and Python directories only, an empty ``/dev`` with
   ``null``/``zero``/``urandom``, a private ``/proc``, the submission read-only at
   ``/sandbox/submission`` and a size-capped ``tmpfs`` at ``/sandbox/work`` as the only
   writable place; the kit, ``solutions/``, hidden tests, gradebooks and other submissions are
   not mounted at all (and are over-mounted with an empty ``tmpfs`` should a system directory
   contain them). Then ``pivot_root`` into it, and, when root, a switch to an unprivileged
   uid of its own with ``no_new_privs``.

Every function raises :class:`OSError` (with the failing call named) when the kernel refuses.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

SANDBOX = "/sandbox"
SUBMISSION = SANDBOX + "/submission"
WORK = SANDBOX + "/work"
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    """``unshare(2)``."""
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """``mount(2)``."""
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def prctl(option: int, arg: int) -> None:
    """``prctl(2)`` with one argument."""
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), f"prctl {option}")


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (reset by every uid change: call it last)."""
    prctl(PR_SET_PDEATHSIG, 9)


def _pivot_root(new_root: str) -> None:
    number = SYS_PIVOT_ROOT.get(platform.machine())
    os.chdir(new_root)
    if number is None:  # an architecture we have no syscall number for: chroot is the fallback
        os.chroot(".")
    else:
        _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
    os.chdir("/")


def enter_namespaces() -> dict:
    """Move the calling process into new namespaces; its *next child* is PID 1 of the new PID
    namespace. Returns ``{"namespaces": True, "user_namespace": bool}``; raises OSError when
    the kernel refuses (no ``CAP_SYS_ADMIN`` and no unprivileged user namespaces)."""
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() == 0:
        unshare(flags)
        return {"namespaces": True, "user_namespace": False}
    uid, gid = os.geteuid(), os.getegid()
    unshare(flags | CLONE_NEWUSER)
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid} 1")
    return {"namespaces": True, "user_namespace": True}


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def bind_sources(hidden: list[str]) -> list[str]:
    """The host directories the child sees read-only: system directories, the interpreter's
    prefixes and the existing directories of ``sys.path``, with no path under another one of
    the list. Never one inside a ``hidden`` path; a ``sys.path`` entry that *contains* a hidden
    path (an editable install's source checkout) is left out too, while a system directory
    or prefix that contains one stays and gets the hidden path masked (see :func:`build_root`)."""
    trusted = list(SYSTEM_DIRS) + [sys.prefix, sys.base_prefix, sys.exec_prefix]
    candidates = [(p, True) for p in trusted] + [(p, False) for p in sys.path
                                                     if p.startswith("/") and "_tkit_runtime" not in p]
    chosen: list[str] = []
    for path, is_trusted in candidates:
        if not os.path.lexists(path) or (not os.path.islink(path) and not os.path.isdir(path)):
            continue
        path = os.path.normpath(path) if os.path.islink(path) else os.path.realpath(path)
        if any(_inside(path, h) for h in hidden):
            continue
        if not is_trusted and any(_inside(h, path) for h in hidden):
            continue
        chosen.append(path)
    chosen = sorted(set(chosen), key=len)
    return [p for i, p in enumerate(chosen) if not any(_inside(p, q) for q in chosen[:i])]


def _mkpoint(path: str, is_dir: bool = True) -> None:
    if is_dir:
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        open(path, "a").close()


def _bind(source: str, target: str, flags: int = MS_NOSUID | MS_NODEV) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)


def build_root(new_root: str, submission: str, hidden: list[str], *, uid: int, work_bytes: int) -> dict:
    """Assemble the child's file system in the empty directory ``new_root`` and pivot into it.

    Must run as PID 1 of a fresh PID namespace in a fresh mount namespace (after
    :func:`enter_namespaces`). ``submission`` is bound read-only at ``/sandbox/submission``;
    ``/sandbox/work`` is a ``tmpfs`` of ``work_bytes`` owned by ``uid``. Returns what was done.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    sources = bind_sources(hidden)
    for src in sources:
        dest = new_root + src
        if os.path.islink(src):
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.symlink(os.readlink(src), dest)
            continue
        _mkpoint(dest)
        _bind(src, dest)
    masked = []
    for path in hidden:
        if os.path.isdir(path) and any(_inside(path, src) for src in sources):
            _mkpoint(new_root + path)
            mount("tmpfs", new_root + path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0000")
            masked.append(path)
    dev = new_root + "/dev"
    _mkpoint(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _mkpoint(f"{dev}/{name}", is_dir=False)
            mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    _mkpoint(new_root + "/proc")
    mount("proc", new_root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mkpoint(new_root + SUBMISSION)
    _bind(submission, new_root + SUBMISSION, MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mkpoint(new_root + WORK)
    mount("tmpfs", new_root + WORK, "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={max(1, work_bytes // 1024)}k,nr_inodes=4096,mode=0700,uid={uid},gid={uid}")
    if not os.path.lexists(new_root + "/tmp"):  # a bound interpreter or sys.path entry may live under /tmp
        os.symlink(WORK, new_root + "/tmp")  # (TMPDIR still points at the work directory then)
    _pivot_root(new_root)
    return {"filesystem": "private root", "visible": sources, "masked": masked}


def drop_privileges(uid: int) -> dict:
    """Switch a root process to ``uid`` (and the same gid, no supplementary groups) for good,
    with ``no_new_privs`` (set-uid programs cannot raise it again). A process that is not root
    only gets ``no_new_privs``. Returns ``{"uid": ..., "dropped": bool}``."""
    dropped = False
    if os.geteuid() == 0 and uid != 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        dropped = True
        prctl(PR_SET_DUMPABLE, 1)  # so the process may still read its own /proc/self
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    return {"uid": os.getuid(), "dropped": dropped}


def kill_uid(uid: int, sig: int = 9) -> int:
    """Send ``sig`` to every process owned by ``uid`` (a child's private uid); returns how many.
    The fallback clean-up when there is no PID namespace."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                os.kill(int(entry), sig)
                count += 1
        except OSError:
            continue
    return count
