"""Naming what is close to a known mistake: two catalog mistakes made together.

:func:`autograder.checks.expectations.identify` first tries each catalog mutant alone. A student often
makes two mistakes in the same file (a swapped sin/cos *and* positions counted from 1); no
single mutant reproduces that output, yet both are known. :func:`pair_trials` lists the pairs
of an exercise's own mutants whose patches apply together, for ``identify`` to try last; a
match is named by :class:`autograder.mistakes.catalog.Combined`, which carries both ids
(``"a+b"``) and both hints.

Precision first: a pair is named only when its output matches the student's within the
test's tolerance, exactly as a single mutant must; pairs whose patches collide cannot be built
and are skipped, and pairs of two conventions are left out (a convention is one choice, not two
mistakes).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any, Callable

from autograder.mistakes.comparison import compare, distance

# More own mutants than this and the pairs are not tried (their number grows quadratically).
MAX_PAIRED_MUTANTS = 20


def _family(mutant) -> str | None:
    """The family a generated mutant belongs to (its ``family:<name>`` tag), else None."""
    return next((tag[7:] for tag in getattr(mutant, "tags", ()) if tag.startswith("family:")), None)


def pair_trials(own) -> list[tuple]:
    """``(name, mutants to apply)`` for every pair of ``own`` (an exercise's mutants, in catalog
    order; the name a :class:`autograder.mistakes.catalog.Combined`), conventions not paired with each other, nor two variants of one family (one site, one
    choice: :func:`autograder.mistakes.catalog.generated`); empty when ``own`` has more than
    :data:`MAX_PAIRED_MUTANTS` hand-written entries (a family's variants do not count). Pairs whose
    patches collide fail to build (:class:`autograder.mistakes.catalog.CatalogError`) and are
    skipped by ``identify``."""
    if sum(_family(m) is None for m in own) > MAX_PAIRED_MUTANTS:
        return []
    from autograder.mistakes.catalog import Combined   # instructor-only (no catalog in the student edition)

    trials = []
    for first, second in combinations(own, 2):
        if first.convention and second.convention:
            continue
        if _family(first) is not None and _family(first) == _family(second):
            continue
        trials.append((Combined((first, second)), (first, second)))
    return trials


def closest(got: Any, outputs: list, reference: Callable[[], Any], *, atol: float, rtol: float, valid=None):
    """Of ``outputs`` (``[(mutant, its output on the test's input), ...]``), the mutant whose output
    matches ``got`` most closely (the first on ties), or None. A match with ``got``'s dtypes too wins
    over one of the values only (a float 0/1 mask is the mutant that makes it float, not any mutant
    that leaves it right); a values-only match must change the output: one equal to ``reference()``
    (the reference's output, computed at most once; it may raise) explains nothing but a dtype."""
    ref: list = []

    def gives_reference(out) -> bool:
        try:
            if not ref:
                ref.append(reference())
            compare(out, ref[0], what="", atol=0, rtol=0, valid=valid, equal_nan=True)
        except Exception:
            return False
        return True

    for strict in (True, False):
        best, best_dist = None, math.inf
        for mutant, out in outputs:
            try:
                compare(got, out, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=strict, equal_nan=True)
            except Exception:
                continue
            if not strict and gives_reference(out):
                continue
            dist = distance(got, out, valid)
            if dist < best_dist or best is None:
                best, best_dist = mutant, dist
        if best is not None:
            return best
    return None
