"""The pytest plugin that grades one submission.

Two parts: this module, loaded with ``-p autograder.run.plugin`` (the markers and the fixtures
the suites use), and a :class:`GradingSession` per submission, built by the caller with the run's
:class:`autograder.options.GradingOptions` and handed to ``pytest.main(plugins=[session])``
(:func:`autograder.run.grading.grade_folder`) or registered for each submission of a kept session
(:mod:`autograder.run.pytest_session`). The options reach the plugin only that way: there are no
``--tkit-*`` command-line options, and pytest run on the suites without a session stops at
every test with the kit's own explanation.

The run's state (:class:`autograder.context.RunState`) lives on the grading session (on
``config.stash``), each test's (:class:`autograder.context.TestContext`) on ``item.stash``; the
running test's is what :func:`autograder.context.current` returns.

Public tests run first, in a child of their own; the hidden tests then run in a fresh child,
so nothing a student sees (a public test's outcome, what their code printed) can depend on
the hidden tests.

Markers:
    ``exercise(name)``  the exercise a test belongs to (usually a module-level ``pytestmark``);
    ``points(n)``       the points a test is worth;
    ``visibility(v)``   ``public`` or ``hidden``; by default the suite folder's name;
    ``training``        the test trains a model (slow; ``GradingOptions(training=False)`` leaves it out);
    ``kind(k)``         what the test checks (:data:`autograder.run.rubric.KINDS`): ``values`` tests
                        are paid as they pass, every other kind as far as its exercise's ``values``
                        tests pass (:mod:`autograder.run.payment`);
    ``no_twin(reason)`` a public test that has no hidden twin (:mod:`autograder.run.twins`);
    ``part(name)``      the part of its exercise a test grades, gated apart (``train_autoencoder``).

Fixtures: ``student`` (the submission, a :class:`RemoteImpl` running in a child),
``reference`` (the reference solutions, loaded here), ``seed`` (this test's seed,
derived from the run's seed and the test's id), ``rng`` (a ``torch.Generator`` seeded
with it), ``example`` (a public test's inputs: the public ones, or in its hidden twin fresh
draws of the same kind), ``partial`` (award a fraction of the points from a passing test), ``attach``
(plot data for the reports, stored under the record's ``extra_data["figures"]``).

A test's name is the first line of its docstring; with ``options.lang == "ko"`` a later line
``ko: ...`` gives the Korean name.

Each test's record and the submission's results are built by :mod:`autograder.run.scoring` into
:class:`autograder.results.model.Results` (Gradescope's results.json schema, the kit's extras in
``extra_data``). With ``options.pictures`` the report pictures' data is collected from the
public tests' child, before the hidden tests start (or at the end of a run without hidden tests):
a picture is drawn from the student's values, and the hidden tests' child has seen hidden inputs
(:mod:`autograder.reports.pictures`).
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from pathlib import Path

import pytest
import torch

from autograder import context, exercises
from autograder.reports import pictures
from autograder.run import counterexample_run, scoring, twins
from autograder.run.items import describe_test, item_meta, parameters, public_first  # noqa: F401  (re-exported)
from autograder.sandbox import timeshare
from autograder.run.credit import Attachments, PartialCredit  # noqa: F401  (re-exported)
from autograder.i18n import using
from autograder.mistakes.hybrid import Hybrids
from autograder.options import GradingOptions
from autograder.results.model import Results, TestResult
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl
from autograder.sandbox.served import ComponentServer

SESSION_KEY = pytest.StashKey["GradingSession"]()
SESSION_NAME = "tkit-grading-session"   # the name a GradingSession is registered under
TEST_KEY = pytest.StashKey[context.TestContext]()
PARENT_THREADS = 1  # torch intra-op threads of the grading process while it grades (see pytest_sessionstart)


def pytest_configure(config):
    config.addinivalue_line("markers", "exercise(name): the exercise this test grades")
    config.addinivalue_line("markers", "points(n): points this test is worth")
    config.addinivalue_line("markers", "visibility(v): public or hidden (default: the suite folder)")
    config.addinivalue_line("markers", "training: the test trains a model (left out by training=False)")
    config.addinivalue_line("markers", "optimizer: the test runs a torch.optim optimizer in the child")
    config.addinivalue_line("markers", "integration: a composite's test over the student's own components "
                                       "(its other tests run over the reference components)")
    config.addinivalue_line("markers", "kind(k): what the test checks (autograder.run.rubric.KINDS)")
    config.addinivalue_line("markers", "no_twin(reason): a public test without a hidden twin")
    config.addinivalue_line("markers", "part(name): the part of its exercise a test grades (gated with it only)")
    config.addinivalue_line("markers", "twin_of(nodeid): the hidden twin of a public test (made by the kit)")


def _no_submission():
    """Stop a fixture of a run that grades no submission (pytest on the suites without the kit)."""
    pytest.fail("these tests grade a submission: run them with tkit check or tkit grade", pytrace=False)


def _session(request) -> "GradingSession":
    try:
        return request.config.stash[SESSION_KEY]
    except KeyError:
        _no_submission()


def _running() -> context.TestContext:
    """The running graded test's context.

    The fixtures every test uses read it instead of asking for pytest's ``request``: each
    fixture that does builds a ``request`` fixture definition of its own, signature and all,
    for every test (~1 % of a correct submission's grading time)."""
    ctx = context.current(required=False)
    if ctx is None or ctx.run.student is None:
        _no_submission()
    return ctx


@pytest.fixture
def student():
    """The submission under test (runs in a child process)."""
    return _running().run.student


@pytest.fixture
def reference():
    """The reference solutions (trusted, loaded in this process)."""
    from autograder.mistakes import implementations

    return implementations.reference()


@pytest.fixture
def seed() -> int:
    """This test's seed: the run's seed mixed with the test's id."""
    return _running().seed


@pytest.fixture
def rng(seed):
    """A torch.Generator seeded with this test's seed."""
    import torch

    return torch.Generator().manual_seed(seed)


@pytest.fixture
def example():
    """A public test's inputs (:class:`autograder.checks.examples.Example`): the public examples, or
    in the test's hidden twin fresh draws of the same kind."""
    from autograder.checks.examples import Example

    ctx = _running()
    return Example(twin=ctx.twin, seed=ctx.seed)


@pytest.fixture
def partial(request) -> PartialCredit:
    """Partial credit for this test (see :class:`PartialCredit`)."""
    credit = PartialCredit()
    _session(request).partials[request.node.nodeid] = credit
    return credit


@pytest.fixture
def attach(request) -> Attachments:
    """Attach plot data to this test's record (see :class:`Attachments`)."""
    attachments = Attachments()
    _session(request).attachments[request.node.nodeid] = attachments
    return attachments


def _limits(options: GradingOptions) -> Limits:
    """The child's limits: the sandbox's defaults, with the call timeout and memory cap of
    ``options`` when it sets them."""
    limits = Limits()
    if options.call_timeout:
        limits.call_timeout = options.call_timeout
    if options.memory_limit:
        limits.memory_bytes = options.memory_limit
    return limits


class GradingSession:
    """Collects one submission's results while pytest runs the suites, as ``options`` ask
    (:class:`autograder.options.GradingOptions`; a fresh seed when it has none).

    ``options.time_limit`` (seconds) bounds the time the submission's child may take: each
    exercise may take its share (:mod:`autograder.sandbox.timeshare`) in its own tests, so an exercise
    that exhausts its share never costs another one time. ``options.error_log`` is the
    instructor-only file for grader errors. ``self.options`` are ``options`` with the run's seed;
    ``run`` is the run's :class:`autograder.context.RunState`."""

    def __init__(self, submission: Path, options: GradingOptions | None = None):
        options = options or GradingOptions()
        self.submission = submission
        self.seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
        self.options = options.replace(seed=self.seed)
        self.remote = RemoteImpl(submission, _limits(options))
        # a composite's tests run its file over the reference components, computed by a trusted child
        self.remote.server = ComponentServer(self.remote.limits) if ComponentServer.available() else None
        self.run = context.RunState(seed=self.seed)
        self.meta: dict[str, dict] = {}
        self.records: dict[str, TestResult] = {}
        self.partials: dict[str, PartialCredit] = {}
        self.attachments: dict[str, Attachments] = {}
        self.results: Results | None = None
        self._phase = "public"
        self._figures: tuple[dict, dict] | None = None   # the pictures' data, once collected
        self._t0 = time.monotonic()
        self._hidden_from: float | None = None   # when the hidden tests started (time.monotonic())

    def test_seed(self, nodeid: str) -> int:
        digest = hashlib.sha256(f"{self.seed}:{nodeid}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF

    # -- the run's steps: the hooks below call them, and so does autograder.run.pytest_session, which
    # -- grades many submissions in one pytest session (collected once) ------------------------
    def open(self) -> None:
        """Start the run: its language, one torch thread in this process, its hybrid children."""
        self._scope = contextlib.ExitStack()   # closed in finish()
        self._scope.enter_context(using(self.options.lang))
        # The parent's torch work (references, expected values, mutants) is on tiny tensors: one
        # intra-op thread, as in the child. With several, each op waits at a barrier for a thread
        # the other workers' processes keep off the cores (measured: 2.5-4x slower per student
        # with 2 workers on 2 cores; see benchmarks/bench_batch.py --profile).
        self._previous_threads = torch.get_num_threads()
        torch.set_num_threads(PARENT_THREADS)
        self.run.start(self.remote, Hybrids())
        self._t0 = time.monotonic()

    def describe(self, items) -> None:
        """Read each graded test's markers into :attr:`meta` (pytest.UsageError when one lacks them)."""
        self.meta = {item.nodeid: item_meta(item) for item in items}

    def prepare(self, items) -> None:
        """The run's tests are ``items`` (described, public ones first): share out the time limit,
        start the first child (and the hidden tests' spare)."""
        time_limit = self.options.time_limit
        self.remote.set_budgets(timeshare.shares((m["exercise"] for m in self.meta.values()), time_limit), time_limit)
        # and a hard wall-clock deadline for the whole submission: every child started for it (its
        # siblings: the hybrid, the trusted trainer; the probes and pictures after the tests) stops there
        self.remote.deadline = time.monotonic() + time_limit
        # the zygote imports what optimizers need (~1.3 s, once per zygote) before forking this run's
        # children only when a test trains, runs an optimizer or is served components (the served
        # calls' operator imports the same torch._dynamo on its first differentiable call: 1-4 s
        # inside a student's request otherwise); then the first child starts
        served = self.remote.server is not None and any(self.served(item) for item in items)
        self.remote.limits.preload_training = served or any(item.get_closest_marker("training") or
                                                            item.get_closest_marker("optimizer") for item in items)
        self.remote.start()
        if served:
            self.remote.server.start()   # its start overlaps the first tests
        if {"public", "hidden"} <= {m["visibility"] for m in self.meta.values()}:
            self.remote.prepare_spare()  # the hidden tests' child starts while the public tests run

    def served(self, item) -> tuple[str, ...]:
        """The components ``item``'s code gets as the reference's (:mod:`autograder.sandbox.served`):
        a composite's components, for each of its tests but the one marked ``integration`` (which
        runs the student's own); none for other exercises, or where the kit has no reference."""
        exercise = self.meta.get(item.nodeid, {}).get("exercise")
        if self.remote.server is None or exercise not in exercises.BY_NAME or item.get_closest_marker("integration"):
            return ()
        return exercises.get(exercise).depends

    def finish(self, interrupted: bool = False) -> None:
        """End the run: the pictures' data (unless ``interrupted``), the children stopped, the
        results built (:attr:`results`)."""
        self.run.close()
        probed = {}
        if self._phase == "hidden" and not interrupted:
            # public evidence for the exercises whose hidden tests failed: the kit's probes, in a
            # fresh child (no hidden input ever reached it); the hidden tests' records are sealed
            # with it (autograder.results.withheld)
            probed = counterexample_run.collect(list(self.records.values()), self.remote, self._fresh_child)
        figures = self._figures
        if figures is None and self.options.pictures and not interrupted and self._phase == "public":
            figures = self._collect_pictures()   # no hidden test ran: the public child, before it closes
        self.remote.close()
        if self.remote.server is not None:
            self.remote.server.close()
        self.results = scoring.build_results(self, self._t0, probed, self._hidden_from)
        if figures is not None:
            pictures.add_to_results(self.results, *figures)
        if getattr(self, "_scope", None) is not None:
            self._scope.close()
        torch.set_num_threads(getattr(self, "_previous_threads", torch.get_num_threads()))

    def _collect_pictures(self) -> tuple[dict, dict]:
        """The pictures' data from the running child (:func:`pictures.collect_from_session`); the
        submission's deadline, which that step narrows to its own, is put back for the tests after it."""
        deadline = self.remote.deadline
        try:
            return pictures.collect_from_session(self.remote, {m["exercise"] for m in self.meta.values()})
        finally:
            self.remote.deadline = deadline

    def _fresh_child(self) -> None:
        """Stop the hidden tests' child and start a fresh one (not the spare: none is kept)."""
        self.remote.close()
        self.remote.start(use_spare=False)

    def abort(self) -> None:
        """After a failure of the grader itself: stop the run's children, leave its language."""
        for step in (self.run.close, self.remote.close, getattr(self.remote.server, "close", lambda: None)):
            with contextlib.suppress(Exception):
                step()
        if getattr(self, "_scope", None) is not None:
            with contextlib.suppress(Exception):
                self._scope.close()
        torch.set_num_threads(getattr(self, "_previous_threads", torch.get_num_threads()))

    # -- hooks -------------------------------------------------------------------
    def pytest_configure(self, config):
        """Registered (by ``pytest.main(plugins=...)`` or later): the fixtures find the session on
        ``config.stash``."""
        config.stash[SESSION_KEY] = self

    def pytest_sessionstart(self, session):
        self.open()

    @pytest.hookimpl(trylast=True)  # after -m/-k deselection: deselected tests are not part of the grade
    def pytest_collection_modifyitems(self, session, config, items):
        twins.add(items)
        self.describe(items)
        public_first(items, self.meta)
        self.prepare(items)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """The test's context on ``item.stash``, the running one for its setup, call and teardown."""
        meta = self.meta.get(item.nodeid, {})
        ctx = context.TestContext(exercise=meta.get("exercise"), nodeid=item.nodeid,
                                  seed=self.test_seed(item.nodeid), visibility=meta.get("visibility"),
                                  run=self.run, served=self.served(item), twin=meta.get("twin_of") is not None)
        item.stash[TEST_KEY] = ctx
        with context.running(ctx):
            yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        meta = self.meta.get(item.nodeid, {})
        self.run.graded.add(meta.get("exercise"))
        self.remote.reset(seed=item.stash[TEST_KEY].seed)  # the previous test's handles go too
        if meta.get("visibility") == "hidden" and self._phase == "public":
            if self.options.pictures:   # from the public child: none of its calls saw a hidden input
                self._figures = self._collect_pictures()
            self._phase = "hidden"   # a fresh child: nothing of the public tests' state carries over
            self._hidden_from = time.monotonic()
            self.remote.close(keep_spare=True)
            self.remote.start()
        self.remote.begin_test(meta.get("exercise"), item.stash[TEST_KEY].served)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if item.nodeid not in self.meta:
            return
        if report.when == "call" or (report.failed and item.nodeid not in self.records) or \
                (report.when == "setup" and report.skipped):
            self.records[item.nodeid] = scoring.record_test(self, item, call, report, item.stash[TEST_KEY])

    def pytest_sessionfinish(self, session, exitstatus):
        self.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
