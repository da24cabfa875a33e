"""The parent side of the fork server: one warm zygote per grading process.

:func:`get` starts (once per process, again if it died) a zygote, :mod:`autograder.child.zygote_child`,
that imports torch and safetensors and nothing of the kit, then forks a sandboxed child per
:class:`ForkedChild`. A child therefore starts in milliseconds instead of the seconds
``import torch`` takes, and inherits nothing but torch from its parent's memory.

Every process is tied to the one before it: the zygote exits when this process closes its
socket (or dies), a supervisor gets SIGKILL when the zygote dies, the child when its supervisor
dies; and :meth:`ForkedChild.kill` kills the child's init through a pidfd (no pid-reuse race), which
ends its PID namespace and with it everything the submission started.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder.child import jail
from autograder.child.zygote_child import STATUS_EXIT, STATUS_START
from autograder.sandbox.policy import CHILD_PACKAGE, clean_env, hidden_paths, launcher

BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "import _tkit_child.zygote_child as z; z.main(sys.argv[2:])"
)
UID_BASE = int(os.environ.get("TKIT_SANDBOX_UID_BASE", "2000000"))  # child uid = base + supervisor pid
MAX_REPLY = 1 << 16


class ZygoteError(RuntimeError):
    """The zygote could not be started or refused a request."""


class Zygote:
    """A running fork server (see the module docstring). ``startup_timeout`` bounds its
    ``import torch``; ``spawn`` forks one supervised child. ``clients`` > 1: one socket per
    grading process that will use it (see :func:`start_shared`); this object talks on the first
    until :meth:`adopt` picks another in a forked worker."""

    def __init__(self, startup_timeout: float = 120.0, clients: int = 1):
        self.runtime = Path(tempfile.mkdtemp(prefix="tkit-zygote-"))
        package = self.runtime / "_tkit_runtime" / "_tkit_child"
        shutil.copytree(CHILD_PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(max(1, clients))]
        self.socks = [ours for ours, _ in pairs]
        self.sock = self.socks[0]
        theirs = [t.fileno() for _, t in pairs]
        self.log_path = self.runtime / "zygote.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", BOOTSTRAP, str(package.parent), *map(str, theirs)],
                cwd=self.runtime, env=clean_env(self.runtime), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, pass_fds=theirs, start_new_session=True)
        for _, t in pairs:
            t.close()
        self.owner = os.getpid()
        self.adopted = False  # True in a worker that took one of a shared zygote's sockets
        self._pidfd = os.pidfd_open(self.proc.pid)
        self.lock = threading.Lock()
        self.startup_timeout = startup_timeout
        self.info: dict | None = None  # the zygote's hello, read on first use (see ready())

    def adopt(self, index: int) -> None:
        """In a worker forked after this zygote was started (:func:`start_shared`): talk on
        socket ``index`` from now on and close the others' copies here; :meth:`close` then only
        hangs up (the zygote serves the other workers until they hang up too)."""
        self.sock = self.socks[index]
        for i, sock in enumerate(self.socks):
            if i != index:
                sock.close()
        self.socks = [self.sock]
        self.owner = os.getpid()
        self.adopted = True
        self.lock = threading.Lock()

    def release_clients(self) -> None:
        """In the process that started a shared zygote, once its workers are forked: close its
        copies of their sockets (so the zygote sees a worker hang up)."""
        for sock in self.socks:
            sock.close()

    def ready(self) -> None:
        """Wait for the zygote's hello (its ``import torch``); ZygoteError when it does not come.

        Starting a zygote does not wait for it, so its import overlaps whatever this process
        does next (its own ``import torch``, collecting the tests)."""
        if self.info is not None:
            return
        try:
            self.info = json.loads(self._recv(self.startup_timeout)[0])
        except (ZygoteError, ValueError) as exc:
            self.close()
            raise ZygoteError(f"the zygote did not start: {exc}") from None

    def alive(self) -> bool:
        """Whether the zygote runs and belongs to this process (a pidfd reads ready once it exits)."""
        if self.owner != os.getpid() or self.sock.fileno() < 0:
            return False
        return not select.select([self._pidfd], [], [], 0)[0]

    def _recv(self, timeout: float) -> tuple[bytes, list[int]]:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            raise ZygoteError(f"no answer within {timeout:g} s")
        data, fds, _, _ = socket.recv_fds(self.sock, MAX_REPLY, 2)
        if not data:
            raise ZygoteError(f"the zygote exited ({self.log_tail()})")
        return data, fds

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:] or "no output"
        except OSError:
            return "no log"

    def spawn(self, spec: dict, fds: list[int], timeout: float = 30.0) -> int:
        """Fork a supervised child for ``spec`` with ``fds`` (request read end, reply write end,
        output write end, status socket); returns a pidfd of the supervisor."""
        with self.lock:
            self.ready()
            socket.send_fds(self.sock, [json.dumps(spec).encode()], fds)
            data, got = self._recv(timeout)
        reply = json.loads(data)
        if "error" in reply or len(got) != 1:
            for fd in got:
                os.close(fd)
            raise ZygoteError(str(reply.get("error", "no pidfd in the reply")))
        return got[0]

    def close(self) -> None:
        """Stop the zygote (its children get SIGKILL) and remove its files; in a worker that
        adopted a shared zygote, only hang up."""
        if self.owner != os.getpid():
            return
        for sock in self.socks:
            sock.close()
        if self.adopted:
            return
        # SIGKILL at once: waiting for a clean exit costs about a second of torch teardown, and
        # the zygote holds nothing to save (its supervisors die with it, see the module docstring)
        self.proc.kill()
        self.proc.wait()
        os.close(self._pidfd)
        shutil.rmtree(self.runtime, ignore_errors=True)


_current: Zygote | None = None
_current_lock = threading.Lock()


def get() -> Zygote:
    """This process's zygote, started on first use (and again after a crash or a fork)."""
    global _current
    with _current_lock:
        if _current is None or not _current.alive():
            if _current is not None:
                _current.close()
            _current = Zygote()
        return _current


