"""The child process that runs student code: starting it, its pipes, its deadlines, killing it.

:class:`ChildProcess` (see :mod:`autograder.sandbox` for the launchers and limits) starts a
child with :class:`SpawnedChild` or the zygote's :class:`~autograder.sandbox.zygote_parent.ForkedChild`
and exchanges :mod:`autograder.child.wire` messages with it.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.child import wire
from autograder.i18n import _
from autograder.sandbox import zygote_parent
from autograder.sandbox.policy import CHILD_PACKAGE, Limits, clean_env, copy_submission, launcher

BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "import _tkit_child.runner as r; r.main(sys.argv[2:])"
)
MAX_OUTPUT_KEEP = 16 * 1024          # bytes of child output kept per call (head + tail)
MAX_OUTPUT_FLOOD = 64 * 1024 * 1024  # bytes in one call before the child is killed


class ChildDied(Exception):
    """The child exited or was killed; ``reason`` says how (exit code, signal, timeout)."""

    def __init__(self, reason: str, output: str = "", timed_out: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.output = output
        self.timed_out = timed_out


class ProtocolError(Exception):
    """The child answered with something that is not a valid reply."""


def refuse_callback(message: dict, tensors: dict, deadline: float) -> tuple[dict, dict | None]:
    """The answer to a callback where no reference component is served (the student's code called
    the channel itself, outside a composite's test)."""
    return {"ok": False, "error": {"type": "RuntimeError",
                                   "message": "no reference component is served to this code"}}, None


class OutputBuffer:
    """Keeps the head and tail of a byte stream and counts everything."""

    def __init__(self, keep: int = MAX_OUTPUT_KEEP):
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.keep // 2)]

    def text(self) -> str:
        shown = len(self.head) + len(self.tail)
        middle = ""
        if self.total > shown:
            middle = f"\n... [{self.total - shown} bytes of output omitted] ...\n"
        return (bytes(self.head).decode("utf-8", "replace") + middle
                + bytes(self.tail).decode("utf-8", "replace"))


class SpawnedChild:
    """A child started with ``python -I -c <bootstrap>`` (the ``spawn`` launcher): a thin
    wrapper of :class:`subprocess.Popen` with the interface of :class:`ForkedChild`."""

    def __init__(self, scratch: Path, submission: Path, work: Path, limits: "Limits",
                 req_r: int, resp_w: int, out_w: int):
        runtime = scratch / "_tkit_runtime"
        shutil.copytree(CHILD_PACKAGE, runtime / "_tkit_child", ignore=shutil.ignore_patterns("__pycache__"))
        self.popen = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", BOOTSTRAP, str(runtime), str(req_r), str(resp_w),
             str(submission), json.dumps(limits.child_view())],
            cwd=work, env=clean_env(scratch), stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
            pass_fds=(req_r, resp_w), start_new_session=True,
        )
        self.pid = self.popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float) -> int:
        """The exit code (negative: killed by that signal); raises subprocess.TimeoutExpired."""
        return self.popen.wait(timeout=timeout)

    def kill(self) -> None:
        """SIGKILL the child's process group (a daemon that called setsid() escapes it)."""
        for _attempt in range(2):
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                return

    def release(self) -> None:
        """Nothing to release: Popen holds no descriptor of ours."""


