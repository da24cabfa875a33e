"""What ``tkit grade`` keeps for a class: feedback per submission, the gradebook, grades.csv
and summary.html.

:class:`ClassRecords` hooks into :func:`autograder.run.batch.grade_many`'s ``on_result``
callback: each finished submission's :class:`~autograder.results.model.Results` (pictures' data
included) is written to ``results.json`` (what a student may see), recorded in the gradebook in
its instructor form (one transaction, under its real id; what hidden tests withhold included, and
also written to ``OUT/instructor/<safe id>/hidden.json``) and rendered to ``feedback.html`` and
``feedback.md``, all in ``OUT/submissions/<safe id>/`` (:func:`autograder.intake.untrusted.submission_dir`: student ids are data,
never paths beside the class files); :meth:`ClassRecords.finish`
writes ``grades.csv`` and ``summary.html`` for every submission in the gradebook, from the
objects recorded in this run (only the submissions of earlier runs are read back from it).
"""

from __future__ import annotations

from pathlib import Path

from autograder.intake.textfiles import write_json_atomic, write_text_atomic
from autograder.intake.untrusted import report_href, safe_id, submission_dir
from autograder.records import gradebook
from autograder.reports import render
from autograder.results import withheld
from autograder.results.model import Results, error_results

INSTRUCTOR_FOLDER = "instructor"   # OUT/instructor/<safe id>/hidden.json: never handed to students


class ClassRecords:
    """Records of one class run into ``out_dir`` (gradebook default: ``out_dir/gradebook.sqlite``).
    It renders and records only: the pictures' data comes with the results from the grading
    session (the ``pictures`` option of :func:`autograder.run.grading.grade_submission`)."""

    def __init__(self, out_dir: Path, *, options: dict, gradebook_path: Path | None = None,
                 lang: str | None = None):
        self.out_dir = Path(out_dir)
        self.book = gradebook.Gradebook(gradebook_path or self.out_dir / "gradebook.sqlite")
        self.options = options
        self.options_key = gradebook.options_key(options)
        self.lang = lang
        self.hashes: dict[str, str] = {}
        self.recorded: dict[str, Results] = {}   # this run's results, by student id

    def close(self) -> None:
        self.book.close()

    def plan(self, todo: list[tuple[str, Path]], resume: bool) -> list[tuple[str, Path]]:
        """The submissions to grade: all of ``todo``, or with ``resume`` only those whose
        content hash, kit version or options differ from the gradebook's."""
        self.hashes = {sid: gradebook.content_hash(path) for sid, path in todo}
        if not resume:
            return list(todo)
        return [(sid, path) for sid, path in todo
                if self.book.needs_grading(sid, self.hashes[sid], self.options_key)]

    def seed(self, seed: int | None, resume: bool) -> int:
        """The run's seed: ``seed``, else (with ``resume``) the gradebook's, else a fresh one;
        stored in the gradebook."""
        import secrets

        stored = self.book.get_meta("seed")
        if seed is None:
            seed = int(stored) if resume and stored is not None else secrets.randbelow(2**31)
        self.book.set_meta("seed", str(seed))
        return seed

    def on_result(self, student_id: str, path: Path, results: Results | Exception) -> Results:
        """Record one finished submission (its :class:`Results`, or the exception that stopped
        its grading: then the error, 0 points): ``results.json`` written, the gradebook row, the
        feedback. Returns the results recorded.

        Raises:
            TypeError: ``results`` is neither (a dict of results.json is not taken: the one
                shape from the grading to the gradebook is :class:`Results`).
        """
        if isinstance(results, Exception):
            results = error_results(str(results), str(path))
        if not isinstance(results, Results):
            raise TypeError(f"on_result takes Results or an exception, got {type(results).__name__}")
        folder = self.student_folder(student_id)
        write_json_atomic(folder / "results.json", results.to_gradescope())
        data = results.to_gradescope(instructor=True)
        self.write_withheld(student_id, results)
        content = self.hashes.get(student_id) or gradebook.content_hash(path)
        self.book.record(student_id, results, content_hash=content, options=self.options_key, data=data)
        self.recorded[student_id] = results
        render.write_feedback(results, folder, student=student_id, lang=self.lang)
        return results

    def write_withheld(self, student_id: str, results: Results) -> None:
        """``OUT/instructor/<safe id>/hidden.json``: what the student's hidden tests withhold from
        their records (:func:`autograder.results.withheld.instructor_record`); outside
        ``OUT/submissions/``, which may be handed to students. Nothing when nothing is withheld."""
        record = withheld.instructor_record(results)
        if record is not None:
            write_json_atomic(self.out_dir / INSTRUCTOR_FOLDER / safe_id(student_id) / "hidden.json",
                              {"student": student_id, **record})

    def finish(self) -> tuple[Path, Path]:
        """Write ``grades.csv`` and ``summary.html`` into ``out_dir`` for the whole gradebook:
        this run's submissions as recorded, the others (a resumed run's) read back from it."""
        class_results = self.book.all_results(known=self.recorded)
        csv_path = self.book.export_csv(self.out_dir / "grades.csv", class_results)
        summary = self.out_dir / "summary.html"
        write_text_atomic(summary, render.render_summary(class_results, lang=self.lang,
                                                          feedback_href=self.feedback_href))
        return csv_path, summary

    def student_folder(self, student_id: str) -> Path:
        """Where a student's results.json, feedback.html and feedback.md are written."""
        return submission_dir(self.out_dir, student_id)

    def feedback_href(self, student_id: str) -> str:
        """The link from ``summary.html`` (in ``out_dir``) to the student's ``feedback.html``."""
        return report_href(student_id)
