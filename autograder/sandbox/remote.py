"""The parent's view of a student's submission: :class:`RemoteImpl` and its proxies.

``student.positional_encoding.PositionalEncoding(16)`` in a test sends ``import``,
``getattr`` and ``call`` requests to the child and gives back a
:class:`RemoteObject` handle; calling ``handle(x)`` sends ``x`` and returns the
child's output decoded as a plain tensor. Nothing the child returns is executed
or unpickled here: values are plain data, plain tensors or handles.

Whatever goes wrong in the child becomes a :class:`SubmissionError` (an
``AssertionError``, so the test fails) whose message a student can act on: a missing
file, a syntax error with file and line, ``NotImplementedError``, an exception with
the student's own frames, a crash (exit code or signal), a timeout.
"""

from __future__ import annotations

import time
from pathlib import Path

from autograder import exercises
from autograder.child import forbidden, wire
from autograder.i18n import _
from autograder.sandbox import ChildDied, ChildProcess, Limits, ProtocolError
from autograder.sandbox import returns, timeshare
from autograder.sandbox.errors import SubmissionError, submission_error  # noqa: F401  (SubmissionError re-exported)
from autograder.sandbox.handles import HandleBook, RemoteObject
from autograder.sandbox.served_child import ServedComponents

MAX_RESPAWNS = 8             # deaths allowed outside any exercise's tests (doctor, pictures)
MAX_DEATHS_PER_EXERCISE = 3  # deaths in one exercise's tests before its remaining tests are given up
RESET_TIMEOUT = 5.0          # seconds the between-tests reset may take at most
MAX_TEST_OUTPUT = 2000  # characters of a test's printed output kept for its report
_RUNNING = object()     # "the exercise whose test runs now" (see RemoteImpl._charge, _died)
_CLEAN = object()       # a child that ran no student code yet (see RemoteImpl.begin_test)


