"""Reference components served to a composite's child: the parent's relay and the trusted server.

A composite's tests run the student's composite file over the reference components
(:mod:`autograder.child.components`), but no reference code may sit where student code runs.
So a :class:`ComponentServer` keeps a second child per submission, the *component server*,
whose folder is ``solutions/`` and which runs only kit code (the ``component`` task of
:mod:`autograder.child.tasks`). When the student's child calls a served component, the
parent (:meth:`ComponentServer.handle`, called by :meth:`autograder.sandbox.process.ChildProcess.receive`
while it waits for the student's request) checks the callback as data (a component served to
this test, plain fields, tensors named as the call says) and relays it to the server under the
student's request's deadline, so the server's time counts in that request and in the exercise's
share; a server that hangs or dies is killed like any child and the call fails in the student's
code. The server's answers are plain data and tensors; its exceptions travel as a type name and
a message, never a traceback (whose frames would be the reference's source).

Why a server process rather than the parent computing the reference itself: whatever the
student's code sends (sizes, constructor values) costs the server's memory and time, not the
grading process's, and a call past its deadline is killed, not waited for.
"""

from __future__ import annotations

import time

from autograder import paths
from autograder.child import wire
from autograder.sandbox.errors import SubmissionError
from autograder.sandbox.policy import Limits
from autograder.sandbox.remote import RemoteImpl

CALL_FIELDS = ("c", "i", "p", "m", "a", "k", "s", "t")
MAX_STATE = 4096   # parameters and buffers one call may send
MAX_PATH = 200


def refused(message: str) -> tuple[dict, None]:
    """A callback's answer that raises ``RuntimeError(message)`` in the student's code."""
    return {"ok": False, "error": {"type": "RuntimeError", "message": message}}, None


class ComponentServer:
    """The component server of one submission (started on first need; see the module docstring)."""

    def __init__(self, limits: Limits | None = None):
        folder = paths.solutions_dir()
        self.remote = RemoteImpl(folder, limits or Limits(), label="reference components") if folder else None
        self._listings: dict[tuple[str, ...], dict] = {}

    @staticmethod
    def available() -> bool:
        """Whether this kit has reference solutions to serve (not in the student edition)."""
        return paths.solutions_dir() is not None

    def start(self) -> None:
        """Start the server's child now without waiting for it (its start overlaps other work)."""
        if self.remote is not None:
            self.remote.start()

    def listing(self, modules: tuple[str, ...]) -> dict:
        """The public names of the reference modules ``modules`` (what a proxy module holds)."""
        modules = tuple(sorted(modules))
        if modules not in self._listings:
            if self.remote is None:
                raise RuntimeError("this edition of the kit has no reference components to serve")
            self.remote.deadline = None
            self._listings[modules] = self.remote.task("component_listing", list(modules), timeout=60.0)
        return self._listings[modules]

    def handle(self, message: dict, tensors: dict, deadline: float, served: tuple[str, ...]) -> tuple[dict, dict | None]:
        """Answer one callback of the student's child (``message``, ``tensors``: as it sent them)
        for the components ``served`` to the running test, before ``deadline``."""
        kind = message.get("kind")
        if kind not in ("new", "call", "vjp") or self.remote is None:
            return refused("not a component call")
        allowed = self.listing(served) if served else {}
        call = {k: message[k] for k in CALL_FIELDS if k in message}
        problem = _problem(call, tensors, allowed)
        if problem:
            return refused(problem)
        count = sum(1 for key in tensors if key[:1] == "t" and key[1:].isdigit())
        if sorted(k for k in tensors if k[:1] == "t") != sorted(f"t{i}" for i in range(count)):
            return refused("malformed component call")
        inputs = [tensors[f"t{i}"] for i in range(count)]
        needs, grads = [], []
        if kind == "vjp":
            needs = [bool(x) for x in message.get("needs", [])][:count] if isinstance(message.get("needs"), list) else []
            try:
                grads = wire.decode({"t": "list", "v": message.get("grads")}, tensors)
            except wire.WireError:
                return refused("malformed component gradient")
        left = deadline - time.monotonic()
        if left <= 0:
            return refused("the time for this call was up")
        self.remote.deadline = deadline
        try:
            result = self.remote.task("component", kind, call, inputs, tensors.get("rng"), allowed, needs, grads,
                                      timeout=left)
        except SubmissionError as exc:
            return refused(f"the grader's reference component did not answer ({exc.kind})")
        if not isinstance(result, dict):
            return refused("the grader's reference component sent a malformed answer")
        if isinstance(result.get("error"), dict):
            error = result["error"]
            return {"ok": False, "error": {"type": str(error.get("type", "RuntimeError"))[:40],
                                           "message": str(error.get("message", ""))[:2000]}}, None
        encoder = wire.Encoder()
        try:
            value = encoder.encode(result)
        except wire.EncodeError:
            return refused("the grader's reference component sent a value that cannot be sent")
        return {"ok": True, "value": value}, encoder.tensors

    def close(self) -> None:
        """Stop the server's child."""
        if self.remote is not None:
            self.remote.close()


def _problem(call: dict, tensors: dict, allowed: dict) -> str | None:
    """Why a callback's fields are refused before they reach the server (None when they are not)."""
    component = call.get("c")
    module, _, name = str(component).partition(".")
    spec = allowed.get(module) if isinstance(component, str) else None
    if not spec or name not in spec["functions"] + spec["classes"]:
        return f"{str(component)[:80]!r} is not a component served to this code"
    if not isinstance(call.get("p", ""), str) or len(call.get("p", "")) > MAX_PATH:
        return "malformed component path"
    state = call.get("s", [])
    if not isinstance(state, list) or len(state) > MAX_STATE or not all(isinstance(n, str) for n in state):
        return "malformed component state"
    training = call.get("t", {})
    if not isinstance(training, dict) or len(training) > MAX_STATE or \
            not all(isinstance(v, bool) for v in training.values()):
        return "malformed train/eval flags"
    if call.get("m") not in (None, "forward"):
        return "only a served component's forward can be called"
    if not isinstance(call.get("i", {}), (dict, type(None))):
        return "malformed constructor arguments"
    if "rng" not in tensors:
        return "the call lacks its random-number state"
    return None

