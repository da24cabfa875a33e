"""A seccomp filter that closes what the namespaces leave shared between children: file locks.

Two children see the same host files read-only through the jail's bind mounts (:mod:`.jail`),
and the kernel keeps a file's locks and watches per file, not per mount namespace: one child can
publish data in the byte range it locks (POSIX ``fcntl`` locks, open-file-description locks,
``flock``) or in the files it opens (``inotify``, ``F_NOTIFY``) and another read it back with
``F_GETLK`` or its watch, without writing a byte. That would link the training child and the
measuring child of one submission, or two students graded at once.

:func:`install` loads a filter (libseccomp through ``pyseccomp``, its ctypes binding) in which
those calls fail with ``EPERM`` instead of running: ``fcntl`` with a lock, lease or notify
command, ``flock``, ``inotify_init``/``inotify_init1``/``inotify_add_watch``, the key-retention
calls (``add_key``, ``request_key``, ``keyctl``: keyrings are per user, not per namespace) and
``io_uring_setup`` (its operations would bypass the filter); syscalls of another ABI (32-bit
``int 0x80``) fail the same way. Everything else is allowed: Python, torch and the kit take no
lock in the child (``torch.compile``'s cache would, and fails there).

The filter is installed in the child after the kit's own set-up (namespaces, root, uid,
rlimits) and before any student code; it is inherited by whatever the child starts and cannot
be removed. SysV and POSIX IPC and abstract Unix sockets are per IPC and network namespace,
which every child has of its own; ``/dev/shm`` and ``/sys`` are not mounted (see
:mod:`.channels`, which ``tkit doctor`` uses to measure each path from inside two children).
"""

from __future__ import annotations

import errno

# fcntl(2) commands that take, test or watch a lock, lease or directory notification
LOCK_COMMANDS = {"F_GETLK": 5, "F_SETLK": 6, "F_SETLKW": 7, "F_OFD_GETLK": 36, "F_OFD_SETLK": 37,
                 "F_OFD_SETLKW": 38, "F_SETLEASE": 1024, "F_GETLEASE": 1025, "F_NOTIFY": 1026}
DENIED_CALLS = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "add_key", "request_key",
                "keyctl", "io_uring_setup")

_binding = None


def prepare() -> str:
    """Import the binding now (in the zygote, before any jail: it looks libseccomp up with
    ``ldconfig``). Returns "" when it is usable, else why not."""
    global _binding
    if _binding is None:
        try:
            import pyseccomp

            _binding = pyseccomp
        except (ImportError, OSError, RuntimeError) as exc:  # no binding, or no libseccomp.so
            _binding = f"{type(exc).__name__}: {exc}"
    return "" if not isinstance(_binding, str) else _binding


def install(enabled: bool = True) -> dict:
    """Load the filter into this process (and every thread of it). Returns what is in force, for
    the child's ``hello``: ``{"syscall_filter": "seccomp"}``, or ``"off: <why>"`` when it could not
    be loaded (no libseccomp or binding, a kernel without seccomp) or ``enabled`` is False (the
    kit's own tests, to show what the filter closes)."""
    if not enabled:
        return {"syscall_filter": "off: disabled by Limits.syscall_filter"}
    problem = prepare()
    if problem:
        return {"syscall_filter": f"off: {problem}"}
    sc = _binding
    try:
        deny = sc.ERRNO(errno.EPERM)
        rules = sc.SyscallFilter(sc.ALLOW)
        rules.set_attr(sc.Attr.ACT_BADARCH, deny)
        rules.set_attr(sc.Attr.CTL_TSYNC, 1)
        for command in LOCK_COMMANDS.values():
            rules.add_rule(deny, "fcntl", sc.Arg(1, sc.EQ, command))
        for name in DENIED_CALLS:
            try:
                rules.add_rule(deny, name)
            except (OSError, ValueError):  # a call this architecture does not have
                pass
        rules.load()
    except (OSError, ValueError, AttributeError) as exc:
        return {"syscall_filter": f"off: {type(exc).__name__}: {exc}"}
    return {"syscall_filter": "seccomp"}
