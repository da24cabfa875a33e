"""``tkit similarity``: which submissions of a class share code beyond the starter stubs, and
(from a graded class's gradebook) which share rare wrong outputs."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands.options import class_dir_option, exercise_option, lang_option, workers_option
from autograder.intake.untrusted import shown


def run_report(todo: list[tuple[str, Path]], out_dir: Path, *, reference: bool = True,
               time_limit: float | None = None, names=None, workers: int | None = None,
               gradebook: Path | None = None) -> bool:
    """Compare ``todo`` (``(student id, path)``) on ``workers`` processes (default: the
    machine's cores), read the behaviour evidence of ``gradebook`` (default:
    ``out_dir/gradebook.sqlite``; none there: no behaviour evidence, said on stderr), write
    ``out_dir/similarity.csv``, ``similarity-structure.csv``, ``similarity-behaviour.csv`` and
    ``similarity.html`` and say so on
    stdout (refusals on stderr). Returns whether the run finished before its time limit.
    Also what ``tkit grade --similarity`` calls."""
    from autograder.run import batch
    from autograder.similarity import behaviour, matcher, report

    gradebook = Path(gradebook) if gradebook is not None else Path(out_dir) / "gradebook.sqlite"
    evidence = behaviour.from_gradebook(gradebook)
    if evidence.source is None:
        click.echo(f"similarity: no gradebook at {shown(str(gradebook))}: code similarity only, no behaviour "
                   f"evidence (grade the class first, or give --gradebook)", err=True)

    limit = matcher.DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    result = matcher.compare_class(todo, reference=reference, time_limit=limit, names=names,
                                      workers=workers or batch.default_workers())
    csv_path, html_path = report.write_report(result, out_dir, evidence)
    for sid, why in result.refused.items():
        click.echo(f"similarity: {shown(sid)} not compared: {shown(why)}", err=True)
    if not result.complete:
        click.secho(f"similarity: stopped at the time limit ({limit:g} s); the report holds the pairs "
                    f"compared before it", fg="yellow", err=True)
    flagged = sum(p.flagged for p in result.pairs)
    if result.small_class:
        click.echo(f"similarity: a class of {len(result.students)} ({matcher.SMALL_CLASS} or fewer): pairs ranked, "
                   f"none flagged; two students compared without the reference's code")
    click.echo(f"similarity: {len(result.students)} submission(s), {flagged} flagged pair(s) in "
               f"{result.seconds:.1f} s; wrote {csv_path} and {html_path}")
    click.echo(f"similarity: structure: {sum(p.flagged for p in result.structure)} flagged pair(s) and "
               f"exercise(s); wrote {Path(out_dir) / 'similarity-structure.csv'}")
    if evidence.source is not None:
        click.echo(f"similarity: behaviour evidence of {len(evidence.students)} graded submission(s): "
                   f"{len(evidence.flagged)} flagged pair(s) and exercise(s) in {evidence.seconds:.2f} s; wrote "
                   f"{Path(out_dir) / 'similarity-behaviour.csv'}")
    return result.complete


@click.command(name="similarity")
@click.argument("submissions", nargs=-1, type=click.Path(exists=True, path_type=Path))
@class_dir_option(help="Compare every entry of this folder; each entry's name is the student id.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Write OUT/similarity.csv, OUT/similarity-structure.csv and OUT/similarity.html here.")
@exercise_option("Compare")
@click.option("--reference/--no-reference", default=True, show_default=True,
              help="Compare every student with the reference solutions too (a leaked solution).")
@click.option("--time-limit", type=click.FloatRange(min=1), default=None,
              help="Stop after this many seconds and report what was compared [default: 900].")
@workers_option(help="Compare this many exercises in parallel [default: the machine's cores].")
@click.option("--gradebook", "gradebook_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The graded class's gradebook, for the behaviour evidence (shared rare wrong outputs) "
                   "[default: OUT/gradebook.sqlite; without one, code similarity only].")
@lang_option()
def command(submissions, class_dir, out_dir, names, reference, time_limit, workers, gradebook_path, lang):
    """Report the code SUBMISSIONS (folders, .zip) or the entries of --class-dir share.

    Per pair of students and exercise, the share of matching code (winnowing, the MOSS method;
    renamed variables still match; the starter stubs never count), and per student the share
    shared with the reference solution; and the share of the same computation however written
    (the structural matcher: OUT/similarity-structure.csv). From the gradebook of a graded class, also the pairs
    whose failing tests gave the same rare wrong outputs (OUT/similarity-behaviour.csv).
    Exits 1 when the time limit cut the run short.
    """
    from autograder.commands import submission_list

    todo = submission_list(submissions, class_dir, "compare")
    if not run_report(todo, out_dir, reference=reference, time_limit=time_limit, names=names or None,
                      workers=workers, gradebook=gradebook_path):
        raise SystemExit(1)
