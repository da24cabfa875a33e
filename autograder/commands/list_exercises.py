"""``tkit list``: the exercises, their points and how they split into public and hidden tests."""

from __future__ import annotations

import click


@click.command(name="list")
@click.option("--lang", type=click.Choice(["en", "ko"]), default=None, help="Language of the titles.")
def command(lang):
    """List the exercises with their points (100 in all) and the public/hidden split.

    The public points are read from the public suite's markers; the hidden ones are the rest
    (the student edition has no hidden suite to read).
    """
    from autograder import exercises, i18n, suite_index

    lang = lang or i18n.default_language()
    public = {name: split.get("public", 0.0)
              for name, split in suite_index.points_split(suite_index.collect()).items()}
    click.echo(f"{'exercise':<22} {'points':>6} {'public':>6} {'hidden':>6}  title")
    for ex in exercises.EXERCISES:
        title = ex.title_ko if lang == "ko" else ex.title_en
        shown = public.get(ex.name, 0.0)
        click.echo(f"{ex.name:<22} {ex.points:>6g} {shown:>6g} {ex.points - shown:>6g}  {title}")
    total_public = sum(public.get(n, 0.0) for n in exercises.NAMES)
    click.echo(f"{'total':<22} {exercises.total_points():>6g} {total_public:>6g} "
               f"{exercises.total_points() - total_public:>6g}")
