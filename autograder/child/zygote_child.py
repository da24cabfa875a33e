"""The zygote: imports torch once, then forks one sandboxed child per request.

Started by :mod:`autograder.sandbox.zygote_parent` (the parent side) as ``python -I -c <bootstrap>`` with a
copy of this package and a scrubbed environment; it never imports the kit itself, so its
memory (which every child inherits) holds torch (and, once a training child was asked for,
``torch._dynamo``: see ``tasks.preload``), safetensors, ``numpy.random`` (see
:func:`.runner.import_trusted`) and this package only: no
reference solution, no test, no result.

Protocol on each ``SOCK_SEQPACKET`` socket given in ``argv`` (one per client: one zygote may
serve every worker of a batch, see :func:`autograder.sandbox.zygote_parent.start_shared`): the zygote first sends
``{"ready": true, ...}``; then each request is one JSON message (:func:`serve`) with four
file descriptors attached: the child's request pipe (read end), reply pipe (write end),
output pipe (write end, becomes stdout and stderr) and a status socket. The answer is
``{"pid": n}`` with a pidfd of the supervisor attached, or ``{"error": "..."}``.

Per request two processes are forked (see :mod:`.jail`):

- the *supervisor* enters new namespaces and forks the child's *init*;
- the *init* (PID 1 of the new PID namespace, root, out of the submission's reach) sends its
  pid, the child's uid and a pidfd of itself over the status socket, forks the *worker*, reaps
  until the worker ends and sends the worker's exit code (an ``int32``: negative = killed by
  that signal); its exit ends the namespace and kills whatever the worker left behind;
- the *worker* builds its private root, drops to its own unprivileged uid, applies the
  rlimits, loads the seccomp filter of :mod:`.syscalls` (no file locks, no inotify) and
  serves requests with :func:`.runner.serve`.

Where namespaces are refused, the child runs in the host file system with a private uid
(when root) and rlimits only, and reports ``"namespaces": false`` in its ``hello`` reply.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import select
import socket
import struct
import sys
import traceback

from . import channels, hugepages, jail, runner, snapshot, syscalls, tasks, wire  # noqa: F401  (imported here so children never load them)

STATUS_START = struct.Struct("<ii")  # child pid (in the zygote's PID namespace), child uid
STATUS_EXIT = struct.Struct("<i")     # exit code, negative for a signal
MAX_REQUEST = 1 << 16


def main(argv: list[str]) -> None:
    """Entry point: ``main([control_socket_fd, ...])``; returns when every client closed its socket.

    Each socket is one client (a grading process): the zygote greets each, then serves them all."""
    socks = [socket.socket(fileno=int(fd)) for fd in argv]
    runner.import_trusted()
    import torch

    snapshot.prepare()   # the module state every child re-bases instead of walking it again
    gc.freeze()  # torch's objects are never collected: a child's full collection neither scans nor copies them
    for sock in socks:
        sock.send(json.dumps({"ready": True, "pid": os.getpid(), "torch": torch.__version__}).encode())
    serve(socks)


HUGE_PAGES_AFTER = 8  # children forked before the zygote moves its memory to huge pages


def serve(socks: list[socket.socket]) -> None:
    """Fork a supervisor per request, answering on the socket it came on, until every client
    closed its socket.

    Once it has forked :data:`HUGE_PAGES_AFTER` children (a class, not one self-check), the
    zygote spends the time between requests moving its large anonymous memory to huge pages
    (:mod:`.hugepages`, 8 MB a step, ~0.9 s of CPU in all), which makes each later child's
    three forks and exits ~25-45 ms cheaper; a request waits at most one step."""
    socks = list(socks)
    forks = 0
    huge = "later"  # "later", then an iterator of the pieces left while moving, then "done"
    while socks:
        _reap()
        if huge == "later" and forks >= HUGE_PAGES_AFTER:
            huge = hugepages.chunks(hugepages.regions()) if hugepages.available() else "done"
        moving = not isinstance(huge, str)
        ready, _, _ = select.select(socks, [], [], 0 if moving else 2.0)
        if moving and not ready and not hugepages.collapse_step(huge):
            huge = "done"
        for sock in ready:
            served = _serve_one(sock, socks)
            if served is None:
                socks.remove(sock)
                sock.close()
            forks += served or 0


def _serve_one(sock: socket.socket, socks: list[socket.socket]) -> int | None:
    """Answer one request on ``sock``: the number of children forked (0 or 1); None when its
    client has gone."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 8)
    except OSError:
        return None
    if not data:
        return None
    try:
        spec = json.loads(data)
        if len(fds) != 4:
            raise ValueError(f"expected 4 descriptors, got {len(fds)}")
    except ValueError as exc:
        _close(fds)
        sock.send(json.dumps({"error": f"bad request: {exc}"}).encode())
        return 0
    if spec.get("preload"):
        # what every optimizer would import in each training child, imported here once (on the
        # first training child), not at start: a batch without training never pays it (~1.3 s)
        if "torch._dynamo" not in sys.modules:
            tasks.preload()
            snapshot.prepare()
        gc.freeze()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for other in socks:
            other.close()
        try:
            supervise(spec, fds)
        finally:
            os._exit(70)
    pidfd = os.pidfd_open(pid)
    _close(fds)
    socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
    os.close(pidfd)
    return 1


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _close(fds) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def supervise(spec: dict, fds: list[int]) -> None:
    """The supervisor: enter namespaces, fork the child's init, wait for it. Never returns."""
    os.setsid()
    jail.die_with_parent()
    report: dict = {"namespaces": False}
    try:
        report.update(jail.enter_namespaces())
    except OSError as exc:
        report["namespaces_error"] = str(exc)
    uid = int(spec["uid_base"]) + os.getpid() if os.geteuid() == 0 else os.geteuid()
    pid = os.fork()
    if pid == 0:
        init_main(spec, fds, report, uid)
    _close(fds)
    try:
        os.waitpid(pid, 0)
    finally:
        os._exit(0)


