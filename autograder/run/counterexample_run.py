"""Public evidence for hidden failures: the kit's probes, run after the hidden tests.

A hidden test shows a student nothing of its own computation (:mod:`autograder.results.withheld`);
what it can show is public evidence of its exercise. This step computes the probes' part: for
every exercise that has a failed hidden test (the statuses are what a student sees anyway) and
kit-fixed probes (:data:`autograder.checks.probes.PROBES`), every probe of that exercise is run on
the submission in a **fresh child** started after the hidden tests (it never received a hidden
input), compared here with the reference's value, and, where it differs, the catalog mistake
that reproduces the student's value on that probe is looked for (:func:`reproducing`: the
exercise's own mutants and its components', then pairs of its own, at the probes' tolerance); a
composite's probes run over the reference's components, as its tests did (:mod:`autograder.sandbox.served`).
Each differing probe gives ``{"what", "line", "mistake" (or None), "convention"}``.

Which probes run, and what is shown, depends on the statuses and the probes' own values only:
never on which mistake a hidden test named, nor on any hidden input, output or value. No example
when the submission agrees with the reference on every probe, raises on one, or the step runs
out of time. Never fails the grading.
"""

from __future__ import annotations

import time
from functools import lru_cache

from autograder import exercises
from autograder.results import not_graded
from autograder.results.model import TestResult

STEP_TIMEOUT = 20.0   # seconds all probes of one submission may take together
MAX_LINE = 400


def to_probe(records: list[TestResult]) -> list[str]:
    """The exercises (in exercise order) with a graded, failed hidden test and probes of their own."""
    from autograder.checks import probes

    failed = {t.exercise for t in records if t.hidden and not t.passed and not not_graded.reason(t)}
    return [name for name in exercises.NAMES if name in failed and probes.of_exercise(name)]


def served_for(tests: list[TestResult]) -> tuple[str, ...]:
    """The components the hidden tests ``tests`` (of one exercise) ran over as the reference's."""
    return tuple(sorted({name for test in tests for name in (test.served or ())}))


def line_for(probe, got) -> str | None:
    """The first line of the comparison of ``got`` (the student's output on ``probe``) with the
    reference's, with the expected value at the first difference; None when they agree."""
    from autograder.checks import probes

    first = probes.first_difference(got, probes.expected(probe), probe.what)
    return (first[:MAX_LINE] + "...") if first and len(first) > MAX_LINE else first or None


@lru_cache(maxsize=None)
def _outputs(probe, pairs: bool) -> tuple:
    """``((mutant, its output on probe), ...)`` for the candidates of the probe's exercise (computed
    once per process on trusted code): its own mutants and its components', or with ``pairs`` the
    pairs of its own (:func:`autograder.mistakes.matching.pair_trials`)."""
    from autograder.mistakes import catalog, matching

    own = catalog.for_exercises([probe.exercise])
    if pairs:
        candidates = [pair for pair, _parts in matching.pair_trials(own)]
    else:
        candidates = own + catalog.for_exercises(exercises.get(probe.exercise).depends)
    out = []
    for mutant in candidates:
        try:
            out.append((mutant, probe.run(mutant.impl())))
        except Exception:  # noqa: BLE001 - a mutant that raises on this probe, or a pair that cannot be built
            continue
    return tuple(out)


def reproducing(probe, got):
    """The catalog mutant (or pair) whose output on ``probe`` matches ``got``, the student's, at the
    probes' tolerance (:func:`autograder.mistakes.matching.closest`); None when none does."""
    from autograder.checks import probes
    from autograder.mistakes import matching

    for pairs in (False, True):
        found = matching.closest(got, list(_outputs(probe, pairs)), lambda: probes.expected(probe),
                                 atol=probes.ATOL, rtol=probes.RTOL)
        if found is not None:
            return found
    return None


def collect(records: list[TestResult], remote, restart, timeout: float = STEP_TIMEOUT) -> dict[str, list[dict]]:
    """``{exercise: [example, ...]}`` for the exercises of :func:`to_probe`, computed through
    ``remote`` (the submission's :class:`~autograder.sandbox.remote.RemoteImpl`). ``restart()`` is
    called first and must leave ``remote`` on a fresh child that has received no hidden input.
    Never raises (what was computed until a failure is returned)."""
    from autograder.checks import probes

    todo = to_probe(records)
    found: dict[str, list[dict]] = {}
    if not todo:
        return found
    try:
        restart()
        remote.deadline = min(time.monotonic() + timeout, remote.deadline or float("inf"))   # within the submission's
        for exercise in todo:
            # counts against no exercise's share; a composite's probes run over the reference's
            # components, as its tests did (its own mistake alone)
            remote.begin_test(None, served_for([t for t in records if t.hidden and t.exercise == exercise]))
            for probe in probes.of_exercise(exercise):
                try:
                    remote.reset()
                    got = probe.run(remote)
                    line = line_for(probe, got)
                except Exception:  # noqa: BLE001 - the student's code raised or died: no example
                    continue
                if line:
                    mutant = reproducing(probe, got)
                    found.setdefault(exercise, []).append(
                        {"what": probe.what, "line": line, "mistake": mutant.id if mutant else None,
                         "convention": bool(mutant.convention) if mutant else None})
    except Exception:  # noqa: BLE001 - an explanation step must never fail the grading
        return found
    return found
