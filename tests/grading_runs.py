"""The kit's tests' shortcut for a full grading run: a prepared folder graded, as results.json's dict."""

from __future__ import annotations

from pathlib import Path

from autograder.options import GradingOptions
from autograder.run import grading


def run_suites(submission: Path, options: GradingOptions | None = None, **changes) -> dict:
    """Grade the prepared ``submission`` folder (:func:`autograder.run.grading.grade_folder`, with
    ``options`` and ``changes`` to them) and return its results.json dict (Gradescope's schema)."""
    return grading.grade_folder(submission, options, **changes).to_gradescope()


def instructor_outputs(submission: Path, options: GradingOptions | None = None, **changes) -> tuple[dict, dict]:
    """Grade like :func:`run_suites`; also return each test's whole output as the instructor reads it
    (``{test id: output}``: a hidden test's own text, which the student's record withholds,
    :mod:`autograder.results.withheld`; a public test's record as is)."""
    from autograder.results import withheld

    results = grading.grade_folder(submission, options, **changes)
    record = withheld.instructor_record(results) or {"tests": {}}
    full = {t.nodeid or t.name: (record["tests"].get(t.nodeid or t.name) or {}).get("output", t.output) or ""
            for t in results.tests}
    return results.to_gradescope(), full
