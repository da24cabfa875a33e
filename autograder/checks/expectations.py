"""The checks a suite runs: compare a submission's outputs, name the mistake.

A test describes its computation once, as ``run(impl)``, and a check applies it to the student
(:class:`autograder.sandbox.remote.RemoteImpl`, in the child), to the reference and to the
mutants (:class:`autograder.mistakes.implementations.LocalImpl`, here)::

    def run(impl):
        return impl.positional_encoding.sinusoidal_table(50, 16)

    expect_equal(run, student, formulas.sinusoidal_table(50, 16), what="sinusoidal_table(50, 16)")

What the output must equal, one function each: the reference's output (:func:`expect_reference`),
a given value (:func:`expect_equal`), a value computed from the output itself
(:func:`expect_consistent`; :func:`expect_same` and :func:`expect_property` for two outputs that
agree and for a property checked by hand). On a mismatch they name the mistake through
:func:`naming_mistakes`. :func:`expect_raises` checks a contract error. The comparison itself
(:func:`compare`, :func:`distance`, :class:`Mismatch`) lives in :mod:`autograder.mistakes.comparison`
and the running test (:func:`current`) in :mod:`autograder.context`. Suites import all of it from
:mod:`autograder.checks`, the suite-author API (docs/SUITES.md).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch

from autograder import exercises, memo
from autograder.mistakes import diagnosis, hybrid, matching
from autograder.mistakes import implementations
from autograder.checks import forbidden
from autograder.checks.contract_errors import expect_raises  # noqa: F401  (a check of the API, defined there)
from autograder.context import TestContext, current  # noqa: F401
from autograder.i18n import _
from autograder.mistakes.diagnosis import KnownMistakes
from autograder.mistakes.comparison import ATOL, RTOL, Mismatch, compare, distance, signature
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

    For an exercise without components, the candidates are its own mutants; so are they for a
    composite's test that ran the student's composite over the reference components (the running
    test's ``served``, :mod:`autograder.sandbox.served`): its output is the composite's own. For a
    composite's integration test (the student's own components), the answer must neither name a
    mistake on a correct composite file nor depend on what else the run grades:
    :func:`autograder.mistakes.hybrid.blame` re-runs ``run`` with the student's composite
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
    if not depends or ctx.served:
        return _own_mistake(run, got, own, atol, rtol, valid)
    if not hasattr(ctx.run.student, "submission") or ctx.run.hybrids is None:   # no submission folder to re-run
        return _closest(run, got, own + catalog.for_exercises(depends), atol, rtol, valid)
    verdict = _blame(run, expected, exercise, atol, rtol, valid)
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


def _blame(run, expected, exercise, atol, rtol, valid) -> "hybrid.Verdict":
    """Whether the composite's own code is wrong on this input (see :mod:`autograder.mistakes.hybrid`)."""
    def same(output, expected):
        compare(output, expected, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=False, equal_nan=True)

    ctx = current()
    return hybrid.blame(ctx.run.hybrids, ctx.run.student, exercise, run, ctx.seed, same, expected=expected)


def student_output(run: Callable, student) -> Any:
    """``run(student)``. When the student's code raises inside a composite exercise and the
    exception names no mistake itself, the composite's own mistake is looked for as for a wrong
    output: ``run`` on the student's composite file with the reference components
    (:func:`autograder.mistakes.hybrid.blame`); where that differs from the reference, the composite's
    own mutant that reproduces it is named on the exception (a float causal mask built by the
    Transformer crashes the student's bool-only ``combine_masks``, and is the Transformer's mistake).
    Instructor kit only; the exception is re-raised either way, unless the code reached a function the
    contract forbids (:func:`autograder.checks.forbidden.check`), which is then the failure."""
    try:
        return run(student)
    except SubmissionError as exc:
        if exc.kind != "forbidden":
            forbidden.check(student)   # a crash after a forbidden call: the forbidden call is the cause
        if exc.kind == "exception" and exc.mistake is None:
            mutant = _own_mistake_of_crash(run)
            if mutant is not None:
                exc.mistake = mutant.id
        raise


def _own_mistake_of_crash(run) -> "catalog.Mutant | None":
    ctx = current(required=False)
    if catalog is None or ctx is None or ctx.exercise is None or not exercises.get(ctx.exercise).depends \
            or ctx.served:   # over the reference components already: no other output to match
        return None
    if not hasattr(ctx.run.student, "submission") or ctx.run.hybrids is None:
        return None
    try:
        verdict = _blame(run, hybrid.NOT_GIVEN, ctx.exercise, ATOL, RTOL, None)
    except Exception:
        return None
    if verdict.who != hybrid.OWN:
        return None
    return _own_mistake(run, verdict.output, catalog.for_exercises([ctx.exercise]), ATOL, RTOL, None)


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
    """Of the first ``MAX_CANDIDATES`` mutants of ``candidates``, the one whose output matches ``got``
    most closely (:func:`autograder.mistakes.matching.closest`: the student's dtype first), or None."""
    outputs, run_key = [], run_digest(run)
    for mutant in candidates[:MAX_CANDIDATES]:
        try:
            outputs.append((mutant, seeded_run(run, mutant.impl(), run_key)))
        except Exception:
            continue
    return matching.closest(got, outputs, lambda: seeded_run(run, implementations.reference(), run_key),
                            atol=atol, rtol=rtol, valid=valid)


