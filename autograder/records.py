"""What ``tkit grade`` keeps for a class: feedback per submission, the gradebook, grades.csv
and summary.html.

:class:`ClassRecords` hooks into :func:`autograder.batch.grade_many`'s ``on_result``
callback: each finished submission is recorded in the gradebook (one transaction, under its real
id) and gets ``feedback.html`` and ``feedback.md`` beside its ``results.json`` in
``OUT/submissions/<safe id>/`` (:func:`autograder.untrusted.submission_dir`: student ids are data,
never paths beside the class files); :meth:`ClassRecords.finish`
writes ``grades.csv`` and ``summary.html`` for every submission in the gradebook.
"""

from __future__ import annotations

from pathlib import Path

from autograder import gradebook, pictures, reports
from autograder.textfiles import write_json_atomic, write_text_atomic
from autograder.untrusted import report_href, submission_dir


class ClassRecords:
    """Records of one class run into ``out_dir`` (gradebook default: ``out_dir/gradebook.sqlite``).

    ``pictures``: compute the report pictures from each submission's code after grading (a
    short extra run of the student's functions in a sandboxed child; no points).
    """

    def __init__(self, out_dir: Path, *, options: dict, gradebook_path: Path | None = None,
                 lang: str | None = None, pictures: bool = True):
        self.out_dir = Path(out_dir)
        self.book = gradebook.Gradebook(gradebook_path or self.out_dir / "gradebook.sqlite")
        self.options = options
        self.options_key = gradebook.options_key(options)
        self.lang = lang
        self.pictures = pictures
        self.hashes: dict[str, str] = {}

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

    def on_result(self, student_id: str, path: Path, results) -> dict:
        """Record one finished submission (``results`` or the exception that stopped its
        grading) and write its feedback; returns the results dict recorded."""
        if isinstance(results, Exception):
            results = reports.error_results(str(results), str(path))
        elif self.pictures:
            pictures.add_to_results(path, results, self.options.get("names"))
        folder = self.student_folder(student_id)
        content = self.hashes.get(student_id) or gradebook.content_hash(path)
        self.book.record(student_id, results, content_hash=content, options=self.options_key)
        if not results.get("error"):
            write_json_atomic(folder / "results.json", results)
        reports.write_feedback(results, folder, student=student_id, lang=self.lang)
        return results

    def finish(self) -> tuple[Path, Path]:
        """Write ``grades.csv`` and ``summary.html`` into ``out_dir`` from the whole gradebook."""
        csv_path = self.book.export_csv(self.out_dir / "grades.csv")
        summary = self.out_dir / "summary.html"
        write_text_atomic(summary, reports.render_summary(self.book.all_results(), lang=self.lang,
                                                          feedback_href=self.feedback_href))
        return csv_path, summary

    def student_folder(self, student_id: str) -> Path:
        """Where a student's results.json, feedback.html and feedback.md are written."""
        return submission_dir(self.out_dir, student_id)

    def feedback_href(self, student_id: str) -> str:
        """The link from ``summary.html`` (in ``out_dir``) to the student's ``feedback.html``."""
        return report_href(student_id)
