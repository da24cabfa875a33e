"""``tkit similarity``: which submissions of a class share code beyond the starter stubs."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands.options import class_dir_option, exercise_option, lang_option, workers_option
from autograder.intake.untrusted import shown


def run_report(todo: list[tuple[str, Path]], out_dir: Path, *, reference: bool = True,
               time_limit: float | None = None, names=None, workers: int | None = None) -> bool:
    """Compare ``todo`` (``(student id, path)``) on ``workers`` processes (default: the
    machine's cores), write ``out_dir/similarity.csv`` and ``similarity.html`` and say so on
    stdout (refusals on stderr). Returns whether the run finished before its time limit.
    Also what ``tkit grade --similarity`` calls."""
    from autograder.run import batch
    from autograder.similarity import matcher, report

    limit = matcher.DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    result = matcher.compare_class(todo, reference=reference, time_limit=limit, names=names,
                                      workers=workers or batch.default_workers())
    csv_path, html_path = report.write_report(result, out_dir)
    for sid, why in result.refused.items():
        click.echo(f"similarity: {shown(sid)} not compared: {shown(why)}", err=True)
    if not result.complete:
        click.secho(f"similarity: stopped at the time limit ({limit:g} s); the report holds the pairs "
                    f"compared before it", fg="yellow", err=True)
    flagged = sum(p.flagged for p in result.pairs)
    click.echo(f"similarity: {len(result.students)} submission(s), {flagged} flagged pair(s) in "
               f"{result.seconds:.1f} s; wrote {csv_path} and {html_path}")
    return result.complete


@click.command(name="similarity")
@click.argument("submissions", nargs=-1, type=click.Path(exists=True, path_type=Path))
@class_dir_option(help="Compare every entry of this folder; each entry's name is the student id.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Write OUT/similarity.csv and OUT/similarity.html here.")
@exercise_option("Compare")
@click.option("--reference/--no-reference", default=True, show_default=True,
              help="Compare every student with the reference solutions too (a leaked solution).")
@click.option("--time-limit", type=click.FloatRange(min=1), default=None,
              help="Stop after this many seconds and report what was compared [default: 900].")
@workers_option(help="Compare this many exercises in parallel [default: the machine's cores].")
@lang_option()
def command(submissions, class_dir, out_dir, names, reference, time_limit, workers, lang):
    """Report the code SUBMISSIONS (folders, .zip) or the entries of --class-dir share.

    Per pair of students and exercise, the share of matching code (winnowing, the MOSS method;
    renamed variables still match; the starter stubs never count), and per student the share
    shared with the reference solution. Exits 1 when the time limit cut the run short.
    """
    from autograder.commands import submission_list

    todo = submission_list(submissions, class_dir, "compare")
    if not run_report(todo, out_dir, reference=reference, time_limit=time_limit, names=names or None,
                      workers=workers):
        raise SystemExit(1)
