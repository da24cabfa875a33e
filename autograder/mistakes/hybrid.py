"""A composite exercise's own code, run on the reference components: who is to blame for a failure.

A composite (``encoder.py``, ``transformer.py``...) imports the student's components, so its
tests fail when a component is wrong even if the composite's own file is right (three students
of the sample class handed in the full-marks ``transformer.py`` byte for byte, yet were told
Transformer mistakes). :func:`blame` decides, from the composite's test itself and without
depending on which exercises this run grades: the same ``run`` is repeated on a *hybrid*, a
sandboxed child serving a folder that holds the student's ``<exercise>.py`` (and any helper
module of theirs that is not an exercise) beside the reference solutions of every exercise. If
the hybrid gives the reference's output, the composite's own code is right on this input and the
failure comes from its components; otherwise the composite's code is wrong by itself, and the
hybrid's output is what it computes with correct components.

Hybrids are started on first need, one per composite exercise and submission, and closed with
:meth:`Hybrids.close` at the end of the run. Only trusted files (``solutions/``) and the
student's own files go into the folder; the student's code runs only in the hybrid's child.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autograder import exercises, paths
from autograder.mistakes import implementations
from autograder.rng import cpu_seeded
from autograder.sandbox import copy_submission
from autograder.sandbox.remote import RemoteImpl

OWN = "own"                # the composite's own code differs from the reference's on this input
COMPONENTS = "components"  # the composite's own code gives the reference's output: a component is wrong
UNKNOWN = "unknown"        # the hybrid could not be run (its file missing, or it raised)
NOT_GIVEN = object()  # an argument not given (None is a value)


@dataclass
class Verdict:
    """What :func:`blame` found: ``who`` (OWN, COMPONENTS or UNKNOWN); for OWN, ``output``, the
    composite's output on the reference components; for COMPONENTS, ``components``, the
    student's components that alone (with the composite's file, on the reference otherwise)
    change the output (empty when only their combination does)."""

    who: str
    output: Any = None
    components: tuple[str, ...] = ()


class Hybrids:
    """The hybrid children of one submission, started on demand: one per set of the student's
    files kept (the composite's, or the composite's and one component's); the reference's
    files stand in for every other exercise."""

    def __init__(self):
        self._impls: dict[tuple[str, ...], Any] = {}
        self._folders: list[Path] = []
        self.culprits: dict[str, tuple[str, ...]] = {}  # per composite: the last culprits found (see blame)

    def get(self, student, keep: tuple[str, ...]):
        """The hybrid RemoteImpl keeping the student's modules ``keep`` (exercise names) of
        ``student`` (a RemoteImpl), or None when one of them is missing from the submission or
        the kit has no reference solutions."""
        keep = tuple(sorted(keep))
        if keep not in self._impls:
            self._impls[keep] = self._start(student, keep)
        return self._impls[keep]

    def _start(self, student, keep: tuple[str, ...]):
        solutions = paths.solutions_dir()
        if solutions is None or not all((Path(student.submission) / f"{name}.py").is_file() for name in keep):
            return None
        scratch = Path(tempfile.mkdtemp(prefix="tkit-hybrid-"))
        self._folders.append(scratch)
        folder = scratch / "submission"
        copy_submission(Path(student.submission), folder)   # the sandbox's own rules: no symlinks, size cap
        for name in exercises.NAMES:   # every exercise not kept: the reference's file
            if name not in keep and (solutions / f"{name}.py").is_file():
                shutil.copyfile(solutions / f"{name}.py", folder / f"{name}.py")
        return RemoteImpl(folder, student.limits, label=" + ".join(f"{name}.py" for name in keep))

    def close(self) -> None:
        """Stop every hybrid child and delete their folders."""
        for impl in self._impls.values():
            if impl is not None:
                impl.close()
        self._impls.clear()
        for folder in self._folders:
            shutil.rmtree(folder, ignore_errors=True)
        self._folders.clear()


def blame(hybrids: Hybrids, student, exercise: str, run: Callable, seed: int, compare: Callable,
          got: Any = NOT_GIVEN, expected: Any = NOT_GIVEN) -> Verdict:
    """Run ``run`` on the hybrid keeping the student's ``exercise`` file (seeded with ``seed``,
    like the student's run) and compare it (``compare(got, expected)`` raises AssertionError on a
    difference, with the test's tolerances) with the reference's output under
    ``torch.manual_seed(seed)`` (:func:`autograder.rng.cpu_seeded`). When they agree, each component of ``exercise`` the student
    handed in is tried the same way beside the composite's file, to name the culprits.

    The search is bounded for a student wrong in many tests: with ``got`` (the student's own
    output), the culprits an earlier test of ``exercise`` found are tried first, all together
    beside the composite's file; when that hybrid gives ``got``, they explain this output too and
    the one-by-one search is skipped (one run instead of one per component). ``expected``: the
    reference's output when the caller has it already. Never raises: a hybrid that raises or
    dies gives UNKNOWN."""
    if expected is NOT_GIVEN:
        try:
            with cpu_seeded(seed):
                expected = run(implementations.reference())
        except Exception:
            return Verdict(UNKNOWN)
    output = _output(hybrids, student, (exercise,), run, seed)
    if output is _FAILED:
        return Verdict(UNKNOWN)
    if not _agrees(compare, output, expected):
        return Verdict(OWN, output)
    known = hybrids.culprits.get(exercise)
    if known and got is not NOT_GIVEN:
        again = _output(hybrids, student, (exercise, *known), run, seed)
        if again is not _FAILED and _agrees(compare, again, got):
            return Verdict(COMPONENTS, components=known)
    culprits = []
    for name in exercises.get(exercise).depends:
        other = _output(hybrids, student, (exercise, name), run, seed)
        if other is not _FAILED and not _agrees(compare, other, expected):
            culprits.append(name)
    if culprits:
        hybrids.culprits[exercise] = tuple(culprits)
    return Verdict(COMPONENTS, components=tuple(culprits))


_FAILED = object()


def _output(hybrids: Hybrids, student, keep: tuple[str, ...], run: Callable, seed: int):
    """``run`` on the hybrid keeping ``keep``, or ``_FAILED`` (no such hybrid, or it raised)."""
    try:
        impl = hybrids.get(student, keep)
        if impl is None:
            return _FAILED
        impl.reset(seed=seed)
        return run(impl)
    except Exception:
        return _FAILED


def _agrees(compare: Callable, output, expected) -> bool:
    try:
        compare(output, expected)
    except AssertionError:
        return False
    return True
