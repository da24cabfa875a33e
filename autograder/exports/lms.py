"""Grades as learning management systems import them: Canvas, Moodle, LTI 1.3 (AGS).

``tkit gradebook export DB --format canvas|moodle|lti --roster FILE`` reads a class gradebook and a
roster (a CSV file the instructor exports from the LMS, or writes) that maps each submission id
(the name of the student's folder or zip) to the LMS's own identity of the student, in the
roster's column ``--roster-key`` (default :data:`DEFAULT_KEYS`). Ids on both sides are compared in
Unicode's composed form (NFC), stripped of surrounding spaces. Students of the roster without a
submission, and submissions without a row in the roster, are named (:class:`Export`); only the
students on both sides are exported. Nothing becomes a 0 that was not graded: a hand-in the
grader could not read has no score cell (Canvas and Moodle leave the grade as it is) and an LTI
score with ``gradingProgress: Failed`` and no ``scoreGiven``.

The formats, from the LMSs' documentation:

* **Canvas** gradebook import CSV (Canvas guide "How do I import grades in the Gradebook?"): the
  identity columns ``Student, ID, SIS User ID, SIS Login ID, Section`` copied from the roster,
  which is Canvas's own gradebook export, then one column per assignment (``--assignment``,
  e.g. ``Transformer kit (12345)`` to update an existing assignment by its id; a new name makes a
  new assignment); with ``--per-exercise`` one column per exercise, ``<assignment>: <exercise>``.
  The second row is ``Points Possible`` with each column's maximum. Rows of the roster that are
  not students (its own ``Points Possible`` row) are skipped.
* **Moodle** grade import CSV ("Grade import", CSV file): one identity column, ``Email address``
  or ``ID number`` (``--match email|idnumber``; mapped in Moodle's import form to ``useremail`` /
  ``useridnumber``), then the grade item columns as for Canvas. Moodle refuses a whole file with
  an unknown user, so only the roster's students are written.
* **LTI 1.3 Assignment and Grade Services** score publish service (IMS "Assignment and Grade
  Services" 2.0, the ``application/vnd.ims.lis.v1.score+json`` media type): one JSON object a
  line, ``userId`` (the roster's ``user_id``, the LTI ``sub``), ``scoreGiven``, ``scoreMaximum``,
  ``activityProgress: Completed``, ``gradingProgress: FullyGraded`` (``Pending`` where the grader
  could not judge some tests, ``Failed`` for a hand-in it could not read) and ``timestamp`` (ISO
  8601 with milliseconds and the time zone: when the gradebook recorded the grading).

Every CSV cell goes through :func:`autograder.intake.untrusted.csv_text` (a cell a spreadsheet
would run as a formula gets a leading ``'``); numbers stay numbers.
"""

from __future__ import annotations

import csv
import datetime
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from autograder import exercises
from autograder.intake.textfiles import write_text_atomic
from autograder.intake.untrusted import csv_text, shown
from autograder.records.gradebook import Gradebook
from autograder.results import not_graded
from autograder.results.model import Results

FORMATS = ("canvas", "moodle", "lti")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_IDENTITY = {"email": "Email address", "idnumber": "ID number"}
LTI_USER = "user_id"
DEFAULT_KEYS = {"canvas": "SIS Login ID", "moodle": "submission_id", "lti": "submission_id"}
POINTS_POSSIBLE = "Points Possible"
MAX_ROSTER_BYTES = 16 * 2**20


class ExportError(ValueError):
    """A roster or an option the export cannot use; the message says which and why."""


@dataclass
class Export:
    """What an export wrote: ``text`` (the file's content), ``exported`` (submission ids, in
    roster order), ``missing`` (roster students without a submission), ``unknown`` (submissions
    not in the roster), ``not_graded`` (exported without a score: the grader could not read the
    hand-in) and ``pending`` (exported, but some tests could not be judged: regrade after the fix)."""

    text: str = ""
    exported: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    not_graded: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", str(text or "")).strip()


def read_roster(path: Path) -> list[dict]:
    """The roster's rows as dicts (headers as written, surrounding spaces stripped; a UTF-8 byte
    order mark, as Excel writes, removed). Raises :class:`ExportError` for a file that is not a
    CSV with a header or is over :data:`MAX_ROSTER_BYTES`."""
    path = Path(path)
    if path.stat().st_size > MAX_ROSTER_BYTES:
        raise ExportError(f"{path}: a roster of over {MAX_ROSTER_BYTES // 2**20} MB")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            rows = [{_key(k): (v or "").strip() for k, v in row.items() if k is not None} for row in reader]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ExportError(f"{path}: not a UTF-8 CSV file ({exc})") from None
    if not rows:
        raise ExportError(f"{path}: no students (a CSV file with a header row, then one row per student)")
    return rows


def _column(rows: list[dict], name: str, what: str) -> str:
    """The roster's header matching ``name`` (case and spaces aside). Raises ExportError naming the headers."""
    wanted = _key(name).casefold()
    for header in rows[0]:
        if header.casefold() == wanted:
            return header
    raise ExportError(f"the roster has no column {name!r} ({what}); its columns: "
                      + ", ".join(shown(h) for h in rows[0]))


def match(rows: list[dict], key: str, class_results: dict[str, Results]) -> tuple[list[tuple[str, dict]], Export]:
    """``([(submission id, roster row)], Export with missing and unknown filled)``: the roster's
    students (rows with an id in column ``key``; Canvas's ``Points Possible`` row skipped) matched
    to the gradebook's submissions. Raises ExportError when an id appears twice in the roster."""
    column = _column(rows, key, "the submission ids")
    ids = {_key(sid): sid for sid in class_results}
    seen, matched, export = set(), [], Export()
    for row in rows:
        rid = _key(row.get(column, ""))
        if not rid or POINTS_POSSIBLE.casefold() in " ".join(row.values()).casefold():
            continue   # not a student: empty, or the Points Possible row of a Canvas export
        if rid in seen:
            raise ExportError(f"the roster names {shown(rid)} twice in its column {column!r}")
        seen.add(rid)
        if rid in ids:
            matched.append((ids[rid], row))
        else:
            export.missing.append(rid)
    export.unknown = sorted(sid for key_, sid in ids.items() if key_ not in seen)
    return matched, export


