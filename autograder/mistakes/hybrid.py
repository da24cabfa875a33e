"""A composite exercise's own code, run on the reference components: who is to blame for a failure.

A composite (``encoder.py``, ``transformer.py``...) imports its components. Its tests run the
student's composite file over the *reference* components (served to its child as proxies,
:mod:`autograder.sandbox.served`), so a component's mistake costs nothing there; its one
``integration`` test runs it over the student's own components. When that test fails,
:func:`blame` decides, from the test itself and without depending on which exercises this run
grades: the same ``run`` is repeated on a *hybrid*, the student's composite file with the
reference components served. If the hybrid gives the reference's output, the composite's own
code is right on this input and the failure comes from its components (each is tried for its
own effect, :func:`culprits`, to name them); otherwise the composite's
code is wrong by itself, and the hybrid's output is what it computes with correct components.

The hybrid runs in one more child of the submission, started on first need
(:meth:`autograder.sandbox.remote.RemoteImpl.sibling`: its deaths and time count with the
submission's, against the running exercise's share), switched between sets of served components
by ``begin_test``, and closed with :meth:`Hybrids.close` at the end of the run. No reference
file is ever in that child: its reference components are computed by the component server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from autograder import exercises
from autograder.mistakes import implementations
from autograder.rng import cpu_seeded

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
    """The hybrid child of one submission, started on demand and switched per set of the student's
    files kept (the composite's, or the composite's and some components'): every other component
    of the composite is the reference's."""

    def __init__(self):
        self._impl = None

    def get(self, student, keep: tuple[str, ...]):
        """The hybrid RemoteImpl keeping the student's modules ``keep`` (exercise names, the
        composite first) of ``student`` (a RemoteImpl), or None when one of them is missing from
        the submission or no component server serves the reference."""
        if getattr(student, "server", None) is None or not all(student.has(name) for name in keep):
            return None
        if self._impl is None:
            self._impl = student.sibling()
            self._impl.label = " + ".join(f"{name}.py" for name in keep)
        composite = keep[0]
        self._impl.begin_test(composite, tuple(d for d in exercises.get(composite).depends if d not in keep))
        return self._impl

    def close(self) -> None:
        """Stop the hybrid child."""
        if self._impl is not None:
            self._impl.close()
        self._impl = None


def blame(hybrids: Hybrids, student, exercise: str, run: Callable, seed: int, compare: Callable,
          expected: Any = NOT_GIVEN) -> Verdict:
    """Run ``run`` on the hybrid keeping the student's ``exercise`` file (seeded with ``seed``,
    like the student's run) and compare it (``compare(got, expected)`` raises AssertionError on a
    difference, with the test's tolerances) with the reference's output under
    ``torch.manual_seed(seed)`` (:func:`autograder.rng.cpu_seeded`). When they agree, each component
    of ``exercise`` is tried for its own effect (:func:`culprits`). ``expected``: the reference's
    output when the caller has it already. Never raises: a hybrid that raises or dies gives UNKNOWN."""
    if expected is NOT_GIVEN:
        try:
            with cpu_seeded(seed):
                expected = run(implementations.reference())
        except Exception:
            return Verdict(UNKNOWN)
    outputs = {}
    output = _kept(outputs, hybrids, student, (exercise,), run, seed)
    if output is _FAILED:
        return Verdict(UNKNOWN)
    if not _agrees(compare, output, expected):
        return Verdict(OWN, output)
    return Verdict(COMPONENTS, components=culprits(
        exercise, lambda keep: _kept(outputs, hybrids, student, keep, run, seed), compare))


def culprits(exercise: str, output: Callable, compare: Callable) -> tuple[str, ...]:
    """The components of ``exercise`` whose student file changes its output by itself.

    A served component computes with the reference inside (its own components too), so the
    student's file of component ``c`` runs only when the files that import it are the student's as
    well: ``users``, the components of ``exercise`` whose own components include ``c``. ``c`` is a
    culprit when ``output(keep)`` (the composite over the student's files ``keep`` and the
    reference's others) differs between ``keep`` = the composite, ``users`` and ``c`` and the same
    without ``c``: the difference is ``c``'s alone, whatever the users' own mistakes (a wrong
    ``multi_head_attention.py`` is not blamed on a right ``attention.py``, nor the reverse)."""
    depends = exercises.get(exercise).depends
    found = []
    for name in depends:
        users = tuple(sorted(d for d in depends if name in exercises.get(d).depends))
        without = output((exercise, *users))
        if without is _FAILED:
            continue
        with_it = output((exercise, *sorted((*users, name))))
        if with_it is _FAILED or not _agrees(compare, with_it, without):
            found.append(name)
    return tuple(found)


def _kept(outputs: dict, hybrids: Hybrids, student, keep: tuple[str, ...], run: Callable, seed: int):
    """:func:`_output` of ``keep``, once per blame (``outputs`` keeps them)."""
    if keep not in outputs:
        outputs[keep] = _output(hybrids, student, keep, run, seed)
    return outputs[keep]


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
