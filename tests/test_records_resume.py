"""What ``--resume`` redoes (:meth:`ClassRecords.why`): a submission counts as graded only once
its files are written and its gradebook row, committed last, holds their digests; a changed
grader (the fingerprint of its suites, solutions, catalog and code) regrades, and the regrade
report lists exactly the students whose score moved. No grading run: hand-made results."""

from __future__ import annotations

import csv
import json

import pytest

from autograder.records import class_run, fingerprint, gradebook
from autograder.records.class_run import ClassRecords
from autograder.records.fingerprint import Fingerprint
from autograder.results.model import Results
from results_dicts import record, results as results_dict

OPTIONS = {"visibility": ["public", "hidden"], "names": None, "training": True}


def _results(*passed: bool) -> Results:
    tests = [record("masks", f"test {i}", "passed" if ok else "failed", 2.0, nodeid=f"hidden/test_masks.py::t{i}")
             for i, ok in enumerate(passed)]
    return Results.from_json(results_dict(tests))


def _records(out, grading: Fingerprint | None = None, options=OPTIONS) -> ClassRecords:
    return ClassRecords(out, options=options, lang="en", grading=grading or Fingerprint("f1", {"suites": "a"}))


@pytest.fixture
def hand_ins(tmp_path):
    todo = []
    for sid in ("ann", "ben", "cho"):
        (tmp_path / "class" / sid).mkdir(parents=True)
        (tmp_path / "class" / sid / "masks.py").write_text(f"# {sid}\n")
        todo.append((sid, tmp_path / "class" / sid))
    return todo


def _grade(records: ClassRecords, todo, scores: dict, resume=False) -> list[str]:
    planned = records.plan(todo, resume)
    for sid, path in planned:
        records.on_result(sid, path, scores[sid])
    return [sid for sid, _ in planned]


def test_a_submission_is_graded_only_once_its_row_is_committed_after_its_files(tmp_path, hand_ins, monkeypatch):
    out = tmp_path / "out"
    records = _records(out)
    records.plan(hand_ins, resume=True)

    def killed(*args, **kwargs):   # the run dies between the files and the commit
        raise KeyboardInterrupt

    monkeypatch.setattr(records.book, "record", killed)
    with pytest.raises(KeyboardInterrupt):
        records.on_result("ann", hand_ins[0][1], _results(True, True))
    assert (records.student_folder("ann") / "feedback.md").is_file()   # the files are there ...
    assert records.why("ann") == "new"                                   # ... but ann is not graded
    monkeypatch.undo()
    records.on_result("ann", hand_ins[0][1], _results(True, True))
    assert records.why("ann") == ""
    records.close()


