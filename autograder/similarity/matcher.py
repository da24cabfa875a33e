"""Code similarity across a class: which submissions share code beyond the starter stubs.

The matcher is ``copydetect`` (MIT; winnowing fingerprints, the method of MOSS: Schleimer,
Wilkerson and Aiken, "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003).
Each module is tokenised with Pygments and every name becomes one letter (variables ``V``,
functions ``F``, classes ``O``), strings become ``S`` and comments and whitespace go, so renamed
variables, re-worded comments and re-indented code still match. The fingerprints are the
winnowed hashes of the k-grams of that filtered text.

Per exercise, what never counts:

* the starter stub ``exercises/<exercise>.py`` (signatures, docstrings, hints): its
  fingerprints are copydetect's boilerplate;
* code that more than ``COMMON_SHARE`` of the class and more than ``COMMON_MIN_COUNT``
  students wrote: idiom rather than copying (:mod:`.common`, the rule of MOSS's ``-m`` option).

The similarity of two modules is the larger of the two directions: the share of A's
(non-boilerplate) fingerprinted code found in B, and of B's in A, a fraction 0-1. The reference
solution is compared with every student too (a leaked solution); its rows have no ``student_b``.
A pair is *flagged* when its similarity is at least :data:`FLAG_THRESHOLD` and the matching code
is at least :data:`FLAG_MIN_MATCH` filtered characters long (so a one-line exercise, where every
correct answer looks alike, is not flagged by its shares alone).

**A small class** (at most :data:`SMALL_CLASS` students compared) has no "most of the class":
the class-common rule drops nothing there, and correct answers, which all look like the
reference, match each other in full (the six-student sample class flagged 135 pairs, the first
screen all 100 %). There, two students are compared without the reference solution's code (its
fingerprints are boilerplate too, beside the stub's), a pair's shares are of each student's whole
code beyond the stub (so the few k-grams where a student's edits meet the stub's text do not
make 100 %), each student is compared with the reference as usual, and the pairs are *ranked*
(``Result.small_class``; :attr:`Pair.ranked`), none flagged; the report says so on its first screen.

Each exercise's worker also runs the structural matcher (:mod:`autograder.similarity.structural`) on
the same modules: its pairs are ``Result.structure``, flagged by their own rule.

Submissions go through the kit's own intake (:func:`autograder.intake.submission.prepared`): a notebook or a
zip is compared on the modules that are graded. The size limits of :mod:`autograder.intake.limits` refuse
a submission for that student only; the whole run stops at a deadline.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path

from autograder import exercises, paths
from autograder.intake import limits
from autograder.intake.submission import submission_files
from autograder.similarity.common import COMMON_MIN_COUNT, COMMON_SHARE, class_common  # noqa: F401  (settings shown in the HTML)

NOISE = 25      # k: a match shorter than this many filtered characters is never found (copydetect's noise_t)
GUARANTEE = 30  # a match at least this long is always found (copydetect's guarantee_t)
WINDOW = GUARANTEE - NOISE + 1
CSV_MIN = 0.05          # the CSV lists every pair and exercise at or above this similarity
FLAG_THRESHOLD = 0.5    # the HTML shows pairs at or above this similarity ...
FLAG_MIN_MATCH = 80     # ... whose matching code is at least this many filtered characters
TOP = 50                # and at most this many pairs, the most similar first
SMALL_CLASS = COMMON_MIN_COUNT   # a class of at most this many students: pairs ranked, none flagged
DEFAULT_TIME_LIMIT = 900.0  # seconds for a whole run


class SimilarityTimeout(RuntimeError):
    """The run passed its deadline; what was compared before it is kept (see ``Result.complete``)."""


@dataclass
class Pair:
    """One pair compared on one exercise. ``student_b`` is None for the reference solution.

    ``similarity`` is the larger of ``share_a`` (the share of A's code found in B) and
    ``share_b``; ``matched`` is the length of A's matching code in filtered characters;
    ``slices`` (flagged pairs only) holds A's and B's matching regions, 2xN arrays of start and
    end offsets in the raw code."""

    student_a: str
    student_b: str | None
    exercise: str
    similarity: float
    share_a: float
    share_b: float
    matched: int
    slices: tuple | None = field(default=None, repr=False, compare=False)  # (A's, B's) when flagged or ranked
    ranked: bool = field(default=False, compare=False)   # a small class's pair: ranked, never flagged

    @property
    def flagged(self) -> bool:
        """At or above :data:`FLAG_THRESHOLD` with at least :data:`FLAG_MIN_MATCH` characters
        matching, in a class larger than :data:`SMALL_CLASS` (a small class's pairs are ranked)."""
        return not self.ranked and self.similarity >= FLAG_THRESHOLD and self.matched >= FLAG_MIN_MATCH


@dataclass
class Result:
    """A class's similarity: ``pairs`` (similarity >= :data:`CSV_MIN`, most similar first),
    ``structure`` (the structural matcher's pairs, :mod:`.structural`), ``refused`` (student id -> why it was not compared), the compared ``students``, the
    ``sources`` compared (student id, or ``""`` for the reference -> exercise -> code),
    whether the run finished before its deadline, and whether the class was small (at most
    :data:`SMALL_CLASS` students: pairs ranked, none flagged)."""

    pairs: list[Pair] = field(default_factory=list)
    structure: list = field(default_factory=list)  # structural.StructurePair, the most similar first
    refused: dict[str, str] = field(default_factory=dict)
    students: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)
    complete: bool = True
    seconds: float = 0.0
    small_class: bool = False


class _Deadline:
    """``seconds`` from now, as a wall-clock time (``end``, comparable across processes)."""

    def __init__(self, seconds: float | None = None, end: float | None = None):
        self.end = end if seconds is None else time.time() + seconds

    def check(self) -> None:
        if self.end is not None and time.time() > self.end:
            raise SimilarityTimeout("the similarity run passed its time limit")


def read_submission(path: Path) -> dict[str, str]:
    """The graded code of one submission (folder, ``.zip`` or notebooks), exercise -> source.

    Uses the grader's intake (:func:`autograder.intake.submission.prepared`), so a notebook is compared on
    the module it is graded as. Only top-level modules named after an exercise count.

    Raises:
        limits.SubmissionTooLarge: a module over ``MODULE_MAX_BYTES`` or all of them over
            ``SUBMISSION_CODE_MAX_BYTES``.
        submission.SubmissionFormatError: what the grader refuses too (a bad zip or notebook).
    """
    from autograder.intake import submission

    with submission.prepared(Path(path), []) as folder:
        files = [f for f in submission_files(folder) if f.stem in exercises.BY_NAME]
        sizes = {f.name: f.stat().st_size for f in files}
        for name, size in sizes.items():
            if size > limits.MODULE_MAX_BYTES:
                limits.check_code_size({name: size}, limits.MODULE_MAX_BYTES)
        limits.check_code_size(sizes)
        return {f.stem: f.read_text(encoding="utf-8", errors="replace") for f in files}


def read_class(entries: list[tuple[str, Path]], deadline: _Deadline | None = None
               ) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """``(sources, refused)`` for ``(student id, path)`` entries: each student's graded code
    (see :func:`read_submission`) or the reason it was refused (that student only)."""
    sources: dict[str, dict[str, str]] = {}
    refused: dict[str, str] = {}
    for sid, path in entries:
        if deadline is not None:
            deadline.check()
        try:
            sources[sid] = read_submission(path)
        except Exception as exc:  # noqa: BLE001 - SubmissionTooLarge, SubmissionFormatError, an encrypted
            refused[sid] = f"{type(exc).__name__}: {exc}"  # zip's RuntimeError...: this student only
    return sources, refused


def kit_sources(folder: Path | None) -> dict[str, str]:
    """exercise -> source of the kit's ``exercises/`` (stubs) or ``solutions/`` folder ({} if None)."""
    if folder is None:
        return {}
    return {name: (folder / f"{name}.py").read_text(encoding="utf-8")
            for name in exercises.NAMES if (folder / f"{name}.py").is_file()}


def stable_kgram_hashes(text: str, k: int):
    """The hashes of every ``k``-character slice of ``text``, an int64 array: copydetect's
    ``utils.hashed_kgrams`` with blake2b (8 bytes) in place of Python's ``hash``, which is salted
    per process, so that the winnowing picks the same fingerprints in every run and process."""
    import numpy as np

    return np.array([int.from_bytes(blake2b(text[i:i + k].encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                                    "little", signed=True) for i in range(len(text) - k + 1)], dtype=np.int64)


def fingerprint(code: str, boilerplate=None):
    """copydetect's ``CodeFingerprint`` of Python ``code`` (k = :data:`NOISE`, window
    :data:`WINDOW`), leaving out the hashes in ``boilerplate`` (a numpy array). The k-gram hash is
    :func:`stable_kgram_hashes` (set in ``copydetect.utils``, where its fingerprinting looks it up)."""
    import copydetect.utils
    from copydetect import CodeFingerprint

    copydetect.utils.hashed_kgrams = stable_kgram_hashes

    return CodeFingerprint("submission.py", NOISE, WINDOW, boilerplate=boilerplate, filter=True,
                           language="python", fp=io.StringIO(code))


def drop_hashes(fp, hashes: set) -> None:
    """Remove ``hashes`` from a fingerprint (class-common code), recomputing its token coverage."""
    from copydetect.utils import get_token_coverage

    gone = fp.hashes & hashes
    if not gone:
        return
    fp.hashes = fp.hashes - gone
    fp.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in gone}
    fp.token_coverage = get_token_coverage(fp.hash_idx, fp.k, len(fp.filtered_code))


def common_hashes(fps: list, class_size: int) -> set:
    """The fingerprint hashes of ``fps`` that the class-common rule drops (:func:`.common.class_common`)."""
    return class_common([fp.hashes for fp in fps], class_size)


def compare(fp_a, fp_b, floor: float = 0.0):
    """``(share_a, share_b, matched, slices_a, slices_b)`` of two fingerprints (copydetect's
    ``compare_files``); ``slices_*`` are 2xN arrays of start/end offsets in the raw code.
    Zeros, without comparing, when both shares must be below ``floor``: a share is at most
    k characters per occurrence of a shared fingerprint over the fingerprinted length."""
    from copydetect import compare_files

    shared = fp_a.hashes & fp_b.hashes
    if not shared or all(sum(len(fp.hash_idx[h]) for h in shared) * fp.k < floor * fp.token_coverage
                         for fp in (fp_a, fp_b)):
        return 0.0, 0.0, 0, None, None
    matched, (share_a, share_b), (slices_a, slices_b) = compare_files(fp_a, fp_b)
    return float(share_a), float(share_b), int(matched), slices_a, slices_b


def exercise_fingerprints(name: str, codes: dict[str, str], stub: str | None, class_size: int,
                          deadline: _Deadline | None = None) -> dict:
    """key -> fingerprint of ``codes`` for one exercise, without the stub's and the class-common
    hashes (the reference, key ``""``, counts neither towards nor as the class). Raises
    :class:`SimilarityTimeout` past ``deadline``."""
    import numpy as np

    deadline = deadline or _Deadline(None)
    boilerplate = np.array(sorted(fingerprint(stub).hashes)) if stub else None
    fps = {}
    for key, code in codes.items():
        deadline.check()
        fps[key] = fingerprint(code, boilerplate)
    common = common_hashes([fp for key, fp in fps.items() if key], class_size)
    for fp in fps.values():
        drop_hashes(fp, common)
    return fps


def _pairs_of(name: str, fps: dict, deadline: _Deadline, pairs: list[Pair], reference_fps: dict | None = None,
              ranked: bool = False, scale: dict | None = None) -> None:
    """Append to ``pairs`` the pairs at or above :data:`CSV_MIN`: every two students on ``fps``
    (key -> fingerprint), each student with the reference (key ``""``, reported as ``student_b``
    None) on ``reference_fps`` (default: ``fps``); ``ranked``: a small class's pairs (their
    matching regions kept for the report); ``scale``: key -> factor of a student's shares in
    student pairs (default 1). Checks ``deadline`` between students."""
    reference_fps = fps if reference_fps is None else reference_fps
    scale = scale or {}
    students = sorted(key for key in fps if key)
    for i, a in enumerate(students):
        deadline.check()
        others = [(None, reference_fps)] if "" in reference_fps else []
        for b, on in others + [(b, fps) for b in students[i + 1:]]:
            share_a, share_b, matched, slices_a, slices_b = compare(on[a], on[b or ""], CSV_MIN)
            if b is not None:
                share_a, share_b = share_a * scale.get(a, 1.0), share_b * scale.get(b, 1.0)
            similarity = max(share_a, share_b)
            if similarity >= CSV_MIN:
                pair = Pair(a, b, name, round(similarity, 4), round(share_a, 4), round(share_b, 4), matched,
                            ranked=ranked)
                if pair.flagged or ranked:
                    pair.slices = (slices_a, slices_b)
                pairs.append(pair)


def compare_exercise(name: str, codes: dict[str, str], stub: str | None, class_size: int,
                     until: float | None, small: bool = False) -> tuple[list[Pair], list, bool]:
    """``(pairs, structure pairs, complete)`` of one exercise's ``codes`` (key -> source, ``""``
    the reference): copydetect's pairs, then the structural matcher's (:mod:`.structural`),
    stopping at the wall-clock time ``until`` (``time.time()``; None: never). ``small``: a small
    class (see the module's text): two students compared without the reference's code, pairs
    ranked. What a worker process runs: one exercise is fingerprinted and compared in one process."""
    from autograder.similarity import structural

    deadline = _Deadline(end=until)
    pairs: list[Pair] = []
    try:
        fps = exercise_fingerprints(name, codes, stub, class_size, deadline)
        feats = structural.exercise_features(codes, stub, class_size, deadline)
        if small and "" in codes:   # the share of a student's code beyond the stub that is not the reference's
            own = exercise_fingerprints(name, {k: c for k, c in codes.items() if k}, stub, class_size, deadline)
            for fp in own.values():
                drop_hashes(fp, fps[""].hashes)
            scale = {k: fp.token_coverage / fps[k].token_coverage if fps[k].token_coverage else 0.0
                     for k, fp in own.items()}
            _pairs_of(name, own, deadline, pairs, reference_fps=fps, ranked=True, scale=scale)
            own_feats = {k: f - feats[""] for k, f in feats.items() if k}
            feat_scale = {k: len(f) / len(feats[k]) if feats[k] else 0.0 for k, f in own_feats.items()}
            return pairs, structural.exercise_pairs(name, own_feats, deadline, reference=feats, ranked=True,
                                                    scale=feat_scale), True
        _pairs_of(name, fps, deadline, pairs, ranked=small)
        return pairs, structural.exercise_pairs(name, feats, deadline, ranked=small), True
    except SimilarityTimeout:
        return pairs, [], False


def _run_exercises(tasks: list[tuple], workers: int) -> list[tuple[list[Pair], list, bool]]:
    """:func:`compare_exercise` on each task, in ``workers`` processes (spawned: the parent may
    hold threads) when there are several, the largest exercises first."""
    if workers <= 1 or len(tasks) <= 1:
        return [compare_exercise(*task) for task in tasks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    tasks = sorted(tasks, key=lambda task: -sum(map(len, task[1].values())))
    with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(compare_exercise, *zip(*tasks)))


def compare_class(entries: list[tuple[str, Path]], *, reference: bool = True,
                  time_limit: float | None = DEFAULT_TIME_LIMIT, names=None, workers: int = 1) -> Result:
    """Compare every pair of the class ``entries`` (``(student id, path)``), and every student
    with the reference solution (``reference=True``, where the kit has ``solutions/``), on each
    exercise of ``names`` (default: all), the exercises shared among ``workers`` processes; a
    class of at most :data:`SMALL_CLASS` is compared as the module's text says (ranked pairs).
    Stops at ``time_limit`` seconds with ``Result.complete`` False and the pairs found so far."""
    start = time.monotonic()
    deadline = _Deadline(time_limit)
    result = Result()
    stubs = kit_sources(paths.exercises_dir())
    refs = kit_sources(paths.solutions_dir()) if reference else {}
    try:
        sources, result.refused = read_class(entries, deadline)
    except SimilarityTimeout:
        result.complete, result.seconds = False, time.monotonic() - start
        return result
    result.students = sorted(sources)
    result.sources = dict(sources, **({"": refs} if refs else {}))
    result.small_class = len(sources) <= SMALL_CLASS
    tasks = []
    for name in names or exercises.NAMES:
        codes = {sid: code[name] for sid, code in sources.items() if name in code}
        if name in refs:
            codes[""] = refs[name]
        tasks.append((name, codes, stubs.get(name), len(sources), deadline.end, result.small_class))
    for pairs, structure, complete in _run_exercises(tasks, workers):
        result.pairs += pairs
        result.structure += structure
        result.complete &= complete
    result.pairs.sort(key=lambda p: (-p.similarity, p.exercise, p.student_a, p.student_b or ""))
    result.structure.sort(key=lambda p: (-p.structure, p.exercise, p.student_a, p.student_b or ""))
    result.seconds = time.monotonic() - start
    return result
