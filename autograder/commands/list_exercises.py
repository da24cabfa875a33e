"""``tkit list``: the exercises, their points and how they split into public and hidden tests."""

from __future__ import annotations

import click

from autograder.commands.options import lang_option


@click.command(name="list")
@lang_option(help="Language of the titles.")
@click.option("--markdown", is_flag=True,
              help="Print the README's points table (Markdown) instead; README.md must hold this output.")
def command(lang, markdown):
    """List the exercises with their points (100 in all) and the public/hidden split.

    The public points are read from the public suite's markers; the hidden ones are the rest
    (the student edition has no hidden suite to read).
    """
    from autograder import exercises  # here: ``tkit --help`` imports no pytest
    from autograder.run import rubric

    public = {name: split.get("public", 0.0)
              for name, split in rubric.points_split(rubric.collect()).items()}
    if markdown:
        click.echo(markdown_table(exercises.EXERCISES, public))
        return
    click.echo(f"{'exercise':<22} {'points':>6} {'public':>6} {'hidden':>6}  title")
    for ex in exercises.EXERCISES:
        shown = public.get(ex.name, 0.0)
        click.echo(f"{ex.name:<22} {ex.points:>6g} {shown:>6g} {ex.points - shown:>6g}  {ex.title}")
    total_public = sum(public.get(n, 0.0) for n in exercises.NAMES)
    click.echo(f"{'total':<22} {exercises.total_points():>6g} {total_public:>6g} "
               f"{exercises.total_points() - total_public:>6g}")


def markdown_table(registry, public: dict[str, float]) -> str:
    """The README's "Exercises and points" table: one row per exercise of ``registry`` (a
    sequence of :class:`autograder.exercises.Exercise`) with its points, the public points
    (``public[name]``, 0 when absent) and the hidden rest, then the totals. A bonus exercise
    (``(bonus)`` in its English title) is marked so."""
    lines = ["| exercise | points | in public tests | in hidden tests |", "| --- | ---: | ---: | ---: |"]
    for ex in registry:
        shown = public.get(ex.name, 0.0)
        label = f"{ex.name} (bonus)" if "(bonus)" in ex.title_en else ex.name
        lines.append(f"| {label} | {ex.points:g} | {shown:g} | {ex.points - shown:g} |")
    total = sum(ex.points for ex in registry)
    total_public = sum(public.get(ex.name, 0.0) for ex in registry)
    lines.append(f"| **total** | **{total:g}** | **{total_public:g}** | **{total - total_public:g}** |")
    return "\n".join(lines)
