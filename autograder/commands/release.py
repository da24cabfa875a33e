"""``tkit release``: write the student edition of the kit (see :mod:`autograder.exports.release`)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command(name="release")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write the student edition into (must be new or empty).")
@click.option("--force", is_flag=True, help="Replace OUT if it already exists.")
@click.option("--notebooks", is_flag=True,
              help="Also write the notebook edition: OUT/notebooks/<exercise>.ipynb, each with a self-check cell.")
def command(out, force, notebooks):
    """Write the student edition: stubs, public tests, the CLI and the engine `tkit check` needs.

    It holds no solution code, no hidden tests and no mistake catalog; the finished folder is
    scanned for them and deleted if anything is found.
    """
    from autograder.exports import release

    try:
        edition = release.build_edition(out, force=force, notebooks=notebooks)
    except (release.ReleaseError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote the student edition ({len(edition.files)} files) to {edition.root}")
    click.echo(f"students: cd {edition.root} && pip install -e . && tkit check")
    if notebooks:
        click.echo(f"notebooks: {edition.root / 'notebooks'} (each ends in a self-check cell)")
