"""Behaviour evidence: students whose wrong outputs on the suites' fixed inputs are identical.

While grading, each failing test that compared a wrong output keeps its
:func:`~autograder.mistakes.comparison.signature` (16 hex digits, instructor-side, in the
gradebook's ``tests`` table). Two students who failed a test with the same signature share a
*bug signature*: equivalent rewrites of copied code (other API calls, three-address form,
inlined helpers) keep it, since they compute the same wrong values.

Scoring, per pair of students and exercise, over the exercise's tests where both have the same
signature (``n`` students with it, ``N`` graded on the test; a shared test weighs ``-log(n/N)``):
the sum of the weights of the *unnamed* shared outputs, plus :data:`NAMED_WEIGHT` times, for each
distinct *named* mistake (a catalog or formula mistake, which independent students make) and for
the low-information outputs (a constant, one number, a two-valued mask: signature prefix
``c:``), the largest weight among its tests (one mistake counts once, however many tests it
fails). A signature held by more than :data:`COMMON_SHARE` of the class and more than
:data:`COMMON_MIN_COUNT` students never counts (a common mistake, as in the code similarity). A
pair is flagged at a score of :data:`FLAG_RARITY` or more, over at least
:data:`MIN_SHARED_TESTS` shared wrong tests of which at least one is unnamed: named mistakes
alone never flag. A class of N students gives at most ``log(N/2)`` per unnamed test: two
students sharing an unnamed wrong output are flagged on two tests in a class of 30, on five in
a class of 6.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder.similarity.common import COMMON_MIN_COUNT, COMMON_SHARE  # the code similarity's rule, on signatures

LOW_INFORMATION = "c:"  # autograder.mistakes.comparison.LOW_INFORMATION (not imported here: that imports torch)
NAMED_WEIGHT = 0.25     # a named (or low-information) mistake's share of the weight of an unnamed one
FLAG_RARITY = 5.0       # a pair is flagged at this score (nats) or more ...
MIN_SHARED_TESTS = 2    # ... over at least this many shared wrong tests
TOP = 50                # the HTML shows at most this many flagged pairs
TESTS_SHOWN = 20        # and at most this many shared tests per pair


@dataclass
class SharedTest:
    """One test two students failed with the same wrong output: ``count`` of ``graded``
    students have that signature; ``mistake`` its name (None: unnamed); ``weight`` its score."""

    nodeid: str
    name: str
    mistake: str | None
    low_information: bool
    count: int
    graded: int
    weight: float   # -log(count / graded), times NAMED_WEIGHT when named or low-information

    @property
    def label(self) -> str:
        """The test's short id (the function name after the last ``::``)."""
        return self.nodeid.rpartition("::")[2] or self.nodeid


@dataclass
class BehaviourPair:
    """Two students' shared wrong outputs on one exercise; ``rarity`` is the score."""

    student_a: str
    student_b: str
    exercise: str
    rarity: float = 0.0
    shared: list[SharedTest] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return self.rarity >= FLAG_RARITY and len(self.shared) >= MIN_SHARED_TESTS and not self.named_only

    @property
    def named_only(self) -> bool:
        return all(t.mistake or t.low_information for t in self.shared)


@dataclass
class BehaviourResult:
    """The class's behaviour evidence: ``pairs`` (score > 0, the highest first), the
    ``students`` with recorded tests, ``source`` (the gradebook read; None: none, then no
    evidence) and the seconds the analysis took."""

    pairs: list[BehaviourPair] = field(default_factory=list)
    students: list[str] = field(default_factory=list)
    source: str | None = None
    seconds: float = 0.0

    @property
    def flagged(self) -> list[BehaviourPair]:
        return [p for p in self.pairs if p.flagged]


def analyse(rows, source: str | None = None) -> BehaviourResult:
    """The behaviour evidence of test rows ``(student_id, exercise, nodeid, name, status,
    mistake, signature)`` (:meth:`autograder.records.gradebook.Gradebook.signatures`)."""
    start = time.monotonic()
    graded: dict[str, set] = defaultdict(set)                 # nodeid -> students graded on it
    groups: dict[tuple, list] = defaultdict(list)             # (nodeid, signature) -> rows
    students = set()
    for sid, exercise, nodeid, name, status, mistake, sig in rows:
        students.add(sid)
        graded[nodeid].add(sid)
        if status == "failed" and sig:
            groups[(nodeid, sig)].append((sid, exercise, name, mistake))
    pairs: dict[tuple, BehaviourPair] = {}
    for (nodeid, sig), members in groups.items():
        ids = sorted({m[0] for m in members})
        n, total = len(ids), len(graded[nodeid])
        if n < 2 or n >= total or (n > COMMON_SHARE * total and n > COMMON_MIN_COUNT):
            continue
        _, exercise, name, _ = members[0]
        named = sorted({m[3] for m in members if m[3]})
        mistake = named[0] if named else None
        low = sig.startswith(LOW_INFORMATION)
        weight = -math.log(n / total) * (NAMED_WEIGHT if mistake or low else 1.0)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                pair = pairs.get((a, b, exercise))
                if pair is None:
                    pair = pairs[(a, b, exercise)] = BehaviourPair(a, b, exercise)
                pair.shared.append(SharedTest(nodeid, name, mistake, low, n, total, round(weight, 4)))
    for pair in pairs.values():
        pair.rarity = round(score(pair.shared), 4)
        pair.shared.sort(key=lambda t: (-t.weight, t.nodeid))
    out = sorted(pairs.values(), key=lambda p: (-p.rarity, p.exercise, p.student_a, p.student_b))
    return BehaviourResult(out, sorted(students), source, time.monotonic() - start)


def score(shared: list[SharedTest]) -> float:
    """A pair's score from its shared tests: the unnamed ones' weights summed, each named
    mistake (and the low-information outputs, together) once, at its largest weight."""
    unnamed = sum(t.weight for t in shared if not (t.mistake or t.low_information))
    named: dict = {}
    for t in shared:
        if t.mistake or t.low_information:
            key = t.mistake or LOW_INFORMATION
            named[key] = max(named.get(key, 0.0), t.weight)
    return unnamed + sum(named.values())


def from_gradebook(path: Path | None) -> BehaviourResult:
    """The behaviour evidence of a graded class's gradebook; an empty result (``source`` None)
    when ``path`` is None or no file."""
    if path is None or not Path(path).is_file():
        return BehaviourResult()
    from autograder.records.gradebook import Gradebook

    with Gradebook(Path(path)) as book:
        return analyse(book.signatures(), source=str(path))
