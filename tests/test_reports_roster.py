"""The class roster of summary.html (:mod:`autograder.reports.roster`), on small hand-made
results dicts (no grading run)."""

from autograder.reports import roster, summary
from autograder.results import not_graded
from autograder.results.model import error_results
from results_dicts import record, results


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
    html = summary.render_summary(CLASS, lang="en", feedback_href=lambda sid: f"submissions/{sid}/feedback.html")
    table = html.split('<table class="roster">', 1)[1].split("</table>", 1)[0]
    # the name itself links to the report (the feedback column is off-screen on a wide roster)
    ben = table.split('<tr><td><a href="submissions/ben/feedback.html">ben</a></td>', 1)[1].split("</tr>", 1)[0]
    assert "<strong>0</strong> / 5" in ben and ">not graded</td>" in ben and "mask_padding_inverted" in ben
    assert '<a href="submissions/ben/feedback.html">feedback.html</a>' in ben
    dee = table.split('<tr><td><a href="submissions/dee/feedback.html">dee</a></td>', 1)[1].split("</tr>", 1)[0]
    assert "not a valid zip file" in dee
    assert "<tr><td>ann</td>" in summary.render_summary(CLASS, lang="en")   # no link without a report
    assert "채점되지 않음" in summary.render_summary(CLASS, lang="ko")
