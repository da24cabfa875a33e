"""Feedback (HTML, Markdown) and class summary (:mod:`autograder.reports.render`), rendered from
real grading runs.

Three small submissions are graded once through the kit's pytest plugin with the tiny suite
``tests/data/report_suite.py``: the reference, a submission with sin and cos swapped (a
catalog mistake) and one whose modules kill their process on import.
"""

import json
import re
import shutil
from pathlib import Path

import pytest

from autograder import paths
from autograder.mistakes import catalog
from autograder.records.class_run import ClassRecords
from autograder.reports import render, summary
from autograder.results.model import Results, error_results
from grading_runs import run_suites
from results_dicts import record, results

SUITE = Path(__file__).parent / "data" / "report_suite.py"
CRASH = "import os\nos._exit(3)\n"


def grade_with_demo_suite(folder: Path, lang: str = "en") -> dict:
    """Grade ``folder`` with the demo suite through the plugin (seed 7)."""
    return run_suites(folder, files=[SUITE], seed=7, lang=lang)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("subs")
    folders = {name: root / name for name in ("reference", "swapped", "crashed")}
    for folder in folders.values():
        folder.mkdir()
    for module in ("positional_encoding", "masks"):
        shutil.copyfile(paths.solutions_dir() / f"{module}.py", folders["reference"] / f"{module}.py")
        (folders["crashed"] / f"{module}.py").write_text(CRASH)
    shutil.copyfile(paths.solutions_dir() / "masks.py", folders["swapped"] / "masks.py")
    (folders["swapped"] / "positional_encoding.py").write_text(catalog.by_id("pe_sin_cos_swapped").source())
    return {name: grade_with_demo_suite(folder) for name, folder in folders.items()}


@pytest.mark.slow
def test_demo_results_are_what_the_reports_assume(graded):
    assert graded["reference"]["score"] == 4.0
    assert graded["swapped"]["score"] == 1.0       # only the masks test passes
    assert graded["crashed"]["score"] == 0.0
    table = graded["swapped"]["tests"][0]
    assert table["extra_data"]["mistake"] == "pe_sin_cos_swapped"
    assert set(table["extra_data"]["figures"]["pe_table"]) == {"got", "expected"}


@pytest.mark.slow
def test_feedback_html_for_the_reference(graded):
    html = render.render_feedback(graded["reference"], "html", student="ref", lang="en")
    assert "4 / 4" in html and "(100%)" in html
    assert html.count("✓") == 3 and "✗" not in html
    assert html.count('src="data:image/png;base64,') == 1          # the attached PE table
    assert "http://" not in html and "https://" not in html and "<script" not in html
    md = render.render_feedback(graded["reference"], "md", student="ref", lang="en")
    assert md.startswith("# Feedback: ref\n\n**4 / 4** points (100%)")
    assert "Every test passed." in md


@pytest.mark.slow
def test_feedback_names_the_mistake_and_hides_hidden_output(graded):
    results = graded["swapped"]
    hidden = next(t for t in results["tests"] if t["visibility"] == "after_published")
    assert hidden["status"] == "failed" and hidden["output"]
    hint = catalog.by_id("pe_sin_cos_swapped").hint_en
    for fmt in ("html", "md"):
        text = render.render_feedback(results, fmt, student="s", lang="en")
        assert "1 / 4" in text
        assert text.count(hint) == 1                   # once, in the named mistakes; each test points to it
        # the summary, the public test and the hidden one (sealed: it repeats the public test's evidence)
        assert text.count("pe_sin_cos_swapped") == 3 and text.count("as above") == 2
        assert "sinusoidal_table(8, 8) has wrong values" in text
        assert "sinusoidal_table(12, 6)" not in text   # hidden test: name, status, hint only
        assert "a longer table matches the reference" in text
    ko = render.render_feedback(results, "html", student="s", lang="ko")
    assert "피드백" in ko and catalog.by_id("pe_sin_cos_swapped").hint_ko in ko and "숨겨진 테스트" in ko


@pytest.mark.slow
def test_feedback_for_a_crashed_submission(graded):
    results = graded["crashed"]
    html = render.render_feedback(results, "html", student="c", lang="en")
    md = render.render_feedback(results, "md", student="c", lang="en")
    assert "0 / 4" in html and html.count("✗") == 3
    public = [t for t in results["tests"] if t["visibility"] == "visible"]
    assert all(t["output"].splitlines()[0] in md for t in public)
    # the hidden test is sealed: no failure kind of its own, and no public test named a mistake
    assert "your code crashed the process" not in md and "see the public tests of this exercise" in md


def test_feedback_for_a_submission_that_could_not_be_graded():
    results = error_results("bob.zip: not a valid zip file (File is not a zip file)", "bob.zip")
    html = render.render_feedback(results, "html", student="bob", lang="en")
    assert "Your submission could not be graded." in html and "not a valid zip file" in html
    assert "제출물을 채점할 수 없습니다." in render.render_feedback(results, "md", lang="ko")