def expect_reference(run: Callable[[Any], Any], student, *, what: str, atol: float = ATOL, rtol: float = RTOL,
                     valid=None, known_mistakes: KnownMistakes | None = None) -> Any:
    """The student's output equals the reference solutions' on the same inputs (hidden tests:
    the student edition has no reference). Returns the student's output.

    Args:
        run: ``run(impl)``, the computation on one implementation (the student's handle, the
            reference, a catalog mutant); it builds everything from ``impl`` and is
            deterministic (inputs and weights made outside it, modules in eval mode). The
            reference's output is computed once per process for the same inputs and seed
            (:func:`seeded_run`, under the test's seed).
        student: the ``student`` fixture.
        what: the call as the student reads it in the message (``"Encoder(2, 8, ...)(x, mask)"``).
        atol, rtol: a value passes within ``atol + rtol * |expected|``.
        valid: bool tensor broadcastable to the output, True where values are compared (e.g.
            :func:`autograder.checks.inputs.valid_positions`); a tuple of them for a tuple of outputs.
        known_mistakes: ``{mistake id: callable}`` (:mod:`autograder.checks.mistaken`), named
            when no catalog mutant explains the output.

    Raises:
        Mismatch: the output differs (type, shape, dtype, NaN/inf or values); its ``mistake`` is
            the catalog mutant that reproduces the output, if one does (:func:`naming_mistakes`).
        SubmissionError: the student's code failed (raised, timed out, returned something
            that cannot come back from the sandbox).
    """
    got = student_output(run, student)
    expected = seeded_run(run, implementations.reference())
    return _expect(run, got, expected, what=what, atol=atol, rtol=rtol, valid=valid,
                   known_mistakes=known_mistakes, reference_output=expected, student=student)


def expect_equal(run: Callable[[Any], Any], student, expected: Any, *, what: str, atol: float = ATOL,
                 rtol: float = RTOL, valid=None, known_mistakes: KnownMistakes | None = None) -> Any:
    """The student's output equals ``expected``, a value the test computed (from
    :mod:`autograder.checks.formulas`, a PyTorch oracle, or written out). Returns the output.

    ``expected`` is a tensor (its dtype and shape are checked: a float32 ``[B, S, D]`` must come
    back as float32 ``[B, S, D]``), a number, a string, None, or a tuple, list or dict of them
    (compared item by item; ``valid`` as a tuple then goes item by item too). Public tests show
    the expected value at the first difference (the formula is public); hidden ones never do.
    Other arguments, and the errors raised, as in :func:`expect_reference`; ``known_mistakes``
    is how a public test names mistakes in the student edition, which has no catalog.

    Raises:
        TypeError: ``expected`` is a function (a property of the output: :func:`expect_consistent`).
    """
    if callable(expected):
        raise TypeError("expect_equal(): expected is a function; use expect_consistent for a property of the output")
    got = student_output(run, student)
    return _expect(run, got, expected, what=what, atol=atol, rtol=rtol, valid=valid, known_mistakes=known_mistakes,
                   student=student)


def expect_consistent(run: Callable[[Any], Any], student, rule: Callable[[Any], Any], *, what: str,
                      atol: float = ATOL, rtol: float = RTOL, valid=None,
                      known_mistakes: KnownMistakes | None = None) -> Any:
    """A property of the student's own output holds: the output equals ``rule(output)``, a value
    computed from it (``lambda got: (got[0], got[0][:, perm])``: the second of two outputs is
    the first one permuted). Returns the output.

    ``rule`` gets exactly what ``run(student)`` returned and returns something of the same
    structure (tensors of the same shapes and dtypes). Other arguments, and the errors raised,
    as in :func:`expect_reference`: a failed property still names the mistake whose ``run``
    reproduces the output. See also :func:`expect_same` and :func:`expect_property`.
    """
    got = student_output(run, student)
    return _expect(run, got, rule(got), what=what, atol=atol, rtol=rtol, valid=valid, known_mistakes=known_mistakes,
                   student=student)


def _expect(run: Callable, got: Any, expected: Any, *, what: str, atol: float, rtol: float, valid,
            known_mistakes: KnownMistakes | None, reference_output: Any = hybrid.NOT_GIVEN, student=None) -> Any:
    """The three checks' core: compare the student's ``got`` with ``expected`` (dtypes checked)
    and name the mistake of a mismatch; returns ``got``. ``reference_output``: ``run`` on the
    kit's reference under the test's seed, when the caller computed it (the mistake search
    does not run it again). A forbidden function the exercise's own code reached fails the test
    whatever the values (:func:`autograder.checks.forbidden.check`), naming what the values show."""
    with _forbidden_checked(student):
        with naming_mistakes(run, got, atol=atol, rtol=rtol, valid=valid, known_mistakes=known_mistakes,
                             reference_output=reference_output):
            compare(got, expected, what=what, atol=atol, rtol=rtol, valid=valid)
    return got


