"""``tkit check``: a student's self-check on the public tests."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click

from autograder.commands.options import data_dir_option, grading_options, lang_option, seed_option, use_data_dir

ERROR_LOG = "tkit-check-grader-errors.log"   # in the temporary folder: a kit error's details


@click.command(name="check")
@click.argument("exercise", nargs=-1)
@click.option("--path", "path", type=click.Path(exists=True, path_type=Path), default=None,
              help="Folder (or .zip) with your modules [default: ./exercises if there is one, else the kit's stubs].")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the results JSON here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write an HTML report (with pictures) here.")
@lang_option()
@seed_option(default=0, help="Seed of the random inputs.")
@click.option("-v", "--verbose", is_flag=True,
              help="Show every failing test's message (by default: at most a few, and none for untouched TODOs).")
@data_dir_option(help="Folder holding the MNIST files for the AutoEncoder's training tests "
                      "[default: TKIT_DATA_DIR, then datasets/mnist; `tkit data mnist --download` fetches them].")
def command(exercise, path, json_path, html_path, lang, seed, verbose, data_dir):
    """Run the public tests on your exercises (all, or the EXERCISE names given).

    Exits 0 only when every checked test passes.
    """
    options = grading_options({"names": "EXERCISE"}, visibility=("public",), names=exercise, seed=seed, lang=lang)
    from autograder.sandbox import zygote_parent

    zygote_parent.prestart()  # the sandbox's import of torch overlaps ours
    from autograder import i18n, paths
    from autograder.intake import submission
    from autograder.run import grading
    from autograder.reports.console import print_results
    from autograder.results import grader_errors

    use_data_dir(data_dir)
    path = path or default_path(paths)
    refuse_empty(path)
    click.echo(i18n._("Checking {path}").format(path=path))
    error_log = Path(tempfile.gettempdir()) / ERROR_LOG   # a kit error's traceback: never on the screen
    try:
        results = grading.grade_submission(path, options.replace(pictures=bool(html_path), error_log=error_log))
    except submission.SubmissionFormatError as exc:
        raise click.ClickException(str(exc)) from None
    for note in results.warnings or []:
        click.echo(i18n._("warning: {note}").format(note=note))
    click.echo(i18n._("Grading runs each of these tests again on other inputs of the same kind, and a test's points "
                      "count when both pass; names, shapes, errors and properties are paid as far as the exercise's "
                      "value tests pass."))
    print_results(results, verbose=verbose)
    if any(t.not_graded == grader_errors.NOT_GRADED_REASON for t in results.tests):
        click.echo(i18n._("The kit itself failed on a test; the details are in {path} (for whoever maintains "
                          "the kit, not a mistake in your code).").format(path=error_log))
    if html_path:
        from autograder.reports import render
        from autograder.intake.textfiles import write_text_atomic

        write_text_atomic(html_path, render.render_feedback(results, "html", self_check=True))
        click.echo(i18n._("HTML report written to {path}").format(path=html_path))
    if json_path:
        json_path.write_text(json.dumps(results.to_gradescope(), indent=2, ensure_ascii=False), encoding="utf-8")
    sys.exit(0 if all(t.passed for t in results.tests) else 1)


def refuse_empty(path: Path) -> None:
    """One line (click.ClickException) for a folder that holds no exercise file where the grader
    looks (``<exercise>.py`` or ``.ipynb``, a near miss such as ``Attention.py``, or one or two
    folders down: :func:`autograder.intake.layout.find`), instead of every test's "expected ...
    in the submission"."""
    from autograder import exercises, i18n
    from autograder.intake import layout

    if not path.is_dir():
        return
    try:
        found = layout.find(path).modules
    except layout.TooManyEntries:
        return   # the grading refuses it with its own message
    if not found:
        raise click.ClickException(i18n._("{path} holds no exercise files (such as {example}.py or "
                                          "{example}.ipynb)").format(path=path, example=exercises.NAMES[1]))


def default_path(paths) -> Path:
    """What ``tkit check`` checks without ``--path``: ``./exercises`` when the current folder has
    one (a student working in the kit's folder, whatever way it was installed), else the kit's
    own ``exercises/`` (``paths.exercises_dir()``)."""
    here = Path.cwd() / "exercises"
    return here if here.is_dir() else paths.exercises_dir()
