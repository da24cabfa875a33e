"""The class gradebook: an SQLite file with a row per submission and a row per test.

Every submission is written in one transaction (its row, its test rows, its results JSON), so a
run that is killed loses nothing already recorded, and a reader never sees half a submission.
``tkit grade --resume`` asks :meth:`Gradebook.needs_grading` and regrades only the submissions
whose content hash, kit version or grading options changed. Shards of a class graded in
parallel are joined with :func:`merge`; :meth:`Gradebook.export_csv` writes grades.csv for an LMS.

Tables::

    meta(key PRIMARY KEY, value)                       -- schema version, run seed
    submissions(student_id PRIMARY KEY, content_hash, kit_version, options, seed, score,
                max_score, execution_time, graded_at, error, results_json)
    tests(student_id, nodeid, exercise, name, visibility, status, score, max_score,
          mistake, failure, duration, signature, PRIMARY KEY (student_id, nodeid))

``tests.signature`` is a failing test's wrong-output fingerprint (instructor-side behaviour
evidence, :mod:`autograder.similarity.behaviour`; never in ``results_json``); a gradebook of an
earlier kit gets the column, empty, when opened. ``results_json`` is the instructor's form
(``Results.to_gradescope(instructor=True)``: what hidden tests withhold from the student
included), and the ``tests`` rows hold a hidden test's own mistake, failure and duration.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from autograder import __version__, exercises
from autograder.intake.limits import SUBMISSION_INTAKE_MAX_BYTES
from autograder.intake.textfiles import write_text_atomic
from autograder.intake.untrusted import csv_text
from autograder.results import not_graded
from autograder.results.model import Results, TestResult
from autograder.intake.submission import submission_files


SCHEMA_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    student_id TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    kit_version TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '',
    seed INTEGER,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    execution_time REAL,
    graded_at REAL NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    results_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tests (
    student_id TEXT NOT NULL REFERENCES submissions(student_id) ON DELETE CASCADE,
    nodeid TEXT NOT NULL,
    exercise TEXT NOT NULL,
    name TEXT NOT NULL,
    visibility TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    mistake TEXT,
    failure TEXT,
    duration REAL,
    signature TEXT,
    PRIMARY KEY (student_id, nodeid)
);
"""
SUBMISSION_COLUMNS = ("student_id", "content_hash", "kit_version", "options", "seed", "score", "max_score",
                      "execution_time", "graded_at", "error", "results_json")
TEST_COLUMNS = ("student_id", "nodeid", "exercise", "name", "visibility", "status", "score", "max_score",
                "mistake", "failure", "duration", "signature")
HASHED_SUFFIXES = (".py", ".ipynb")


class GradebookError(ValueError):
    """A gradebook file is not one of the kit's, or has a different schema version."""


