"""Terminal output of results: a table per exercise and the failing tests with hints (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder import exercises
from autograder.i18n import _
from autograder.reports import causes
from autograder.results import not_graded
from autograder.results.model import Results, TestResult, as_results


def exercise_rows(results: Results | dict) -> list[tuple[str, float, float, int, int]]:
    """``(exercise, score, max_score, passed, total)`` per exercise, in exercise order."""
    rows = []
    for ex in exercises.EXERCISES:
        tests = [t for t in as_results(results).tests if t.exercise == ex.name]
        if not tests:
            continue
        rows.append((ex.name, sum(t.score for t in tests), sum(t.max_score for t in tests),
                     sum(t.passed for t in tests), len(tests)))
    return rows


# Without -v, at most this many failing tests are shown with their messages.
MAX_DETAILS = 8


def _details(results: Results, verbose: bool, shared_causes: list[dict]) -> tuple[list[TestResult], int]:
    """The failing tests to show with their message, and how many others are left out: every
    one with ``verbose``; otherwise the first :data:`MAX_DETAILS` not covered by a shared cause
    (``shared_causes``, from :func:`_shared_causes`, printed once above them), and how many
    messages are left out: tests beyond those, and the lines a cause did not print."""
    failing = [t for t in results.tests if not t.passed and not not_graded.reason(t)]
    if verbose:
        return failing, 0
    shared = {i for c in shared_causes for i in c["tests"]}
    real = [t for i, t in enumerate(results.tests) if not t.passed and not not_graded.reason(t)
            and i not in shared]
    real.sort(key=lambda t: not t.mistake)   # the named mistakes' tests first
    cut = sum(max(0, len((c["output"] or "").splitlines()) - MAX_CAUSE_LINES) for c in shared_causes)
    return real[:MAX_DETAILS], len(real) - len(real[:MAX_DETAILS]) + cut


# Without -v, a cause prints at most this many of its lines (an untouched submission's TODO list).
MAX_CAUSE_LINES = 6


def _shared_causes(results: Results) -> list[dict]:
    """The causes (:mod:`autograder.reports.causes`) printed once without ``-v``: a syntax
    error, the missing files, a timeout, the untouched TODOs (each with the tests it affects)."""
    return causes.of_tests(results.tests)[0]


def summary_line(results: Results | dict, hidden_details: int = 0, more: str | None = None) -> str:
    """One line: how many tests passed, how many only hit an unimplemented TODO, how many failed,
    and, when messages were left out, how to see them: ``more``, the command that shows every
    message where the check runs (default ``tkit check -v``; a notebook's check passes its
    ``tkit.check(..., verbose=True)``)."""
    tests = as_results(results).tests
    passed = sum(t.passed for t in tests)
    ungraded = sum(bool(not_graded.reason(t)) for t in tests)
    todo = sum(not t.passed and t.failure == "not_implemented" for t in tests)
    line = _("{passed} of {total} tests passed, {todo} not implemented yet, {failed} failed.").format(
        passed=passed, total=len(tests), todo=todo, failed=len(tests) - passed - todo - ungraded)
    if ungraded:
        line += " " + _("{count} not graded (see above).").format(count=ungraded)
    if hidden_details:
        line += " " + _("Run `{command}` to see every message ({count} not shown).").format(
            command=more or "tkit check -v", count=hidden_details)
    return line


def print_results(results: Results | dict, console: Console | None = None, show_failures: bool = True,
                  verbose: bool = False, more: str | None = None) -> None:
    """Print the failing tests' messages, then the per-exercise table with the total, then a
    one-line summary (so the table and the total stay on screen).

    Args:
        results: the submission's :class:`~autograder.results.model.Results` (or its results.json dict).
        console: where to print (default: a new rich Console on stdout).
        show_failures: print failing tests' messages at all.
        verbose: print every failing test's message; otherwise at most :data:`MAX_DETAILS`,
            each shared cause (a syntax error, the missing files, a timeout, the untouched
            TODOs) once, with at most :data:`MAX_CAUSE_LINES` of its lines.
        more: the command that shows every message, for the summary line (:func:`summary_line`).
    """
    console = console or Console()
    results = as_results(results)
    shared = _shared_causes(results) if show_failures and not verbose else []
    shown, left_out = _details(results, verbose, shared) if show_failures else ([], 0)
    named = _print_named_mistakes(results, console) if show_failures else set()
    todo = [c for c in shared if c["kind"] == "not_implemented"]
    for cause in [c for c in shared if c["kind"] != "not_implemented"]:
        _print_cause(cause, console)
    for test in shown:
        console.print(f"[bold red]✗[/] {escape(test.name)}", highlight=False, markup=True)
        for line in _once(test, named):
            console.print(f"    {line}", highlight=False, markup=False)
    for cause in todo:   # the untouched TODOs last: what to do after the named mistakes
        _print_cause(cause, console)
    _print_not_graded(results, console)
    console.print(_table(results))
    ungraded = not_graded.of_results(results)
    if ungraded:
        console.print(f"[bold magenta]{escape(_('Not graded'))}:[/] {escape(', '.join(ungraded))}",
                      highlight=False, markup=True)
    console.print(summary_line(results, left_out if show_failures else 0, more), highlight=False, markup=False)


def _print_cause(cause: dict, console: Console) -> None:
    count = _("tests affected: %(count)s") % {"count": cause["count"]}
    console.print(f"[bold red]✗[/] {escape(causes.hint(cause['kind']))} ({escape(count)}; "
                  f"{escape(', '.join(cause['exercises']))})", highlight=False, markup=True)
    for line in (cause["output"] or "").splitlines()[:MAX_CAUSE_LINES]:
        console.print(f"    {line}", highlight=False, markup=False)


def _print_named_mistakes(results: Results, console: Console) -> set[str]:
    """Each named mistake of the failing tests once, first (its hint, the tests it affects); returns
    their ids (the tests then name them by id only)."""
    found: dict[str, list[TestResult]] = {}
    for test in results.tests:
        if not test.passed and test.mistake and not not_graded.reason(test):
            found.setdefault(test.mistake, []).append(test)
    for mistake_id, tests in found.items():
        line = next((line.strip() for t in tests for line in (t.output or "").splitlines()
                     if line.rstrip().endswith(f"[{mistake_id}]")), "")
        if not line:
            label = _("Different convention") if tests[0].convention else _("Likely mistake")
            line = f"{label}: [{mistake_id}]"
        count = _("tests affected: %(count)s") % {"count": len(tests)}
        exercises_ = ", ".join(dict.fromkeys(t.exercise for t in tests))
        console.print(f"[bold red]✗[/] {escape(line)} ({escape(count)}; {escape(exercises_)})",
                      highlight=False, markup=True)
    return set(found)


def _once(test: TestResult, named: set[str]) -> list[str]:
    """The lines of ``test``'s message, its named mistake's hint only the first time that mistake
    is printed (``named``: the ids printed so far, those of :func:`_print_named_mistakes` first);
    later ones say "[id] (as above)"."""
    lines = (test.output or "").splitlines()
    if not test.mistake:
        return lines
    tag = f"[{test.mistake}]"
    if test.mistake in named:
        label = _("Different convention") if test.convention else _("Likely mistake")
        return [f"{label}: {tag} ({_('as above')})" if line.rstrip().endswith(tag) else line for line in lines]
    named.add(test.mistake)
    return lines


def _print_not_graded(results: Results, console: Console) -> None:
    """The tests the kit could not judge, each with its reason (whoever runs the check is who
    can fix it: e.g. the MNIST command to run)."""
    for test in results.tests:
        reason = not_graded.reason(test)
        if test.passed or not reason:
            continue
        console.print(f"[bold magenta]–[/] {escape(test.name)} ({escape(_('not graded'))})",
                      highlight=False, markup=True)
        for line in reason.splitlines():
            console.print(f"    {line}", highlight=False, markup=False)


def _table(results: Results) -> Table:
    ungraded = not_graded.of_results(results)
    table = Table(title=_("Results"), show_lines=False)
    table.add_column(_("exercise"))
    table.add_column(_("title"))
    table.add_column(_("tests passed"), justify="right")
    table.add_column(_("points"), justify="right")
    for name, score, max_score, passed, total in exercise_rows(results):
        ex = exercises.get(name)
        style = "green" if passed == total else ("yellow" if passed else "red")
        points = f"{score:g}/{max_score:g}"
        if name in ungraded:
            style, points = "magenta", f"{points} ({_('not graded')})"
        table.add_row(name, ex.title, f"{passed}/{total}", points, style=style)
    table.add_row("", _("total"), "", f"{results.score:g}/{results.max_score or 0:g}",
                  style="bold")
    return table
