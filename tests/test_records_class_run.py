"""A class run's records (:mod:`autograder.records.class_run`): each student's folder and its link,
and a results.json for a submission that could not be graded."""

import json
from urllib.parse import unquote

from autograder.records.class_run import ClassRecords


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
