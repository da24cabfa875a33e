"""The kit's tests' shortcut for a full grading run: a prepared folder graded, as results.json's dict."""

from __future__ import annotations

from pathlib import Path

from autograder.options import GradingOptions
from autograder.run import grading


def run_suites(submission: Path, options: GradingOptions | None = None, **changes) -> dict:
    """Grade the prepared ``submission`` folder (:func:`autograder.run.grading.grade_folder`, with
    ``options`` and ``changes`` to them) and return its results.json dict (Gradescope's schema)."""
    return grading.grade_folder(submission, options, **changes).to_gradescope()
