"""Terminal output of results: a table per exercise and the failing tests with hints (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder import exercises, not_graded
from autograder.i18n import _, language


def exercise_rows(results: dict) -> list[tuple[str, float, float, int, int]]:
    """``(exercise, score, max_score, passed, total)`` per exercise, in exercise order."""
    rows = []
    for ex in exercises.EXERCISES:
        tests = [t for t in results["tests"] if t["tags"][0] == ex.name]
        if not tests:
            continue
        rows.append((ex.name, sum(t["score"] for t in tests), sum(t["max_score"] for t in tests),
                     sum(t["status"] == "passed" for t in tests), len(tests)))
    return rows


def print_results(results: dict, console: Console | None = None, show_failures: bool = True) -> None:
    """Print the per-exercise table and, below it, each failing test's message (and each test
    the kit could not judge, marked not graded, with the reason: e.g. the MNIST command to run)."""
    console = console or Console()
    ko = language() == "ko"
    table = Table(title=_("Results"), show_lines=False)
    table.add_column(_("exercise"))
    table.add_column(_("title"))
    table.add_column(_("tests passed"), justify="right")
    table.add_column(_("points"), justify="right")
    ungraded = not_graded.of_results(results)
    for name, score, max_score, passed, total in exercise_rows(results):
        ex = exercises.get(name)
        style = "green" if passed == total else ("yellow" if passed else "red")
        points = f"{score:g}/{max_score:g}"
        if name in ungraded:
            style, points = "magenta", f"{points} ({_('not graded')})"
        table.add_row(name, ex.title_ko if ko else ex.title_en, f"{passed}/{total}", points, style=style)
    table.add_row("", _("total"), "", f"{results['score']:g}/{results['extra_data']['max_score']:g}",
                  style="bold")
    console.print(table)
    if ungraded:   # whoever runs the check is who can fix it: the reasons are shown below
        console.print(f"[bold magenta]{escape(_('Not graded'))}:[/] {escape(', '.join(ungraded))}",
                      highlight=False, markup=True)
    if not show_failures:
        return
    for test in results["tests"]:
        if test["status"] == "passed":
            continue
        if not_graded.reason(test):
            console.print(f"[bold magenta]–[/] {escape(test['name'])} ({escape(_('not graded'))})",
                          highlight=False, markup=True)
            for line in not_graded.reason(test).splitlines():
                console.print(f"    {line}", highlight=False, markup=False)
            continue
        console.print(f"[bold red]✗[/] {escape(test['name'])}", highlight=False, markup=True)
        for line in (test.get("output") or "").splitlines():
            console.print(f"    {line}", highlight=False, markup=False)
