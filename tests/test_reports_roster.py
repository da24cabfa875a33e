"""The class roster of summary.html, the self-check report's title and tkit check's terminal
output, on small hand-made results dicts (no grading run)."""

import json
import re
from urllib.parse import unquote

from rich.console import Console

from autograder.records.class_run import ClassRecords
from autograder.reports import console, render, roster
from autograder.results import not_graded
from autograder.results.model import error_results


def record(exercise, name, status="passed", max_score=1.0, *, hidden=False, **extra):
    """One test record of results.json: full points when passed, none otherwise."""
    return {"name": f"{exercise}: {name}", "score": max_score if status == "passed" else 0.0, "max_score": max_score,
            "status": status, "output": extra.pop("output", ""), "visibility": "after_published" if hidden else "visible",
            "tags": [exercise], "extra_data": extra}


def results(tests, **extra):
    """A results.json dict around ``tests`` (per-exercise scores summed from them)."""
    per_exercise = {}
    for t in tests:
        entry = per_exercise.setdefault(t["tags"][0], {"score": 0.0, "max_score": 0.0})
        entry["score"] += t["score"]
        entry["max_score"] += t["max_score"]
    return {"score": sum(t["score"] for t in tests), "execution_time": 1.0, "output": "", "tests": tests,
            "extra_data": {"max_score": sum(t["max_score"] for t in tests), "exercises": per_exercise,
                           "seed": 1, "kit_version": "0", **extra}}


CLASS = {
    "ann": results([record("masks", "causal"), record("autoencoder", "trains", max_score=4.0)]),
    "ben": results([record("masks", "causal", "failed", mistake="mask_padding_inverted"),
                    record("autoencoder", "trains", "failed", max_score=4.0, not_graded="MNIST missing")],
                   not_graded=["autoencoder"]),
    "cy d": results([record("masks", "causal", "failed", failure="not_implemented")]),
    "dee": error_results("dee.zip: not a valid zip file", "dee.zip"),
}


def test_roster_rows_hold_totals_exercises_mistakes_and_not_graded_marks():
    rows = {r["student"]: r for r in roster.rows(CLASS, lambda sid: f"s/{sid}/feedback.html")}
    assert list(rows) == ["ann", "ben", "cy d", "dee"]
    assert roster.graded_exercises(CLASS) == ["masks", "autoencoder"]
    assert (rows["ann"]["total"], rows["ann"]["max_score"]) == (5.0, 5.0)
    assert [(e["name"], e["score"], e["not_graded"]) for e in rows["ben"]["exercises"]] == [
        ("masks", 0.0, False), ("autoencoder", 0.0, True)]
    assert rows["ben"]["mistakes"] == ["mask_padding_inverted"] and rows["ben"]["not_graded"] == ["autoencoder"]
    assert [e["score"] for e in rows["cy d"]["exercises"]] == [0.0, None]   # no record of the autoencoder
    assert rows["dee"]["total"] is None and "not a valid zip file" in rows["dee"]["error"]
    assert rows["cy d"]["feedback"] == "s/cy d/feedback.html"
    # a test-level marker alone also marks the exercise
    only_test = results([record("autoencoder", "trains", "failed", not_graded="internal error")])
    assert set(not_graded.of_results(only_test)) == {"autoencoder"}


def test_summary_html_shows_the_roster_with_links():
    html = render.render_summary(CLASS, lang="en", feedback_href=lambda sid: f"submissions/{sid}/feedback.html")
    table = html.split('<table class="roster">', 1)[1].split("</table>", 1)[0]
    # the name itself links to the report (the feedback column is off-screen on a wide roster)
    ben = table.split('<tr><td><a href="submissions/ben/feedback.html">ben</a></td>', 1)[1].split("</tr>", 1)[0]
    assert "<strong>0</strong> / 5" in ben and ">not graded</td>" in ben and "mask_padding_inverted" in ben
    assert '<a href="submissions/ben/feedback.html">feedback.html</a>' in ben
    dee = table.split('<tr><td><a href="submissions/dee/feedback.html">dee</a></td>', 1)[1].split("</tr>", 1)[0]
    assert "not a valid zip file" in dee
    assert "<tr><td>ann</td>" in render.render_summary(CLASS, lang="en")   # no link without a report
    assert "채점되지 않음" in render.render_summary(CLASS, lang="ko")


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


def test_self_check_report_is_titled_for_the_student_without_hidden_wording():
    public_only = results([record("masks", "causal", "failed", output="wrong")])
    html = render.render_feedback(public_only, "html", lang="en", pictures=False, self_check=True)
    assert re.search(r"<title>Your self-check</title>", html) and "<h1>Your self-check</h1>" in html
    body = html.split("<body>", 1)[1]
    assert "hidden test" not in body.lower() and "Hidden tests" not in body
    graded = results([record("masks", "causal"), record("masks", "more", "failed", hidden=True)])
    html = render.render_feedback(graded, "html", student="ann", lang="en", pictures=False)
    assert "<h1>Feedback: ann</h1>" in html and "Hidden tests show only their name" in html


def printed(res, **kwargs) -> list[str]:
    out = Console(record=True, width=120, color_system=None)
    with out.capture() as cap:
        console.print_results(res, out, **kwargs)
    return cap.get().splitlines()


def test_check_output_ends_with_the_total_and_a_summary_line():
    todo = [record("masks", f"t{i}", "failed", output=f"not implemented {i}", failure="not_implemented")
            for i in range(40)]
    wrong = [record("attention", f"w{i}", "failed", output=f"wrong values {i}") for i in range(12)]
    res = results(todo + wrong + [record("attention", "ok")])
    lines = printed(res)
    assert lines[-1] == ("1 of 53 tests passed, 40 not implemented yet, 12 failed. "
                         "Run `tkit check -v` to see every message (44 not shown).")
    assert "total" in lines[-3] and "1/53" in lines[-3]       # the table's total row, then its border
    assert sum("wrong values" in line for line in lines) == console.MAX_DETAILS
    assert not any("not implemented" in line for line in lines[:-1])
    verbose = printed(res, verbose=True)
    assert verbose[-1] == "1 of 53 tests passed, 40 not implemented yet, 12 failed."
    assert sum("not implemented" in line for line in verbose[:-1]) == 40