@contextlib.contextmanager
def _forbidden_checked(student) -> Iterator[None]:
    """After the block (a comparison of the student's output), the ``forbidden`` failure where the
    running exercise's own code reached a forbidden function: with the mismatch's named mistake if the
    block raised one, else the api's."""
    try:
        yield
    except Mismatch as exc:
        forbidden.check(student, exc.mistake)
        raise
    forbidden.check(student)


@contextlib.contextmanager
def naming_mistakes(run: Callable, got: Any, *, atol: float = ATOL, rtol: float = RTOL, valid=None,
                    known_mistakes: KnownMistakes | None = None,
                    reference_output: Any = hybrid.NOT_GIVEN) -> Iterator[None]:
    """Give a :class:`Mismatch` raised in the block (that names no mistake yet) the mistake that
    explains ``got``, the student's output of ``run``: the catalog mutant whose ``run`` reproduces
    it (:func:`identify`), else the :mod:`autograder.mistakes.diagnosis` mistake among
    ``known_mistakes`` (``{mistake id: callable giving that mistake's output}``, built from the
    public formulas by :mod:`autograder.checks.mistaken`), which names mistakes in the student
    edition too. ``reference_output``: the kit's reference output of ``run`` under the test's
    seed, when the caller computed it (the composite search does not run it again).
    The one place a check names mistakes; other exceptions pass through unchanged. The
    mismatch also gets the :func:`~autograder.mistakes.comparison.signature` of ``got`` (the
    instructor-side behaviour evidence)."""
    try:
        yield
    except Mismatch as exc:
        if exc.signature is None:
            exc.signature = signature(got, valid)
        if exc.mistake is None:
            exc.mistake = identify(run, got, atol=atol, rtol=rtol, valid=valid, expected=reference_output)
        if exc.mistake is None and known_mistakes:
            exc.mistake = diagnosis.name(got, known_mistakes, atol=atol, rtol=rtol, valid=valid)
        raise


def expect_property(run: Callable[[Any], Any], student, verify: Callable[[Any], None], *, atol: float = ATOL,
                    rtol: float = RTOL, valid=None) -> Any:
    """A property of the submission's own outputs: ``verify(run(student))`` raises
    :class:`Mismatch` when the property fails (e.g. dropout that changes nothing in training
    mode), and the mistake is then named as by :func:`expect_reference`. ``run`` must build everything it
    uses (modules included) so that a mutant's run draws the same random numbers.
    Returns the outputs."""
    got = student_output(run, student)
    with _forbidden_checked(student):
        with naming_mistakes(run, got, atol=atol, rtol=rtol, valid=valid):
            verify(got)
    return got


def expect_same(run: Callable[[Any], tuple[Any, Any]], student, *, what: str, atol: float = ATOL,
                rtol: float = RTOL, valid=None) -> tuple[Any, Any]:
    """:func:`expect_property` for ``run(impl) -> (before, after)``, two outputs of the submission
    that must agree (e.g. logits before and after changing later tokens); ``valid`` restricts
    the comparison to some positions. Returns ``(before, after)``."""
    def verify(got):
        compare(got[1], got[0], what=what, atol=atol, rtol=rtol, valid=valid)

    return expect_property(run, student, verify, atol=atol, rtol=rtol,
                           valid=(valid, valid) if valid is not None else None)


def _leaves(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _agree(before: Any, after: Any, atol: float) -> bool:
    """True when every leaf of ``before`` equals the one of ``after`` (tensors within ``atol``)."""
    a, b = _leaves(before), _leaves(after)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.is_complex() or y.is_complex():
                return False
            if not torch.allclose(x.detach().double(), y.detach().double(), atol=atol, rtol=0):
                return False
        elif x != y:
            return False
    return True


def expect_differs(run: Callable[[Any], tuple[Any, Any]], student, *, what: str, atol: float = 1e-4) -> tuple[Any, Any]:
    """The premise of a property test: ``run(impl) -> (before, after)``, two outputs of the
    submission that must *differ* somewhere by more than ``atol`` (e.g. the logits at the last
    position before and after an *earlier* token changes). Without it, code that ignores its
    context (the keys, the earlier tokens, the source) satisfies causality, padding invariance or
    a batch swap vacuously; a property test calls this first so that it pays only where the code
    uses what the property is about. Returns ``(before, after)``."""
    def verify(got):
        if _agree(got[0], got[1], atol):
            raise Mismatch(_("{what}: nothing changed. The property this test checks holds only vacuously "
                             "for code that ignores this input, so it earns no points").format(what=what))

    return expect_property(run, student, verify, atol=atol)
