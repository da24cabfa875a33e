"""Hidden failures explained on public inputs (:mod:`autograder.reports.counterexamples`).

A hidden test that failed naming a catalog mistake shows, beside its name, status, points and
hint, the values of a public test of the same grading that named the same mistake; nothing of
the hidden test's own output (its inputs, its values) reaches the feedback.
"""

import json
import re
from pathlib import Path

import pytest

from autograder import paths
from autograder.mistakes import catalog
from autograder.reports import counterexamples, render
from autograder.results.model import as_results
from autograder.run import grading
from results_dicts import record, results

SUITE = Path(__file__).parent / "data" / "report_suite.py"
PUBLIC_LINE = ("sinusoidal_table(8, 8) has wrong values at 64 of 64 positions (first at (0, 0), "
               "where you returned 1), expected 0, largest difference 1.41")
HIDDEN_LINE = ("sinusoidal_table(12, 6) has wrong values at 72 of 72 positions (first at (3, 5), "
               "where you returned 0.987123), largest difference 1.93")


def _swapped(public_mistake="pe_sin_cos_swapped", **hidden_extra) -> dict:
    hint = catalog.by_id("pe_sin_cos_swapped").hint_en
    return results([
        record("positional_encoding", "the table matches the formula", "failed", 2.0, mistake=public_mistake,
               output=f"{PUBLIC_LINE}\nLikely mistake: {hint} [{public_mistake}]"),
        record("positional_encoding", "a longer table matches the reference", "failed", 1.0, hidden=True,
               mistake="pe_sin_cos_swapped", output=f"{HIDDEN_LINE}\nLikely mistake: {hint} [pe_sin_cos_swapped]",
               **hidden_extra),
        record("masks", "the causal mask blocks the future", "passed"),
    ])


def _numbers(text: str) -> list[str]:
    return re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("fmt", ["html", "md"])
def test_a_hidden_failure_shows_the_public_counterexample_and_no_hidden_value(fmt, lang):
    text = render.render_feedback(_swapped(), fmt, student="s", lang=lang)
    assert text.count(PUBLIC_LINE) == 2            # the public test's output, and the counterexample
    assert "12, 6" not in text and "0.987123" not in text and "(3, 5)" not in text and "1.93" not in text
    assert "pe_sin_cos_swapped" in text
    label = "The same mistake on public inputs" if lang == "en" else "같은 실수를 공개 입력에서"
    assert text.count(label) == 1
    hidden_block = text[text.index(label):]
    assert "the table matches the formula" in hidden_block or "표가" in hidden_block or fmt == "html"


def test_every_number_of_a_counterexample_comes_from_the_public_test():
    res = as_results(_swapped())
    examples = counterexamples.public_examples(res.tests)
    public, hidden = res.tests[0], res.tests[1]
    example = counterexamples.for_test(hidden, examples)
    assert example == {"test": "the table matches the formula", "exercise": "positional_encoding",
                       "line": PUBLIC_LINE}
    shown_text = " ".join(example.values())
    assert set(_numbers(shown_text)) <= set(_numbers(public.output))
    assert not set(_numbers(shown_text)) & (set(_numbers(hidden.output)) - set(_numbers(public.output)))
    view = next(v for v in render.feedback_context(res)["failing"] if v["hidden"])
    assert view["counterexample"] == example and view["output"] == ""


def test_no_counterexample_without_a_public_test_naming_the_same_mistake():
    res = _swapped(public_mistake="pe_halves_concatenated")
    context = render.feedback_context(res)
    hidden = next(v for v in context["failing"] if v["hidden"])
    assert hidden["counterexample"] is None
    md = render.render_feedback(res, "md", lang="en")
    assert "The same mistake on public inputs" not in md and "12, 6" not in md


def test_not_graded_or_passing_public_tests_are_never_counterexamples():
    res = _swapped(not_graded="internal_error")
    assert all(v["counterexample"] is None for v in render.feedback_context(res)["ungraded"])
    data = _swapped()
    data["tests"][0]["extra_data"]["not_graded"] = "internal_error"
    assert all(v.get("counterexample") is None for v in render.feedback_context(data)["failing"])


def test_a_composite_hidden_failure_links_to_the_components_public_test():
    line = "make_padding_mask(token_ids) has wrong values at 8 of 8 positions (first at (0, 0), where you returned True), expected False"
    data = results([
        record("masks", "make_padding_mask is True at padding", "failed", mistake="mask_padding_inverted",
               output=line),
        record("transformer", "forward matches the reference on random sizes", "failed", hidden=True,
               mistake="mask_padding_inverted", output="logits [3, 7, 11] differ where you returned 0.5"),
    ])
    hidden = next(v for v in render.feedback_context(data)["failing"] if v["hidden"])
    assert hidden["counterexample"] == {"test": "make_padding_mask is True at padding", "exercise": "masks",
                                        "line": line}
    md = render.render_feedback(data, "md", lang="en")
    assert "[3, 7, 11]" not in md and "0.5" not in md


@pytest.mark.slow
def test_a_graded_hidden_failure_shows_the_public_values(tmp_path):
    """A real grading with the demo suite: sin and cos swapped fails the public and the hidden test
    with the same mistake; the hidden test shows the public call and values, never its own."""
    folder = tmp_path / "swapped"
    folder.mkdir()
    (folder / "positional_encoding.py").write_text(catalog.by_id("pe_sin_cos_swapped").source())
    (folder / "masks.py").write_text((paths.solutions_dir() / "masks.py").read_text())
    results = grading.grade_folder(folder, files=[SUITE], seed=7, lang="en")
    graded = results.to_gradescope()
    public = next(t for t in graded["tests"] if t["visibility"] == "visible" and t["extra_data"].get("mistake"))
    hidden = next(t for t in graded["tests"] if t["visibility"] == "after_published")
    assert hidden["extra_data"]["mistake"] == public["extra_data"]["mistake"] == "pe_sin_cos_swapped"
    line = public["output"].splitlines()[0]
    hidden_line = next(t for t in results.tests if t.hidden).withheld["output"].splitlines()[0]   # the instructor's
    assert "sinusoidal_table(8, 8)" in line and "sinusoidal_table(12, 6)" in hidden_line
    assert hidden_line not in json.dumps(graded)
    for fmt in ("html", "md"):
        text = render.render_feedback(graded, fmt, student="s", lang="en")
        block = text[text.index("The same mistake on public inputs"):]
        assert line in block and "sinusoidal_table(12, 6)" not in text and hidden_line not in text
        example_numbers = set(_numbers(block.split("\n\n")[0] + line))
        assert example_numbers <= set(_numbers(public["output"] + "the table matches the formula"))


def test_a_counterexample_shown_once_is_named_again_without_its_line():
    data = _swapped()
    second = dict(data["tests"][1], name="positional_encoding: S == max_len and float64 input")
    data["tests"].append(second)
    for fmt in ("html", "md"):
        text = render.render_feedback(data, fmt, lang="en")
        assert text.count(PUBLIC_LINE) == 2 and text.count("The same mistake on public inputs") == 2
        assert "12, 6" not in text
