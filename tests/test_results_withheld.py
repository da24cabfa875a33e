"""A hidden test shows fixed text (:mod:`autograder.results.withheld`): its title, status, points and
public evidence of its exercise; everything its own computation gave goes to the instructor only.

The unit tests seal records by hand; the slow one grades ``tests/attacks/hidden_leak`` (a
positional encoding that prints its sizes, raises with them in the message and picks one of three
catalog mistakes by the length mod 3) under two run seeds and alone on the public tests, and finds
none of the hidden calls' sizes in anything a student or Gradescope sees.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from autograder.records import gradebook
from autograder.records.class_run import ClassRecords
from autograder.reports import render
from autograder.results import withheld
from autograder.results.model import Results, TestResult

REPO = Path(__file__).resolve().parent.parent
HIDDEN_ONLY_KEYS = ("mistake", "convention", "failure", "components_at_fault", "figures", "counterexample", "duration")


def _hidden(output="sinusoidal_table(34, 28) has wrong values (first at (0, 0), where you returned 1)",
            mistake="pe_sin_cos_swapped", **fields) -> TestResult:
    base = dict(name="positional_encoding: random tables", score=0.0, max_score=1.0, status="failed",
                output=output, visibility="after_published", tags=["positional_encoding", "hidden"],
                nodeid="hidden/test_positional_encoding.py::test_random", duration=0.25, mistake=mistake,
                convention=False, failure="exception", components_at_fault=["masks"], figures={"pe_table": {"got": [1]}})
    base.update(fields)
    return TestResult(**base)


def _public(mistake=None, status="failed") -> TestResult:
    return TestResult(name="positional_encoding: the table", score=0.0 if status == "failed" else 1.0, max_score=1.0,
                      status=status, output="sinusoidal_table(50, 16) has wrong values, expected 0\nLikely mistake: x "
                      f"[{mistake}]" if mistake else "", visibility="visible", tags=["positional_encoding", "public"],
                      nodeid="public/test_positional_encoding.py::test_table", mistake=mistake)


def _visible(test: TestResult) -> dict:
    return test.to_gradescope()


def test_a_sealed_hidden_test_keeps_only_its_title_status_and_points():
    test = _hidden()
    withheld.seal([test])
    data = _visible(test)
    assert set(data) == {"name", "score", "max_score", "status", "output", "visibility", "tags", "extra_data"}
    assert data["extra_data"] == {"nodeid": test.nodeid}
    assert data["output"] == "This hidden test failed; its inputs and your values on them are not shown."
    assert test.withheld["output"].startswith("sinusoidal_table(34, 28)") and test.withheld["duration"] == 0.25
    assert test.withheld["mistake"] == "pe_sin_cos_swapped" and test.instructor_mistake == "pe_sin_cos_swapped"
    assert test.withheld["components_at_fault"] == ["masks"] and test.withheld["figures"]
    withheld.seal([test])   # idempotent
    assert test.withheld["output"].startswith("sinusoidal_table(34, 28)")


def test_what_a_hidden_test_shows_does_not_depend_on_its_own_computation():
    """Two hidden failures of one exercise that named different mistakes, with different messages
    and durations, show the same record: the named mistake is public evidence (the public test's)."""
    records = []
    for mistake, output in (("pe_sin_cos_swapped", "sinusoidal_table(9, 4) ..."), ("pe_positions_from_one", "(7, 8)"),
                            (None, "LEAK-RAISE[12, 6]"), ("pe_exponent_i_over_d", "")):
        tests = [_public("pe_positions_from_one"), _hidden(output=output, mistake=mistake, duration=len(output))]
        withheld.seal(tests, hint=lambda m: f"Likely mistake: hint of {m} [{m}]")
        assert tests[0].to_gradescope() == _public("pe_positions_from_one").to_gradescope()   # public: as it was
        records.append(_visible(tests[1]))
    assert all(r == records[0] for r in records)
    assert records[0]["extra_data"]["mistake"] == "pe_positions_from_one"
    assert "hint of pe_positions_from_one [pe_positions_from_one]" in records[0]["output"]
    assert 'The public test "the table" shows it: sinusoidal_table(50, 16) has wrong values, expected 0' \
        in records[0]["output"]


def test_probe_evidence_is_shown_named_or_not():
    probe = {"what": "sinusoidal_table(12, 10)", "line": "sinusoidal_table(12, 10) differs at (0, 0)",
             "mistake": "pe_exponent_i_over_d", "convention": False}
    test = _hidden()
    withheld.seal([test], {"positional_encoding": [dict(probe, mistake=None), probe]})
    assert test.mistake == "pe_exponent_i_over_d" and test.counterexample["line"] == probe["line"]
    assert f"The same mistake on a public input: {probe['line']}" in test.output
    unnamed = _hidden()
    withheld.seal([unnamed], {"positional_encoding": [dict(probe, mistake=None)]})
    assert unnamed.mistake is None and unnamed.counterexample["mistake"] is None
    assert f"On a public input the kit fixed, your code gives: {probe['line']}" in unnamed.output
    other = _hidden()
    withheld.seal([other], {"masks": [probe]})   # another exercise's evidence is not this test's
    assert other.mistake is None and other.counterexample is None


def test_passed_partial_and_not_graded_hidden_tests():
    passed = _hidden(status="passed", score=1.0, output="", mistake=None)
    partial = _hidden(status="failed", score=0.5, output="0.93 of the held-out loss: 41% exact", mistake=None)
    broken = _hidden(output="not graded: ... (error E1234abcd)", not_graded="grader error", mistake=None)
    withheld.seal([passed, partial, broken])
    assert passed.output == "" and passed.withheld == {"output": "", "duration": 0.25, "convention": False,
                                                      "failure": "exception", "components_at_fault": ["masks"],
                                                      "figures": {"pe_table": {"got": [1]}}}
    assert partial.output.startswith("This hidden test earned part of its points") and "41%" not in partial.output
    assert broken.not_graded == "grader error" and broken.output.startswith("not graded")


def test_only_the_instructor_form_holds_what_is_withheld(tmp_path):
    test = _hidden()
    results = Results(score=0.0, tests=[_public(), test], execution_time=1.5, withheld={"execution_time": 9.0})
    withheld.seal(results.tests)
    student = json.dumps(results.to_gradescope())
    for text in ("sinusoidal_table(34, 28)", "withheld", "9.0", "0.25", "components_at_fault"):
        assert text not in student
    instructor = results.to_gradescope(instructor=True)
    back = Results.from_json(json.loads(json.dumps(instructor)))
    assert back.tests[1].withheld == test.withheld and back.total_time == 9.0 and back.execution_time == 1.5
    assert Results.from_json(json.loads(student)).tests[1].withheld is None
    records = ClassRecords(tmp_path, options={})
    records.hashes["s"] = "h"
    records.on_result("s", tmp_path, results)
    records.close()
    assert "sinusoidal_table(34, 28)" not in (tmp_path / "submissions" / "s" / "results.json").read_text()
    for name in ("feedback.html", "feedback.md"):
        assert "sinusoidal_table(34, 28)" not in (tmp_path / "submissions" / "s" / name).read_text()
    hidden = json.loads((tmp_path / "instructor" / "s" / "hidden.json").read_text())
    assert hidden["tests"][test.nodeid]["output"].startswith("sinusoidal_table(34, 28)")
    assert hidden["run"] == {"execution_time": 9.0}
    with gradebook.Gradebook(tmp_path / "gradebook.sqlite") as book:
        row = book.conn.execute("SELECT mistake, failure, duration FROM tests WHERE nodeid = ?", (test.nodeid,)).fetchone()
        assert row == ("pe_sin_cos_swapped", "exception", 0.25)
        assert book.results("s").tests[1].withheld["output"].startswith("sinusoidal_table(34, 28)")


LEAK = re.compile(r"LEAK-\w+\[[\d, ]*\]")


def _seen(results: Results) -> tuple[set[str], dict]:
    """The LEAK markers in everything a student or Gradescope sees of ``results``, and its
    results.json data."""
    data = results.to_gradescope()
    texts = [json.dumps(data, ensure_ascii=False)]
    texts += [render.render_feedback(data, fmt, student="s", lang=lang) for fmt in ("html", "md") for lang in ("en", "ko")]
    return {m for text in texts for m in LEAK.findall(text)}, data


@pytest.mark.slow
def test_no_hidden_draw_printed_text_or_exception_reaches_a_student(tmp_path):
    from autograder.run import grading

    folder = tmp_path / "leak"
    folder.mkdir()
    reference = (REPO / "solutions" / "positional_encoding.py").read_text()
    suffix = (REPO / "tests" / "attacks" / "hidden_leak" / "attack_suffix.py").read_text()
    (folder / "positional_encoding.py").write_text(reference + "\n\n" + suffix)
    options = dict(names=["positional_encoding"], lang="en", pictures=False)
    public, _ = _seen(grading.grade_folder(folder, visibility=("public",), seed=7, **options))
    visible = []
    for seed in (7, 8):   # different hidden draws
        results = grading.grade_folder(folder, visibility=("public", "hidden"), seed=seed, **options)
        seen, data = _seen(results)
        assert seen == public, seen - public   # every marker a student sees comes from a public call
        hidden = [t for t in results.tests if t.hidden]
        assert hidden and all(t.status == "failed" for t in hidden)
        own = {m for t in hidden for m in LEAK.findall(json.dumps(t.withheld))}
        assert own - public, "the hidden calls' markers are in the instructor's record"
        for t in data["tests"]:
            if t["visibility"] == "after_published":
                assert not set(t["extra_data"]) & {"failure", "components_at_fault", "figures", "duration"}
        assert data["execution_time"] < results.total_time
        visible.append([t for t in data["tests"] if t["visibility"] == "after_published"])
    assert visible[0] == visible[1]   # nothing of a hidden test's record moved with its draws
    shutil.rmtree(folder)
