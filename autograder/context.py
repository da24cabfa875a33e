"""The running test's context (:func:`current`), kept on pytest's stash by the plugin.

The plugin (:class:`autograder.run.plugin.GradingSession`) keeps one :class:`RunState` per grading
run (on the session, itself on ``config.stash``) and one :class:`TestContext` per test (on
``item.stash``), and marks the latter as the running one for the test's setup, call and
teardown (:func:`running`). Readers (the comparison helpers, :func:`autograder.checks.expectations.identify`,
the training checks) ask :func:`current`. Importable from :mod:`autograder.checks.expectations`.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Iterator


class NoTestRunning(RuntimeError):
    """:func:`current` was asked outside a graded test."""


@dataclass
class RunState:
    """What one grading run (one submission) is and has learnt so far.

    ``seed`` is the run's seed (``GradingOptions.seed``; the training checks draw from it);
    ``student`` the submission (a RemoteImpl) whose composites :func:`autograder.checks.expectations.identify`
    may re-run on the reference components (``hybrids``); ``graded`` holds the exercises that have
    run tests and ``named`` the catalog mistakes named per exercise (read by reports and the
    training tests, never by ``identify``, whose answer must not depend on what else the run
    grades); ``blamed`` maps a failing composite test's id to ``(exercise, culprits)`` when the
    composite's own code gave the expected result on the reference components (its components
    are to blame; ``culprits`` those that alone change its output); ``renamed`` maps a test's id to
    the student's attributes it loaded weights into under other names (``"lut -> embedding"``,
    :func:`autograder.checks.weights.load`), said when that test fails.
    """

    seed: int = 0
    student: Any = None
    graded: set = field(default_factory=set)
    named: dict = field(default_factory=dict)
    blamed: dict = field(default_factory=dict)
    renamed: dict = field(default_factory=dict)
    hybrids: Any = None

    def start(self, student: Any, hybrids: Any) -> None:
        """Begin grading ``student``, with the run's hybrid children ``hybrids`` (a
        :class:`autograder.mistakes.hybrid.Hybrids`, which :meth:`close` stops)."""
        self.student = student
        self.hybrids = hybrids

    def close(self) -> None:
        """Stop the run's hybrid children."""
        if self.hybrids is not None:
            self.hybrids.close()
        self.hybrids = None
        self.student = None


@dataclass
class TestContext:
    """The running test: its ``exercise``, ``nodeid``, ``seed`` (derived from the run's seed and
    the test's id), ``visibility`` (``public`` or ``hidden``), its ``run``, ``served``: the
    components its code gets as the reference's (a composite's test; empty for its integration
    test, other exercises and the student edition: :mod:`autograder.sandbox.served`), and whether
    it is a public test's hidden ``twin`` (:mod:`autograder.run.twins`)."""

    __test__ = False  # not a pytest test class

    exercise: str | None = None
    nodeid: str = ""
    seed: int = 0
    visibility: str | None = None
    run: RunState = field(default_factory=RunState)
    served: tuple = ()
    twin: bool = False


_RUNNING: contextvars.ContextVar[TestContext | None] = contextvars.ContextVar("tkit_test", default=None)


def current(required: bool = True) -> TestContext | None:
    """The running test's context. Outside a graded test: None when not ``required``, else
    :class:`NoTestRunning`."""
    ctx = _RUNNING.get()
    if ctx is None and required:
        raise NoTestRunning("no graded test is running: this helper reads the running test's context, "
                            "which the grading plugin sets (run the suites through autograder.run.grading)")
    return ctx


@contextlib.contextmanager
def running(ctx: TestContext) -> Iterator[TestContext]:
    """Make ``ctx`` the running test's context inside the block (the plugin, per test; a test
    of the kit that calls the helpers directly)."""
    token = _RUNNING.set(ctx)
    try:
        yield ctx
    finally:
        _RUNNING.reset(token)