def test_files_a_killed_run_left_half_written_are_redone(tmp_path, hand_ins, monkeypatch):
    out = tmp_path / "out"
    records = _records(out)
    scores = {"ann": _results(True, False), "ben": _results(True, True), "cho": _results(False, False)}
    assert _grade(records, hand_ins, scores, resume=True) == ["ann", "ben", "cho"]
    assert _grade(records, hand_ins, scores, resume=True) == []
    # a second run (no --resume) regrades ann and is killed after her new results.json: the row
    # still holds the first grading, whose digests the new file does not match
    monkeypatch.setattr(class_run.render, "write_feedback", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    changed = _results(True, False)
    changed.execution_time = 9.0
    with pytest.raises(KeyboardInterrupt):
        records.on_result("ann", hand_ins[0][1], changed)
    monkeypatch.undo()
    (records.student_folder("ben") / "feedback.html").unlink()   # removed by hand
    assert {sid: records.why(sid) for sid, _ in hand_ins} == {"ann": "files incomplete", "ben": "files incomplete",
                                                               "cho": ""}
    assert _grade(records, hand_ins, scores, resume=True) == ["ann", "ben"]
    assert _grade(records, hand_ins, scores, resume=True) == []
    records.close()


def test_resume_regrades_after_the_grader_the_content_or_the_options_change(tmp_path, hand_ins):
    out = tmp_path / "out"
    scores = {"ann": _results(True, False), "ben": _results(True, True), "cho": _results(False, False)}
    first = _records(out)
    _grade(first, hand_ins, scores)
    first.close()
    (hand_ins[2][1] / "masks.py").write_text("# cho, fixed\n")
    other_options = _records(out, options={**OPTIONS, "names": ["masks"]})
    other_options.plan(hand_ins, resume=True)
    assert other_options.reasons == {"ann": "options changed", "ben": "options changed", "cho": "submission changed"}
    other_options.close()
    fixed = _records(out, Fingerprint("f2", {"suites": "b"}))
    fixed.plan(hand_ins, resume=True)
    assert fixed.reasons == {"ann": "grader changed", "ben": "grader changed", "cho": "submission changed"}
    fixed.close()


def test_the_regrade_report_lists_exactly_the_students_whose_score_moved(tmp_path, hand_ins):
    out = tmp_path / "out"
    before = {"ann": _results(True, False), "ben": _results(True, True), "cho": _results(False, False)}
    first = _records(out, Fingerprint("f1", {"suites": "a", "catalog": "c"}))
    _grade(first, hand_ins, before)
    first.finish()
    assert not (out / "regrades.csv").exists() and first.regrade_report() == []
    first.close()
    # a hidden test corrected: ann's second test now passes, ben's first fails, cho unchanged
    after = {"ann": _results(True, True), "ben": _results(False, True), "cho": _results(False, False)}
    fixed = _records(out, Fingerprint("f2", {"suites": "b", "catalog": "c"}))
    assert _grade(fixed, hand_ins, after, resume=True) == ["ann", "ben", "cho"]
    fixed.finish()
    fixed.close()
    with open(out / "regrades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student_id"], r["old_score"], r["new_score"], r["change"], r["why"]) for r in rows] == [
        ("ann", "2", "4", "+2", "grader changed (suites)"), ("ben", "4", "2", "-2", "grader changed (suites)")]
    assert rows[0]["tests_moved"] == "masks: test 1: 0 -> 2" and rows[1]["tests_moved"] == "masks: test 0: 2 -> 0"
    summary = (out / "summary.html").read_text(encoding="utf-8")
    assert "Scores a regrade changed" in summary and "masks: test 1: 0 &rarr; 2" in summary
    again = _records(out, Fingerprint("f2", {"suites": "b", "catalog": "c"}))   # a rerun of the same: kept
    assert _grade(again, hand_ins, after) == ["ann", "ben", "cho"]
    assert [r["student"] for r in again.regrade_report()] == ["ann", "ben"]
    again.close()


def test_the_fingerprint_hashes_what_grades(tmp_path):
    suite = tmp_path / "test_toy.py"
    suite.write_text("def test_x():\n    assert 1 + 1 == 2\n")
    first = fingerprint.of_grading(files=[suite])
    assert fingerprint.of_grading(files=[suite]) == first and set(first.parts) == set(fingerprint.PARTS)
    fingerprint._of.cache_clear()
    suite.write_text("def test_x():\n    assert abs(1 + 1 - 2) <= 1e-5\n")   # a tolerance corrected
    second = fingerprint.of_grading(files=[suite])
    assert second.digest != first.digest and second.changed(first.parts) == ["suites"]
    public = fingerprint.of_grading(("public",), ["masks"])
    everything = fingerprint.of_grading()
    assert public.parts["suites"] != everything.parts["suites"] and public.parts["code"] == everything.parts["code"]
    assert {p.relative_to(fingerprint.PACKAGE_DIR).parts[0] for p in fingerprint._code_files()
            if p.parent != fingerprint.PACKAGE_DIR} == \
        set(fingerprint.GRADING_CODE)   # reports, records, exports ... change how a grade is shown, not the grade


def test_stale_temporary_files_of_a_killed_write_are_removed(tmp_path, hand_ins):
    records = _records(tmp_path / "out")
    folder = records.student_folder("ann")
    folder.mkdir(parents=True)
    (folder / ".results.json.123.tmp").write_text("{half")
    records.plan(hand_ins, resume=True)
    records.on_result("ann", hand_ins[0][1], _results(True))
    assert sorted(p.name for p in folder.iterdir()) == ["feedback.html", "feedback.md", "results.json"]
    assert json.loads((folder / "results.json").read_text())["score"] == 2.0
    records.close()


def test_grades_csv_of_a_hand_in_that_could_not_be_graded(tmp_path):
    with gradebook.Gradebook(tmp_path / "g.sqlite") as book:
        from autograder.results.model import error_results

        book.record("bad", error_results("bad.zip: not a zip file the grader can read"), content_hash="h")
        header, rows = book.grade_rows()
    row = dict(zip(header, rows[0]))
    assert row["total"] == "" and row["not_graded"] == "all"
    assert row["not_graded_reason"] == "bad.zip: not a zip file the grader can read"
