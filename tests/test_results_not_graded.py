"""A grader-side problem is never the student's failure: tests the grader could not
judge are marked "not graded" in results.json and shown so in every report, grades.csv keeps
numeric score cells and names them in a ``not_graded`` column, and ``tkit grade`` refuses to
start when the AutoEncoder's training data is missing."""

import csv
import io
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from autograder import paths
from autograder.records.gradebook import Gradebook
from autograder.reports import console, render, summary
from autograder.results import not_graded
from autograder.results.model import Results
from grading_runs import run_suites

REPO = Path(__file__).resolve().parents[1]

SUITE = '''
import pytest
from autograder import mnist

pytestmark = pytest.mark.visibility("public")

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
def test_causal(student):
    """make_causal_mask(3) has 3 blocked positions"""
    assert int(student.masks.make_causal_mask(3).sum()) == 3

@pytest.mark.exercise("autoencoder")
@pytest.mark.points(2)
def test_learns(student):
    """the AutoEncoder learns MNIST"""
    raise mnist.DatasetMissing("MNIST test files were not found; run `tkit data mnist --download`")

@pytest.mark.exercise("autoencoder")
@pytest.mark.points(1)
def test_shape(student):
    """the AutoEncoder's output has the image's shape"""
    assert False, "wrong shape"
'''


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("ng")
    sub = root / "sub"
    sub.mkdir()
    shutil.copyfile(paths.solutions_dir() / "masks.py", sub / "masks.py")
    suite = root / "suite" / "test_ng.py"
    suite.parent.mkdir()
    suite.write_text(SUITE)
    return run_suites(sub, files=[suite], seed=3, lang="en")


def test_results_json_marks_the_grader_problem(results):
    by_name = {t["name"].split(": ", 1)[1]: t for t in results["tests"]}
    learns = by_name["the AutoEncoder learns MNIST"]
    assert learns["status"] == "failed" and learns["score"] == 0.0          # Gradescope's schema
    assert learns["extra_data"]["not_graded"].startswith("grading data unavailable")
    assert "tkit data mnist" not in learns["output"] and "not graded" in learns["output"]
    assert "internal_error" not in learns["extra_data"]
    assert "not_graded" not in by_name["the AutoEncoder's output has the image's shape"]["extra_data"]
    assert results["extra_data"]["not_graded"] == ["autoencoder"]
    assert results["extra_data"]["exercises"]["autoencoder"]["not_graded"] == 1
    assert results["score"] == 1.0


def test_feedback_shows_not_graded_not_failed(results):
    html = render.render_feedback(results, "html", student="s", lang="en", pictures=False)
    assert "Not graded" in html and "the grader could not judge some tests of autoencoder" in html
    assert html.count("✗") == 1 and html.count('class="badge ng"') == 1   # only the real failure
    md = render.render_feedback(results, "md", student="s", lang="en")
    fix = md.split("## What to fix", 1)[1].split("## Not graded", 1)[0]
    assert "wrong shape" in fix and "learns MNIST" not in fix
    assert "- – **autoencoder**: the AutoEncoder learns MNIST (not graded)" in md.split("## Not graded", 1)[1]
    ko = render.render_feedback(results, "md", student="s", lang="ko")
    assert "채점되지 않음" in ko


def test_summary_pass_rates_leave_not_graded_out(results):
    other = {**results, "extra_data": {**results["extra_data"]}}
    html = summary.render_summary({"a": results, "b": other}, lang="en")
    assert "Not graded" in html and "<code>a</code>: autoencoder" in html
    rows = {r["name"]: r for r in summary.summary_context({"a": results})["tests"]}
    assert (rows["the AutoEncoder learns MNIST"]["total_n"], rows["the AutoEncoder learns MNIST"]["not_graded_n"]) == (0, 1)
    assert rows["make_causal_mask(3) has 3 blocked positions"]["total_n"] == 1
    means = {m["name"]: m for m in summary.summary_context({"a": results})["exercise_means"]}
    assert "autoencoder" not in means and means["masks"]["mean"] == 1.0


def test_check_output_says_not_graded(results):
    out = io.StringIO()
    console.print_results(results, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "Not graded: autoencoder" in text
    assert "– autoencoder: the AutoEncoder learns MNIST (not graded)" in text
    assert "tkit data mnist --download" in text      # the reason, for whoever runs the check
    assert "✗ autoencoder: the AutoEncoder's output has the image's shape" in text


def test_grades_csv_keeps_numbers_and_names_the_exercises(results, tmp_path):
    with Gradebook(tmp_path / "g.sqlite") as book:
        book.record("ng", Results.from_json(results), content_hash="h")
        judged = {**results, "tests": [t for t in results["tests"] if not not_graded.reason(t)],
                  "extra_data": {k: v for k, v in results["extra_data"].items() if k != "not_graded"}}
        book.record("ok", Results.from_json(judged), content_hash="h2")
        rows = list(csv.DictReader(io.StringIO(book.export_csv(tmp_path / "grades.csv").read_text())))
    by_id = {r["student_id"]: r for r in rows}
    assert (by_id["ng"]["autoencoder"], by_id["ng"]["masks"], by_id["ng"]["not_graded"]) == ("", "1", "autoencoder")
    assert (by_id["ok"]["autoencoder"], by_id["ok"]["not_graded"]) == ("0", "")
    for row in rows:
        for name in ("masks", "total"):
            float(row[name])


def test_grade_refuses_a_class_without_mnist(isolated_kit, tmp_path):
    from cli import main

    (tmp_path / "class" / "ann").mkdir(parents=True)
    run = CliRunner().invoke(main, ["grade", "--class-dir", str(tmp_path / "class"), "--out", str(tmp_path / "o")])
    assert run.exit_code == 1, run.output
    assert "MNIST is missing" in run.output and "tkit data mnist --download" in run.output
    assert "--data-dir" in run.output and str(isolated_kit / "datasets" / "mnist") in run.output
    assert not (tmp_path / "o").exists()
