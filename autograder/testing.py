"""Helpers for writing the suites: compare a submission's outputs, name the mistake.

A test describes its computation once, as ``run(impl)``, and the helpers apply it
to the student (:class:`autograder.remote.RemoteImpl`, in the child), to the
reference and to the mutants (:class:`autograder.variants.LocalImpl`, here)::

    def run(impl):
        return impl.positional_encoding.sinusoidal_table(50, 16)

    check(run, student, expected=formula_table(50, 16), what="sinusoidal_table(50, 16)")

Messages of hidden tests never print expected values (they must not leak them): only
shapes, dtypes, where the first difference is, how large it is, and the student's
own value there. Public tests (whose formulas are public) also show the expected value
at the first difference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from autograder import exercises, hybrid
from autograder.child import wire
from autograder.i18n import _, language
from autograder.messages import message_problem
from autograder.rng import cpu_seeded

try:  # instructor-only: the student edition ships no mistake catalog
    from autograder import catalog
except ImportError:
    catalog = None

MAX_CANDIDATES = 400  # mutants one failing test may try (a count, never a clock: see identify)
PLAIN_TENSOR_TYPES = ("torch.Tensor", "torch.nn.parameter.Parameter")


@dataclass
class TestContext:
    """What the running test is, and what the run has learnt so far: set by the plugin.

    ``student`` is the submission (a RemoteImpl) whose composites :func:`identify` may re-run on
    the reference components (``hybrids``); ``graded`` holds the exercises that have run tests in
    this run and ``named`` the catalog mistakes named per exercise (read by reports and the
    training tests, never by :func:`identify`, whose answer must not depend on what else the run
    grades); ``blamed`` maps a failing composite test's id to ``(exercise, culprits)`` when the composite's
    own code gave the expected result on the reference components (its components are to blame;
    ``culprits`` those that alone change its output).
    """

    exercise: str | None = None
    nodeid: str = ""
    seed: int = 0
    student: Any = None
    visibility: str | None = None  # the running test's (``public`` or ``hidden``)
    run_seed: int = 0  # the run's seed (``--tkit-seed``); the training checks draw from it
    graded: set = field(default_factory=set)
    named: dict = field(default_factory=dict)
    blamed: dict = field(default_factory=dict)
    hybrids: Any = None

    def start_run(self) -> None:
        """Forget what an earlier run learnt (a new submission)."""
        from autograder.hybrid import Hybrids

        self.end_run()
        self.graded, self.named, self.blamed = set(), {}, {}
        self.hybrids = Hybrids()

    def end_run(self) -> None:
        """Stop the run's hybrid children (see :mod:`autograder.hybrid`)."""
        if self.hybrids is not None:
            self.hybrids.close()
        self.hybrids = None
        self.student = None


CURRENT = TestContext()


class Mismatch(AssertionError):
    """The submission's output differs from the expected one. ``mistake`` is the
    catalog entry that reproduces the student's output, when one does."""

    def __init__(self, message: str, mistake: catalog.Mutant | None = None):
        super().__init__(message)
        self.message = message
        self.mistake = mistake

    def __str__(self) -> str:
        if self.mistake is None:
            return self.message
        label = _("Different convention") if self.mistake.convention else _("Likely mistake")
        return f"{self.message}\n{label}: {self.mistake.hint(language())} [{self.mistake.id}]"


def _fmt_index(flat: int, shape) -> str:
    idx = []
    for dim in reversed(list(shape)):
        idx.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return "(" + ", ".join(str(i) for i in reversed(idx)) + ")"


def describe_type(value: Any) -> str:
    if hasattr(value, "tkit_type"):
        return value.tkit_type
    return type(value).__name__


