"""summary.html: the run's seed and the "needs attention" list (an exercise lost to one cause)."""

from autograder.reports import render, roster
from autograder.results.model import Results, TestResult


def _test(exercise, passed, failure=None, points=1.0):
    return TestResult(name=f"{exercise} test", score=points if passed else 0.0, max_score=points,
                      status="passed" if passed else "failed", tags=[exercise], failure=failure)


def _class():
    fine = Results(score=2.0, seed=7, max_score=2.0, tests=[_test("masks", True), _test("attention", True)])
    broken = Results(score=1.0, seed=7, max_score=5.0, tests=[
        _test("masks", True),
        _test("attention", False, "syntax_error"), _test("attention", False, "syntax_error"),
        _test("rope", False, "timeout"),
        _test("encoder", False, "exception"),           # a wrong value or a raise: not "attention"
    ])
    return {"ann": fine, "ben": broken, "cy": Results(score=0.0, seed=9, error="not a zip file")}


def test_needs_attention_lists_lost_exercises_with_their_cause_counted_once():
    rows = roster.needs_attention(_class())
    assert rows == [
        {"student": "ben", "error": "", "causes": [
            {"exercise": "attention", "kind": "syntax_error", "tests": 2},
            {"exercise": "rope", "kind": "timeout", "tests": 1}]},
        {"student": "cy", "error": "not a zip file", "causes": []},
    ]


def test_seeds_are_the_distinct_seeds_of_the_class():
    assert roster.seeds(_class()) == [7, 9]


def test_the_summary_shows_the_seed_and_the_list():
    html = render.render_summary(_class(), lang="en")
    assert "seeds 7, 9" in html
    head, _, rest = html.partition("Needs attention")
    assert rest, "no 'Needs attention' block"
    block = rest.split("</div>")[0]
    assert "ben" in block and "cy" in block and "ann" not in block
    assert "the module has a syntax error (2 tests)" in block
    assert block.count("syntax error") == 1
