"""What ``tkit grade`` keeps for a class: feedback per submission, the gradebook, grades.csv,
summary.html and regrades.csv.

:class:`ClassRecords` hooks into :func:`autograder.run.batch.grade_many`'s ``on_result``
callback. Each finished submission's :class:`~autograder.results.model.Results` (pictures' data
included) is written to ``results.json`` (what a student may see), ``feedback.html`` and
``feedback.md`` in ``OUT/submissions/<safe id>/``
(:func:`autograder.intake.untrusted.submission_dir`: student ids are data, never paths beside
the class files), and what its hidden tests withhold to ``OUT/instructor/<safe id>/hidden.json``;
then, **last**, one gradebook transaction records it under its real id, in its instructor form,
with the digests of the three student files. A submission counts as graded only once that
commit is made: a run killed before it (Ctrl-C, ``kill -9``, a power cut) leaves no row or the
previous grading's row, whose digests no longer match the files, and ``--resume`` grades it
again (:meth:`plan`).

:meth:`ClassRecords.finish` writes ``grades.csv``, ``summary.html`` and (when a regrade moved a
score) ``regrades.csv`` for every submission in the gradebook, from the objects recorded in
this run (only the submissions of earlier runs are read back from it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from autograder.intake.layout import content_hash
from autograder.intake.textfiles import write_json_atomic, write_text_atomic
from autograder.intake.untrusted import csv_text, report_href, safe_id, submission_dir
from autograder.records import fingerprint as fingerprints
from autograder.records import gradebook, regrades
from autograder.reports import render
from autograder.reports import summary as class_summary
from autograder.results import withheld
from autograder.results.model import Results, error_results
from autograder.run import credit

OUTPUT_FILES = ("results.json", "feedback.html", "feedback.md")   # one submission's files, in writing order
REGRADES_CSV = "regrades.csv"


def file_digest(path: Path) -> str | None:
    """SHA-256 (hex) of a file's bytes, None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None

INSTRUCTOR_FOLDER = "instructor"   # OUT/instructor/<safe id>/hidden.json: never handed to students


