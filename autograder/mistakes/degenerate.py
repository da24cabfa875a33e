"""Degenerate implementations: code that has the contract's shape but does nothing useful.

A constant output, zeros of the right shape, the identity, a model that ignores its context (the
keys, the earlier tokens, the source), uniform attention, a positional encoding that adds nothing,
an AutoEncoder whose ``decode`` returns a constant grey image and whose loop trains nothing. Such code satisfies many property
tests vacuously (a model that ignores earlier tokens is causal), so ``tkit validate`` grades each
one as a submission, beside the catalog's mutants, and fails when one earns more than
:data:`MAX_SHARE` of its exercise (:func:`autograder.validate.check_degenerate`).

The hand-written entries of an exercise are ``DEGENERATES`` in its catalog module
(``autograder/mistakes/catalog/<exercise>.py``); this module gathers them with the generated ones.
Each :class:`Degenerate` is the reference ``solutions/<target>.py`` with a postscript appended that
rebinds some of its functions or methods (the rest of the module, argument checks included, stays
the reference's), so an entry keeps applying when the reference's text changes. Like the catalog,
this is instructor-only material: it needs ``solutions/``.
"""

from __future__ import annotations

import importlib

from autograder import exercises, paths
from autograder.mistakes.catalog import Degenerate  # noqa: F401  (re-exported: mistakes.degenerate.Degenerate)

#: The most a degenerate implementation may earn of its exercise's points (of the points that ran:
#: without the training tests, of the non-training points).
MAX_SHARE = 0.20


def all_degenerates() -> tuple[Degenerate, ...]:
    """Every degenerate implementation: each exercise's hand-written ones (``DEGENERATES`` of its
    catalog module, in exercise order), then the generated ones
    (:func:`autograder.mistakes.adversaries.generate`); empty without ``solutions/``."""
    from autograder.mistakes import adversaries

    if paths.solutions_dir() is None:
        return ()
    written = tuple(entry for name in exercises.NAMES for entry in
                    getattr(importlib.import_module(f"autograder.mistakes.catalog.{name}"), "DEGENERATES", ()))
    return written + tuple(Degenerate(*entry) for entry in adversaries.generate())


def by_id(degenerate_id: str) -> Degenerate:
    for d in all_degenerates():
        if d.id == degenerate_id:
            return d
    raise KeyError(f"no degenerate implementation {degenerate_id!r}")


def for_exercises(names) -> list[Degenerate]:
    wanted = set(names)
    return [d for d in all_degenerates() if d.exercise in wanted]
