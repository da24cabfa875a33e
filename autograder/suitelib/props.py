"""Checks beyond "equal to the expected tensor": properties that name the mistake, and
calls that give the student non-contiguous inputs.

:func:`autograder.testing.check` compares one output with an expected one. Property
tests (determinism, invariance, a value derived from the student's own output) decide
pass or fail themselves; :func:`fail` and :func:`compare_named` still run the catalog
on the failing output so the report names the likely mistake.
"""

from __future__ import annotations

from typing import Any, Callable

from autograder import testing


def fail(run: Callable, got: Any, message: str, *, atol: float = 1e-5, rtol: float = 1e-4, valid=None):
    """Raise :class:`autograder.testing.Mismatch` with ``message`` and the catalog mutant whose
    ``run`` output matches ``got`` (``run`` as in :func:`autograder.testing.check`)."""
    raise testing.Mismatch(message, testing.identify(run, got, atol=atol, rtol=rtol, valid=valid))


def compare_named(run: Callable, got: Any, expected: Any, *, what: str, atol: float = 1e-5, rtol: float = 1e-4,
                  valid=None, check_dtype: bool = True) -> None:
    """:func:`autograder.testing.compare` ``got`` (the student's ``run`` output) with an
    ``expected`` derived from it; on a mismatch, name the mistake like ``check`` does."""
    try:
        testing.compare(got, expected, what=what, atol=atol, rtol=rtol, valid=valid, check_dtype=check_dtype)
    except testing.Mismatch as exc:
        exc.mistake = testing.identify(run, got, atol=atol, rtol=rtol, valid=valid)
        raise


def noncontiguous(impl, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run by ``impl`` with every floating tensor argument of two or more
    elements replaced, inside the child, by a non-contiguous view holding the same values
    (the wire always delivers contiguous tensors). ``fn`` is a handle (a student's function or
    module) or, for local implementations, the object itself."""
    return impl.task("call_noncontiguous", fn, *args, **kwargs)
