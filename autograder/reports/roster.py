"""The class roster of ``summary.html``: one row per student, the table an instructor reads first.

Built from the results dicts (results.json) of a class, ``{student id: results}``; submissions
that could not be graded at all carry an ``error``. Where each student's ``feedback.html`` lives
is not decided here: the caller passes ``feedback_href(student_id) -> str`` (a link relative to
``summary.html``), so the folder layout of a grading run stays in one place
(:meth:`autograder.records.class_run.ClassRecords.feedback_href`).
"""

from __future__ import annotations

from collections.abc import Callable

from autograder import exercises
from autograder.intake.untrusted import shown
from autograder.results import not_graded
from autograder.results.model import Results, as_results


def graded_exercises(class_results: dict[str, Results | dict]) -> list[str]:
    """The exercises graded for at least one student, in the kit's order."""
    seen = {name for r in map(as_results, class_results.values()) if not r.error for name in r.exercises or {}}
    return [name for name in exercises.NAMES if name in seen]


def named_mistakes(results: Results | dict) -> list[str]:
    """The distinct mistake ids named on the submission's failing tests, in test order (a hidden
    test's own, withheld from the student: this is the instructor's summary)."""
    found: list[str] = []
    for test in as_results(results).tests:
        mistake = test.instructor_mistake
        if not test.passed and mistake and mistake not in found:
            found.append(mistake)
    return found


#: SubmissionError kinds that take a whole exercise away (not a wrong value): an instructor looks
#: at these first, because one fix (a file, a line, a loop) may give back many points.
ATTENTION_KINDS = ("missing_file", "syntax_error", "import_error", "timeout", "time_limit", "crash", "gave_up", "names")


def needs_attention(class_results: dict[str, Results | dict]) -> list[dict]:
    """The submissions an instructor should look at first, sorted by student id: those that could
    not be graded at all (``{"student", "error", "causes": []}``) and those with an exercise lost to
    one of :data:`ATTENTION_KINDS` (``causes``: ``[{"kind", "exercises", "tests"}]``, one per kind
    in order of its first exercise: the exercises it took, in the kit's order, and ``tests`` the
    number of failing tests of that kind; six missing files are one line, not six)."""
    out = []
    for sid in sorted(class_results):
        results = as_results(class_results[sid])
        if results.error:
            out.append({"student": shown(sid), "error": shown(results.error), "causes": []})
            continue
        counts: dict[tuple[str, str], int] = {}
        for test in results.tests:
            if not test.passed and test.failure in ATTENTION_KINDS:
                key = (test.exercise, test.failure)
                counts[key] = counts.get(key, 0) + 1
        if counts:
            order = {name: i for i, name in enumerate(exercises.NAMES)}
            by_kind: dict[str, dict] = {}
            for (ex, kind), n in sorted(counts.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
                cause = by_kind.setdefault(kind, {"kind": kind, "exercises": [], "tests": 0})
                cause["exercises"].append(ex)
                cause["tests"] += n
            out.append({"student": shown(sid), "error": "", "causes": list(by_kind.values())})
    return out


def seeds(class_results: dict[str, Results | dict]) -> list[int]:
    """The distinct run seeds of the graded submissions (one for a single run; more when a
    resumed gradebook mixes runs), sorted."""
    found = {as_results(r).seed for r in class_results.values()}
    return sorted(s for s in found if s is not None)


def rows(class_results: dict[str, Results | dict], feedback_href: Callable[[str], str] | None = None) -> list[dict]:
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
        results = as_results(class_results[sid])
        error = results.error or ""
        marked = set() if error else set(not_graded.of_results(results))
        out.append({
            "student": shown(sid),
            "total": None if error else results.score,
            "max_score": None if error else float(results.max_score or 0.0),
            "exercises": [{"name": n, "score": _get(results, n, "score"),
                           "max_score": _get(results, n, "max_score"), "not_graded": n in marked}
                          for n in names],
            "mistakes": [] if error else named_mistakes(results),
            "not_graded": sorted(marked),
            "error": shown(error, one_line=False),
            "feedback": feedback_href(sid) if feedback_href else "",
        })
    return out


def _get(results: Results, name: str, key: str) -> float | None:
    entry = results.exercise(name)
    return None if entry is None else float(getattr(entry, key))
