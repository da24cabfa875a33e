"""Per-exercise shares of one submission's time limit, so a slow exercise never costs another.

The plugin (:mod:`autograder.plugin`) starts an :class:`ExerciseClock` per submission, calls
:meth:`ExerciseClock.start` when a test begins and :meth:`ExerciseClock.stop` when it ends.
Each exercise may spend ``time_limit * points / graded points`` seconds in its own tests (its
points from :mod:`autograder.exercises`); the shares add up to ``time_limit``, so the time
spent in tests is bounded by it whatever a submission does, and an endless loop in one
exercise leaves the others their full share.
"""

from __future__ import annotations

import time

from autograder import exercises
from autograder.i18n import _


class ExerciseClock:
    """Time used per exercise against its share of ``time_limit`` (seconds)."""

    def __init__(self, time_limit: float):
        self.time_limit = float(time_limit)
        self.graded: set[str] = set()
        self.used: dict[str, float] = {}
        self._running: tuple[str, float] | None = None

    def plan(self, names) -> None:
        """The exercises graded in this run (unknown names are ignored)."""
        self.graded = {name for name in names if name in exercises.BY_NAME}

    def share(self, exercise: str) -> float:
        """Seconds the tests of ``exercise`` may take in all (ValueError for an unknown name)."""
        total = sum(exercises.get(name).points for name in self.graded | {exercise})
        return self.time_limit * exercises.get(exercise).points / total

    def start(self, exercise: str) -> tuple[float, str]:
        """A test of ``exercise`` starts now: returns its deadline (``time.monotonic()``) and the
        student-facing sentence for a test stopped by it."""
        now = time.monotonic()
        self._running = (exercise, now)
        share = self.share(exercise)
        text = _("the time limit for {exercise} ({seconds:g} s of the submission's {total:g} s) was reached").format(
            exercise=exercise, seconds=round(share, 1), total=self.time_limit)
        return now + share - self.used.get(exercise, 0.0), text

    def stop(self) -> None:
        """The running test ended: charge its time to its exercise."""
        if self._running is not None:
            exercise, began = self._running
            self.used[exercise] = self.used.get(exercise, 0.0) + time.monotonic() - began
            self._running = None
