"""Structural similarity: which submissions compute the same thing the same way, however rewritten.

Beside copydetect's token winnowing (:mod:`.matcher`), which a statement-by-statement rewrite
defeats. Each module becomes a normalised expression graph (:mod:`.normalise`: variables
substituted away, dead code dropped, helpers inlined, equivalent torch calls in one form); its
*features* are the hashes of every sub-expression of at least :data:`MIN_SIZE` nodes that a
sink (return, raise, stored attribute) reaches. Features of the starter stub and of code that
more than ``COMMON_SHARE`` of the class and more than ``COMMON_MIN_COUNT`` students wrote never
count (:mod:`.common`, the rule :mod:`.matcher` applies too). The structural similarity of two modules is the larger of the
two directions: the share of A's features found in B, and of B's in A. A pair is *flagged* at
:data:`FLAG_THRESHOLD` or more with at least :data:`FLAG_MIN_SHARED` features shared (so a
short exercise, where correct answers coincide, needs more than a share). Thresholds chosen on
``benchmarks/compare_structural.py``'s evaluation set (CHANGELOG: each rewrite class flagged,
independent correct solutions not).

Bounded on hostile input like the rest of the similarity run: a module is read through intake's
size limits; one that does not parse or is too complex (:class:`.normalise.TooComplex`) has no
features and is never flagged structurally (copydetect still compares its tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.similarity import normalise
from autograder.similarity.common import class_common

MIN_SIZE = 4            # a feature is a sub-expression of at least this many nodes
SIZE_CAP = 1 << 20      # sizes are counted up to this (a DAG may expand exponentially)
FLAG_THRESHOLD = 0.6    # structural similarity at or above this ...
FLAG_MIN_SHARED = 25    # ... with at least this many features shared flags a pair
CSV_MIN = 0.3           # similarity-structure.csv lists the pairs at or above this


@dataclass
class StructurePair:
    """One pair compared structurally on one exercise (``student_b`` None: the reference).

    ``structure`` is the larger of ``share_a`` (the share of A's features found in B) and
    ``share_b``; ``shared`` counts the features in common."""

    student_a: str
    student_b: str | None
    exercise: str
    structure: float
    share_a: float
    share_b: float
    shared: int
    ranked: bool = False   # a small class's pair (:data:`autograder.similarity.matcher.SMALL_CLASS`): never flagged

    @property
    def flagged(self) -> bool:
        """At or above :data:`FLAG_THRESHOLD` with at least :data:`FLAG_MIN_SHARED` features shared
        (never a small class's ranked pair)."""
        return not self.ranked and self.structure >= FLAG_THRESHOLD and self.shared >= FLAG_MIN_SHARED


def features(code: str, entries: set[str] | None = None) -> frozenset[int]:
    """The structural features of Python ``code`` (see the module's text); ``entries`` as in
    :func:`.normalise.graph`. Empty when the code does not parse or is too complex."""
    try:
        g = normalise.graph(code, entries)
    except normalise.TooComplex:
        return frozenset()
    except Exception:  # noqa: BLE001 - a form the normaliser mishandles costs this module its features,
        return frozenset()  # never the class's run (tests run the normaliser itself over 380+ real modules)
    if g is None:
        return frozenset()
    size: dict[int, int] = {}
    todo = [(h, False) for h in g.sinks]
    while todo:  # post-order without recursion: a node's size after its children's
        h, expanded = todo.pop()
        if h in size:
            continue
        if expanded:
            size[h] = min(SIZE_CAP, 1 + sum(size[c] for c in g.children[h]))
        else:
            todo.append((h, True))
            todo.extend((c, False) for c in g.children[h] if c not in size)
    return frozenset(h for h, n in size.items() if n >= MIN_SIZE)


def compare(a: frozenset, b: frozenset) -> tuple[float, float, int]:
    """``(share_a, share_b, shared)`` of two feature sets."""
    shared = len(a & b)
    return (shared / len(a) if a else 0.0), (shared / len(b) if b else 0.0), shared


def exercise_features(codes: dict[str, str], stub: str | None, class_size: int, deadline=None) -> dict:
    """key -> features of ``codes`` for one exercise, without the stub's and the class-common
    features (the reference, key ``""``, counts neither towards nor as the class); ``deadline``
    (``matcher._Deadline``: anything with ``check()``) is checked between modules."""
    entries = normalise.stub_entries(stub)
    boilerplate = features(stub, entries) if stub else frozenset()
    out = {}
    for key, code in codes.items():
        if deadline is not None:
            deadline.check()
        out[key] = features(code, entries) - boilerplate
    common = class_common([fs for key, fs in out.items() if key], class_size)
    return {key: fs - common for key, fs in out.items()} if common else out


def exercise_pairs(name: str, feats: dict, deadline=None, reference: dict | None = None,
                   ranked: bool = False, scale: dict | None = None) -> list[StructurePair]:
    """The pairs at or above :data:`CSV_MIN`: every two students on ``feats`` (key -> features),
    each student with the reference (key ``""``, reported as ``student_b`` None) on ``reference``
    (default: ``feats``); ``ranked`` marks a small class's pairs; ``scale``: key -> factor of a
    student's share in student pairs (default 1). Checks ``deadline`` between students."""
    reference = feats if reference is None else reference
    scale = scale or {}
    pairs = []
    students = sorted(key for key in feats if key)
    for i, a in enumerate(students):
        if deadline is not None:
            deadline.check()
        others = [(None, reference)] if "" in reference else []
        for b, on in others + [(b, feats) for b in students[i + 1:]]:
            if not on[a]:
                continue
            share_a, share_b, shared = compare(on[a], on[b or ""])
            if b is not None:
                share_a, share_b = share_a * scale.get(a, 1.0), share_b * scale.get(b, 1.0)
            structure = max(share_a, share_b)
            if structure >= CSV_MIN:
                pairs.append(StructurePair(a, b, name, round(structure, 4), round(share_a, 4), round(share_b, 4),
                                           shared, ranked))
    return pairs