class ChildProcess:
    """One running child serving requests for one submission folder.

    ``request(op, timeout=None, tensors=None, **fields)`` sends a request and returns
    ``(reply, tensors)``; it raises :class:`ChildDied` (crash, signal, timeout, output
    flood: the child is gone afterwards) or :class:`ProtocolError` (the child is
    killed too). ``output`` of the last request is in ``last_output``; ``launcher`` says
    which launcher started it.
    """

    def __init__(self, submission: Path, limits: Limits | None = None):
        self.limits = limits or Limits()
        self.launcher = launcher()
        self.scratch = Path(tempfile.mkdtemp(prefix="tkit-child-"))
        self.submission = self.scratch / "submission"
        copy_submission(Path(submission), self.submission)
        work = self.scratch / "work"
        work.mkdir()
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        self._out_fd, out_w = os.pipe()
        try:
            if self.launcher == "zygote":
                (self.scratch / "root").mkdir()
                self.proc = zygote_parent.ForkedChild(self.scratch, self.submission, work, self.limits,
                                               req_r, resp_w, out_w)
            else:
                self.proc = SpawnedChild(self.scratch, self.submission, work, self.limits, req_r, resp_w, out_w)
        except BaseException:
            for fd in (self._req_w, self._resp_r, self._out_fd):
                os.close(fd)
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        finally:
            for fd in (req_r, resp_w, out_w):
                os.close(fd)
        os.set_blocking(self._out_fd, False)
        os.set_blocking(self._req_w, False)  # every write has a deadline (see _write)
        self._out_eof = False
        self._next_id = 0
        self._awaiting: int | None = None  # the id of a request sent whose reply is not read yet
        self._out = OutputBuffer()         # the output of the request in flight
        self._inbox = bytearray()          # bytes read from the reply pipe, not yet a whole reply
        self.last_output = ""
        self.dead: ChildDied | None = None
        self._timeout = self.limits.call_timeout
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------
    def wait_ready(self) -> dict:
        """Block until the child is ready and answered ``hello``; returns its facts
        (``pid``, ``torch``, ``python`` and, from the zygote launcher, ``sandbox``)."""
        reply, tensors = self.request("hello", timeout=self.limits.startup_timeout)
        if not reply.get("ok"):
            raise ProtocolError("the child failed to start")
        try:
            info = wire.decode(reply.get("value"), tensors)
        except wire.WireError as exc:
            raise ProtocolError(f"bad hello: {exc}") from None
        if isinstance(info, dict):
            info["launcher"] = self.launcher
        return info

    def kill(self) -> None:
        """Kill the child and everything it started; remove its scratch directory."""
        if self._closed:
            return
        self._closed = True
        self.proc.kill()
        self.proc.release()
        for fd in (self._req_w, self._resp_r, self._out_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        """Ask the child to exit, then make sure it is gone."""
        if self.dead is None and not self._closed and self.proc.poll() is None:
            try:  # one small non-blocking write: a child that stops reading is simply killed
                message = wire.pack({"op": "exit"})
                if os.write(self._req_w, message) == len(message):
                    self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    # -- requests ----------------------------------------------------------------
    def request(self, op: str, timeout: float | None = None, tensors: dict | None = None, on_callback=None,
                **fields):
        """Send a request and wait for its reply: :meth:`send` then :meth:`receive`, under one
        deadline of ``timeout`` seconds (default: the limits' ``call_timeout``); ``on_callback``
        answers the callbacks the child sends meanwhile (see :meth:`receive`)."""
        deadline = self.send(op, timeout=timeout, tensors=tensors, **fields)
        return self.receive(deadline=deadline, on_callback=on_callback)

    def send(self, op: str, timeout: float | None = None, tensors: dict | None = None, **fields) -> float:
        """Write a request without waiting for its reply (so the child works while this process
        does too); returns the request's deadline. Its reply must be read with :meth:`receive`
        before the next request is sent. Raises like :meth:`request`."""
        if self.dead is not None:
            raise self.dead
        if self._awaiting is not None:
            raise RuntimeError("the previous request's reply was not received")
        self._next_id += 1
        header = {"id": self._next_id, "op": op, **fields}
        self._out = OutputBuffer()
        self._timeout = timeout or self.limits.call_timeout
        deadline = time.monotonic() + self._timeout
        self._guarded(lambda: self._write(wire.pack(header, tensors), deadline, self._out))
        self._awaiting = self._next_id
        return deadline

    def receive(self, timeout: float | None = None, deadline: float | None = None, on_callback=None):
        """The reply ``(reply, tensors)`` to the request :meth:`send` wrote, read before
        ``deadline`` (or ``timeout`` seconds from now). Raises :class:`ChildDied` or
        :class:`ProtocolError` (the child is killed), as :meth:`request` does.

        While the request runs, the child may send *callbacks* (``{"op": "callback", ...}``: a
        reference component its code calls, :mod:`autograder.child.components`): each is answered
        with ``on_callback(message, tensors, deadline) -> (answer, tensors)``, written back as
        ``{"cb": true, **answer}`` under the same deadline (so the time it takes counts in this
        request); without ``on_callback`` the answer refuses the call."""
        if self.dead is not None:
            raise self.dead
        if self._awaiting is None:
            raise RuntimeError("no request awaits a reply")
        if deadline is None:
            self._timeout = timeout or self.limits.call_timeout
            deadline = time.monotonic() + self._timeout
        out = self._out

        def read():
            self._fill(wire.FRAME.size, deadline, out)
            json_len, blob_len = wire.FRAME.unpack_from(self._inbox)
            wire.check_frame(json_len, blob_len)
            end = wire.FRAME.size + json_len + blob_len
            self._fill(end, deadline, out)
            body = bytes(self._inbox[wire.FRAME.size:wire.FRAME.size + json_len])
            blob = bytes(self._inbox[wire.FRAME.size + json_len:end])
            del self._inbox[:end]
            self._drain(out)
            return wire.unpack(body, blob)

        reply, tensors_out = self._guarded(read)
        while reply.get("op") == "callback":
            answer, answer_tensors = (on_callback or refuse_callback)(reply, tensors_out, deadline)
            message = wire.pack({"cb": True, **answer}, answer_tensors)
            self._guarded(lambda: self._write(message, deadline, out))
            reply, tensors_out = self._guarded(read)
        self.last_output = out.text()
        awaited, self._awaiting = self._awaiting, None
        if reply.get("id") != awaited:
            self.dead = ChildDied(_("the child answered out of turn"), self.last_output)
            self.kill()
            raise ProtocolError("reply id does not match the request")
        return reply, tensors_out

    def _guarded(self, step):
        """``step()``; a death or a broken protocol on the way kills the child and raises
        :class:`ChildDied` or :class:`ProtocolError`, with the output it printed meanwhile."""
        try:
            return step()
        except ChildDied as exc:
            exc.output = self._out.text()
            self.last_output = exc.output
            self.dead = exc
            self.kill()
            raise
        except (wire.WireError, BrokenPipeError, OSError) as exc:
            self.last_output = self._out.text()
            self.dead = ChildDied(_("the child broke the grading protocol ({error})").format(error=exc), self.last_output)
            self.kill()
            raise ProtocolError(str(exc)) from None

    def _write(self, data: bytes, deadline: float, out: OutputBuffer) -> None:
        """Write ``data`` to the (non-blocking) request pipe before ``deadline``, draining the
        child's output meanwhile. A child that stops reading (and sleeps, so no CPU limit fires)
        fills the pipe: :class:`ChildDied` (``timed_out``) when the deadline passes."""
        view = memoryview(data)
        try:  # a request is usually small and the pipe empty: written at once, no select
            view = view[os.write(self._req_w, view[: 1 << 16]):]
        except BlockingIOError:
            pass
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChildDied(_("timed out after {seconds} s (it stopped reading its requests)").format(
                    seconds=f"{self._timeout:g}"),
                                timed_out=True)
            readable, writable, _errors = select.select(self._outputs(), [self._req_w], [], remaining)
            if readable:
                self._drain(out)
            if writable:
                try:
                    view = view[os.write(self._req_w, view[: 1 << 16]):]
                except BlockingIOError:
                    continue

    def _fill(self, n: int, deadline: float, out: OutputBuffer) -> None:
        """Read from the reply pipe until :attr:`_inbox` holds ``n`` bytes (a reply's frame is read
        in as few reads as it arrives in), draining the child's output meanwhile."""
        inbox = self._inbox
        while len(inbox) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChildDied(_("timed out after {seconds} s").format(seconds=f"{self._timeout:g}"), timed_out=True)
            ready, _writable, _errors = select.select([self._resp_r, *self._outputs()], [], [], remaining)
            if self._out_fd in ready:
                self._drain(out)
            if self._resp_r in ready:
                chunk = os.read(self._resp_r, min(max(n - len(inbox), 1 << 16), 1 << 20))
                if not chunk:
                    raise ChildDied(self._exit_reason())
                inbox += chunk

    def _outputs(self) -> list[int]:
        """The output pipe while it is open (at its end it would wake every select at once)."""
        return [] if self._out_eof else [self._out_fd]

    def _drain(self, out: OutputBuffer) -> None:
        while True:
            try:
                data = os.read(self._out_fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                return
            if not data:
                self._out_eof = True
                return
            out.feed(data)
            if out.total > MAX_OUTPUT_FLOOD:
                raise ChildDied(_("printed more than {mb} MB of output").format(mb=MAX_OUTPUT_FLOOD // 2**20))

    def _exit_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return _("closed its channel without exiting")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            if name in ("SIGKILL", "SIGXCPU", "SIGSEGV"):
                return _("was killed by {signal} (probably out of memory or CPU time)").format(signal=name)
            return _("was killed by {signal}").format(signal=name)
        return _("exited with code {code}").format(code=code)
