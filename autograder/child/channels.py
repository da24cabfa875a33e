"""Kernel paths two processes could use to pass data without a shared writable file: a probe.

``tkit doctor`` and the kit's tests run it from inside two sandboxed children (the ``channel``
task of :mod:`.tasks`): the *receiver* ``listen``\\s, the *sender* ``send``\\s a value (1..255),
the receiver tries to ``receive`` it, both ``close``. A channel is closed when the value does
not arrive. The same functions run in two plain processes show that each probe does carry the
value where nothing closes the path (``tests/test_sandbox_channels.py``).

:data:`CHANNELS`:

``posix_lock``, ``ofd_lock``   a read lock on byte ``value`` of a file both see (``F_SETLK``,
                               ``F_OFD_SETLK``), read back with ``F_GETLK`` / ``F_OFD_GETLK``
``flock``                      ``flock`` on 8 files both see, one bit each
``inotify``                    the sender opens 8 files both see, one per bit of the value; the
                               receiver's watches report which (``IN_OPEN``)
``sysv_shm``                   a SysV shared memory segment holding the value (IPC namespace)
``posix_mq``                   a POSIX message queue holding it (IPC namespace)
``posix_shm``                  a POSIX shared memory object (``/dev/shm``) holding it
``abstract_socket``            an abstract Unix socket named after the value (network namespace)
``proc_sys``                   (no sender) ``receive`` counts the ``/proc/sys`` and ``/sys``
                               entries this process may open for writing that are not private
                               to its own namespaces (opened, never written)

``token`` (an int) keeps concurrent probes apart. Standard library and ctypes only.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct

CHANNELS = ("posix_lock", "ofd_lock", "flock", "inotify", "sysv_shm", "posix_mq", "posix_shm",
            "abstract_socket", "proc_sys")
FLOCK = struct.Struct("@hhqqi4x")  # struct flock: l_type, l_whence, l_start, l_len, l_pid
F_OFD_GETLK, F_OFD_SETLK = 36, 37
IN_OPEN, IN_NONBLOCK = 0x20, 0o4000
IPC_CREAT, IPC_RMID = 0o1000, 0
SYSV_KEY = 0x746B0000  # + token
# /proc/sys entries that belong to the child's own namespaces (network, IPC, UTS, user)
PRIVATE_SYSCTLS = ("net/", "kernel/hostname", "kernel/domainname", "kernel/shm", "kernel/msg", "kernel/sem",
                   "kernel/ns_last_pid", "fs/mqueue/", "user/")  # ns_last_pid: the PID namespace's

_held: dict = {}  # what a send or listen keeps open until close, by (channel, token)
_watches: dict = {}  # token -> the inotify descriptor of a listen
_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(_libc, "mq_open"):  # glibc before 2.34 keeps it in librt
            _libc.mq_open = ctypes.CDLL("librt.so.1", use_errno=True).mq_open
        _libc.shmat.restype = ctypes.c_void_p
        _libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
        _libc.shmdt.argtypes = (ctypes.c_void_p,)
        _libc.shmctl.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
        _libc.mq_receive.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)
        _libc.mq_receive.restype = ctypes.c_ssize_t
    return _libc


def _check(result: int, what: str) -> int:
    if result == -1 or result is None:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def shared_files(count: int = 8, skip: int = 0) -> list[str]:
    """``count`` files every child and the host see at the same paths (the standard library's
    modules by name, from the ``skip``-th), read-only inside the sandbox."""
    folder = os.path.dirname(os.__file__)
    names = sorted(n for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_"))
    return [os.path.join(folder, n) for n in names[skip:skip + count]]


def _watched_files() -> list[str]:
    return shared_files(8, skip=8)  # not the lock probes' files: their opens would be events


# -- the four steps --------------------------------------------------------------------------
def run(step: str, channel: str, token: int, value: int = 0) -> dict:
    """One step (``listen``, ``send``, ``receive``, ``close``) of ``channel``: ``{"value": n or
    None, "error": "..." or ""}`` (``value`` only from ``receive`` and ``proc_sys``'s ``send``)."""
    if channel not in CHANNELS:
        raise ValueError(f"unknown channel {channel!r}; choose from {', '.join(CHANNELS)}")
    if step not in ("listen", "send", "receive", "close"):
        raise ValueError(f"unknown step {step!r}")
    try:
        if step == "close":
            _close(channel, int(token))
            return {"value": None, "error": ""}
        fn = globals().get(f"_{step}_{channel}")
        if fn is None:  # a step this channel has no use for
            return {"value": None, "error": ""}
        got = fn(int(token), int(value)) if step == "send" else fn(int(token))
        return {"value": got if step == "receive" else None, "error": ""}
    except OSError as exc:
        return {"value": None, "error": f"{errno.errorcode.get(exc.errno, exc.errno)}: {exc.strerror or exc}"}


def _keep(channel: str, token: int, closer) -> None:
    _held.setdefault((channel, token), []).append(closer)


def _close(channel: str, token: int) -> None:
    for closer in reversed(_held.pop((channel, token), [])):
        try:
            closer()
        except OSError:
            pass


# -- locks -----------------------------------------------------------------------------------
def _lock_send(channel: str, token: int, value: int, command: int) -> None:
    fd = os.open(shared_files(1)[0], os.O_RDONLY)
    _keep(channel, token, lambda: os.close(fd))
    fcntl.fcntl(fd, command, FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, 1000 * token + value, 1, 0))


