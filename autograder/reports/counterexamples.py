"""Public counterexamples of hidden failures (presentation only, no torch).

A hidden test shows a student only its name, status, points and public evidence of its exercise
(:mod:`autograder.results.withheld` seals it: the mistake it shows, ``TestResult.mistake``, is one
its exercise's public tests named or its kit-fixed probes reproduced, never one its own hidden
inputs showed). When a *public* test of the same grading failed naming that mistake M, the
feedback links the two: beside the hidden test it shows that public test's name and exercise and
the first line of its output, the call on public inputs with the student's value and the expected
one at the first difference (the public formula's value). Public tests of the hidden test's
exercise come first, then those of other exercises, in report order.

Sound by construction: every character of a counterexample comes from the ``output`` of a
visible (public) test that is itself shown on the same page, or from a probe's line computed in a
fresh child after the hidden tests (:func:`fresh`, from :mod:`autograder.run.counterexample_run`);
nothing of the hidden test's own computation is read. Public tests run in their own child, which
never receives a hidden input (docs/DESIGN.md, the trust boundary), so the values cannot depend
on hidden inputs either. A counterexample already shown for an earlier hidden test is named again
without its line.
"""

from __future__ import annotations

from autograder.intake.untrusted import shown
from autograder.results import not_graded
from autograder.results.model import TestResult

MAX_LINE = 400   # characters of the public test's line that a counterexample shows


def public_examples(tests: list[TestResult]) -> dict[str, list[TestResult]]:
    """``{mistake id: [failed public tests naming it, in report order]}`` (graded tests only)."""
    out: dict[str, list[TestResult]] = {}
    for test in tests:
        if test.hidden or test.passed or not test.mistake or not_graded.reason(test):
            continue
        if not first_line(test):
            continue
        out.setdefault(test.mistake, []).append(test)
    return out


def first_line(test: TestResult) -> str:
    """The first non-empty line of a public test's output (its mismatch: the call, where it
    differs, the student's value and the expected one), shown as data, at most ``MAX_LINE`` long."""
    for line in (test.output or "").splitlines():
        line = line.strip()
        if line and not line.endswith(f"[{test.mistake}]"):
            line = shown(line)
            return line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..."
    return ""


def short_name(test: TestResult) -> str:
    """The test's name without its ``"<exercise>: "`` prefix."""
    prefix = f"{test.exercise}: "
    return test.name[len(prefix):] if test.name.startswith(prefix) else test.name


def for_test(test: TestResult, examples: dict[str, list[TestResult]]) -> dict | None:
    """``{"test", "exercise", "line"}``: the public counterexample of the hidden failure
    ``test`` (a public test of its exercise first), or None (not hidden, passed, no named
    mistake, or no public test named it)."""
    if not test.hidden or test.passed or not_graded.reason(test):
        return None
    found = examples.get(test.mistake) or [] if test.mistake else []
    if not found:
        return fresh(test)
    same = [t for t in found if t.exercise == test.exercise]
    public = (same or found)[0]
    return {"test": short_name(public), "exercise": public.exercise or "?", "line": first_line(public)}


def fresh(test: TestResult) -> dict | None:
    """``{"fresh": True, "exercise", "line"}``: the counterexample computed for ``test`` on a
    kit-fixed public input after the hidden tests (``TestResult.counterexample``, set by
    :func:`autograder.results.withheld.seal` from :mod:`autograder.run.counterexample_run`), or
    None. Only that record's ``line`` is read, never the hidden test's output; it must be of the
    mistake the test names (None: a difference no catalog mistake explains)."""
    example = test.counterexample if isinstance(test.counterexample, dict) else None
    if not example or example.get("mistake") != test.mistake or not isinstance(example.get("line"), str):
        return None
    line = shown(example["line"].strip().splitlines()[0] if example["line"].strip() else "")
    if not line:
        return None
    return {"fresh": True, "test": "", "exercise": test.exercise or "?",
            "line": line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..."}


def mark_repeated(views: list[dict]) -> None:
    """Sets each view's ``counterexample_again``: True on a hidden test whose counterexample an
    earlier view (in report order) already showed; the report then names the public test only."""
    seen: set[tuple[str, str]] = set()
    for view in views:
        example = view.get("counterexample")
        key = (("fresh", example["line"]) if example.get("fresh") else (example["exercise"], example["test"])) \
            if example else None
        view["counterexample_again"] = key in seen
        if key:
            seen.add(key)
