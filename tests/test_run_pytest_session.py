"""One pytest session for many submissions (:mod:`autograder.run.pytest_session`): a kept session
grades each submission as a session of its own would, and a failure costs one submission only."""

from __future__ import annotations

from pathlib import Path

import pytest

from grading_runs import run_suites


def _outcomes(results: dict) -> list:
    return [(t["name"], t["score"], t["status"], t["output"], t.get("extra_data", {}).get("mistake"))
            for t in results["tests"]]


SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample_class"


@pytest.mark.slow
def test_a_kept_session_grades_each_submission_as_a_session_of_its_own():
    """alice (correct), chen (two mistakes), bob (stubs), then alice again, through one runner:
    every result as grading each alone gives, in the same order, nothing carried over."""
    from autograder.run import grading, pytest_session
    from autograder.options import GradingOptions

    options = GradingOptions(names=("masks", "attention", "encoder"), seed=3, training=False)
    files = grading.suite_files(options.visibility, options.names)
    runner = pytest_session.SuiteRunner(options, files)
    try:
        for name in ("alice", "chen", "bob", "alice"):
            warm = runner.grade(SAMPLE / name, options).to_gradescope()
            alone = run_suites(SAMPLE / name, options)
            assert _outcomes(warm) == _outcomes(alone), name
        assert runner.alive
    finally:
        runner.close()
    assert not runner.alive


@pytest.mark.slow
def test_keep_warm_routes_grade_folder_through_one_runner_per_collection(monkeypatch):
    from autograder.run import grading, pytest_session

    monkeypatch.setattr(pytest_session, "_WARM", {"enabled": False, "runner": None})
    pytest_session.keep_warm()
    try:
        first = run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        runner = pytest_session._WARM["runner"]
        again = run_suites(SAMPLE / "chen", names=["masks"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is runner            # the same session
        run_suites(SAMPLE / "alice", names=["attention"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is not runner and not runner.alive  # other suites: a new one
        assert first["score"] == sum(t["max_score"] for t in first["tests"]) and again["score"] < first["score"]
    finally:
        pytest_session.keep_warm(False)
    assert pytest_session._WARM["runner"] is None


def test_a_suite_that_does_not_import_is_reported_not_graded(tmp_path):
    from autograder.run import pytest_session
    from autograder.options import GradingOptions

    broken = tmp_path / "test_broken.py"
    broken.write_text("import pytest\npytestmark = pytest.mark.exercise('masks')\ndef test_x(:\n    pass\n")
    with pytest.raises(RuntimeError, match="test_broken.py"):
        pytest_session.SuiteRunner(GradingOptions(files=(broken,), seed=1), [broken])


@pytest.mark.slow
def test_a_grader_failure_in_a_kept_session_costs_that_submission_only(monkeypatch):
    """An exception of the grader's own code while a kept session grades one submission is that
    submission's error; the session ends and the next submission is graded by a fresh one."""
    from autograder.run import grading, plugin, pytest_session

    monkeypatch.setattr(pytest_session, "_WARM", {"enabled": False, "runner": None})
    real_prepare, calls = plugin.GradingSession.prepare, []

    def prepare_failing_once(self, items):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a grader bug")
        return real_prepare(self, items)

    monkeypatch.setattr(plugin.GradingSession, "prepare", prepare_failing_once)
    pytest_session.keep_warm()
    try:
        with pytest.raises(RuntimeError, match="a grader bug"):
            run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is None
        after = run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        assert after["score"] == sum(t["max_score"] for t in after["tests"])
    finally:
        pytest_session.keep_warm(False)