def _lock_receive(token: int, command: int):
    fd = os.open(shared_files(1)[0], os.O_RDONLY)
    try:
        got = fcntl.fcntl(fd, command, FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 1000 * token, 1000, 0))
    finally:
        os.close(fd)
    kind, _, start, _, _ = FLOCK.unpack(got)
    return None if kind == fcntl.F_UNLCK else start - 1000 * token


def _send_posix_lock(token, value):
    _lock_send("posix_lock", token, value, fcntl.F_SETLK)


def _receive_posix_lock(token):
    return _lock_receive(token, fcntl.F_GETLK)


def _send_ofd_lock(token, value):
    _lock_send("ofd_lock", token, value, F_OFD_SETLK)


def _receive_ofd_lock(token):
    return _lock_receive(token, F_OFD_GETLK)


def _send_flock(token, value):
    for bit, path in enumerate(shared_files()):
        if value >> bit & 1:
            fd = os.open(path, os.O_RDONLY)
            _keep("flock", token, lambda fd=fd: os.close(fd))
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)


def _receive_flock(token):
    value = 0
    for bit, path in enumerate(shared_files()):
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            value |= 1 << bit
        finally:
            os.close(fd)
    return value or None


# -- inotify ---------------------------------------------------------------------------------
def _listen_inotify(token):
    fd = _check(libc().inotify_init1(IN_NONBLOCK), "inotify_init1")
    _keep("inotify", token, lambda: (_watches.pop(token, None), os.close(fd)))
    bits = {}
    for bit, path in enumerate(_watched_files()):
        bits[_check(libc().inotify_add_watch(fd, os.fsencode(path), IN_OPEN), "inotify_add_watch")] = bit
    _watches[token] = (fd, bits)


def _send_inotify(token, value):
    for bit, path in enumerate(_watched_files()):
        if value >> bit & 1:
            os.close(os.open(path, os.O_RDONLY))


def _receive_inotify(token):
    if token not in _watches:  # the listen failed
        return None
    fd, bits = _watches[token]
    value = 0
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        offset = 0
        while offset + 16 <= len(data):  # struct inotify_event: wd, mask, cookie, len, name[len]
            wd, mask, _, length = struct.unpack_from("iIII", data, offset)
            if mask & IN_OPEN and wd in bits:
                value |= 1 << bits[wd]
            offset += 16 + length
    return value or None


# -- IPC: SysV shared memory, POSIX message queue, POSIX shared memory --------------------------
def _send_sysv_shm(token, value):
    c = libc()
    shmid = _check(c.shmget(SYSV_KEY + token, 4096, IPC_CREAT | 0o600), "shmget")
    _keep("sysv_shm", token, lambda: c.shmctl(shmid, IPC_RMID, None))
    address = c.shmat(shmid, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmat")
    _keep("sysv_shm", token, lambda: c.shmdt(address))
    ctypes.c_ubyte.from_address(address).value = value


def _receive_sysv_shm(token):
    c = libc()
    shmid = _check(c.shmget(SYSV_KEY + token, 0, 0), "shmget")
    address = c.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    if address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmat")
    try:
        return ctypes.c_ubyte.from_address(address).value or None
    finally:
        c.shmdt(address)


def _mq_name(token) -> bytes:
    return f"/tkit-probe-{token}".encode()


def _send_posix_mq(token, value):
    c = libc()
    mq = _check(c.mq_open(_mq_name(token), os.O_CREAT | os.O_RDWR, 0o600, None), "mq_open")
    _keep("posix_mq", token, lambda: (c.mq_unlink(_mq_name(token)), os.close(mq)))
    _check(c.mq_send(mq, bytes([value]), 1, 0), "mq_send")


def _receive_posix_mq(token):
    c = libc()
    mq = _check(c.mq_open(_mq_name(token), os.O_RDONLY | os.O_NONBLOCK), "mq_open")
    try:
        buf = ctypes.create_string_buffer(1 << 16)
        n = _check(c.mq_receive(mq, buf, len(buf), None), "mq_receive")
        return buf.raw[0] if n else None
    finally:
        os.close(mq)


def _send_posix_shm(token, value):
    import _posixshmem

    name = f"/tkit-probe-{token}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_RDWR, 0o600)
    _keep("posix_shm", token, lambda: (_posixshmem.shm_unlink(name), os.close(fd)))
    os.write(fd, bytes([value]))


def _receive_posix_shm(token):
    import _posixshmem

    fd = _posixshmem.shm_open(f"/tkit-probe-{token}", os.O_RDONLY, 0)
    try:
        return os.read(fd, 1)[0] or None
    finally:
        os.close(fd)


# -- abstract Unix sockets ---------------------------------------------------------------------
def _send_abstract_socket(token, value):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    _keep("abstract_socket", token, sock.close)
    sock.bind(f"\0tkit-probe-{token}-{value}")
    sock.listen(1)


def _receive_abstract_socket(token):
    for value in range(1, 256):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            try:
                sock.connect(f"\0tkit-probe-{token}-{value}")
                return value
            except OSError:
                continue
    return None


# -- /proc and /sys ----------------------------------------------------------------------------
def _receive_proc_sys(token):
    """The number of /proc/sys and /sys entries (not private to this process's namespaces) it may
    open for writing (opened, never written), or None."""
    found = 0
    for top in ("/proc/sys", "/sys"):
        for folder, dirs, files in os.walk(top):
            if top == "/sys":
                dirs[:] = []  # /sys itself: whether it is there and writable at its top is enough
            for name in files:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, "/proc/sys")
                if top == "/proc/sys" and rel.startswith(PRIVATE_SYSCTLS):
                    continue
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                    found += 1
                except OSError:
                    pass
    return found or None
