"""LMS import files (:mod:`autograder.exports.lms`): Canvas's gradebook import CSV, Moodle's grade
import CSV and LTI 1.3 AGS score objects, checked against golden files written by hand from the
formats' documentation (``tests/data/lms/``) and against the formats' rules (identity columns, the
Points Possible row, numeric cells, the AGS score schema); a roster mismatch is named; a hand-in
that could not be graded is never a 0; every cell goes through the CSV-injection guard."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.exports import lms
from autograder.records.gradebook import Gradebook
from autograder.results.model import Results, error_results
from results_dicts import record, results as results_dict

DATA = Path(__file__).parent / "data" / "lms"
GRADED_AT = 1725192000.0   # 2024-09-01T12:00:00Z
MINSU_NFD = unicodedata.normalize("NFD", "김민수")   # as macOS unzip names the folder

# IMS Assignment and Grade Services 2.0, the Score publish service's score object
# (application/vnd.ims.lis.v1.score+json): required fields, value sets, and scoreGiven with scoreMaximum
AGS_SCORE = {
    "type": "object",
    "required": ["userId", "activityProgress", "gradingProgress", "timestamp"],
    "properties": {
        "userId": {"type": "string", "minLength": 1},
        "scoreGiven": {"type": "number", "minimum": 0},
        "scoreMaximum": {"type": "number", "exclusiveMinimum": 0},
        "comment": {"type": "string"},
        "activityProgress": {"enum": ["Initialized", "Started", "InProgress", "Submitted", "Completed"]},
        "gradingProgress": {"enum": ["FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"]},
        "timestamp": {"type": "string",
                      "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$"},
    },
    "dependentRequired": {"scoreGiven": ["scoreMaximum"]},
    "if": {"properties": {"gradingProgress": {"const": "FullyGraded"}}},
    "then": {"required": ["scoreGiven", "scoreMaximum"]},
    "additionalProperties": False,
}


def _graded(pe: float, masks: float, *, masks_not_graded: bool = False) -> Results:
    tests = [record("positional_encoding", "table", "passed" if pe == 8 else "failed", 8.0),
             record("masks", "padding", "passed" if masks == 8 else "failed", 8.0,
                    **({"not_graded": "grading data unavailable"} if masks_not_graded else {}))]
    tests[1]["score"] = masks
    results = Results.from_json(results_dict(tests))
    if masks_not_graded:
        results.not_graded = ["masks"]
    return results


@pytest.fixture
def book(tmp_path) -> Path:
    path = tmp_path / "gradebook.sqlite"
    with Gradebook(path) as gb:
        gb.record(MINSU_NFD, _graded(8, 0, masks_not_graded=True), content_hash="h")
        gb.record("ann", _graded(8, 4), content_hash="h")
        gb.record("ben", error_results("ben.zip: not a zip file the grader can read"), content_hash="h")
        gb.record("cho", _graded(8, 8), content_hash="h")
        with gb.conn:
            gb.conn.execute("UPDATE submissions SET graded_at = ?", (GRADED_AT,))
    return path


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_canvas_import_csv_matches_the_documented_layout(book):
    out = lms.export(book, "canvas", DATA / "canvas-roster.csv", assignment="Transformer kit (4402)")
    assert out.text == (DATA / "canvas-grades.csv").read_text(encoding="utf-8")
    rows = _rows(out.text)
    assert rows[0][:5] == list(lms.CANVAS_IDENTITY)                       # identity columns, as Canvas exports them
    assert rows[1][0].strip() == "Points Possible" and rows[1][5] == "16"  # the second row: each column's maximum
    assert all(cell == "" or float(cell) >= 0 for row in rows[2:] for cell in row[5:])
    assert (out.exported, out.missing, out.unknown, out.not_graded, out.pending) == (
        [MINSU_NFD, "ann", "ben"], ["dan"], ["cho"], ["ben"], [MINSU_NFD])
    per_exercise = lms.export(book, "canvas", DATA / "canvas-roster.csv", per_exercise=True)
    assert per_exercise.text == (DATA / "canvas-grades-per-exercise.csv").read_text(encoding="utf-8")


def test_moodle_import_csv_has_one_identity_column_and_only_known_users(book):
    out = lms.export(book, "moodle", DATA / "moodle-roster.csv", match_by="idnumber")
    assert out.text == (DATA / "moodle-grades.csv").read_text(encoding="utf-8")
    by_email = _rows(lms.export(book, "moodle", DATA / "moodle-roster.csv").text)
    assert by_email == [["Email address", "Transformer kit"], ["minsu@example.edu", "8"], ["ann@example.edu", "12"]]
    assert out.not_graded == ["ben"] and out.missing == ["dan"] and out.unknown == ["cho"]


def test_lti_scores_follow_the_ags_score_schema(book):
    out = lms.export(book, "lti", DATA / "lti-roster.csv")
    assert out.text == (DATA / "lti-scores.jsonl").read_text(encoding="utf-8")
    scores = [json.loads(line) for line in out.text.splitlines()]
    for score in scores:
        jsonschema.validate(score, AGS_SCORE, cls=jsonschema.Draft202012Validator)
    assert [s.get("scoreGiven") for s in scores] == [8.0, 12.0, None]   # ben: Failed, never 0
    with pytest.raises(jsonschema.ValidationError):   # the schema itself catches a score without its maximum
        jsonschema.validate({**scores[1], "scoreMaximum": None}, AGS_SCORE)


def test_the_cli_names_a_roster_mismatch(book, tmp_path):
    out = tmp_path / "scores.jsonl"
    run = CliRunner().invoke(main, ["gradebook", "export", str(book), "--format", "lti", "--roster",
                                                    str(DATA / "lti-roster.csv"), "--out", str(out)])
    assert run.exit_code == 0, run.output + run.stderr
    assert "1 student(s) in the roster but not graded (no submission): dan" in run.stderr
    assert "1 student(s) graded but not in the roster (not exported): cho" in run.stderr
    assert "not graded (the grader could not read the hand-in; no score exported): ben" in run.stderr
    assert run.stdout.strip() == f"wrote {out} (3 student(s), lti)"
    assert out.read_text(encoding="utf-8") == (DATA / "lti-scores.jsonl").read_text(encoding="utf-8")


def test_bad_rosters_are_refused_by_name(book, tmp_path):
    twice = tmp_path / "twice.csv"
    twice.write_text("submission_id,user_id\nann,1\nann,2\n", encoding="utf-8")
    with pytest.raises(lms.ExportError, match="names ann twice"):
        lms.export(book, "lti", twice)
    no_column = tmp_path / "no_column.csv"
    no_column.write_text("login,user_id\nann,1\n", encoding="utf-8")
    run = CliRunner().invoke(main, ["gradebook", "export", str(book), "--format", "lti", "--roster", str(no_column)])
    assert run.exit_code == 1 and "the roster has no column 'submission_id'" in run.output and "login, user_id" in run.output
    bom = tmp_path / "bom.csv"   # Excel's UTF-8 byte order mark
    bom.write_bytes("\ufeffsubmission_id,user_id\nann,1\n".encode("utf-8"))
    assert lms.export(book, "lti", bom).exported == ["ann"]


def test_every_cell_goes_through_the_csv_injection_guard(book, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text('submission_id,Email address\nann,"=HYPERLINK(""http://x"")"\n', encoding="utf-8")
    rows = _rows(lms.export(book, "moodle", roster, assignment="@SUM(A1)").text)
    assert rows == [["Email address", "'@SUM(A1)"], ["'=HYPERLINK(\"http://x\")", "12"]]
