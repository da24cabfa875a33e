"""The class roster of ``summary.html``: one row per student, the table an instructor reads first.

Built from the results dicts (results.json) of a class, ``{student id: results}``; submissions
that could not be graded at all carry an ``error``. Where each student's ``feedback.html`` lives
is not decided here: the caller passes ``feedback_href(student_id) -> str`` (a link relative to
``summary.html``), so the folder layout of a grading run stays in one place
(:meth:`autograder.records.ClassRecords.feedback_href`).
"""

from __future__ import annotations

from collections.abc import Callable

from autograder import exercises, not_graded
from autograder.untrusted import shown


def graded_exercises(class_results: dict[str, dict]) -> list[str]:
    """The exercises graded for at least one student, in the kit's order."""
    seen = {name for r in class_results.values() if not r.get("error")
            for name in (r.get("extra_data") or {}).get("exercises", {})}
    return [name for name in exercises.NAMES if name in seen]


def named_mistakes(results: dict) -> list[str]:
    """The distinct mistake ids named on the submission's failing tests, in test order."""
    found: list[str] = []
    for test in results.get("tests", []):
        mistake = (test.get("extra_data") or {}).get("mistake")
        if test.get("status") != "passed" and mistake and mistake not in found:
            found.append(mistake)
    return found


def rows(class_results: dict[str, dict], feedback_href: Callable[[str], str] | None = None) -> list[dict]:
    """One dict per student, sorted by student id.

    Keys: ``student``; ``total`` and ``max_score`` (floats; None when not graded at all);
    ``exercises``: per graded exercise (:func:`graded_exercises`) ``{"name", "score",
    "max_score", "not_graded"}`` (score None when the submission has no record of it);
    ``mistakes``: mistake ids (:func:`named_mistakes`); ``not_graded``: sorted exercise names;
    ``error``: why the submission could not be graded, or ""; ``feedback``: the link to the
    student's ``feedback.html`` from ``feedback_href``, or "" without one.
    """
    names = graded_exercises(class_results)
    out = []
    for sid in sorted(class_results):
        results = class_results[sid]
        extra = results.get("extra_data") or {}
        error = results.get("error") or ""
        marked = set() if error else set(not_graded.of_results(results))
        per_exercise = extra.get("exercises", {})
        out.append({
            "student": shown(sid),
            "total": None if error else float(results.get("score", 0.0)),
            "max_score": None if error else float(extra.get("max_score") or 0.0),
            "exercises": [{"name": n, "score": _get(per_exercise, n, "score"),
                           "max_score": _get(per_exercise, n, "max_score"), "not_graded": n in marked}
                          for n in names],
            "mistakes": [] if error else named_mistakes(results),
            "not_graded": sorted(marked),
            "error": shown(error, one_line=False),
            "feedback": feedback_href(sid) if feedback_href else "",
        })
    return out


def _get(per_exercise: dict, name: str, key: str) -> float | None:
    entry = per_exercise.get(name)
    return None if entry is None else float(entry[key])
