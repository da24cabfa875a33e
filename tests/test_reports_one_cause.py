"""One message per cause (:mod:`autograder.reports.causes`): a syntax error or an untouched TODO
that fails many tests is shown once, at the top of feedback.md, feedback.html and ``tkit
check``'s terminal output, with the number of tests it affects; failures come before passes,
and passing tests are folded. Hand-made results dicts (no grading run)."""

from markupsafe import escape
from rich.console import Console

from autograder.reports import causes, console, render
from autograder.results.model import as_results
from results_dicts import record, results

SYNTAX = "syntax error in multi_head_attention.py, line 63: '(' was never closed"
TODO = "not implemented yet: masks: padding_mask is not implemented yet"
SECRET = "hidden expected value 0.12345"


def broken() -> dict:
    """A submission whose multi_head_attention.py has a syntax error (5 public and 2 hidden tests
    of it and 3 of the encoder meet it), one untouched TODO (4 tests) and 3 passing tests."""
    tests = [record("embedding", f"pass {i}") for i in range(2)]
    tests += [record("masks", f"todo {i}", "failed", output=TODO, failure="not_implemented") for i in range(4)]
    tests += [record("masks", "the causal mask passes")]
    tests += [record("multi_head_attention", f"public {i}", "failed", output=SYNTAX + "\n    return x.reshape(",
                     failure="syntax_error") for i in range(5)]
    tests += [record("multi_head_attention", f"hidden {i}", "failed", output=SYNTAX, failure="syntax_error",
                     hidden=True) for i in range(2)]
    tests += [record("encoder", f"uses mha {i}", "failed", output=SYNTAX, failure="syntax_error") for i in range(3)]
    tests += [record("encoder", "a hidden timeout", "failed", output=SECRET, failure="timeout", hidden=True)]
    return results(tests)


def terminal(res, **kwargs) -> str:
    out = Console(record=True, width=200, color_system=None)
    with out.capture() as cap:
        console.print_results(res, out, **kwargs)
    return cap.get()


def test_causes_group_the_failing_tests_by_message():
    found, which = causes.of_tests(as_results(broken()).tests)
    assert [(c["kind"], c["count"], c["exercises"]) for c in found] == [
        ("not_implemented", 4, ["masks"]), ("syntax_error", 10, ["multi_head_attention", "encoder"]),
        ("timeout", 1, ["encoder"])]
    assert found[2]["output"] == ""           # a hidden test's own message is never kept
    assert len(which) == 15


def test_the_syntax_error_and_the_todo_are_shown_once_in_the_feedback():
    for fmt in ("md", "html"):
        text = render.render_feedback(broken(), fmt, student="s", lang="en", pictures=False)
        syntax = str(escape(SYNTAX)) if fmt == "html" else SYNTAX   # HTML escapes the quotes
        assert text.count(syntax) == 1, fmt
        assert text.count(TODO) == 1, fmt
        assert text.count("tests affected: 10") == 1 and text.count("tests affected: 4") == 1, fmt
        assert SECRET not in text, fmt
        assert text.index("Fix these first") < text.index(syntax)
    md = render.render_feedback(broken(), "md", student="s", lang="en")
    assert "Passed tests: 3" in md and "pass 0" not in md       # passes: a one-line count
    assert "Every test passed." not in md
    ko = render.render_feedback(broken(), "md", student="s", lang="ko")
    assert "먼저 고칠 것" in ko and "영향받는 테스트: 10개" in ko and ko.count(SYNTAX) == 1


def test_failures_come_before_passes_and_passes_are_folded_in_html():
    html = render.render_feedback(broken(), "html", student="s", lang="en", pictures=False)
    masks = html[html.index('id="ex-masks"'):html.index('id="ex-multi_head_attention"')]
    assert masks.index("todo 0") < masks.index("<details>") < masks.index("the causal mask passes")
    assert "Passed tests: 1" in masks
    assert masks.count('href="#cause-1"') == 4                  # each test points to its cause
    assert html.count("✗") == 15 + 3                            # 15 failing tests, 3 causes


def test_the_syntax_error_is_printed_once_in_the_terminal():
    text = terminal(broken())
    assert text.count(SYNTAX) == 1 and "tests affected: 10" in text
    # the untouched TODO is a cause too: said once at the top with its count, as a syntax error is
    # (a student who runs tkit check sees which function is still to do without -v)
    assert text.count(TODO) == 1 and "a TODO is not implemented yet (tests affected: 4; masks)" in text
    assert text.index("a TODO is not implemented yet") < text.index("Results")
    assert SECRET not in text
    assert text.splitlines()[-1] == "3 of 18 tests passed, 4 not implemented yet, 11 failed."
    assert terminal(broken(), verbose=True).count(SYNTAX) == 10   # -v: every test's message


def test_named_mistakes_come_first_among_the_failures():
    tests = [record("masks", "plain failure", "failed", output="wrong values at (0, 1)"),
             record("masks", "the test with a named mistake", "failed", output="wrong values at (0, 2)",
                    mistake="masks_padding_inverted"),
             record("masks", "passes")]
    for fmt in ("md", "html"):
        text = render.render_feedback(results(tests), fmt, student="s", lang="en", pictures=False)
        assert text.index("Named mistakes") < text.index("the test with a named mistake") < text.index("plain failure"), fmt
        assert "Fix these first" not in text, fmt               # no shared cause here
    html = render.render_feedback(results(tests), "html", student="s", lang="en", pictures=False)
    assert html.index("plain failure") < html.index("<details>") < html.index("passes")


def test_a_named_mistake_hint_is_shown_once_per_report():
    """The same named mistake on three failing tests: its hint once, the others point to it."""
    from autograder.reports import render
    from autograder.results.model import Results, TestResult

    line = "Likely mistake: the scores are not divided by sqrt(d_k) [attention_no_scaling]"
    tests = [TestResult(name=f"attention: case {n}", score=0.0, max_score=1.0, status="failed",
                        output=f"values differ at case {n}\n{line}", visibility="visible", tags=["attention"],
                        mistake="attention_no_scaling") for n in range(3)]
    results = Results(score=0.0, max_score=3.0, tests=tests)
    for fmt in ("md", "html"):
        text = render.render_feedback(results, fmt, lang="en", pictures=False)
        assert text.count("sqrt(d_k)") == 1, fmt              # once, at the top, with the tests it affects
        assert "tests affected: 3" in text, fmt
        assert text.count("attention_no_scaling") == 4 and text.count("as above") == 3, fmt
