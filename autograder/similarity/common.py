"""What most of a class wrote is idiom, not copying: the rule both code matchers
(:mod:`.matcher`'s fingerprints, :mod:`.structural`'s features) apply before comparing.

A hash that more than :data:`COMMON_SHARE` of the class and more than :data:`COMMON_MIN_COUNT`
students hold never counts (MOSS's ``-m`` option, 10 by default, does the same), so none is
dropped in a class of 10 or fewer.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

COMMON_SHARE = 0.2      # hashes in more than this share of the class ...
COMMON_MIN_COUNT = 10   # ... and in more than this many submissions are idiom, not copying


def class_common(students: list[Iterable[int]], class_size: int) -> set[int]:
    """The hashes of ``students`` (each student's set of hashes; the reference not among them)
    held by more than :data:`COMMON_SHARE` of ``class_size`` and more than :data:`COMMON_MIN_COUNT`."""
    floor = max(COMMON_SHARE * class_size, COMMON_MIN_COUNT)
    if len(students) <= floor:
        return set()
    counts = Counter(h for hashes in students for h in hashes)
    return {h for h, n in counts.items() if n > floor}