def compare(got: Any, expected: Any, *, what: str, atol: float = 1e-5, rtol: float = 1e-4,
            valid: torch.Tensor | None = None, check_dtype: bool = True, equal_nan: bool = False,
            show_expected: bool | None = None) -> None:
    """Raise :class:`Mismatch` unless ``got`` matches ``expected``.

    Structures (tuple, list, dict, None, numbers, strings) are compared item by item; tensors
    by type (plain tensors only), shape, dtype (when ``check_dtype``), NaN/inf and
    values within ``atol + rtol * |expected|``. ``valid`` (bool, broadcastable to the
    tensor) restricts the value comparison to True positions, e.g. unpadded ones.
    ``show_expected`` adds the expected value at the first wrong position to the message;
    by default it does so in public tests only (hidden tests keep their values private).
    """
    if show_expected is None:
        show_expected = CURRENT.visibility == "public"
    if isinstance(expected, torch.Tensor):
        _compare_tensor(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected)
    elif isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            raise Mismatch(_("{what} should be a tuple of {n} items, got {type}").format(
                what=what, n=len(expected), type=describe_type(got)))
        if len(got) != len(expected):
            raise Mismatch(_("{what} should have {n} items, got {m}").format(
                what=what, n=len(expected), m=len(got)))
        for i, (g, e) in enumerate(zip(got, expected)):
            v = valid[i] if isinstance(valid, (tuple, list)) else valid
            compare(g, e, what=_("item {i} of {what}").format(i=i, what=what), atol=atol, rtol=rtol, valid=v,
                    check_dtype=check_dtype, equal_nan=equal_nan, show_expected=show_expected)
    elif isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise Mismatch(_("{what} should have the keys {keys}").format(what=what, keys=sorted(expected)))
        for k in expected:
            compare(got[k], expected[k], what=f"{what}[{k!r}]", atol=atol, rtol=rtol, valid=valid,
                    check_dtype=check_dtype, equal_nan=equal_nan, show_expected=show_expected)
    elif expected is None:
        if got is not None:
            raise Mismatch(_("{what} should be None, got {type}").format(what=what, type=describe_type(got)))
    elif isinstance(expected, bool) or isinstance(expected, int) and not isinstance(expected, bool):
        if type(got) is not type(expected) or got != expected:
            raise Mismatch(_("{what} should be {expected!r}, got {got!r}").format(
                what=what, expected=expected, got=got if isinstance(got, (int, float, str)) else describe_type(got)))
    elif isinstance(expected, str):
        if not isinstance(got, str) or got != expected:
            raise Mismatch(_("{what} should be {expected!r}, got {got!r}").format(
                what=what, expected=expected, got=got if isinstance(got, (int, float, str)) else describe_type(got)))
    elif isinstance(expected, float):
        if not isinstance(got, (int, float)) or isinstance(got, bool) or not math.isclose(
                got, expected, rel_tol=rtol, abs_tol=atol):
            raise Mismatch(_("{what} differs from the expected number (got {got!r})").format(
                what=what, got=got if isinstance(got, (int, float)) else describe_type(got)))
    else:
        raise TypeError(f"compare() cannot handle expected values of type {type(expected).__name__}")


