"""``tkit nbgrader``: grade an nbgrader course's submissions outside the students' kernels."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands.options import lang_option, seed_option, workers_option
from autograder.intake.untrusted import shown


@click.group(name="nbgrader")
def command():
    """Grade the notebooks of an nbgrader course written by `tkit export nbgrader`."""


@command.command(name="grade")
@click.option("--course-dir", "course_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              required=True, help="The nbgrader course folder (nbgrader_config.py, source/, submitted/).")
@click.option("--assignment", default="transformer", show_default=True, help="The assignment's name.")
@click.option("--from", "source", type=click.Choice(["submitted", "autograded"]), default="submitted",
              show_default=True, help="Grade the notebooks of this nbgrader folder.")
@click.option("--db-url", default=None,
              help="nbgrader's gradebook [default: sqlite:///COURSE_DIR/gradebook.db].")
@seed_option(help="Seed of the hidden tests [default: the one this course's earlier runs used, else fresh].")
@workers_option()
@lang_option(help="Language of the feedback.")
def grade(course_dir, assignment, source, db_url, seed, workers, lang):
    """Grade every COURSE_DIR/<from>/<student>/<assignment>/ with the kit's sandboxed engine and
    write each exercise's points into nbgrader's gradebook (the manual score of the exercise's
    test cell, which nbgrader's score uses over the kernel's result).

    Run it after `nbgrader collect` (and `nbgrader autograde`, if you use it); the kit's
    feedback and summary go to COURSE_DIR/tkit/<assignment>/.
    """
    from autograder.exports import nbgrader_grading

    def progress(student, path, results):
        if results.error:
            click.echo(f"{shown(student):<24} error: {shown(results.error)}")
        else:
            click.echo(f"{shown(student):<24} {results.score:>6g} / {results.max_score or 0:g}")

    try:
        done = nbgrader_grading.grade_course(course_dir, assignment, source=source, seed=seed, workers=workers,
                                             lang=lang, on_result=progress, db_url=db_url)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote the points of {len(done.points)} submission(s) into nbgrader's gradebook; "
               f"feedback in {done.out_dir}")