def prestart() -> None:
    """Start this process's zygote now without waiting for it (call before importing torch).

    Does nothing where the zygote launcher is not used (``TKIT_SANDBOX=spawn``, not Linux)
    or when starting fails: the first child then reports the problem."""
    try:
        if launcher() == "zygote":
            get()
    except (OSError, ValueError, ZygoteError):
        pass


def start_shared(clients: int) -> Zygote | None:
    """A zygote for ``clients`` worker processes to be forked from this one (one ``import
    torch`` for all of them, started now so that it overlaps this process's), or None where
    the zygote launcher is not used or it cannot start. Each worker calls :func:`adopt`; this
    process then calls :meth:`Zygote.release_clients`, and :meth:`Zygote.close` at the end."""
    try:
        if launcher() == "zygote":
            return Zygote(clients=clients)
    except (OSError, ValueError, ZygoteError):
        pass
    return None


def adopt(shared: Zygote, index: int) -> None:
    """In a forked worker: make socket ``index`` of ``shared`` this process's zygote."""
    global _current
    with _current_lock:
        shared.adopt(index)
        _current = shared


def shutdown() -> None:
    """Stop this process's zygote, if any (also run at exit)."""
    global _current
    with _current_lock:
        if _current is not None:
            _current.close()
            _current = None


atexit.register(shutdown)


def _pidfd_kill(pidfd: int | None) -> None:
    if pidfd is None:
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except (ProcessLookupError, OSError):
        pass


