"""summary.html: the run's seed and the "needs attention" list (an exercise lost to one cause)."""

from autograder.reports import roster, summary
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
            {"kind": "syntax_error", "exercises": ["attention"], "tests": 2},
            {"kind": "timeout", "exercises": ["rope"], "tests": 1}]},
        {"student": "cy", "error": "not a zip file", "causes": []},
    ]


def test_seeds_are_the_distinct_seeds_of_the_class():
    assert roster.seeds(_class()) == [7, 9]


def test_the_summary_shows_the_seed_and_the_list():
    html = summary.render_summary(_class(), lang="en")
    assert "seeds 7, 9" in html
    head, _, rest = html.partition("Needs attention")
    assert rest, "no 'Needs attention' block"
    block = rest.split("</div>")[0]
    assert "ben" in block and "cy" not in block and "ann" not in block   # cy is listed once, as not graded
    assert "the module has a syntax error: attention (2 tests)" in block
    assert block.count("syntax error") == 1
    ungraded = html.split("Could not be graded")[1].split("</div>")[0]
    assert "<code>cy</code>: not a zip file" in ungraded and html.count("not a zip file") == 2   # and its roster row


def test_one_kind_over_many_exercises_is_one_entry():
    """Six missing files are one "missing" entry naming the six exercises (the sample class's eve
    read as six repetitions of the same sentence)."""
    names = ["feed_forward", "encoder", "decoder", "transformer", "rope", "autoencoder"]
    tests = [_test(ex, False, "missing_file") for ex in reversed(names) for _ in range(2)]
    tests += [_test("multi_head_attention", False, "syntax_error")]
    rows = roster.needs_attention({"eve": Results(score=0.0, seed=1, max_score=13.0, tests=tests)})
    assert rows[0]["causes"] == [{"kind": "syntax_error", "exercises": ["multi_head_attention"], "tests": 1},
                                 {"kind": "missing_file", "exercises": names, "tests": 12}]
    block = summary.render_summary({"eve": Results(score=0.0, seed=1, max_score=13.0, tests=tests)},
                                  lang="en").partition("Needs attention")[2].split("</div>")[0]
    assert block.count("missing from the submission") == 1
    assert "missing from the submission: " + ", ".join(names) + " (12 tests)" in block