def _columns(assignment: str, per_exercise: bool, class_results: dict[str, Results]) -> list[tuple[str, str | None, float]]:
    """``(header, exercise or None for the total, points possible)`` of the grade columns."""
    graded = [r for r in class_results.values() if not r.error]
    if not per_exercise:
        return [(assignment, None, max((float(r.max_score or 0) for r in graded), default=0.0))]
    names = [n for n in exercises.NAMES if any(n in (r.exercises or {}) for r in graded)]
    return [(f"{assignment}: {n}", n, max(r.exercises[n].max_score for r in graded if n in (r.exercises or {})))
            for n in names]


def _cell(results: Results, exercise: str | None):
    """A grade cell: the total or an exercise's points, '' where nothing was graded."""
    if results.error:
        return ""
    if exercise is None:
        return float(results.score)
    per = (results.exercises or {}).get(exercise)
    return "" if per is None or exercise in not_graded.of_results(results) else float(per.score)


def _note_states(export: Export, sid: str, results: Results) -> None:
    export.exported.append(sid)
    if results.error:
        export.not_graded.append(sid)
    elif not_graded.of_results(results):
        export.pending.append(sid)


def canvas(rows, matched, export, class_results, columns) -> str:
    identity = [_column(rows, name, "Canvas's gradebook export has it") for name in CANVAS_IDENTITY]
    table = [[*CANVAS_IDENTITY, *(c[0] for c in columns)],
             [f"    {POINTS_POSSIBLE}", *[""] * (len(identity) - 1), *(c[2] for c in columns)]]
    for sid, row in matched:
        _note_states(export, sid, class_results[sid])
        table.append([*(row[h] for h in identity), *(_cell(class_results[sid], c[1]) for c in columns)])
    return csv_text(table)


def moodle(rows, matched, export, class_results, columns, by: str) -> str:
    if by not in MOODLE_IDENTITY:
        raise ExportError(f"--match must be one of {', '.join(MOODLE_IDENTITY)}, got {by!r}")
    column = _column(rows, MOODLE_IDENTITY[by], f"Moodle's {by}")
    table = [[MOODLE_IDENTITY[by], *(c[0] for c in columns)]]
    for sid, row in matched:
        if class_results[sid].error:   # Moodle would clear the grade: leave it as it is
            export.not_graded.append(sid)
            continue
        _note_states(export, sid, class_results[sid])
        table.append([row[column], *(_cell(class_results[sid], c[1]) for c in columns)])
    return csv_text(table)


def timestamp(seconds: float) -> str:
    """ISO 8601 in UTC with milliseconds, as AGS asks (``2024-09-01T12:00:00.000+00:00``)."""
    moment = datetime.datetime.fromtimestamp(float(seconds), tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds")


def lti_score(user_id: str, results: Results, graded_at: float) -> dict:
    """One AGS score object for a submission's total."""
    score = {"userId": user_id, "activityProgress": "Completed", "timestamp": timestamp(graded_at)}
    if results.error:
        return {**score, "activityProgress": "Submitted", "gradingProgress": "Failed"}
    pending = bool(not_graded.of_results(results))
    return {**score, "scoreGiven": float(results.score), "scoreMaximum": float(results.max_score or 0),
            "gradingProgress": "Pending" if pending else "FullyGraded"}


def lti(rows, matched, export, class_results, graded_at: dict[str, float]) -> str:
    column = _column(rows, LTI_USER, "the LTI user id, the 'sub' of the launch")
    lines = []
    for sid, row in matched:
        if not row[column]:
            raise ExportError(f"the roster has no {LTI_USER} for {shown(sid)}")
        _note_states(export, sid, class_results[sid])
        lines.append(json.dumps(lti_score(row[column], class_results[sid], graded_at[sid]), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def export(db: Path, fmt: str, roster: Path, *, key: str | None = None, assignment: str = "Transformer kit",
           per_exercise: bool = False, match_by: str = "email") -> Export:
    """The export of the gradebook ``db`` in ``fmt`` (:data:`FORMATS`) for the students of
    ``roster`` (column ``key`` holding the submission ids; default :data:`DEFAULT_KEYS`).
    ``assignment``/``per_exercise``: the grade columns (Canvas, Moodle); ``match_by``: Moodle's
    identity column (``email`` or ``idnumber``). Raises :class:`ExportError` (a missing roster
    column, an id twice in the roster, an unknown format) and
    :class:`autograder.records.gradebook.GradebookError`."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    rows = read_roster(roster)
    with Gradebook(db) as book:
        class_results = book.all_results()
        graded_at = dict(book.conn.execute("SELECT student_id, graded_at FROM submissions"))
    matched, out = match(rows, key or DEFAULT_KEYS[fmt], class_results)
    columns = _columns(assignment, per_exercise, class_results)
    if fmt == "canvas":
        out.text = canvas(rows, matched, out, class_results, columns)
    elif fmt == "moodle":
        out.text = moodle(rows, matched, out, class_results, columns, match_by)
    else:
        out.text = lti(rows, matched, out, class_results, graded_at)
    return out


def write(out: Export, path: Path) -> Path:
    """Write an export's text (UTF-8, atomically); returns the path."""
    write_text_atomic(Path(path), out.text)
    return Path(path)
