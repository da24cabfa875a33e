"""``tkit export``: a Gradescope autograder zip or an nbgrader course, from the same sources."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands.options import exercise_option, lang_option


@click.group(name="export")
def command():
    """Export a Gradescope autograder or an nbgrader course."""


@command.command(name="gradescope")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("autograder.zip"),
              show_default=True, help="The autograder zip to write.")
@exercise_option("Grade", default_all=True)
@click.option("--visibility", "visibility", multiple=True, metavar="PATTERN=VISIBILITY",
              help="Set tests' Gradescope visibility (visible, hidden, after_due_date, after_published); PATTERN is "
                   "public, hidden, an exercise or a glob on the test's id or name; repeatable, the last match "
                   "wins [default: public=visible, hidden=after_published].")
@click.option("--leaderboard", "with_leaderboard", is_flag=True,
              help="Show the training checks' held-out figures (AutoEncoder MSE, Transformer exact match) on "
                   "Gradescope's leaderboard; they are measured on the run's secret draws.")
@lang_option()
def gradescope(out, names, visibility, with_leaderboard, lang):
    """Write the Gradescope autograder zip (setup.sh, run_autograder, the instructor kit)."""
    from autograder.exports import gradescope

    try:
        members = gradescope.build_zip(out, names, visibility=visibility, with_leaderboard=with_leaderboard)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out} ({len(members)} files); upload it as the assignment's autograder")


@command.command(name="nbgrader")
@click.option("--course-dir", "course_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The nbgrader course folder to write (nbgrader_config.py, source/<assignment>/).")
@click.option("--assignment", default="transformer", show_default=True, help="The assignment's name.")
@exercise_option(help="Put only this exercise in the assignment (repeatable; the components it imports come along).")
@click.option("--force", is_flag=True, help="Replace an existing source/<assignment>/.")
@lang_option()
def nbgrader(course_dir, assignment, names, force, lang):
    """Write an nbgrader course: nbgrader_config.py and one source notebook per exercise."""
    from autograder.exports import nbgrader

    try:
        written = nbgrader.build_course(course_dir, assignment, names, force=force)
    except (FileNotFoundError, ValueError, FileExistsError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {len(written)} files to {course_dir}; then: cd {course_dir} && "
               f"nbgrader generate_assignment {assignment}")