def init_main(spec: dict, fds: list[int], report: dict, uid: int) -> None:
    """The child's init (PID 1 of its namespace when there is one): builds the sandbox, forks
    the worker that serves requests, reaps every process until the worker ends, reports the
    worker's exit code on the status socket and exits, which ends the namespace. Never returns.

    The worker is not PID 1 so that signals behave for it as anywhere else (PID 1 ignores the
    signals it sends itself, a crash included)."""
    code = 71
    try:
        req_r, resp_w, out_w, status_fd = fds
        status = socket.socket(fileno=status_fd)
        jail.die_with_parent()
        pidfd = os.pidfd_open(os.getpid())
        socket.send_fds(status, [STATUS_START.pack(os.getpid(), uid)], [pidfd])
        os.close(pidfd)
        worker = os.fork()
        if worker == 0:
            status.close()
            child_main(spec, (req_r, resp_w, out_w), report, uid)
        _close((req_r, resp_w, out_w))
        while True:
            pid, wait_status = os.waitpid(-1, 0)
            if pid == worker:
                code = os.waitstatus_to_exitcode(wait_status)
                break
        status.sendall(STATUS_EXIT.pack(code))
    finally:
        os._exit(0)


def _install_fds(req_r: int, resp_w: int, out_w: int) -> None:
    """stdin = /dev/null, stdout = stderr = the output pipe, 3 = requests, 4 = replies; close the rest."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (req_r, resp_w, out_w)]
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(high[2], 1)
    os.dup2(high[2], 2)
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)
    os.closerange(5, 1 << 20)


def child_main(spec: dict, pipes: tuple[int, int, int], report: dict, uid: int) -> None:
    """The child: confine itself, then serve the parent's requests. Never returns."""
    try:
        _install_fds(*pipes)
        if report["namespaces"]:
            report.update(jail.build_root(spec["root"], spec["submission"], spec["hidden"], uid=uid,
                                          work_bytes=int(spec["work_bytes"])))
            submission, work = jail.SUBMISSION, jail.WORK
        else:
            submission, work = spec["submission"], spec["work"]
            if os.geteuid() == 0:
                os.chown(work, uid, uid)
        os.chdir(work)
        os.environ.clear()
        os.environ.update(spec["env"], HOME=work, TMPDIR=work)
        report.update(jail.drop_privileges(uid))
        jail.die_with_parent()
        runner.apply_limits(spec["limits"])
        report.update(runner.cap_memory(spec["limits"].get("memory_bytes", 0)))
        report["rlimits"] = sorted(k for k, v in spec["limits"].items() if v and k in runner.RLIMITS)
        report.update(syscalls.install(spec["limits"].get("syscall_filter", True)))  # last: before student code
    except BaseException:
        os.write(2, ("the sandbox could not be set up:\n" + traceback.format_exc()).encode())
        os._exit(71)
    runner.serve(3, 4, submission, {"sandbox": report})
