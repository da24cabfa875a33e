"""Tests the grader could not judge: "not graded", never the student's failure.

A grader-side problem (grading data missing, an internal error of the kit, a failing pictures
step) is not a mistake in the submission. Such a test keeps Gradescope's schema (status
``"failed"``, score 0) but carries ``extra_data["not_graded"] = "<short reason>"``; the
submission's results carry ``extra_data["not_graded"] = [exercise, ...]`` (exercise order).
Every report shows these tests as "not graded" (:mod:`autograder.reports.render`,
:mod:`autograder.reports.console`, ``grades.csv``), none as a failed test.

Who marks: :func:`reason_for` names the grader-side exceptions the plugin meets while a test
runs (a missing or corrupted dataset here); the plugin marks the kit's own internal errors
with the reason of :mod:`autograder.results.grader_errors`; :func:`summarize` gathers the marks of a
submission's :class:`~autograder.results.model.Results`.
"""

from __future__ import annotations

from autograder import exercises
from autograder.i18n import _
from autograder.results.model import Results, TestResult, as_results

KEY = "not_graded"


def reason_for(exc: BaseException) -> str | None:
    """The short reason a test could not be judged because of ``exc``, or None when ``exc``
    says nothing about the grader (a student's failure, or an unknown error)."""
    from autograder import mnist  # imports torch: not for the CSV and reports

    if isinstance(exc, mnist.DatasetError):
        return f"grading data unavailable: {exc}"[:2000]
    return None


def message() -> str:
    """What a student reads in place of a not-graded test's output (current language)."""
    return _("not graded: the grader could not judge this test (a problem on the grading side, "
             "not in your code); it will be graded again")


def reason(test) -> str:
    """The test's not-graded reason, '' when the test was judged (``test``: a
    :class:`~autograder.results.model.TestResult` or a results.json test entry)."""
    if isinstance(test, dict):
        test = TestResult.from_json(test)
    return str(test.not_graded or "")


def exercises_of(tests: list[TestResult]) -> list[str]:
    """The exercises (in exercise order) with at least one test not graded."""
    found = {t.exercise for t in tests if reason(t)}
    return [name for name in exercises.NAMES if name in found]


def summarize(results: Results) -> list[str]:
    """Set ``results.not_graded`` (None when empty) and each exercise's ``not_graded`` count in
    ``results.exercises``; returns the exercises' list."""
    names = exercises_of(results.tests)
    for test in results.tests:
        entry = results.exercise(test.exercise) if reason(test) else None
        if entry is not None:
            entry.not_graded += 1
    results.not_graded = names or None
    return names


def of_results(results) -> list[str]:
    """The exercises a submission's results (:class:`~autograder.results.model.Results` or a
    results.json dict) say were not graded (from its tests when the submission-level list is
    absent, e.g. results written before the list existed)."""
    results = as_results(results)
    if isinstance(results.not_graded, list):
        return [str(name) for name in results.not_graded]
    return exercises_of(results.tests)
