"""Tests the grader could not judge: "not graded", never the student's failure.

A grader-side problem (grading data missing, an internal error of the kit, a failing pictures
step) is not a mistake in the submission. Such a test keeps Gradescope's schema (status
``"failed"``, score 0) but carries ``extra_data["not_graded"] = "<short reason>"``; the
submission's results carry ``extra_data["not_graded"] = [exercise, ...]`` (exercise order).
Every report shows these tests as "not graded" (:mod:`autograder.reports`,
:mod:`autograder.console`, ``grades.csv``), none as a failed test.

Who marks: :func:`reason_for` names the grader-side exceptions the plugin meets while a test
runs (a missing or corrupted dataset here); the plugin marks the kit's own internal errors
with the reason of :mod:`autograder.grader_errors`; :func:`summarize` gathers the marks of a
results dict.
"""

from __future__ import annotations

from autograder import exercises
from autograder.i18n import _

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


def reason(test: dict) -> str:
    """The test's not-graded reason, '' when the test was judged."""
    return str((test.get("extra_data") or {}).get(KEY) or "")


def exercises_of(tests: list[dict]) -> list[str]:
    """The exercises (in exercise order) with at least one test not graded."""
    found = {(t.get("tags") or [""])[0] for t in tests if reason(t)}
    return [name for name in exercises.NAMES if name in found]


def summarize(results: dict) -> list[str]:
    """Set ``results["extra_data"]["not_graded"]`` (dropped when empty) and each exercise's
    ``not_graded`` count in ``extra_data["exercises"]``; returns the exercises' list."""
    names = exercises_of(results.get("tests") or [])
    extra = results.setdefault("extra_data", {})
    for test in results.get("tests") or []:
        if reason(test):
            entry = (extra.get("exercises") or {}).get((test.get("tags") or [""])[0])
            if entry is not None:
                entry[KEY] = entry.get(KEY, 0) + 1
    if names:
        extra[KEY] = names
    else:
        extra.pop(KEY, None)
    return names


def of_results(results: dict) -> list[str]:
    """The exercises a results dict says were not graded (from its tests when the
    submission-level list is absent, e.g. results written before the list existed)."""
    listed = (results.get("extra_data") or {}).get(KEY)
    if isinstance(listed, list):
        return [str(name) for name in listed]
    return exercises_of(results.get("tests") or [])
