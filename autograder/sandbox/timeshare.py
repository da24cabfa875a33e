"""Per-exercise shares of one submission's time limit, so a slow exercise never costs another.

Each exercise may keep the submission's child busy for ``time_limit * points / graded points``
seconds in all, over its own tests (its points from :mod:`autograder.exercises`); the shares add
up to ``time_limit``. :class:`autograder.sandbox.remote.RemoteImpl` counts the time each exercise's
requests take (student code running, or a child that stopped answering) and bounds every
request by what is left of the share, so an endless loop in one exercise leaves the others
their full share. The grader's own work in the parent (the reference, naming a mistake) is not
charged to the student.
"""

from __future__ import annotations

from autograder import exercises
from autograder.i18n import _

# Seconds one submission's child may take in all by default: the smallest round figure whose
# shares still hold the training calls' own limits (autograder.checks.transformer_training and
# .training: the Transformer's 180 s within its 14 % share = 182 s; the AutoEncoder's 120 s within its
# 12 % = 156 s).
DEFAULT_TIME_LIMIT = 1300.0


def shares(names, time_limit: float) -> dict[str, float]:
    """``{exercise: seconds}`` for the known exercises among ``names`` (unknown ones are left
    out); the values add up to ``time_limit``."""
    graded = sorted({name for name in names if name in exercises.BY_NAME})
    total = sum(exercises.get(name).points for name in graded)
    return {name: float(time_limit) * exercises.get(name).points / total for name in graded} if total else {}


def limit_text(exercise: str, share: float, time_limit: float) -> str:
    """The student-facing sentence for a request stopped because ``exercise`` used its share."""
    return _("the time limit for {exercise} ({seconds:g} s of the submission's {total:g} s) was reached").format(
        exercise=exercise, seconds=round(share, 1), total=time_limit)
