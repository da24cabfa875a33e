"""``tkit gradebook``: export grades.csv or an LMS's import file from a gradebook, merge shard gradebooks."""

from __future__ import annotations

from pathlib import Path

import click


@click.group(name="gradebook")
def command():
    """Work with class gradebooks (SQLite files written by `tkit grade`)."""


@command.command(name="export-csv")
@click.argument("db", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV file to write [default: grades.csv beside DB].")
def export_csv(db, out):
    """Write grades.csv (student id, each exercise's score, total) from the gradebook DB."""
    from autograder.records.gradebook import Gradebook, GradebookError

    out = out or db.with_name("grades.csv")
    try:
        with Gradebook(db) as book:
            book.export_csv(out)
            count = len(book.students())
    except GradebookError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out} ({count} students)")


@command.command(name="export")
@click.argument("db", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["canvas", "moodle", "lti"]), required=True,
              help="canvas: Canvas's gradebook import CSV; moodle: Moodle's grade import CSV; lti: LTI 1.3 "
                   "Assignment and Grade Services score objects, one JSON a line.")
@click.option("--roster", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="CSV mapping submission ids to the LMS's students: Canvas's own gradebook export (canvas); "
                   "columns submission_id and 'Email address' or 'ID number' (moodle); submission_id and "
                   "user_id, the LTI 'sub' (lti).")
@click.option("--roster-key", default=None,
              help="The roster column holding the submission ids (the class folder's entry names) "
                   "[default: 'SIS Login ID' for canvas, submission_id otherwise].")
@click.option("--assignment", default="Transformer kit", show_default=True,
              help="The grade column's name (Canvas: 'Name (id)' updates that assignment).")
@click.option("--per-exercise", is_flag=True, help="One grade column per exercise instead of the total.")
@click.option("--match", "match_by", type=click.Choice(["email", "idnumber"]), default="email", show_default=True,
              help="moodle: identify students by email address or ID number.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write [default: <format>-grades.csv, or lti-scores.jsonl, beside DB].")
def export(db, fmt, roster, roster_key, assignment, per_exercise, match_by, out):
    """Write DB's grades as the LMS named by --format imports them, for the students of --roster.

    Students of the roster without a submission, and submissions missing from the roster, are
    named on stderr; a hand-in that could not be graded never becomes a 0."""
    from autograder.exports import lms
    from autograder.intake.untrusted import shown
    from autograder.records.gradebook import GradebookError

    out = out or db.with_name("lti-scores.jsonl" if fmt == "lti" else f"{fmt}-grades.csv")
    try:
        result = lms.export(db, fmt, roster, key=roster_key, assignment=assignment, per_exercise=per_exercise,
                            match_by=match_by)
    except (lms.ExportError, GradebookError) as exc:
        raise click.ClickException(str(exc)) from None
    lms.write(result, out)
    for what, ids in (("in the roster but not graded (no submission)", result.missing),
                      ("graded but not in the roster (not exported)", result.unknown),
                      ("not graded (the grader could not read the hand-in; no score exported)", result.not_graded),
                      ("partly not graded (exported; regrade once the grader is fixed)", result.pending)):
        if ids:
            click.echo(f"{len(ids)} student(s) {what}: " + ", ".join(shown(i) for i in ids), err=True)
    click.echo(f"wrote {out} ({len(result.exported)} student(s), {fmt})")


@command.command(name="merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Gradebook to write (created, or added to).")
@click.option("--allow-mixed-seeds", is_flag=True,
              help="Merge even when the shards were graded with different --seed values.")
def merge(sources, out, allow_mixed_seeds):
    """Join SOURCES (shard gradebooks of one class) into --out; a student graded in several
    shards keeps the most recent grading. Refuses shards graded with different seeds."""
    from autograder.records import gradebook

    try:
        taken = gradebook.merge(list(sources), out, allow_mixed_seeds=allow_mixed_seeds)
    except gradebook.GradebookError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"merged {len(taken)} submission(s) from {len(sources)} gradebook(s) into {out}")
