"""The running test and what the run has learnt so far (:data:`CURRENT`), set by the plugin.

Read by the comparison helpers (:mod:`autograder.comparison`: public tests show expected
values) and by :func:`autograder.testing.identify`; importable from :mod:`autograder.testing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.hybrid import Hybrids


@dataclass
class TestContext:
    """What the running test is, and what the run has learnt so far: set by the plugin.

    ``student`` is the submission (a RemoteImpl) whose composites :func:`identify` may re-run on
    the reference components (``hybrids``); ``graded`` holds the exercises that have run tests in
    this run and ``named`` the catalog mistakes named per exercise (read by reports and the
    training tests, never by :func:`identify`, whose answer must not depend on what else the run
    grades); ``blamed`` maps a failing composite test's id to ``(exercise, culprits)`` when the composite's
    own code gave the expected result on the reference components (its components are to blame;
    ``culprits`` those that alone change its output).
    """

    exercise: str | None = None
    nodeid: str = ""
    seed: int = 0
    student: Any = None
    visibility: str | None = None  # the running test's (``public`` or ``hidden``)
    run_seed: int = 0  # the run's seed (``--tkit-seed``); the training checks draw from it
    graded: set = field(default_factory=set)
    named: dict = field(default_factory=dict)
    blamed: dict = field(default_factory=dict)
    hybrids: Any = None

    def start_run(self) -> None:
        """Forget what an earlier run learnt (a new submission)."""
        self.end_run()
        self.graded, self.named, self.blamed = set(), {}, {}
        self.hybrids = Hybrids()

    def end_run(self) -> None:
        """Stop the run's hybrid children (see :mod:`autograder.hybrid`)."""
        if self.hybrids is not None:
            self.hybrids.close()
        self.hybrids = None
        self.student = None


CURRENT = TestContext()
