"""``tkit gradebook``: export grades.csv from a gradebook, merge shard gradebooks."""

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