@pytest.mark.slow
def test_summary_counts_passes_and_mistakes(graded):
    class_results = dict(graded)
    class_results["bob"] = error_results("bob.zip: not a valid zip file", "bob.zip")
    context = summary.summary_context(class_results)
    assert (context["n"], context["n_graded"]) == (4, 3)
    assert context["stats"]["mean"] == pytest.approx((4 + 1 + 0) / 3, abs=0.01)
    rates = {t["name"]: (t["passed_n"], t["total_n"]) for t in context["tests"]}
    assert rates == {"the table matches the formula": (1, 3), "a longer table matches the reference": (1, 3),
                     "the causal mask blocks the future": (2, 3)}
    assert [(m["id"], m["count"]) for m in context["mistakes"]] == [("pe_sin_cos_swapped", 1)]
    assert sorted(s["student"] for s in context["slowest"]) == ["crashed", "reference", "swapped"]
    html = summary.render_summary(class_results, lang="en")
    assert "Most common mistakes" in html and "pe_sin_cos_swapped" in html and "bob" in html
    assert html.count('src="data:image/png;base64,') == 1     # the score histogram
    assert "점수 분포" in summary.render_summary(class_results, lang="ko")


@pytest.mark.slow
def test_korean_test_names_come_from_the_ko_docstring_line(tmp_path):
    shutil.copyfile(paths.solutions_dir() / "masks.py", tmp_path / "masks.py")
    results = grade_with_demo_suite(tmp_path, lang="ko")
    names = [t["name"] for t in results["tests"]]
    assert "positional_encoding: 표가 공식과 일치한다" in names
    assert "masks: the causal mask blocks the future" in names   # no ko: line -> English
    assert results["output"] == "4점 중 1점"


@pytest.mark.slow
def test_class_records_write_everything_and_resume(graded, tmp_path):
    subs = {}
    for name in graded:
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / "masks.py").write_text(f"# {name}\n")
        subs[name] = tmp_path / "in" / name
    out = tmp_path / "out"
    options = {"visibility": ("public", "hidden"), "names": None}
    records = ClassRecords(out, options=options)
    todo = sorted(subs.items())
    assert records.plan(todo, resume=True) == todo
    for sid, path in todo:
        records.on_result(sid, path, Results.from_json(graded[sid]))
    csv_path, summary = records.finish()
    records.close()
    assert (out / "submissions" / "swapped" / "feedback.html").is_file()
    assert (out / "submissions" / "swapped" / "feedback.md").is_file() and not (out / "swapped").exists()
    lines = csv_path.read_text().splitlines()
    assert lines[0].split(",")[:3] == ["student_id", "embedding", "positional_encoding"]
    row = dict(zip(lines[0].split(","), lines[3].split(",")))
    assert (row["student_id"], row["positional_encoding"], row["masks"], row["total"]) == ("swapped", "0", "1", "1")
    assert "swapped" in summary.read_text() and "pe_sin_cos_swapped" in summary.read_text()
    (subs["swapped"] / "masks.py").write_text("# changed\n")
    again = ClassRecords(out, options=options)
    assert again.plan(todo, resume=True) == [("swapped", subs["swapped"])]
    assert again.plan(todo, resume=False) == todo
    again.close()
    other = ClassRecords(out, options={**options, "visibility": ("public",)})
    assert len(other.plan(todo, resume=True)) == 3          # options changed: regrade all
    other.close()


@pytest.mark.slow
def test_picture_problems_are_shown_as_data(graded):
    results = json.loads(json.dumps(graded["reference"]))
    results["extra_data"]["figure_problems"] = {"attention_causal": "<b>boom</b>\x1b[31m", "*": "TimeoutError"}
    html = render.render_feedback(results, "html", student="s", lang="en")
    assert "Attention with a causal mask: &lt;b&gt;boom&lt;/b&gt;\\x1b[31m" in html and "<b>boom" not in html
    assert "all pictures: TimeoutError" in html
    assert "Not drawn" not in render.render_feedback(graded["reference"], "html", student="s", lang="en")


def test_render_rejects_what_is_not_a_results_dict():
    with pytest.raises(render.ReportError, match="'tests'"):
        render.render_feedback({"score": 1}, "html")
    with pytest.raises(ValueError, match="fmt must be 'html' or 'md'"):
        render.render_feedback({}, "pdf")


def test_self_check_report_is_titled_for_the_student_without_hidden_wording():
    public_only = results([record("masks", "causal", "failed", output="wrong")])
    html = render.render_feedback(public_only, "html", lang="en", pictures=False, self_check=True)
    assert re.search(r"<title>Your self-check</title>", html) and "<h1>Your self-check</h1>" in html
    body = html.split("<body>", 1)[1]
    assert "hidden test" not in body.lower() and "Hidden tests" not in body
    graded = results([record("masks", "causal"), record("masks", "more", "failed", hidden=True)])
    html = render.render_feedback(graded, "html", student="ann", lang="en", pictures=False)
    assert "<h1>Feedback: ann</h1>" in html and "Hidden tests show only their name" in html
