"""Grading many submissions: the loop behind ``tkit grade``.

:func:`grade_many` grades ``(student id, path)`` pairs and reports each finished one to
``on_result(student_id, path, results_or_error)``; it never stops on a bad submission.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from autograder import grading


def grade_many(todo: list[tuple[str, Path]], out_dir: Path, *, options: dict,
               on_result: Callable[[str, Path, object], None]) -> None:
    """Grade each submission in turn into ``out_dir/<student id>/results.json``.

    ``options`` go to :func:`autograder.grading.grade_submission`. ``on_result`` gets the
    results dict, or the exception when the submission could not be graded at all.
    """
    for sid, path in todo:
        try:
            results = grading.grade_submission(path, out_dir / sid, **options)
        except grading.SubmissionFormatError as exc:
            on_result(sid, path, exc)
            continue
        on_result(sid, path, results)
