"""What each test pays: points follow right values.

Two steps, applied to a submission's test records once every test has run (:func:`apply`, from
:func:`autograder.run.scoring.build_results`):

1. **Twins.** A public test is paid as far as its hidden twin passes (the same test on fresh
   draws of the same kind, :mod:`autograder.run.twins`): its score is multiplied by the twin's
   fraction of points, and when the twin failed the public test is failed too, with a fixed
   sentence (the twin's own output is hidden material and is never read). A twin that the grader
   could not judge ("not graded") leaves the public test as it is. The twins' records go.
2. **Values gate.** Per exercise, ``v`` is the fraction of its ``values`` tests' points earned
   after step 1 (tests not graded left out). Every other test (names, shapes, errors, properties,
   edge cases, conventions: :data:`autograder.run.rubric.KINDS`) is paid ``v`` times what it earned
   (a ``convention`` test compares values too, but the other convention must cost it alone, so it
   does not count in ``v``). A test
   marked ``part(name)`` (``train_autoencoder``, a function graded apart from the model) is gated
   with the other tests of its part only. With no ``values`` test of a part in the run (an
   AutoEncoder graded without its training tests) ``v`` is 1: those tests are then held by their
   own premises (``expect_differs``).

The guarantee: an exercise earns at most ``v`` of its points, so code whose values are wrong
everywhere earns nothing whatever else it gets right, and code right only on the public inputs
earns at most what its twins and the hidden values tests pay. A gated test that passed keeps
its status ("passed") and says what it was paid; the mistake is the failing values tests'.
"""

from __future__ import annotations

from autograder.i18n import _
from autograder.results.model import TestResult
from autograder.run import rubric

TWIN_OF = "twin_of"   # key of a twin record's ``other``: the public test's node id
PART = "part"         # key of a record's ``other``: the part of its exercise it grades (absent: the whole)


def apply(tests: list[TestResult]) -> list[TestResult]:
    """The records as paid: twins folded into their public tests (and left out), then the gated
    kinds scaled by their exercise's values fraction (the records are changed in place)."""
    twins = {t.other.get(TWIN_OF): t for t in tests if t.other.get(TWIN_OF)}
    paid = [t for t in tests if not t.other.get(TWIN_OF)]
    for test in paid:
        twin = twins.get(test.nodeid)
        if twin is not None:
            _fold(test, twin)
    fractions = values_fractions(paid)
    for test in paid:
        if test.kind not in (None, rubric.VALUES):
            _gate(test, fractions[part_of(test)])
    return paid


def part_of(test: TestResult) -> tuple[str, str]:
    """``(exercise, part)``: what the test's points are gated with (part '' : the exercise itself)."""
    return test.exercise, str(test.other.get(PART) or "")


def fraction_of(test: TestResult) -> float:
    """The fraction of its points ``test`` earned (0 for a test worth nothing)."""
    return test.score / test.max_score if test.max_score else 0.0


def values_fractions(tests: list[TestResult]) -> dict[tuple[str, str], float]:
    """``{(exercise, part): fraction of its values tests' points earned}`` (1.0 for a part whose run
    holds no graded values test)."""
    earned: dict[tuple[str, str], list[float]] = {}
    for t in tests:
        entry = earned.setdefault(part_of(t), [0.0, 0.0])
        if t.kind == rubric.VALUES and not t.not_graded:
            entry[0] += t.score
            entry[1] += t.max_score
    return {name: (score / total if total else 1.0) for name, (score, total) in earned.items()}


def _fold(test: TestResult, twin: TestResult) -> None:
    if twin.not_graded or test.not_graded or test.score <= 0:
        return
    fraction = fraction_of(twin)
    if fraction >= 1.0:
        return
    test.score = round(test.score * fraction, 4)
    test.status = "failed"
    test.output = _join(test.output, _(
        "Passes on the public inputs above, but grading runs the same check on other inputs of the same kind, "
        "and there it fails: your code is right on these examples only. Points: {score:g} of {max:g}.").format(
        score=test.score, max=test.max_score))


def _gate(test: TestResult, fraction: float) -> None:
    if fraction >= 1.0 or test.score <= 0 or test.not_graded:
        return
    test.score = round(test.score * fraction, 4)
    test.output = _join(test.output, _(
        "Paid {paid:.0%} of what it earned: names, shapes, errors and properties are paid as far as the "
        "exercise's value tests pass, and they earned {paid:.0%} of their points.").format(paid=fraction))


def _join(output: str | None, note: str) -> str:
    return f"{output}\n{note}" if output else note