def content_hash(path: Path) -> str:
    """SHA-256 of what the grader reads from a submission: a .zip/.ipynb file's bytes, or, for
    a folder, its top-level regular ``.py``/``.ipynb`` files (name and bytes, sorted; never a
    symlink, as :func:`autograder.intake.submission.submission_files`). Files are read in chunks.

    The bytes read are bounded: when the files are over ``limits.SUBMISSION_INTAKE_MAX_BYTES``
    together (sizes from the file system), their names, sizes and modification times are hashed
    instead of their bytes. Grading refuses such a submission anyway (a clear error for that
    student); ``--resume`` regrades it when one of those changes.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"submission {path} does not exist")
    files = [path] if path.is_file() else submission_files(path, tuple(HASHED_SUFFIXES))
    stats = [f.stat() for f in files]
    oversize = sum(st.st_size for st in stats) > SUBMISSION_INTAKE_MAX_BYTES
    if path.is_file() and not oversize:
        return _file_digest(path).hexdigest()
    digest = hashlib.sha256()
    for file, st in zip(files, stats):
        digest.update(file.name.encode("utf-8", "surrogateescape") + b"\0")
        if oversize:
            digest.update(f"oversize {st.st_size} {st.st_mtime_ns}".encode() + b"\0")
        else:
            digest.update(_file_digest(file).digest())
    return digest.hexdigest()


def _file_digest(path: Path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest


def options_key(options: dict) -> str:
    """A canonical text of the grading options that change results (visibility, exercises,
    training); stored so that ``--resume`` regrades after they change."""
    keep = {k: options.get(k) for k in ("visibility", "names", "training")}
    keep = {k: list(v) if isinstance(v, (tuple, list)) else v for k, v in keep.items()}
    return json.dumps(keep, sort_keys=True)


class Gradebook:
    """An open gradebook (``with Gradebook(path) as gb: ...``)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=30)
        self.conn.execute("PRAGMA foreign_keys = ON")
        try:
            self._refuse_foreign_database()
            with self.conn:
                self.conn.executescript(f"BEGIN; {SCHEMA} COMMIT;")   # all tables or none
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            version = self.get_meta("schema_version")
            self._add_signature_column()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise GradebookError(f"{self.path} is not a gradebook ({exc})") from None
        if version != SCHEMA_VERSION:
            self.conn.close()
            raise GradebookError(f"{self.path} has gradebook schema {version}, this kit writes {SCHEMA_VERSION}")

    def _refuse_foreign_database(self) -> None:
        """Raise :class:`GradebookError` before writing anything when the file is an SQLite
        database with tables but no gradebook ``meta`` table holding a schema version (another
        program's database: the kit must not add its tables to it). An empty database is fine."""
        tables = {row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = None
        if "meta" in tables:
            try:
                version = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            except sqlite3.DatabaseError:
                pass
        if tables and version is None:
            self.conn.close()
            raise GradebookError(f"{self.path} is not a gradebook (an SQLite database with "
                                 f"{len(tables)} other table(s) and no gradebook schema version)")

    def _add_signature_column(self) -> None:
        """A gradebook of an earlier kit: add ``tests.signature`` (empty), an additive change."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(tests)")}
        if "signature" not in columns:
            with self.conn:
                self.conn.execute("ALTER TABLE tests ADD COLUMN signature TEXT")

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    # -- writing -----------------------------------------------------------------------------
    def record(self, student_id: str, results: Results, *, content_hash: str, options: str = "",
               data: dict | None = None) -> None:
        """Store one submission's results (replacing an earlier grading) in one transaction.
        ``results`` may carry ``error`` (a submission that could not be graded). ``data``: its
        instructor-side results dict when the caller has made it already
        (``results.to_gradescope(instructor=True)`` otherwise). Raises TypeError when ``results`` is not :class:`~autograder.results.model.Results`."""
        if not isinstance(results, Results):
            raise TypeError(f"record takes Results, got {type(results).__name__}")
        data = results.to_gradescope(instructor=True) if data is None else data
        row = {
            "student_id": student_id, "content_hash": content_hash,
            "kit_version": results.kit_version or __version__, "options": options,
            "seed": results.seed, "score": results.score,
            "max_score": float(results.max_score or 0.0),
            "execution_time": results.total_time, "graded_at": time.time(),
            "error": results.error or "",
            "results_json": json.dumps(data, ensure_ascii=False),
        }
        tests = [_test_row(student_id, t) for t in results.tests]
        with self.conn:   # one transaction: all of it or none of it
            self._insert(row, tests)

    def _insert(self, row: dict, tests: list[dict]) -> None:
        self.conn.execute("DELETE FROM tests WHERE student_id = ?", (row["student_id"],))
        self.conn.execute(f"INSERT OR REPLACE INTO submissions ({', '.join(SUBMISSION_COLUMNS)}) "
                          f"VALUES ({', '.join('?' * len(SUBMISSION_COLUMNS))})",
                          [row[c] for c in SUBMISSION_COLUMNS])
        self.conn.executemany(f"INSERT INTO tests ({', '.join(TEST_COLUMNS)}) "
                              f"VALUES ({', '.join('?' * len(TEST_COLUMNS))})",
                              [[t.get(c) for c in TEST_COLUMNS] for t in tests])

    # -- reading -----------------------------------------------------------------------------
    def needs_grading(self, student_id: str, content_hash: str, options: str = "") -> bool:
        """True unless the gradebook holds a grading of this exact content, by this kit version,
        with these options."""
        row = self.conn.execute(
            "SELECT content_hash, kit_version, options, error FROM submissions WHERE student_id = ?",
            (student_id,)).fetchone()
        return row is None or tuple(row[:3]) != (content_hash, __version__, options)

    def students(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT student_id FROM submissions ORDER BY student_id")]

    def results(self, student_id: str) -> Results:
        """The stored results of a student (KeyError when absent)."""
        row = self.conn.execute("SELECT results_json FROM submissions WHERE student_id = ?",
                                (student_id,)).fetchone()
        if row is None:
            raise KeyError(f"no submission {student_id!r} in {self.path}")
        return Results.from_json(json.loads(row[0]))

    def signatures(self) -> list[tuple]:
        """Every test row as ``(student_id, exercise, nodeid, name, status, mistake, signature)``
        (``signature`` None where the test passed or failed without a wrong output), by student
        and test: the behaviour evidence's input (:mod:`autograder.similarity.behaviour`)."""
        return [tuple(row) for row in self.conn.execute(
            "SELECT student_id, exercise, nodeid, name, status, mistake, signature FROM tests "
            "ORDER BY student_id, nodeid")]

    def all_results(self, known: dict[str, Results] | None = None) -> dict[str, Results]:
        """``{student id: results}`` for every recorded submission, in student-id order. The
        submissions in ``known`` (results the caller recorded itself) are taken from it; only the
        others are read back from their stored JSON."""
        known = known or {}
        out = {}
        for (sid,) in self.conn.execute("SELECT student_id FROM submissions ORDER BY student_id"):
            out[sid] = known[sid] if sid in known else self.results(sid)
        return out

    def grade_rows(self, class_results: dict[str, Results] | None = None) -> tuple[list[str], list[list]]:
        """The header and rows of grades.csv: student id, each exercise's score, total, and
        ``not_graded`` (the exercises the grader could not judge, space-separated). Score cells
        stay numeric: an exercise not graded (or not selected) is an empty cell.
        ``class_results``: :meth:`all_results` when the caller has it (read here otherwise)."""
        names = [n for n in exercises.NAMES]
        header = ["student_id", *names, "total", "not_graded"]
        rows = []
        for sid, results in (self.all_results() if class_results is None else class_results).items():
            per = results.exercises or {}
            ungraded = not_graded.of_results(results)
            rows.append([sid, *[_fmt(per[n].score) if n in per and n not in ungraded else "" for n in names],
                         _fmt(results.score), " ".join(ungraded)])
        return header, rows

    def export_csv(self, out: Path, class_results: dict[str, Results] | None = None) -> Path:
        """Write grades.csv (UTF-8, header row; an exercise not graded is an empty cell). A text
        cell a spreadsheet would run as a formula (a student id such as ``=HYPERLINK(...)``) is
        prefixed with ``'`` and a cell holding a line break is quoted
        (:func:`autograder.intake.untrusted.csv_text`); score cells stay numbers.
        ``class_results`` as for :meth:`grade_rows`."""
        header, rows = self.grade_rows(class_results)
        write_text_atomic(Path(out), csv_text([header, *rows]))
        return Path(out)


def _fmt(x) -> str:
    return f"{float(x):g}"


def _test_row(student_id: str, test: TestResult) -> dict:
    return {"student_id": student_id, "nodeid": test.nodeid or test.name,
            "exercise": test.exercise, "name": test.name, "visibility": test.visibility or "",
            "status": test.status, "score": test.score,
            "max_score": test.max_score, "mistake": test.instructor_mistake,
            "failure": (test.withheld or {}).get("failure", test.failure),
            "duration": (test.withheld or {}).get("duration", test.duration), "signature": test.signature}


def run_seeds(sources: list[Path], out: Path) -> dict[str, str]:
    """``{path: run seed}`` of each gradebook in ``sources`` and of ``out`` when it exists, for
    those that record one (``tkit grade`` stores the run's seed in ``meta``).
    Raises GradebookError on a missing source, ``out`` among the sources, or a file that is not
    a gradebook."""
    seeds = {}
    for path in [Path(s) for s in sources] + ([Path(out)] if Path(out).is_file() else []):
        if not path.is_file():
            raise GradebookError(f"{path} does not exist")
        if path in sources and path.resolve() == Path(out).resolve():
            raise GradebookError(f"{path} is the output gradebook")
        with Gradebook(path) as book:
            seed = book.get_meta("seed")
        if seed is not None:
            seeds[str(path)] = seed
    return seeds


def merge(sources: list[Path], out: Path, *, allow_mixed_seeds: bool = False) -> dict[str, str]:
    """Join shard gradebooks into ``out`` (created or added to). A student graded in more
    than one source keeps the most recent grading. Returns ``{student id: source path}``
    for the rows taken.

    Shards of one class must be graded with one run seed (and one grading secret): the seed
    decides the inputs every test draws, so grades from different seeds are not comparable.
    Raises GradebookError when the sources (and an existing ``out``) record different seeds,
    unless ``allow_mixed_seeds``; on a file that is not a gradebook; on ``out`` among the sources.
    Nothing is written when it raises for seeds."""
    sources = [Path(s) for s in sources]
    seeds = run_seeds(sources, out)
    if len(set(seeds.values())) > 1 and not allow_mixed_seeds:
        listed = ", ".join(f"{path}: {seed}" for path, seed in seeds.items())
        raise GradebookError(f"these gradebooks were graded with different seeds ({listed}); their tests "
                             "drew different inputs, so the grades are not comparable. Regrade the shards "
                             "with one --seed, or merge anyway with --allow-mixed-seeds")
    taken: dict[str, tuple[float, str]] = {}
    with Gradebook(out) as target:
        if len(set(seeds.values())) == 1:
            target.set_meta("seed", next(iter(seeds.values())))
        for source in sources:
            with Gradebook(source) as shard:
                shard.conn.row_factory = sqlite3.Row
                subs = [dict(r) for r in shard.conn.execute("SELECT * FROM submissions")]
                tests = [dict(r) for r in shard.conn.execute("SELECT * FROM tests")]
            by_student: dict[str, list[dict]] = {}
            for t in tests:
                by_student.setdefault(t["student_id"], []).append(t)
            with target.conn:   # one transaction per shard
                for sub in subs:
                    sid = sub["student_id"]
                    current = target.conn.execute("SELECT graded_at FROM submissions WHERE student_id = ?",
                                                  (sid,)).fetchone()
                    if current is not None and current[0] > sub["graded_at"]:
                        continue
                    target._insert(sub, by_student.get(sid, []))
                    taken[sid] = (sub["graded_at"], str(source))
    return {sid: src for sid, (_, src) in sorted(taken.items())}