class ForkedChild:
    """A child forked by the zygote: ``pid`` (in our PID namespace), ``uid``, ``namespaces``.

    The same interface as :class:`autograder.sandbox.process.SpawnedChild`: ``poll()``,
    ``wait(timeout)`` (exit code, negative for a signal; raises subprocess.TimeoutExpired),
    ``kill()``, ``release()``.
    """

    def __init__(self, scratch: Path, submission: Path, work: Path, limits, req_r: int, resp_w: int,
                 out_w: int):
        spec = {"submission": str(submission), "work": str(work), "root": str(scratch / "root"),
                "limits": limits.child_view(), "work_bytes": limits.work_bytes, "hidden": hidden_paths(),
                "uid_base": UID_BASE, "env": clean_env(scratch), "preload": bool(limits.preload_training)}
        os.chmod(scratch, 0o711)  # without a mount namespace the child's uid must reach work/
        self.status, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.pidfd: int | None = None
        self.uid: int | None = None
        self.returncode: int | None = None
        self._tail = b""
        try:
            self.supervisor_pidfd: int | None = get().spawn(spec, [req_r, resp_w, out_w, theirs.fileno()])
        finally:
            theirs.close()
        try:
            self._read_start(limits.startup_timeout)
        except BaseException:
            self.kill()
            self.release()
            raise

    def _read_start(self, timeout: float) -> None:
        ready, _, _ = select.select([self.status], [], [], timeout)
        data, fds, _, _ = socket.recv_fds(self.status, STATUS_START.size, 1) if ready else (b"", [], 0, None)
        if len(data) != STATUS_START.size or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise ZygoteError("the child's supervisor did not report its start")
        self.pid, self.uid = STATUS_START.unpack(data)
        self.pidfd = fds[0]

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read_status(0)
        return self.returncode

    def wait(self, timeout: float) -> int:
        if self.returncode is None:
            self._read_status(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired("child", timeout)
        return self.returncode

    def _read_status(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.returncode is None:
            ready, _, _ = select.select([self.status], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return
            try:
                chunk = self.status.recv(STATUS_EXIT.size - len(self._tail))
            except OSError:
                chunk = b""
            if not chunk:  # the supervisor was killed before it could report
                self.returncode = -signal.SIGKILL
                return
            self._tail += chunk
            if len(self._tail) == STATUS_EXIT.size:
                self.returncode = STATUS_EXIT.unpack(self._tail)[0]

    def kill(self) -> None:
        """SIGKILL the child (ending its PID namespace and all it holds) and its supervisor;
        without a PID namespace, also every process of the child's private uid."""
        _pidfd_kill(self.pidfd)
        if self.uid is not None and self.uid >= UID_BASE:
            jail.kill_uid(self.uid)
        try:
            self.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _pidfd_kill(self.supervisor_pidfd)

    def release(self) -> None:
        """Close our descriptors (pidfds, status socket)."""
        for fd in (self.pidfd, self.supervisor_pidfd):
            if fd is not None:
                os.close(fd)
        self.pidfd = self.supervisor_pidfd = None
        self.status.close()


def probe_namespaces(timeout: float = 20.0) -> dict:
    """Whether this machine lets a child enter namespaces and pivot into a private root: forks
    a throw-away process that tries (no torch needed). Returns ``{"namespaces": bool,
    "error": str}``."""
    scratch = Path(tempfile.mkdtemp(prefix="tkit-probe-"))
    (scratch / "root").mkdir()
    (scratch / "sub").mkdir()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked probe
        os.close(read_fd)
        code, message = 0, b""
        try:
            jail.enter_namespaces()
            inner = os.fork()
            if inner == 0:
                try:
                    jail.build_root(str(scratch / "root"), str(scratch / "sub"), [], uid=UID_BASE,
                                    work_bytes=1 << 20)
                    os._exit(0)
                except BaseException as exc:
                    os.write(write_fd, str(exc).encode()[:500])
                    os._exit(1)
            _, status = os.waitpid(inner, 0)
            code = os.waitstatus_to_exitcode(status)
        except BaseException as exc:
            message, code = str(exc).encode()[:500], 1
        os.write(write_fd, message)
        os._exit(code)
    os.close(write_fd)
    ready, _, _ = select.select([read_fd], [], [], timeout)
    message = os.read(read_fd, 1000).decode(errors="replace") if ready else "timed out"
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(scratch, ignore_errors=True)
    ok = os.waitstatus_to_exitcode(status) == 0
    return {"namespaces": ok, "error": "" if ok else (message or "refused")}
