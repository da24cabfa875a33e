"""What one grading run is asked to do: :class:`GradingOptions`, validated in one place.

The options travel as one frozen, picklable value from the commands (``tkit grade``, ``tkit
check``, ``tkit nbgrader grade``) through :func:`autograder.run.batch.grade_many` (to the worker
processes) and :func:`autograder.run.grading.grade_submission` to the pytest plugin: the
:class:`autograder.run.plugin.GradingSession` that grades a submission is built with this value
and handed to ``pytest.main`` as a plugin object, so no option travels as a command-line argument.

This module imports no torch or pytest (a command validates its options before grading).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from autograder import exercises, i18n
from autograder.sandbox.timeshare import DEFAULT_TIME_LIMIT

VISIBILITIES = ("public", "hidden")

MAX_SEED = 2**63 - 1         # a seed is stored in the gradebook's INTEGER column

class OptionsError(ValueError):
    """A grading option is invalid; ``field`` names it (e.g. ``"seed"``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class GradingOptions:
    """How to grade one submission (every field has a default: ``GradingOptions()`` grades all
    exercises, public and hidden tests, with a fresh seed).

    Fields:
        visibility: the suites to run, a tuple of ``"public"``/``"hidden"`` (``--public-only``:
            ``("public",)``).
        names: the exercises to grade (``--exercise``), in any order; None or empty = all.
        seed: the run's seed (hidden inputs, training draws); None = a fresh one per submission.
            An int in ``[0, 2**63)``.
        lang: ``"en"``, ``"ko"`` or None (the current language, :mod:`autograder.i18n`).
        training: False leaves out the tests marked ``training``.
        call_timeout: seconds one call into the submission may take (None = the sandbox's).
        time_limit: seconds the whole submission may take (:mod:`autograder.sandbox.timeshare`).
        memory_limit: bytes the child may allocate (None = the sandbox's).
        error_log: the instructor-only log of grader errors (None = stderr).
        files: test files that replace the kit's suites (the kit's own tests); ``visibility``
            and ``names`` then select nothing.
        verbose: show pytest's own output.
        pictures: also collect the data of the report's pictures from the submission's child at
            the end of the run (no points; a failure is a picture problem, never a failed test).

    Raises:
        OptionsError: on construction, for a bad seed, an unknown exercise or visibility, a bad
            language, or a limit that is not positive (:meth:`validate`).
    """

    visibility: tuple[str, ...] = VISIBILITIES
    names: tuple[str, ...] | None = None
    seed: int | None = None
    lang: str | None = None
    training: bool = True
    call_timeout: float | None = None
    time_limit: float = DEFAULT_TIME_LIMIT
    memory_limit: int | None = None
    error_log: Path | None = None
    files: tuple[Path, ...] | None = None
    verbose: bool = False
    pictures: bool = False

    def __post_init__(self):
        set_ = object.__setattr__  # frozen: normalise the sequences to tuples once, here
        set_(self, "visibility", tuple(self.visibility))
        set_(self, "names", tuple(self.names) if self.names else None)
        set_(self, "files", tuple(Path(f) for f in self.files) if self.files is not None else None)
        if self.error_log is not None:
            set_(self, "error_log", Path(self.error_log))
        self.validate()

    def validate(self) -> None:
        """Raise :class:`OptionsError` naming the first invalid field (:data:`CHECKS`)."""
        for name, check in CHECKS.items():
            try:
                check(getattr(self, name))
            except ValueError as exc:
                raise OptionsError(name, str(exc)) from None

    @classmethod
    def of(cls, options: "GradingOptions | Mapping[str, Any] | None" = None, **changes) -> "GradingOptions":
        """``options`` (a GradingOptions, a mapping of its fields, or None = the defaults) with
        ``changes`` applied. Raises TypeError for an unknown field, OptionsError for a bad value."""
        if isinstance(options, GradingOptions):
            return dataclasses.replace(options, **changes) if changes else options
        return cls(**{**dict(options or {}), **changes})

    def replace(self, **changes) -> "GradingOptions":
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    def results_key(self) -> dict:
        """The options that change a submission's results (visibility, exercises, training), as
        the gradebook stores them so that ``--resume`` regrades after they change."""
        return {"visibility": list(self.visibility), "names": list(self.names) if self.names else None,
                "training": self.training}


def check_seed(seed) -> None:
    """None, or a whole number from 0 to 2**63 - 1 (ValueError otherwise)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        raise ValueError(f"the seed must be a whole number from 0 to 2**63 - 1, got {seed!r}")


def check_names(names) -> None:
    """None, or exercise names of :mod:`autograder.exercises` (ValueError naming the valid ones)."""
    for name in names or ():
        exercises.get(name)


def check_visibility(visibility) -> None:
    """Some of ``public``/``hidden``, at least one (ValueError otherwise)."""
    if not visibility or any(v not in VISIBILITIES for v in visibility):
        raise ValueError(f"visibility must be some of {', '.join(VISIBILITIES)}, got {visibility!r}")


def _positive(name: str):
    def check(value) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            raise ValueError(f"{name.replace('_', ' ')} must be a positive number, got {value!r}")
    return check


# field -> its validator (ValueError with a message for a person), used by GradingOptions and the
# commands' options (autograder/commands/options.py) alike
CHECKS = {
    "seed": check_seed,
    "names": check_names,
    "visibility": check_visibility,
    "lang": i18n.check_language,
    "call_timeout": _positive("call_timeout"),
    "time_limit": _positive("time_limit"),
    "memory_limit": _positive("memory_limit"),
}