class RemoteImpl(ServedComponents, HandleBook):
    """A submission folder served by a (re)spawned child process.

    ``impl.<module>`` imports the student's module in the child. A child that dies
    (crash, timeout) is replaced at the next request. Deaths are counted per exercise
    (:meth:`begin_test` says whose test runs): after ``MAX_DEATHS_PER_EXERCISE`` deaths in
    an exercise's tests, its remaining tests, and those of the composites that import it
    (:data:`autograder.exercises.EXERCISES` ``depends``), fail at once with kind
    ``gave_up``; other exercises are graded as usual. A module whose import kills the child
    fails later imports at once, without a new child. ``deadline`` (a ``time.monotonic()``
    value) bounds every request, and so does the running exercise's share of the time
    (:meth:`set_budgets`): the time its requests took is counted in ``spent``.

    Each exercise's tests start with none of the student's modules imported and the process-wide
    state the child started with (:meth:`begin_test`): what a module does to its process at
    import reaches only the tests that import it, its own and its composites'.
    """

    def __init__(self, submission: Path, limits: Limits | None = None, label: str = "submission"):
        self.submission = Path(submission)
        self.limits = limits or Limits()
        self.label = label
        self.deadline: float | None = None
        self.last_output = ""
        self.info: dict = {}
        self._child: ChildProcess | None = None
        self._spare: ChildProcess | None = None  # a fresh child started ahead (prepare_spare)
        self._gen = 0
        self._deaths: dict[str | None, int] = {}  # per exercise (None: outside any test)
        self.exercise: str | None = None  # whose test runs now (see begin_test)
        self.budgets: dict[str, float] = {}  # seconds of requests each exercise may take (set_budgets)
        self.spent: dict[str | None, float] = {}  # seconds its requests took so far
        self._time_limit = 0.0
        self._modules: dict[str, RemoteObject] = {}
        self._fatal_imports: dict[str, SubmissionError] = {}
        self._seed: int | None = None
        self._ready = False
        self._calls: dict[str, frozenset] = {}  # callable names per class/module key, this child (make_ref)
        self._types: dict[str, tuple] = {}  # (type, mro) per class/module key, this child
        self._pending_reset: tuple | None = None  # (exercise,) of a reset sent, reply not read yet
        self._worker_user = _CLEAN  # the exercise whose requests this child served (see begin_test)
        self.replaced_for: list[str] = []  # what the last fresh_worker could not undo (the child was replaced)
        self.test_output = ""  # what the child printed since the last reset() (bounded)
        self.forbidden: list[tuple[str, str]] = []  # (api, module) uses since the last reset() (child.forbidden)
        self.last_received: tuple | None = None  # (what, value) of the last reply (autograder.run.origin)

    # -- lifecycle ---------------------------------------------------------------
    def start(self, use_spare: bool = True) -> None:
        """Start a child now without waiting for it (its torch import overlaps other work); the
        spare (:meth:`prepare_spare`) when one is ready and ``use_spare``."""
        if self._child is None:
            spare, self._spare = (self._spare, None) if use_spare else (None, self._spare)
            if spare is not None and spare.proc.poll() is not None:
                spare.kill()
                spare = None
            self._child = spare or ChildProcess(self.submission, self.limits)
            self._gen += 1
            self._ready = False
            self._calls, self._types = {}, {}
            self._worker_user = _CLEAN

    def set_budgets(self, budgets: dict[str, float], time_limit: float) -> None:
        """Each exercise's share of the submission's ``time_limit`` (see :mod:`autograder.sandbox.timeshare`):
        once its requests took that long, its further requests fail with kind ``time_limit``."""
        self.budgets = dict(budgets)
        self._time_limit = time_limit

    def sibling(self) -> "RemoteImpl":
        """A second child for the same submission (e.g. a training run in a fresh process) whose
        deaths and request time count with this one's, against the same exercise and shares."""
        other = RemoteImpl(self.submission, self.limits, label=self.label)
        other.deadline, other.exercise = self.deadline, self.exercise
        other.budgets, other._time_limit = self.budgets, self._time_limit
        other.spent, other._deaths = self.spent, self._deaths  # shared, not copied
        other.server = self.server
        return other

    def begin_test(self, exercise: str | None, served: tuple[str, ...] = ()) -> None:
        """A test of ``exercise`` starts: the child's deaths and the time its requests take
        count against that exercise from now on. ``served``: the components (exercise names) its
        code gets from :attr:`server` as proxies of the reference (a composite's test), none
        for its own. When the child ran code for another exercise, or with other components, it
        is put back first (:meth:`fresh_worker`)."""
        self.exercise = exercise
        self.served = tuple(sorted(served)) if self.server is not None else ()
        if self._worker_user is not _CLEAN and self._worker_user != (exercise, self.served):
            self.fresh_worker()

    def fresh_worker(self) -> None:
        """Before another exercise's tests: have the child drop the student's modules (imported
        again on use) and put back the process-wide state it started with
        (:mod:`autograder.child.state`), one round trip; then the pending seed is sent again (see
        :meth:`reset`). Handles made until now go stale. When the child reports something it
        could not undo (a thread or process still running, a torch mode or operator registration
        left behind), it is replaced by a fresh child (nothing of it carries over; no death is
        counted), and :attr:`replaced_for` says why."""
        self._settle()
        previous, self._worker_user = self._worker_user, _CLEAN
        self.replaced_for = []
        child = self._child
        if child is None or child.dead is not None or not self._ready:
            return
        try:
            reply, tensors = child.request("fresh", timeout=min(RESET_TIMEOUT, self.limits.call_timeout))
            value = wire.decode(reply.get("value"), tensors) if reply.get("ok") else None
            left = value.get("left") if isinstance(value, dict) else ["no valid reply"]
        except (ChildDied, ProtocolError):
            self._died(None if previous is _CLEAN else previous)  # the next request starts a new child
            return
        except wire.WireError:
            left = ["no valid reply"]
        self._gen += 1
        self._modules.clear()
        self._calls, self._types = {}, {}
        if left:
            self.replaced_for = [str(name) for name in list(left)[:8]]
            self._child.close()
            self._child = None
            self.start(use_spare=False)  # the hidden tests' spare stays theirs
            return
        self.reset(seed=self._seed)

    def _time_left(self) -> float | None:
        """Seconds the next request may take (None: no bound); SubmissionError when none are left."""
        lefts = []  # (seconds left, whose limit: None for the whole submission's deadline)
        if self.deadline is not None:
            lefts.append((self.deadline - time.monotonic(), None))
        if self.exercise in self.budgets:
            lefts.append((self.budgets[self.exercise] - self.spent.get(self.exercise, 0.0), self.exercise))
        if not lefts:
            return None
        left, whose = min(lefts, key=lambda pair: pair[0])
        if left <= 0:  # the sentence is built only here: every request asks, few are refused
            raise SubmissionError("time_limit", _("the time limit for the whole submission was reached")
                                  if whose is None else timeshare.limit_text(whose, self.budgets[whose],
                                                                             self._time_limit))
        return left

    def _charge(self, since: float, exercise=_RUNNING) -> None:
        """Charge the seconds since ``since`` to ``exercise`` (default: the running one)."""
        exercise = self.exercise if exercise is _RUNNING else exercise
        self.spent[exercise] = self.spent.get(exercise, 0.0) + time.monotonic() - since

    def given_up(self, exercise: str | None) -> str | None:
        """Why the tests of ``exercise`` are no longer run (a student-facing sentence), or None."""
        if exercise is None:
            deaths = self._deaths.get(None, 0)
            return _("the submission's process died {n} times; the remaining tests were not run").format(
                n=deaths) if deaths >= MAX_RESPAWNS else None
        deaths = self._deaths.get(exercise, 0)
        if deaths >= MAX_DEATHS_PER_EXERCISE:
            return _("the submission's process died {n} times in the tests of {exercise}; its remaining tests "
                     "were not run").format(n=deaths, exercise=exercise)
        depends = exercises.BY_NAME[exercise].depends if exercise in exercises.BY_NAME else ()
        for dep in depends:
            if self._deaths.get(dep, 0) >= MAX_DEATHS_PER_EXERCISE:
                return _("not run: {exercise} imports {dep}.py, whose tests were given up after its process "
                         "died {n} times").format(exercise=exercise, dep=dep, n=self._deaths[dep])
        return None

    def _died(self, exercise=_RUNNING) -> None:
        """Count a death of the child against ``exercise`` (default: the running one)."""
        exercise = self.exercise if exercise is _RUNNING else exercise
        self._deaths[exercise] = self._deaths.get(exercise, 0) + 1

    def prepare_spare(self) -> None:
        """Start a second, fresh child now for the next :meth:`start` (the hidden tests' child),
        so that its start-up overlaps the tests run until then. It runs nothing meanwhile."""
        if self._spare is None:
            self._spare = ChildProcess(self.submission, self.limits)

    def close(self, keep_spare: bool = False) -> None:
        """Stop the child (and the spare, unless ``keep_spare``); a later request starts a fresh
        one (handles from this one go stale)."""
        self._settle()  # a death while resetting still counts (see reset)
        if self._child is not None:
            self._child.close()
            self._child = None
            self._modules.clear()
        if self._spare is not None and not keep_spare:
            self._spare.close()
            self._spare = None

    def _live_child(self) -> ChildProcess:
        if self._child is not None and self._child.dead is not None:
            self._child.kill()
            self._child = None
            self._modules.clear()
        if self._child is None:
            self.start()
        if not self._ready:
            try:
                self.info = self._child.wait_ready()
            except (ChildDied, ProtocolError) as exc:
                self._child.kill()
                self._child = None
                raise RuntimeError(f"the grading child process failed to start: {exc}") from None
            self._ready = True
            if self._seed is not None:
                self._child.request("seed", seed=self._seed)
        return self._child

    # -- what tests call ------------------------------------------------------------
    def __getattr__(self, module: str) -> RemoteObject:
        if module.startswith("_"):
            raise AttributeError(module)
        return self.module(module)

    def module(self, name: str) -> RemoteObject:
        """The student's module ``name`` (imported in the child on first use)."""
        self._settle()
        self._check_given_up()
        if name in self._fatal_imports:
            raise self._fatal_imports[name]
        child = self._live_child()
        if name not in self._modules:
            try:
                self._modules[name] = self._request("import", None, f"{name}.py", module=name,
                                                    timeout=max(15.0, self.limits.call_timeout))
            except SubmissionError as exc:
                if exc.kind in ("crash", "timeout", "syntax_error", "missing_file", "import_error"):
                    self._fatal_imports[name] = exc
                raise
        del child
        return self._modules[name]

    def has(self, name: str) -> bool:
        """Whether the submission folder holds ``name``.py."""
        return (self.submission / f"{name}.py").is_file()

    def task(self, name: str, *args, timeout: float | None = None, **kwargs):
        """Run a kit routine of :mod:`autograder.child.tasks` in the child on the given handles."""
        return self._request("task", None, _("your code, run by the kit's {task}").format(task=name), name=name,
                             args=args, kwargs=kwargs, timeout=timeout)

    def seed(self, seed: int) -> None:
        """Seed the child's random generators now and after every respawn."""
        self._seed = seed
        if self._child is not None and self._child.dead is None and self._ready:
            self._request("seed", None, "seed", seed=seed)

    def reset(self, seed: int | None = None) -> None:
        """Between tests: drop the handles the child holds (the modules' stay valid) and, with
        ``seed``, seed the child as :meth:`seed` does. Sent now, its reply read at the next
        request (:meth:`_settle`): no round trip of its own. A death or timeout while resetting
        (a student's ``__del__``) and the wait are charged to the exercise whose test made the
        handles (running when the reset was asked for); the next request starts a fresh child."""
        if seed is not None:
            self._seed = seed
        self.test_output = ""
        self.forbidden = []
        self.last_received = None
        self._settle()
        if self._child is not None and self._child.dead is None and self._ready:
            try:
                self._child.send("reset", timeout=min(RESET_TIMEOUT, self.limits.call_timeout), seed=seed)
                self._pending_reset = (self.exercise,)
            except (ChildDied, ProtocolError):
                self._died()

    def _settle(self) -> None:
        """Read the reply of the reset :meth:`reset` sent, if one is pending (see there)."""
        if self._pending_reset is None:
            return
        (exercise,), self._pending_reset = self._pending_reset, None
        if self._child is None or self._child.dead is not None:
            return
        since = time.monotonic()
        try:
            self._child.receive(timeout=min(RESET_TIMEOUT, self.limits.call_timeout))
        except (ChildDied, ProtocolError):
            self._died(exercise)  # a new child starts at the next request
        finally:
            self._charge(since, exercise)

    # -- transport ---------------------------------------------------------------
    def _request(self, op: str, target: RemoteObject | None, what: str, timeout: float | None = None,
                 args=None, kwargs=None, **fields):
        self._settle()
        self._check_given_up()
        timeout = timeout or self.limits.call_timeout
        left = self._time_left()
        if left is not None:
            timeout = min(timeout, left)
        child = self._live_child()
        if op != "seed" and self._worker_user is _CLEAN:
            self._worker_user = (self.exercise, self.served)
        if op not in ("seed", "fresh") and self._installed != (self._gen, self.served):
            self._install(child, timeout)
        if target is not None and target._gen != self._gen:
            raise SubmissionError("crash", _(
                "{what} belongs to an earlier process of the submission that has died").format(what=what))
        enc = wire.Encoder(self._encode_ref)
        if args is not None:
            fields["args"] = enc.encode(tuple(args))
        if kwargs is not None:
            fields["kwargs"] = enc.encode(dict(kwargs))
        since = time.monotonic()
        try:
            reply, tensors = child.request(op, timeout=timeout, tensors=enc.tensors,
                                           on_callback=self._callback if self.served else None, **fields)
        except ChildDied as exc:
            self._died()
            self.last_output = self._printed(exc.output)
            kind = "timeout" if exc.timed_out else "crash"
            text = (_("{what} did not finish: {reason}") if exc.timed_out
                    else _("the submission's process {reason} while running {what}"))
            raise SubmissionError(kind, text.format(what=what, reason=exc.reason), self.last_output) from None
        except ProtocolError as exc:
            self._died()
            self.last_output = self._printed(child.last_output)
            raise SubmissionError("protocol", _(
                "the submission's process sent an invalid reply while running {what} ({error})").format(
                    what=what, error=exc), self.last_output) from None
        finally:
            self._charge(since)
        self.last_output = self._printed(child.last_output)
        self.forbidden += [use for use in forbidden.records(reply.get("forbidden")) if use not in self.forbidden]
        if self.last_output and len(self.test_output) < MAX_TEST_OUTPUT:
            self.test_output = (self.test_output + self.last_output)[:MAX_TEST_OUTPUT]
        if not reply.get("ok"):
            err = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            raise submission_error(err, what, self.last_output, module=fields.get("module"))
        gen = self._gen
        try:
            value = wire.decode(reply.get("value"), tensors, lambda rec: self._make_remote(rec, gen, what))
        except wire.WireError as exc:
            raise SubmissionError("protocol", _(
                "the submission's process sent an invalid reply while running {what} ({error})").format(
                    what=what, error=exc), child.last_output) from None
        self.last_received = (what, value)   # what the test got last (autograder.run.origin names it)
        return returns.check(op, target, fields.get("name"), value)   # the contract's return type

    def _check_given_up(self) -> None:
        reason = self.given_up(self.exercise)
        if reason:
            raise SubmissionError("gave_up", reason)
