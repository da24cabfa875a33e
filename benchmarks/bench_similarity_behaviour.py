"""Behaviour evidence benchmark: wall time of the analysis against class size (not a test).

A synthetic graded class, as gradebook rows: every student runs every test of every exercise
(the kit's exercises, :data:`TESTS_PER_EXERCISE` tests each). Each student is correct on an
exercise with probability 0.6; otherwise the exercise has one of 8 common named mistakes (60 %),
a rare unnamed bug of their own (35 %) or a constant output (5 %), failing 2 to all of the
exercise's tests with that bug's outputs. Five pairs copy one exercise's unnamed bug. Measured:
the rows read back from a gradebook (SQLite, :meth:`Gradebook.signatures`) and the analysis
(:func:`autograder.similarity.behaviour.analyse`), per class size::

    .venv/bin/python benchmarks/bench_similarity_behaviour.py             # 25, 100, 300 and 600 students
    .venv/bin/python benchmarks/bench_similarity_behaviour.py --sizes 300
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import exercises  # noqa: E402
from autograder.similarity import behaviour  # noqa: E402

TESTS_PER_EXERCISE = 12
COPIED_PAIRS = 5


def synthetic_rows(size: int, seed: int = 0) -> tuple[list[tuple], set]:
    """Gradebook rows of a class of ``size`` and the copied ``(a, b, exercise)`` triples."""
    rng = random.Random(seed)
    students = [f"student{i:04d}" for i in range(size)]
    bugs: dict[tuple[str, str], tuple] = {}   # (student, exercise) -> (kind, id, failing tests)
    for sid in students:
        for name in exercises.NAMES:
            draw = rng.random()
            if draw < 0.6:
                continue
            failing = frozenset(rng.sample(range(TESTS_PER_EXERCISE), rng.randint(2, TESTS_PER_EXERCISE)))
            kind = rng.random()
            if kind < 0.6:
                k = rng.randrange(8)
                failing = frozenset(range(0, TESTS_PER_EXERCISE, 1 + k % 3))   # a mistake fails the same tests
                bugs[(sid, name)] = ("named", f"{name}_mistake_{k}", failing)
            elif kind < 0.95:
                bugs[(sid, name)] = ("unnamed", f"{sid}-{name}", failing)
            else:
                bugs[(sid, name)] = ("constant", "zeros", failing)
    copied = set()
    for _ in range(COPIED_PAIRS):
        a, b = sorted(rng.sample(students, 2))
        name = rng.choice(exercises.NAMES)
        failing = frozenset(rng.sample(range(TESTS_PER_EXERCISE), 4))
        bugs[(a, name)] = bugs[(b, name)] = ("unnamed", f"copy-{a}-{name}", failing)
        copied.add((a, b, name))
    rows = []
    for sid in students:
        for name in exercises.NAMES:
            kind, bug, failing = bugs.get((sid, name), (None, None, frozenset()))
            for t in range(TESTS_PER_EXERCISE):
                nodeid = f"autograder/suites/hidden/test_{name}.py::test_{t}"
                if t not in failing:
                    rows.append((sid, name, nodeid, f"{name}: test {t}", "passed", None, None))
                    continue
                digest = f"{abs(hash((bug, t))) % (1 << 64):016x}"
                sig = ("c:" if kind == "constant" else "") + digest
                rows.append((sid, name, nodeid, f"{name}: test {t}", "failed",
                             bug if kind == "named" else None, sig))
    return rows, copied


def store(rows: list[tuple], path: Path) -> None:
    """Write ``rows`` into a gradebook's tests table (and a submission row per student)."""
    from autograder.records.gradebook import Gradebook

    with Gradebook(path) as book, book.conn:
        for sid in sorted({r[0] for r in rows}):
            book.conn.execute("INSERT INTO submissions (student_id, content_hash, kit_version, score, max_score, "
                              "graded_at, results_json) VALUES (?, '', '', 0, 0, 0, '{}')", (sid,))
        book.conn.executemany("INSERT INTO tests (student_id, nodeid, exercise, name, visibility, status, score, "
                              "max_score, mistake, signature) VALUES (?, ?, ?, ?, 'after_published', ?, 0, 1, ?, ?)",
                              [(s, n, e, m, st, mi, sig) for s, e, n, m, st, mi, sig in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 100, 300, 600])
    args = parser.parse_args()
    print(f"{'students':>8} {'test rows':>9} {'read s':>7} {'analyse s':>9} {'pairs':>7} {'flagged':>7} "
          f"{'copies found':>12} {'other flagged':>13}   load {os.getloadavg()[0]:.2f}")
    for size in args.sizes:
        rows, copied = synthetic_rows(size)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "gradebook.sqlite"
            store(rows, path)
            start = time.perf_counter()
            from autograder.records.gradebook import Gradebook

            with Gradebook(path) as book:
                read = book.signatures()
            read_s = time.perf_counter() - start
        start = time.perf_counter()
        result = behaviour.analyse(read)
        analyse_s = time.perf_counter() - start
        flagged = {(p.student_a, p.student_b, p.exercise) for p in result.flagged}
        print(f"{size:>8} {len(rows):>9} {read_s:>7.3f} {analyse_s:>9.3f} {len(result.pairs):>7} {len(flagged):>7} "
              f"{len(flagged & copied):>5} of {len(copied):<4} {len(flagged - copied):>13}")


if __name__ == "__main__":
    main()