def _compare_tensor(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected=False) -> None:
    if not isinstance(got, torch.Tensor):
        raise Mismatch(_("{what} should be a tensor, got {type}").format(what=what, type=describe_type(got)))
    sent_cls = wire.tensor_info(got).get("cls")
    if sent_cls and sent_cls not in PLAIN_TENSOR_TYPES:
        raise Mismatch(_("{what} is a tensor subclass ({cls}); return a plain torch.Tensor").format(
            what=what, cls=sent_cls))
    if tuple(got.shape) != tuple(expected.shape):
        raise Mismatch(_("{what} has the wrong shape: expected {expected}, got {got}").format(
            what=what, expected=list(expected.shape), got=list(got.shape)))
    if check_dtype and got.dtype != expected.dtype:
        raise Mismatch(_("{what} has the wrong dtype: expected {expected}, got {got}").format(
            what=what, expected=expected.dtype, got=got.dtype))
    sent_dev = wire.tensor_info(got).get("dev")
    if sent_dev and sent_dev.split(":")[0] != expected.device.type:
        raise Mismatch(_("{what} is on the wrong device: expected {expected}, got {got}").format(
            what=what, expected=expected.device.type, got=sent_dev))
    g = got.detach().to(torch.float64) if got.is_floating_point() else got.detach()
    e = expected.detach().to(device=g.device, dtype=g.dtype) if got.is_floating_point() else expected.detach()
    mask = torch.ones(g.shape, dtype=torch.bool)
    if valid is not None:
        mask = torch.broadcast_to(valid.to(torch.bool).cpu(), g.shape)
    if g.is_floating_point():
        bad_nan = torch.isnan(g) & ~torch.isnan(e) & mask
        if bad_nan.any():
            raise Mismatch(_("{what} contains NaN at {n} of {m} positions (first at {idx})").format(
                what=what, n=int(bad_nan.sum()), m=int(mask.sum()),
                idx=_fmt_index(int(bad_nan.flatten().nonzero()[0]), g.shape)))
        bad_inf = torch.isinf(g) & ~torch.isinf(e) & mask
        if bad_inf.any():
            raise Mismatch(_("{what} contains inf at {n} of {m} positions (first at {idx})").format(
                what=what, n=int(bad_inf.sum()), m=int(mask.sum()),
                idx=_fmt_index(int(bad_inf.flatten().nonzero()[0]), g.shape)))
        close = torch.isclose(g, e, rtol=rtol, atol=atol) | (torch.isnan(g) & torch.isnan(e))
    else:
        close = g == e
    wrong = ~close & mask
    if wrong.any():
        first = int(wrong.flatten().nonzero()[0])
        diff = (g - e).abs()[wrong] if g.is_floating_point() else None
        detail = ""
        if diff is not None:
            finite = diff[torch.isfinite(diff)]
            if finite.numel():
                detail = _(", largest difference {diff:.3g}").format(diff=float(finite.max()))
        if show_expected:
            detail = _(", expected {value}").format(value=_shown(e.flatten()[first].item())) + detail
        raise Mismatch(_("{what} has wrong values at {n} of {m} positions (first at {idx}, where you "
                         "returned {value}){detail}").format(
            what=what, n=int(wrong.sum()), m=int(mask.sum()), idx=_fmt_index(first, g.shape),
            value=_shown(g.flatten()[first].item()), detail=detail))


def _shown(value) -> str:
    return str(value) if isinstance(value, bool) else f"{value:.6g}"