class ClassRecords:
    """Records of one class run into ``out_dir`` (gradebook default: ``out_dir/gradebook.sqlite``).
    It renders and records only: the pictures' data comes with the results from the grading
    session (the ``pictures`` option of :func:`autograder.run.grading.grade_submission`).

    ``options``: the grading options that change results (``GradingOptions.results_key()``);
    ``grading``: the fingerprint of what grades (default: :func:`.fingerprint.of_grading` of
    ``options``' visibility and exercises)."""

    def __init__(self, out_dir: Path, *, options: dict, gradebook_path: Path | None = None,
                 lang: str | None = None, grading: fingerprints.Fingerprint | None = None):
        self.out_dir = Path(out_dir)
        self.book = gradebook.Gradebook(gradebook_path or self.out_dir / "gradebook.sqlite")
        self.options = options
        self.options_key = gradebook.options_key(options)
        self.lang = lang
        self.grading = grading or fingerprints.of_grading(options.get("visibility") or ("public", "hidden"),
                                                          options.get("names"))
        self.book.remember_fingerprint(self.grading.digest, self.grading.parts)
        self.hashes: dict[str, str] = {}
        self.reasons: dict[str, str] = {}        # why each planned submission is graded again
        self.recorded: dict[str, Results] = {}   # this run's results, by student id
        self.class_results: dict[str, Results] = {}   # the whole gradebook's, once finish() has read it

    def close(self) -> None:
        self.book.close()

    def plan(self, todo: list[tuple[str, Path]], resume: bool) -> list[tuple[str, Path]]:
        """The submissions to grade: all of ``todo``, or with ``resume`` those :meth:`why` names a
        reason for (``self.reasons`` holds it, by student id)."""
        self.hashes = {sid: content_hash(path) for sid, path in todo}
        self.reasons = {sid: (self.why(sid) if resume else "") for sid, _ in todo}
        return [(sid, path) for sid, path in todo if not resume or self.reasons[sid]]

    def why(self, student_id: str) -> str:
        """Why ``--resume`` grades a submission again ('' when its grading stands): ``new``,
        ``submission changed``, ``grader changed``, ``options changed`` or ``files incomplete``
        (a result, feedback or row written by half: a run killed while recording it, or a file
        removed since)."""
        stored = self.book.stored(student_id)
        if stored is None:
            return "new"
        if stored["content_hash"] != self.hashes[student_id]:
            return "submission changed"
        if stored["fingerprint"] != self.grading.digest:
            return "grader changed"
        if stored["options"] != self.options_key:
            return "options changed"
        folder = self.student_folder(student_id)
        if set(stored["outputs"]) != set(OUTPUT_FILES) or any(
                file_digest(folder / name) != digest for name, digest in stored["outputs"].items()):
            return "files incomplete"
        return ""

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
        its grading: then "not graded" with the reason): ``results.json``, ``feedback.html``,
        ``feedback.md`` and the instructor's ``hidden.json`` written, then the gradebook row (the
        instructor form) with the student files' digests and, when it replaces another grading,
        what changed (one transaction, the last step). Returns the results recorded.

        Raises:
            TypeError: ``results`` is neither (a dict of results.json is not taken: the one
                shape from the grading to the gradebook is :class:`Results`).
        """
        if isinstance(results, Exception):
            results = error_results(str(results), str(path))
        if not isinstance(results, Results):
            raise TypeError(f"on_result takes Results or an exception, got {type(results).__name__}")
        credit.take_leaderboard(results)   # Gradescope's leaderboard only: never in the class's records
        folder = self.student_folder(student_id)
        for stale in folder.glob(".*.tmp"):   # what a write killed before its rename left
            stale.unlink(missing_ok=True)
        write_json_atomic(folder / "results.json", results.to_gradescope())
        data = results.to_gradescope(instructor=True)
        self.write_withheld(student_id, results)
        render.write_feedback(results, folder, student=student_id, lang=self.lang)
        outputs = {name: file_digest(folder / name) for name in OUTPUT_FILES}
        content = self.hashes.get(student_id) or content_hash(path)
        self.book.record(student_id, results, content_hash=content, options=self.options_key, data=data,
                         fingerprint=self.grading.digest, outputs=outputs,
                         regrade=self._regrade(student_id, results, content))
        self.recorded[student_id] = results
        return results

    def write_withheld(self, student_id: str, results: Results) -> None:
        """``OUT/instructor/<safe id>/hidden.json``: what the student's hidden tests withhold from
        their records (:func:`autograder.results.withheld.instructor_record`); outside
        ``OUT/submissions/``, which may be handed to students. Nothing when nothing is withheld
        (an earlier grading's file is removed)."""
        record = withheld.instructor_record(results)
        target = self.out_dir / INSTRUCTOR_FOLDER / safe_id(student_id) / "hidden.json"
        if record is None:
            target.unlink(missing_ok=True)
        else:
            write_json_atomic(target, {"student": student_id, **record})

    def _regrade(self, student_id: str, results: Results, content: str) -> dict | None:
        """What changed since the grading this one replaces (None: no grading, or the same one again)."""
        old = self.book.stored(student_id)
        if old is None:
            return None
        parts = self.grading.changed(self.book.fingerprint_parts(old["fingerprint"]))
        why = regrades.reasons(old, content, self.grading.digest, self.options_key, parts)
        if not why:
            return None
        return regrades.change(old, self.book.results(student_id), results, why, self.grading.digest)

    def regrade_report(self) -> list[dict]:
        """The students whose score a regrade under this run's grader moved
        (:func:`autograder.records.regrades.report_rows`)."""
        return regrades.report_rows(self.book.regrades(self.grading.digest))

    def finish(self) -> tuple[Path, Path]:
        """Write ``grades.csv``, ``summary.html`` and ``regrades.csv`` into ``out_dir`` for the
        whole gradebook: this run's submissions as recorded, the others (a resumed run's) read back
        from it. ``regrades.csv`` lists the students whose score a regrade moved (removed when
        there are none); ``summary.html`` has the same in a section. A picture that cannot be
        drawn costs that picture only (:func:`autograder.reports.summary.render_summary`)."""
        class_results = self.class_results = self.book.all_results(known=self.recorded)
        csv_path = self.book.export_csv(self.out_dir / "grades.csv", class_results)
        report = self.regrade_report()
        regrades_path = self.out_dir / REGRADES_CSV
        if report:
            write_text_atomic(regrades_path, csv_text(regrades.csv_rows(report)))
        else:
            regrades_path.unlink(missing_ok=True)
        summary = self.out_dir / "summary.html"
        write_text_atomic(summary, class_summary.render_summary(class_results, lang=self.lang,
                                                               feedback_href=self.feedback_href, regrades=report))
        return csv_path, summary

    def student_folder(self, student_id: str) -> Path:
        """Where a student's results.json, feedback.html and feedback.md are written."""
        return submission_dir(self.out_dir, student_id)

    def feedback_href(self, student_id: str) -> str:
        """The link from ``summary.html`` (in ``out_dir``) to the student's ``feedback.html``."""
        return report_href(student_id)
