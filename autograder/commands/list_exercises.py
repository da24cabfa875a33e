"""``tkit list``: the exercises, their points and how they split into public and hidden tests."""

from __future__ import annotations

import click


@click.command(name="list")
@click.option("--lang", type=click.Choice(["en", "ko"]), default=None, help="Language of the titles.")
def command(lang):
    """List the exercises with their points (100 in all)."""
    from autograder import exercises, i18n

    lang = lang or i18n.default_language()
    click.echo(f"{'exercise':<22} {'points':>6}  title")
    for ex in exercises.EXERCISES:
        title = ex.title_ko if lang == "ko" else ex.title_en
        click.echo(f"{ex.name:<22} {ex.points:>6g}  {title}")
    click.echo(f"{'total':<22} {exercises.total_points():>6g}")
