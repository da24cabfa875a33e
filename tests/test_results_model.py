"""The results model (autograder/results/model.py): results.json read and written unchanged, one error
builder, and the readers' promise that exporting grades.csv, rendering reports and reading
submissions for ``tkit similarity`` import no torch."""

import json
import subprocess
import sys

import pytest

from autograder import exercises
from autograder.results import not_graded
from autograder.results.model import ExerciseScore, Results, TestResult, as_results, error_results

KIT_RESULTS = {
    "score": 3.0, "execution_time": 1.25, "output": "3 of 5 points", "visibility": "visible",
    "stdout_visibility": "hidden",
    "tests": [
        {"name": "masks: a padding mask", "score": 3.0, "max_score": 3.0, "status": "passed", "output": "",
         "visibility": "visible", "tags": ["masks", "public"],
         "extra_data": {"nodeid": "public/test_masks.py::test_pad", "duration": 0.01,
                        "figures": {"loss_curve": {"losses": [1.0, 0.5]}}}},
        {"name": "attention: scaled", "score": 0.0, "max_score": 2.0, "status": "failed", "output": "wrong",
         "visibility": "after_published", "tags": ["attention", "hidden"],
         "extra_data": {"nodeid": "hidden/test_attention.py::test_scale", "duration": 0.2,
                        "mistake": "attn_no_scale", "convention": False, "failure": None,
                        "not_graded": "grader error", "a_later_key": [1, 2]}},
    ],
    "extra_data": {"kit_version": "0.9", "seed": 7, "max_score": 5.0,
                   "exercises": {"masks": {"score": 3.0, "max_score": 3.0},
                                 "attention": {"score": 0.0, "max_score": 2.0, "not_graded": 1}},
                   "submission": "alice", "child": {"pid": 1}, "warnings": [], "not_graded": ["attention"],
                   "figures": {"pe_table": {"got": [[0.0]], "expected": [[0.0]]}}, "unknown": {"x": 1}},
    "leaderboard": [{"name": "accuracy", "value": 0.9}],
}


def test_a_kit_results_json_reads_and_writes_back_unchanged():
    results = Results.from_json(json.loads(json.dumps(KIT_RESULTS)))
    assert results.score == 3.0 and results.max_score == 5.0 and results.seed == 7
    assert results.exercise("attention") == ExerciseScore(0.0, 2.0, 1)
    first, second = results.tests
    assert (first.exercise, first.passed, first.hidden) == ("masks", True, False)
    assert first.nodeid == "public/test_masks.py::test_pad" and first.figures == {"loss_curve": {"losses": [1.0, 0.5]}}
    assert (second.exercise, second.hidden, second.mistake) == ("attention", True, "attn_no_scale")
    assert second.not_graded == "grader error" and second.failure is None
    assert second.other == {"a_later_key": [1, 2]} and results.other == {"unknown": {"x": 1}}
    expected = json.loads(json.dumps(KIT_RESULTS))
    del expected["tests"][1]["extra_data"]["failure"]   # a None field is left out, as the plugin does
    assert results.to_gradescope() == expected


def test_earlier_gradebooks_error_key_and_bad_input():
    old = {"score": 0.0, "execution_time": 0.0, "output": "bad zip", "error": "bad zip", "tests": [],
           "extra_data": {"kit_version": "0.8", "max_score": 100.0, "exercises": {}, "submission": "b.zip"}}
    results = as_results(old)
    assert results.error == "bad zip" and results.max_score == 100.0 and results.tests == []
    assert results.to_gradescope()["extra_data"]["error"] == "bad zip"
    with pytest.raises(ValueError, match="lacks 'score' or 'tests'"):
        Results.from_json({"tests": []})


def test_one_error_builder_for_records_and_gradescope():
    plain = error_results("x.zip: not a zip", "x.zip")
    assert plain.tests == [] and plain.error == "x.zip: not a zip" and plain.score == 0.0
    assert plain.max_score == float(exercises.total_points()) and plain.submission == "x.zip"
    names = ["masks", "attention"]
    graded = error_results("broken", names=names, with_tests=True).to_gradescope()
    assert [t["tags"] for t in graded["tests"]] == [["masks", "setup"], ["attention", "setup"]]
    assert [t["max_score"] for t in graded["tests"]] == [float(exercises.get(n).points) for n in names]
    assert graded["extra_data"]["max_score"] == sum(float(exercises.get(n).points) for n in names)
    assert graded["extra_data"]["error"] == "broken" and graded["visibility"] == "visible"


def test_not_graded_summary_on_the_model():
    results = Results(tests=[TestResult("masks: a", 0.0, 1.0, tags=["masks", "public"], not_graded="no data"),
                             TestResult("masks: b", 1.0, 1.0, "passed", tags=["masks", "public"])],
                      exercises={"masks": ExerciseScore(1.0, 2.0)})
    assert not_graded.summarize(results) == ["masks"]
    assert results.not_graded == ["masks"] and results.exercise("masks").not_graded == 1
    assert results.to_gradescope()["extra_data"]["exercises"]["masks"] == {"score": 1.0, "max_score": 2.0,
                                                                            "not_graded": 1}


NO_TORCH = """
import json, sys
from click.testing import CliRunner
from autograder.cli import main
from autograder.intake import submission
from autograder.records.gradebook import Gradebook
from autograder.results.model import Results
from autograder.reports import render, summary as class_summary
from autograder.similarity import matcher  # noqa: F401 (what `tkit similarity` imports)
results = json.loads(sys.argv[1])
with Gradebook(sys.argv[2]) as book:
    book.record("alice", Results.from_json(results), content_hash="h")
run = CliRunner().invoke(main, ["gradebook", "export-csv", sys.argv[2], "--out", sys.argv[3]])
assert run.exit_code == 0, run.output
html = render.render_feedback(results, "html", student="alice", lang="en")
assert html.count("data:image/png") == 3, html.count("data:image/png")
summary = class_summary.render_summary({"alice": results}, lang="en")
with submission.prepared(sys.argv[4]) as folder:   # how `tkit similarity` reads a submission
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torchvision"))))
"""


def test_csv_export_reports_and_similarity_reading_import_no_torch(tmp_path):
    results = json.loads(json.dumps(KIT_RESULTS))
    results["extra_data"]["figures"]["ae_reconstructions"] = {"originals": [[[0.5] * 4] * 4] * 2,
                                                              "reconstructions": [[[0.25] * 4] * 4] * 2}
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "masks.py").write_text("X = 1\n")
    out = subprocess.run([sys.executable, "-c", NO_TORCH, json.dumps(results), str(tmp_path / "gb.sqlite"),
                          str(tmp_path / "grades.csv"), str(tmp_path / "sub")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.splitlines()[-1]) == []
    assert (tmp_path / "grades.csv").read_text().splitlines()[1].startswith("alice,")
