"""``tkit validate``: reference 100/100, stubs 0, every catalog mutant caught and named, every
degenerate implementation at most 20 % of its exercise."""

from __future__ import annotations

import secrets
import sys

import click

from autograder.commands.options import exercise_option, lang_option, seed_option


@click.command(name="validate")
@exercise_option("Validate")
@click.option("--no-training", is_flag=True, help="Leave out the tests that train a model.")
@seed_option(help="Seed of the hidden tests (default: a fresh one, printed).")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Checks to run at once (separate processes).")
@click.option("--seeds", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Run every check under this many seeds (the seed, seed+1, ...): each must pass under "
                   "every one, and a mistake's points must not move with the seed.")
@lang_option()
def command(names, no_training, seed, jobs, seeds, lang):
    """Grade the reference (must get every point), the untouched stubs (must get 0) and every
    known mistake of the catalog (each must lose points on its own exercise and be named as
    itself), and the degenerate implementations (a constant, zeros, the identity, a model that
    ignores its context, uniform attention..., hand-written and generated from templates) and code
    right on the public inputs only: each may earn at most 20 % of its exercise; with
    --no-training, of its non-training points). Prints a table; exits 1 when any check fails."""
    from rich.console import Console
    from rich.table import Table

    from autograder import validate

    seed = seed if seed is not None else secrets.randbelow(2**31)
    console = Console()
    training = ("off (degenerate implementations: share of the non-training points)" if no_training else "on")
    seed_list = [seed + i for i in range(seeds)]
    shown = f"seed {seed}" if seeds == 1 else f"seeds {seed_list[0]}..{seed_list[-1]}"
    console.print(f"tkit validate: {shown}, training tests {training}, {jobs} job(s)")

    def progress(result):
        mark = "[green]ok[/]" if result.ok else "[red]FAIL[/]"
        share = (f", {result.score:g}/{result.max_score:g} = {result.score / result.max_score:.0%}"
                 if result.kind in ("degenerate", "memoriser") and result.max_score else "")
        console.print(f"  {mark} {result.label}{share} ({result.seconds:.1f} s)")

    try:
        runs = {s: validate.validate(names or None, training=not no_training, seed=s, jobs=jobs,
                                     on_result=progress) for s in seed_list}
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    results = runs[seed] if seeds == 1 else validate.across_seeds(runs)
    table = Table(title=f"tkit validate ({shown})")
    for column, justify in (("check", "left"), ("exercise", "left"), ("points", "right"),
                            ("result", "left"), ("why", "left"), ("s", "right")):
        table.add_column(column, justify=justify)
    for r in results:
        table.add_row(r.label, r.exercise, f"{r.score:g}/{r.max_score:g}",
                      "[green]ok[/]" if r.ok else "[red]FAIL[/]", r.detail, f"{r.seconds:.1f}")
    console.print(table)
    failed = [r for r in results if not r.ok]
    console.print(f"{len(results) - len(failed)} of {len(results)} checks passed")
    sys.exit(1 if failed else 0)
