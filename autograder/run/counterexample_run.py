"""Hidden failures shown on fresh public inputs: the run step after the hidden tests.

A hidden test that failed naming catalog mistake M shows the same mistake on public inputs.
When a public test of the grading also named M, the reports link to it
(:mod:`autograder.reports.counterexamples`). When none did, this step computes one: the probe
the kit fixed for M (:func:`autograder.checks.probes.for_mistake`, chosen from M and the
reference alone), run on the submission in a **fresh child** started after the hidden tests
(it never received a hidden input, as the public tests' child), compared by the comparison code
here with the reference's value. The failed comparison's first line (the call, where it
differs, the student's value and the expected one) becomes the hidden test's ``counterexample``
``{"what", "line", "mistake"}`` and a line of its ``output`` (Gradescope shows a hidden test's
output after publishing); the reports show it beside the mistake's name and hint.

Nothing here reads a hidden test's inputs, output or values: which mistakes are wanted comes
from the hidden tests' ``mistake`` (shown to the student already), the inputs are constants of
:mod:`autograder.checks.probes`, and the student's code runs where no hidden input ever was.
No counterexample when the submission agrees with the reference on the probe, raises on it, or
the step runs out of time: the hidden test then looks as before. Never fails the grading.
"""

from __future__ import annotations

import time

from autograder.i18n import _
from autograder.results import not_graded
from autograder.results.model import TestResult

STEP_TIMEOUT = 20.0   # seconds all probes of one submission may take together
MAX_LINE = 400


def wanted(records: list[TestResult]) -> dict[str, list[TestResult]]:
    """``{mistake id: [hidden failures naming it]}`` for the mistakes no graded public test of
    this grading named (those get the public test's own line instead)."""
    public = {t.mistake for t in records if not t.hidden and not t.passed and t.mistake and not not_graded.reason(t)}
    out: dict[str, list[TestResult]] = {}
    for test in records:
        if test.hidden and not test.passed and test.mistake and not not_graded.reason(test) \
                and test.mistake not in public:
            out.setdefault(test.mistake, []).append(test)
    return out


def served_for(tests: list[TestResult]) -> tuple[str, ...]:
    """The components the hidden failures ``tests`` (of one mistake) ran over as the reference's."""
    return tuple(sorted({name for test in tests for name in (test.served or ())}))


def line_for(probe, got) -> str | None:
    """The first line of the comparison of ``got`` (the student's output on ``probe``) with the
    reference's, with the expected value at the first difference; None when they agree."""
    from autograder.checks import probes

    first = probes.first_difference(got, probes.expected(probe), probe.what)
    return (first[:MAX_LINE] + "...") if first and len(first) > MAX_LINE else first or None


def add(records: list[TestResult], remote, restart, timeout: float = STEP_TIMEOUT) -> int:
    """Compute and attach the counterexamples of :func:`wanted` through ``remote`` (the
    submission's :class:`~autograder.sandbox.remote.RemoteImpl`). ``restart()`` is called first
    and must leave ``remote`` on a fresh child that has received no hidden input. Returns how
    many hidden tests got one. Never raises."""
    from autograder.checks import probes

    todo = wanted(records)
    plans = [(mistake, tests, probes.for_mistake(mistake)) for mistake, tests in todo.items()]
    plans = [(m, tests, probe) for m, tests, probe in plans if probe is not None]
    if not plans:
        return 0
    added = 0
    try:
        restart()
        remote.deadline = min(time.monotonic() + timeout, remote.deadline or float("inf"))   # within the submission's
        for mistake, tests, probe in plans:
            try:
                # counts against no exercise's share; a composite's probe runs over the reference's
                # components, as its tests did (its own mistake alone)
                remote.begin_test(None, served_for(tests))
                remote.reset()
                got = probe.run(remote)
                line = line_for(probe, got)
            except Exception:  # noqa: BLE001 - the student's code raised or died: no counterexample
                continue
            if not line:
                continue
            example = {"what": probe.what, "line": line, "mistake": mistake}
            for test in tests:
                test.counterexample = dict(example)
                test.output = ((test.output or "").rstrip("\n") + "\n" +
                               _("The same mistake on a public input: {line}").format(line=line)).lstrip("\n")
                added += 1
    except Exception:  # noqa: BLE001 - an explanation step must never fail the grading
        return added
    return added
