"""Where an unexpected exception of a test arose: in the student's values, or in the kit.

A test's trusted code operates on what the submission gives it. The contract's return types are
checked as values arrive (:mod:`autograder.sandbox.returns`), but a test also reads attributes,
state dicts and items of what it receives; when such a value is of a kind the test cannot use,
the exception is raised in the kit's own code (``TypeError: 'NoneType' object is not
subscriptable``) although the student's value caused it. :func:`student_caused` tells the two
apart by the counterfactual: the same test function, run again here with the reference solutions
in the student's place (fresh ``partial``/``attach`` objects, a fresh ``rng`` of the same seed,
torch seeded with the test's seed). When that completes, the kit's code works on a right value
and the failure is the student's (:func:`message` words it); when it raises too, or cannot run
(a test that trains a model, which is too costly to repeat, or one that talks to the child), the
kit is at fault and the test is "not graded". Nothing of the student's runs here: the re-run
holds only trusted code and the reference. In the student edition (no reference solutions) every
test is public and proven on the reference by the kit's own tests, so the failure is the student's.
"""

from __future__ import annotations

import dataclasses

import torch

from autograder import context
from autograder.i18n import _
from autograder.rng import cpu_seeded
from autograder.run.credit import Attachments, PartialCredit
from autograder.sandbox import returns

MAX_ERROR = 300   # characters of the exception's text in the student's message


def _reference():
    """The reference solutions, or None in the student edition."""
    from autograder.mistakes import implementations

    try:
        return implementations.reference()
    except FileNotFoundError:
        return None


def student_caused(item, student, ctx: "context.TestContext") -> bool:
    """Whether the test ``item`` completes with the reference in place of ``student`` (its
    ``student`` fixture value); see the module docstring. Never raises."""
    if item.get_closest_marker("training"):
        return False
    reference = _reference()
    if reference is None:
        return True
    names = getattr(getattr(item, "_fixtureinfo", None), "argnames", ())
    args = {}
    for name in names:
        value = item.funcargs.get(name)
        if value is student:
            value = reference
        elif isinstance(value, PartialCredit):
            value = PartialCredit()
        elif isinstance(value, Attachments):
            value = Attachments()
        elif isinstance(value, torch.Generator):
            value = torch.Generator().manual_seed(ctx.seed)
        args[name] = value
    # no mistake search in the re-run (exercise None): a mismatch here means the kit is at fault anyway
    quiet = dataclasses.replace(ctx, exercise=None)
    try:
        with context.running(quiet), cpu_seeded(ctx.seed):
            item.obj(**args)
    except BaseException:  # noqa: BLE001 - the test fails on the reference too: the kit's problem
        return False
    return True


def message(exc: BaseException, received) -> str:
    """The student's message for a test whose code could not use the submission's value:
    ``received`` is ``(what, value)``, the last value the test received from the child
    (:attr:`autograder.sandbox.remote.RemoteImpl.last_received`), or None."""
    error = f"{type(exc).__name__}: {exc}"
    error = error if len(error) <= MAX_ERROR else error[:MAX_ERROR] + "..."
    if received is None:
        return _("The test could not use what your code returned ({error}).").format(error=error)
    what, value = received
    return _("The test could not use what your code returned: the last value it received, from {what}, "
             "was {got} ({error}).").format(what=what, got=returns.describe(value), error=error)
