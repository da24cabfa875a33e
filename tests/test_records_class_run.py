"""A class run's records (:mod:`autograder.records.class_run`): one results shape from the grading
to the gradebook (a submission's Results is turned into results.json's data once, in the main
process, and the class reports of a run read the objects it recorded; only an earlier run's
submissions are read back from the gradebook), each student's folder and its link, and a
results.json for a submission that could not be graded."""

from __future__ import annotations

import json
import shutil
from urllib.parse import unquote

import pytest

from autograder import paths
from autograder.records.class_run import ClassRecords
from autograder.results.model import Results
from autograder.run import batch

SUITE = '''
import pytest

pytestmark = pytest.mark.visibility("public")

@pytest.mark.exercise("masks")
@pytest.mark.points(2)
def test_causal(student):
    """make_causal_mask(3) has 3 blocked positions"""
    assert int(student.masks.make_causal_mask(3).sum()) == 3
'''


@pytest.fixture
def toy_class(tmp_path):
    suite = tmp_path / "suite" / "test_class_run_toy.py"   # a name no other test's suite has
    suite.parent.mkdir()
    suite.write_text(SUITE)
    todo = []
    for sid in ("ann", "ben", "cho"):
        sub = tmp_path / "class" / sid
        sub.mkdir(parents=True)
        if sid != "ben":   # ben hands in nothing: 0 points
            shutil.copyfile(paths.solutions_dir() / "masks.py", sub / "masks.py")
        todo.append((sid, sub))
    return suite, todo


def _counting(monkeypatch, name):
    calls = []
    real = getattr(Results, name)
    if isinstance(Results.__dict__[name], classmethod):
        def spy(cls, *a, **k):
            calls.append(1)
            return real(*a, **k)
        monkeypatch.setattr(Results, name, classmethod(spy))
    else:
        def spy(self, *a, **k):
            calls.append(bool(k.get("instructor", a[0] if a else False)))
            return real(self, *a, **k)
        monkeypatch.setattr(Results, name, spy)
    return calls


@pytest.mark.slow   # a grading run
def test_results_json_is_made_once_per_submission(toy_class, tmp_path, monkeypatch):
    suite, todo = toy_class
    out = tmp_path / "out"
    to_json, from_json = _counting(monkeypatch, "to_gradescope"), _counting(monkeypatch, "from_json")
    records = ClassRecords(out, options={}, lang="en")
    try:
        batch.grade_many(todo, out, options=dict(files=[suite], seed=5), on_result=records.on_result, workers=1)
        records.finish()
    finally:
        records.close()
    # one conversion each into the student's form and one into the instructor's, nothing parsed back
    assert sorted(to_json) == [False] * 3 + [True] * 3 and from_json == []
    written = {sid: json.loads((records.student_folder(sid) / "results.json").read_text()) for sid, _ in todo}
    assert {sid: r["score"] for sid, r in written.items()} == {"ann": 2.0, "ben": 0.0, "cho": 2.0}
    grades = (out / "grades.csv").read_text().splitlines()
    assert grades[0].startswith("student_id,") and [row.split(",")[0] for row in grades[1:]] == ["ann", "ben", "cho"]


@pytest.mark.slow   # a grading run
def test_a_resumed_run_reads_back_only_the_submissions_it_did_not_grade(toy_class, tmp_path, monkeypatch):
    suite, todo = toy_class
    out = tmp_path / "out"
    records = ClassRecords(out, options={}, lang="en")
    batch.grade_many(todo, out, options=dict(files=[suite], seed=5), on_result=records.on_result, workers=1)
    records.finish()
    records.close()
    from_json = _counting(monkeypatch, "from_json")
    again = ClassRecords(out, options={}, lang="en")
    try:
        batch.grade_many(todo[:1], out, options=dict(files=[suite], seed=5), on_result=again.on_result, workers=1)
        again.finish()
    finally:
        again.close()
    assert len(from_json) == 2   # ben and cho, from the gradebook; ann is this run's object


def test_on_result_takes_results_or_an_exception_only(tmp_path):
    records = ClassRecords(tmp_path / "out", options={}, lang="en")
    try:
        with pytest.raises(TypeError, match="on_result takes Results or an exception, got dict"):
            records.on_result("ann", tmp_path, {"score": 1.0, "tests": []})
        (tmp_path / "ann.zip").write_bytes(b"not a zip")
        recorded = records.on_result("ann", tmp_path / "ann.zip", ValueError("ann.zip is not a zip file"))
        assert recorded.error == "ann.zip is not a zip file" and recorded.score == 0.0
        assert json.loads((records.student_folder("ann") / "results.json").read_text())["score"] == 0.0
    finally:
        records.close()


def test_class_records_link_each_students_own_folder(tmp_path):
    records = ClassRecords(tmp_path, options={"names": None})
    try:
        # the folder name is the id percent-encoded (ids are data); the link encodes it once more
        assert records.feedback_href("cy d") == "submissions/cy%2520d/feedback.html"
        assert records.student_folder("cy d") == tmp_path / "submissions" / "cy%20d"
        for sid in ("ann", "cy d", "=x<y>"):
            href = unquote(records.feedback_href(sid))
            assert tmp_path / href == records.student_folder(sid) / "feedback.html"
    finally:
        records.close()


def test_a_submission_that_could_not_be_graded_gets_its_results_json(tmp_path):
    records = ClassRecords(tmp_path, options={"names": None})
    try:
        bad = tmp_path / "bad.json"
        bad.write_text("{}")
        recorded = records.on_result("bad", bad, ValueError("bad.json is not a folder, a .zip or a .ipynb file"))
    finally:
        records.close()
    written = json.loads((tmp_path / "submissions" / "bad" / "results.json").read_text(encoding="utf-8"))
    assert written["score"] == 0 == recorded.score
    assert "not a folder, a .zip or a .ipynb file" in json.dumps(written)
    assert (tmp_path / "submissions" / "bad" / "feedback.html").is_file()
