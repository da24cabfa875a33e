"""Grading an nbgrader course's submissions outside the students' kernels (``tkit nbgrader grade``).

nbgrader's ``autograde`` runs every cell of a submitted notebook in one kernel, the student's
cells first: whatever a test cell computes there, a student cell could have replaced (an
untouched stub that swapped the kit's grading function for ``lambda *a: 5`` earned 5/5). So the
test cells of the kit's course only record that the kit grades the exercise, and this module
does the grading:

1. it reads ``<course>/submitted/<student>/<assignment>/`` (or ``autograded/``), each student's
   folder being one submission of notebooks named after the exercises;
2. it grades them with the kit's engine (:func:`autograder.run.batch.grade_many`: the notebooks are
   converted to modules in the trusted parent, nbgrader's test cells left out, and the student's
   code runs only in the sandboxed child, under its limits);
3. it writes each exercise's points (the suites' score scaled to the test cell's points) as the
   ``manual_score`` of the exercise's test cell (grade id ``<exercise>-tests``) in nbgrader's
   gradebook through :class:`nbgrader.api.Gradebook`; nbgrader's score of a cell is the manual
   score when there is one, so the kernel's result never counts.

The kit's own records (feedback per student, summary.html, grades.csv, its gradebook) go to
``<course>/tkit/<assignment>/``. Sources: nbgrader's database API,
https://nbgrader.readthedocs.io/en/stable/api/gradebook.html.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder import exercises
from autograder.options import GradingOptions
from autograder.records.class_run import ClassRecords
from autograder.results.model import Results, as_results
from autograder.run import batch


@dataclass
class CourseGrades:
    """What :func:`grade_course` did: ``{student: {exercise: points}}`` written to nbgrader's
    gradebook, and ``{student: error}`` for submissions that could not be graded (scored 0)."""

    points: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    out_dir: Path | None = None


def assignment_exercises(course_dir: Path, assignment: str) -> list[str]:
    """The exercises of ``assignment``: its source notebooks named after the kit's exercises.

    Raises:
        FileNotFoundError: when ``source/<assignment>/`` holds none.
    """
    folder = Path(course_dir) / "source" / assignment
    names = [n for n in exercises.NAMES if (folder / f"{n}.ipynb").is_file()]
    if not names:
        raise FileNotFoundError(f"{folder} holds no exercise notebooks of the kit "
                                f"(write the course with `tkit export nbgrader`)")
    return names


def submissions(course_dir: Path, assignment: str, source: str = "submitted") -> list[tuple[str, Path]]:
    """``(student id, folder)`` of every ``<course>/<source>/<student>/<assignment>/`` folder."""
    root = Path(course_dir) / source
    if not root.is_dir():
        return []
    return [(student.name, student / assignment) for student in sorted(root.iterdir())
            if student.is_dir() and not student.is_symlink() and (student / assignment).is_dir()]


def cell_points(results: Results | dict, exercise: str) -> float:
    """The points of ``exercise``'s test cell: the suites' score of the exercise scaled to the
    exercise's points (0 for an exercise the results do not hold, or results with an error)."""
    results = as_results(results)
    got = results.exercise(exercise)
    if results.error or not got or not got.max_score:
        return 0.0
    points = exercises.get(exercise).points
    return round(points * got.score / got.max_score, 4)


def write_scores(course_dir: Path, assignment: str, points: dict[str, dict[str, float]],
                 db_url: str | None = None) -> None:
    """Write ``{student: {exercise: points}}`` into nbgrader's gradebook as the manual score of
    each exercise's test cell (creating the student and the submission when ``nbgrader
    autograde`` has not). ``db_url``: nbgrader's ``CourseDirectory.db_url`` [default:
    ``sqlite:///<course>/gradebook.db``].

    Raises:
        nbgrader.api.MissingEntry: the assignment is not in the gradebook (run ``nbgrader
            generate_assignment`` first).
    """
    from nbgrader.api import Gradebook, MissingEntry

    url = db_url or f"sqlite:///{Path(course_dir).resolve() / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.find_assignment(assignment)
        for student, per_exercise in points.items():
            gb.update_or_create_student(student)
            try:
                gb.find_submission(assignment, student)
            except MissingEntry:
                gb.add_submission(assignment, student)
            for exercise, score in per_exercise.items():
                grade = gb.find_grade(f"{exercise}-tests", exercise, assignment, student)
                grade.manual_score = score
                grade.needs_manual_grade = False
            gb.db.commit()


def grade_course(course_dir: Path, assignment: str, *, source: str = "submitted", seed: int | None = None,
                 workers: int | None = 1, lang: str | None = None, on_result=None,
                 db_url: str | None = None) -> CourseGrades:
    """Grade every submission of ``assignment`` with the sandboxed engine and write the points
    into nbgrader's gradebook (see the module's docstring). ``on_result(student, path, results)``
    is called as each one finishes (for progress output). Returns a :class:`CourseGrades`.

    Raises:
        FileNotFoundError: the course has no source notebooks for ``assignment``.
        ValueError: ``source`` is not ``submitted`` or ``autograded``; an invalid ``seed`` or
            ``lang`` (:class:`autograder.options.OptionsError`).
    """
    if source not in ("submitted", "autograded"):
        raise ValueError(f"source must be 'submitted' or 'autograded', got {source!r}")
    from autograder.run import grading  # imports torch: not for reading the course's notebooks

    names = assignment_exercises(course_dir, assignment)
    visibility = ("public", "hidden") if grading.suite_files(("hidden",), names) else ("public",)
    options = GradingOptions(visibility=visibility, names=names, seed=seed, lang=lang)
    out_dir = Path(course_dir) / "tkit" / assignment
    records = ClassRecords(out_dir, options=options.results_key(), lang=lang)
    done = CourseGrades(out_dir=out_dir)

    def record(student, path, results):
        recorded = records.on_result(student, path, results)
        done.points[student] = {name: cell_points(recorded, name) for name in names}
        if recorded.error:
            done.errors[student] = recorded.error
        if on_result is not None:
            on_result(student, path, recorded)

    try:
        options = options.replace(seed=records.seed(seed, resume=True))
        batch.grade_many(submissions(course_dir, assignment, source), out_dir, options=options,
                         on_result=record, workers=workers)
        records.finish()
    finally:
        records.close()
    write_scores(course_dir, assignment, done.points, db_url)
    return done