def distance(got: Any, expected: Any, valid=None) -> float:
    """How far ``got`` is from ``expected``: the largest absolute difference over the
    compared positions (inf on a structure, shape or NaN-pattern difference)."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(expected.shape):
            return math.inf
        g = got.detach().double()
        e = expected.detach().double()
        mask = torch.ones(g.shape, dtype=torch.bool) if valid is None else torch.broadcast_to(
            valid.to(torch.bool).cpu(), g.shape)
        if not mask.any():
            return 0.0
        g, e = g[mask], e[mask]
        nan_g, nan_e = torch.isnan(g), torch.isnan(e)
        if not torch.equal(nan_g, nan_e):
            return math.inf
        keep = ~nan_g
        g, e = g[keep], e[keep]
        if not g.numel():
            return 0.0
        inf_mismatch = (torch.isinf(g) | torch.isinf(e)) & (g != e)
        if inf_mismatch.any():
            return math.inf
        finite = torch.isfinite(e)
        return float((g[finite] - e[finite]).abs().max()) if finite.any() else 0.0
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return math.inf
        return max((distance(g, e, valid[i] if isinstance(valid, (tuple, list)) else valid)
                    for i, (g, e) in enumerate(zip(got, expected))), default=0.0)
    if expected is None:
        return 0.0 if got is None else math.inf
    if isinstance(expected, str):
        return 0.0 if got == expected else math.inf
    if isinstance(expected, (int, float)):
        if not isinstance(got, (int, float)):
            return math.inf
        return abs(float(got) - float(expected))
    return math.inf


def identify(run: Callable, got: Any, *, atol: float, rtol: float, valid=None,
             exercise: str | None = None) -> catalog.Mutant | None:
    """The catalog mutant whose output on the same input matches ``got`` best, or None.

    For an exercise without components, the candidates are its own mutants. For a composite,
    the answer must neither name a mistake on a correct composite file nor depend on what else
    the run grades: :func:`autograder.hybrid.blame` re-runs ``run`` with the student's composite
    on the reference components. When that still differs from the reference, the composite's
    own mutants are matched against that output (its own mistake, whatever its components do);
    otherwise (or when the hybrid cannot run) only the components' mutants are candidates,
    matched against ``got`` (the mistake is a component's): those of the components that alone
    change the composite's output when the composite's own code was right (the test is then
    recorded in ``CURRENT.blamed`` with them), else those of every component. Outside a grading
    run (no submission folder in ``CURRENT.student``) all of them are candidates. At most
    ``MAX_CANDIDATES`` candidates are tried, in catalog order (no clock: the same submission and seed name the same mistake on
    an idle or a loaded machine). A candidate matches when :func:`compare` would accept the
    output against its own; candidates that raise are skipped. When no single mutant of the
    exercise's own matches, two of them together are tried (:func:`_own_mistake`). None in the
    student edition.
    """
    exercise = exercise or CURRENT.exercise
    if exercise is None or catalog is None:
        return None
    own = catalog.for_exercises([exercise])
    depends = exercises.get(exercise).depends
    if not depends:
        return _own_mistake(run, got, own, atol, rtol, valid)
    if not hasattr(CURRENT.student, "submission") or CURRENT.hybrids is None:   # no submission folder to re-run
        return _closest(run, got, own + catalog.for_exercises(depends), atol, rtol, valid)
    verdict = _blame(run, exercise, atol, rtol, valid)
    if verdict.who == hybrid.OWN:
        return _own_mistake(run, verdict.output, own, atol, rtol, valid)
    if verdict.who == hybrid.COMPONENTS and CURRENT.nodeid:
        CURRENT.blamed[CURRENT.nodeid] = (exercise, verdict.components)
    return _closest(run, got, catalog.for_exercises(verdict.components or depends), atol, rtol, valid)


def _own_mistake(run, got, own, atol, rtol, valid):
    """One of the exercise's own mutants, else two of them together
    (:func:`autograder.matching.pair_trials`, named ``"a+b"``), matching ``got``; or None."""
    from autograder import matching

    return (_closest(run, got, own, atol, rtol, valid)
            or _closest(run, got, [pair for pair, _ in matching.pair_trials(own)], atol, rtol, valid))


def _blame(run, exercise, atol, rtol, valid) -> "hybrid.Verdict":
    """Whether the composite's own code is wrong on this input (see :mod:`autograder.hybrid`)."""
    def same(output, expected):
        compare(output, expected, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=False, equal_nan=True)

    return hybrid.blame(CURRENT.hybrids, CURRENT.student, exercise, run, CURRENT.seed, same)


def _closest(run, got, candidates, atol, rtol, valid) -> catalog.Mutant | None:
    """Of the first ``MAX_CANDIDATES`` mutants of ``candidates``, the one whose output matches
    ``got`` most closely (the first on ties), or None."""
    best, best_dist = None, math.inf
    for mutant in candidates[:MAX_CANDIDATES]:
        try:
            with cpu_seeded(CURRENT.seed):
                out = run(mutant.impl())
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
    """Run ``run(student)`` and compare it with ``expected`` (default: ``run(reference)``).

    On a mismatch the raised :class:`Mismatch` carries the catalog mutant that
    reproduces the student's output, if any; else the :mod:`autograder.diagnosis` mistake
    among ``variants`` (``{mistake id: callable giving that mistake's output}``, built from
    the public formulas by :mod:`autograder.suitelib.mistaken`), which names mistakes in the
    student edition too. A public test's message shows the expected value at the first
    difference. Returns the student's output.
    """
    got = run(student)
    if expected is None:
        if reference is None:
            from autograder import variants as kit_variants   # not the ``variants`` argument

            reference = kit_variants.reference()
        with cpu_seeded(CURRENT.seed):
            expected = run(reference)
    try:
        compare(got, expected, what=what, atol=atol, rtol=rtol, valid=valid, check_dtype=check_dtype)
    except Mismatch as exc:
        exc.mistake = identify(run, got, atol=atol, rtol=rtol, valid=valid)
        if exc.mistake is None and variants:
            from autograder import diagnosis

            exc.mistake = diagnosis.name(got, variants, atol=atol, rtol=rtol, valid=valid)
        raise
    return got


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
    from autograder.remote import SubmissionError

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

