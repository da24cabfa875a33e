"""Helpers for writing the suites: compare a submission's outputs, name the mistake.

A test describes its computation once, as ``run(impl)``, and the helpers apply it
to the student (:class:`autograder.sandbox.remote.RemoteImpl`, in the child), to the
reference and to the mutants (:class:`autograder.mistakes.implementations.LocalImpl`, here)::

    def run(impl):
        return impl.positional_encoding.sinusoidal_table(50, 16)

    check(run, student, expected=formula_table(50, 16), what="sinusoidal_table(50, 16)")

The checks are :func:`check`, :func:`expect_same`, :func:`expect_property` and
:func:`expect_raises`; on a mismatch the first three name the mistake through
:func:`naming_mistakes`. The comparison itself (:func:`compare`, :func:`distance`,
:class:`Mismatch`) lives in :mod:`autograder.mistakes.comparison` and the running test (:func:`current`) in
:mod:`autograder.context`; both are importable from here, the one module a suite imports for its
checks. The whole suite-author API is one page: :mod:`autograder.checks`.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any, Callable, Iterator

from autograder import exercises, memo
from autograder.mistakes import diagnosis, hybrid, matching
from autograder.mistakes import implementations as kit_variants  # not the ``variants`` argument of check()
from autograder.checks.contract_errors import message_problem
from autograder.context import TestContext, current  # noqa: F401
from autograder.i18n import _
from autograder.mistakes.comparison import PLAIN_TENSOR_TYPES, Mismatch, compare, describe_type, distance  # noqa: F401
from autograder.rng import cpu_seeded
from autograder.sandbox.remote import SubmissionError

try:  # instructor-only: the student edition ships no mistake catalog
    from autograder.mistakes import catalog
except ImportError:
    catalog = None

MAX_CANDIDATES = 400  # mutants one failing test may try (a count, never a clock: see identify)


def identify(run: Callable, got: Any, *, atol: float, rtol: float, valid=None,
             exercise: str | None = None, expected: Any = hybrid.NOT_GIVEN) -> catalog.Mutant | None:
    """The catalog mutant whose output on the same input matches ``got`` best, or None.

    For an exercise without components, the candidates are its own mutants. For a composite,
    the answer must neither name a mistake on a correct composite file nor depend on what else
    the run grades: :func:`autograder.mistakes.hybrid.blame` re-runs ``run`` with the student's composite
    on the reference components. When that still differs from the reference, the composite's
    own mutants are matched against that output (its own mistake, whatever its components do);
    otherwise (or when the hybrid cannot run) only the components' mutants are candidates,
    matched against ``got`` (the mistake is a component's): those of the components that alone
    change the composite's output when the composite's own code was right (the test is then
    recorded in the run's ``blamed`` with them), else those of every component. Outside a grading
    run (no submission folder in the run's ``student``) all of them are candidates. At most
    ``MAX_CANDIDATES`` candidates are tried, in catalog order (no clock: the same submission and seed name the same mistake on
    an idle or a loaded machine). A candidate matches when :func:`compare` would accept the
    output against its own; candidates that raise are skipped. When no single mutant of the
    exercise's own matches, two of them together are tried (:func:`_own_mistake`). None in the
    student edition. ``expected``: ``run`` on the reference under the test's seed, when the
    caller computed it (the hybrid search then does not run it again).
    """
    ctx = current(required=False) or TestContext()
    exercise = exercise or ctx.exercise
    if exercise is None or catalog is None:
        return None
    own = catalog.for_exercises([exercise])
    depends = exercises.get(exercise).depends
    if not depends:
        return _own_mistake(run, got, own, atol, rtol, valid)
    if not hasattr(ctx.run.student, "submission") or ctx.run.hybrids is None:   # no submission folder to re-run
        return _closest(run, got, own + catalog.for_exercises(depends), atol, rtol, valid)
    verdict = _blame(run, got, expected, exercise, atol, rtol, valid)
    if verdict.who == hybrid.OWN:
        return _own_mistake(run, verdict.output, own, atol, rtol, valid)
    if verdict.who == hybrid.COMPONENTS and ctx.nodeid:
        ctx.run.blamed[ctx.nodeid] = (exercise, verdict.components)
    return _closest(run, got, catalog.for_exercises(verdict.components or depends), atol, rtol, valid)


def _own_mistake(run, got, own, atol, rtol, valid):
    """One of the exercise's own mutants, else two of them together
    (:func:`autograder.mistakes.matching.pair_trials`, named ``"a+b"``), matching ``got``; or None."""
    return (_closest(run, got, own, atol, rtol, valid)
            or _closest(run, got, [pair for pair, _ in matching.pair_trials(own)], atol, rtol, valid))


def _blame(run, got, expected, exercise, atol, rtol, valid) -> "hybrid.Verdict":
    """Whether the composite's own code is wrong on this input (see :mod:`autograder.mistakes.hybrid`)."""
    def same(output, expected):
        compare(output, expected, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=False, equal_nan=True)

    ctx = current()
    return hybrid.blame(ctx.run.hybrids, ctx.run.student, exercise, run, ctx.seed, same, got=got, expected=expected)


def _test_seed() -> int:
    """The running test's seed (0 outside a graded test)."""
    ctx = current(required=False)
    return ctx.seed if ctx is not None else 0


_KEY_NOT_GIVEN = object()


def seeded_run(run: Callable, impl, run_key=_KEY_NOT_GIVEN) -> Any:
    """``run(impl)`` for a trusted implementation (the reference, a mutant), with torch's CPU
    generator seeded with the running test's seed: the output every student's test compares
    with. Computed once per process for the same ``run`` content, seed and implementation
    (:func:`autograder.memo.cached`: the inputs in ``run``'s closure are part of the key).
    ``run_key``: :func:`run_digest` of ``run`` (None: not cached), when the caller runs it on
    many implementations."""
    seed = _test_seed()

    def compute():
        with cpu_seeded(seed):
            return run(impl)

    if run_key is _KEY_NOT_GIVEN:
        return memo.cached(compute, "seeded_run", run, seed, impl)
    return compute() if run_key is None else memo.cached(compute, run_key, impl)


def run_digest(run: Callable) -> "memo.Digest | None":
    """The key part :func:`seeded_run` computes for ``run`` under the running test's seed, once
    (None: ``run`` is not cached); fingerprinting a test's inputs costs more than a small run."""
    return memo.digest("seeded_run", run, _test_seed())


def _closest(run, got, candidates, atol, rtol, valid) -> catalog.Mutant | None:
    """Of the first ``MAX_CANDIDATES`` mutants of ``candidates``, the one whose output matches
    ``got`` most closely (the first on ties), or None."""
    best, best_dist = None, math.inf
    run_key = run_digest(run)
    for mutant in candidates[:MAX_CANDIDATES]:
        try:
            out = seeded_run(run, mutant.impl(), run_key)
            compare(got, out, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=False, equal_nan=True)
        except Exception:
            continue
        dist = distance(got, out, valid)
        if dist < best_dist or best is None:
            best, best_dist = mutant, dist
    return best


def check(run: Callable, student, expected: Any = None, *, what: str, reference=None,
          atol: float = 1e-5, rtol: float = 1e-4, valid=None, check_dtype: bool = True,
          variants=None) -> Any:
    """Run ``run(student)`` and compare it with ``expected``; returns the student's output.

    ``expected`` is a value (a tensor, a number, a tuple of them...), or None for
    ``run(reference)`` (default: the reference solutions), or a function of the student's output
    giving the value it must equal (a property of the student's own output, e.g.
    ``lambda got: (got[0], got[0])`` for two outputs that must agree). On a mismatch the raised
    :class:`Mismatch` names the mistake (:func:`naming_mistakes`; ``variants`` as there).
    A public test's message shows the expected value at the first difference.
    """
    got = run(student)
    of_reference = hybrid.NOT_GIVEN  # the kit's reference output, for the mistake search
    if expected is None:
        kit_reference = reference is None
        expected = seeded_run(run, kit_variants.reference() if kit_reference else reference)
        if kit_reference:
            of_reference = expected
    elif callable(expected):
        expected = expected(got)
    with naming_mistakes(run, got, atol=atol, rtol=rtol, valid=valid, variants=variants, expected=of_reference):
        compare(got, expected, what=what, atol=atol, rtol=rtol, valid=valid, check_dtype=check_dtype)
    return got


@contextlib.contextmanager
def naming_mistakes(run: Callable, got: Any, *, atol: float = 1e-5, rtol: float = 1e-4, valid=None,
                    variants=None, expected: Any = hybrid.NOT_GIVEN) -> Iterator[None]:
    """Give a :class:`Mismatch` raised in the block (that names no mistake yet) the mistake that
    explains ``got``, the student's output of ``run``: the catalog mutant whose ``run`` reproduces
    it (:func:`identify`), else the :mod:`autograder.mistakes.diagnosis` mistake among ``variants``
    (``{mistake id: callable giving that mistake's output}``, built from the public formulas by
    :mod:`autograder.checks.mistaken`), which names mistakes in the student edition too.
    ``expected``: the kit's reference output of ``run`` under the test's seed, when the caller
    computed it (the composite search does not run it again).
    The one place a check names mistakes; other exceptions pass through unchanged."""
    try:
        yield
    except Mismatch as exc:
        if exc.mistake is None:
            exc.mistake = identify(run, got, atol=atol, rtol=rtol, valid=valid, expected=expected)
        if exc.mistake is None and variants:
            exc.mistake = diagnosis.name(got, variants, atol=atol, rtol=rtol, valid=valid)
        raise


def expect_property(run: Callable[[Any], Any], student, verify: Callable[[Any], None], *, atol: float = 1e-5,
                    rtol: float = 1e-4, valid=None) -> Any:
    """A property of the submission's own outputs: ``verify(run(student))`` raises
    :class:`Mismatch` when the property fails (e.g. dropout that changes nothing in training
    mode), and the mistake is then named as by :func:`check`. ``run`` must build everything it
    uses (modules included) so that a mutant's run draws the same random numbers.
    Returns the outputs."""
    got = run(student)
    with naming_mistakes(run, got, atol=atol, rtol=rtol, valid=valid):
        verify(got)
    return got


def expect_same(run: Callable[[Any], tuple[Any, Any]], student, *, what: str, atol: float = 1e-5,
                rtol: float = 1e-4, valid=None) -> tuple[Any, Any]:
    """:func:`expect_property` for ``run(impl) -> (before, after)``, two outputs of the submission
    that must agree (e.g. logits before and after changing later tokens); ``valid`` restricts
    the comparison to some positions. Returns ``(before, after)``."""
    def verify(got):
        compare(got[1], got[0], what=what, atol=atol, rtol=rtol, valid=valid)

    return expect_property(run, student, verify, atol=atol, rtol=rtol,
                           valid=(valid, valid) if valid is not None else None)


def expect_raises(call: Callable[[], Any], error: str | tuple[str, ...] = "ValueError", *, what: str,
                  names: tuple[str, ...] = (), values: tuple = (), match: str | None = None) -> str:
    """Assert that ``call()`` (usually a student call) raises ``error`` (an exception class
    name, or a tuple of names any of which will do); returns its message.

    The contract asks only that a bad argument's message name the argument and the values:
    with ``names`` (the argument's names and its dimension's names, e.g. ``("d_k", "query",
    "key")``) and ``values`` (the offending values, e.g. ``(4, 6)``), any message that
    contains one of ``names`` and every one of ``values`` passes (see :func:`message_problem`),
    whatever its wording. ``match`` (a regular expression) is for a message the contract
    words itself; contract errors use ``names``/``values``.

    From the child the exception arrives as a SubmissionError of kind ``exception``
    (with ``error_type`` and ``error_message``); locally it is the exception itself.
    """
    errors = (error,) if isinstance(error, str) else tuple(error)
    error = " or ".join(errors)
    try:
        call()
    except SubmissionError as exc:
        if exc.kind != "exception":
            raise
        if exc.error_type not in errors:
            raise Mismatch(_("{what} should raise {error}; instead: {message}").format(
                what=what, error=error, message=exc.message.split("\n")[0])) from None
        message = exc.error_message
    except Exception as exc:  # a local (trusted) implementation
        if type(exc).__name__ not in errors:
            raise
        message = str(exc)
    else:
        raise Mismatch(_("{what} should raise {error}, but it returned normally").format(what=what, error=error))
    if names or values:
        problem = message_problem(message, names, values)
        if problem:
            raise Mismatch(_("{what} raised {error}, but its message should name {problem}; got: {message}")
                           .format(what=what, error=error, problem=problem, message=message))
    if match is not None:
        if not re.search(match, message):
            raise Mismatch(_("{what} raised {error}, but its message should mention {match!r}; got: {message}")
                           .format(what=what, error=error, match=match, message=message))
    return message

