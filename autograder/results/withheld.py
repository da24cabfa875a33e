"""What a student or Gradescope sees of a hidden test: fixed text, and public evidence only.

A hidden test's computation draws its inputs from the run's seed, and the student's code runs on
them: everything that computation gives (its message with the drawn sizes and the student's
values, what the code printed, the exception's text with argument shapes, the mistake the
student's output on those inputs matches, the blamed components, partial credit notes with
measured figures, plot data, the test's duration) can carry a hidden draw to the student. Even
the named mistake is a channel: code may reproduce one of three catalog mistakes by ``size % 3``
of a hidden input and read the size off its feedback.

:func:`seal` therefore rewrites every hidden test's record once, at the end of the grading
(:func:`autograder.run.scoring.build_results`), before any report reads it: the fields above move
to ``withheld`` (instructor-only: the gradebook, ``OUT/instructor/<id>/hidden.json``, a
Gradescope run's stdout); what stays is the title, status, points, visibility, the not-graded
mark, and text chosen from the status and from **public evidence of its exercise** only: the
mistakes that the exercise's failed public tests named (they ran in a child that never received
a hidden input) and those that the exercise's kit-fixed probes reproduce in a fresh child after the
hidden tests (:mod:`autograder.run.counterexample_run`; which probes run depends on the statuses
alone). Which mistake the hidden inputs showed chooses nothing a student sees: a failed hidden
test of exercise E shows the first mistake of E's public evidence (and its line on public
inputs), or none, whichever it named itself. The status and points are the one thing a hidden
test necessarily tells.
"""

from __future__ import annotations

from autograder.i18n import _
from autograder.results import not_graded
from autograder.results.model import Results, TestResult

# a hidden test's fields that its hidden computation gave: the instructor's only
FIELDS = ("output", "mistake", "convention", "failure", "components_at_fault", "figures", "counterexample",
          "duration")
MAX_LINE = 400   # characters of a public line repeated on a hidden test


def _short(test: TestResult) -> str:
    prefix = f"{test.exercise}: "
    return test.name[len(prefix):] if test.name.startswith(prefix) else test.name


def _first_line(test: TestResult) -> str:
    """A public test's first line (its call, the student's value and the expected one)."""
    for line in (test.output or "").splitlines():
        line = line.strip()
        if line and not line.endswith(f"[{test.mistake}]"):
            return line[:MAX_LINE]
    return ""


def public_evidence(tests: list[TestResult], probed: dict[str, list[dict]] | None = None) -> dict[str, list[dict]]:
    """``{exercise: [{"mistake", "line", "test" or "what", "convention"}, ...]}``: per exercise, what its
    graded, failed public tests named (in report order), then the kit's probes of it
    (``probed``: :func:`autograder.run.counterexample_run.collect`; a probe's ``mistake`` may be
    None: its line shows a difference no catalog mistake explains). No hidden test is read."""
    out: dict[str, list[dict]] = {}
    for test in tests:
        if test.hidden or test.passed or not test.mistake or not_graded.reason(test):
            continue
        out.setdefault(test.exercise, []).append({"mistake": test.mistake, "convention": test.convention,
                                                  "test": _short(test), "line": _first_line(test)})
    for exercise, examples in (probed or {}).items():
        out.setdefault(exercise, []).extend(dict(e) for e in examples)
    return out


def _chosen(examples: list[dict]) -> dict | None:
    """The evidence a hidden test shows: the first named mistake, else the first line."""
    return next((e for e in examples if e.get("mistake")), None) or next((e for e in examples if e.get("line")), None)


def seal(tests: list[TestResult], probed: dict[str, list[dict]] | None = None, hint=None) -> None:
    """Rewrite each hidden test of ``tests`` in place as the module docstring says; public tests
    are left as they are. ``probed``: the probes' evidence (see :func:`public_evidence`).
    ``hint(mistake_id)`` gives a named mistake's line ("Likely mistake: ... [id]") for the
    output Gradescope shows (None: the id alone). Idempotent: a sealed test is left alone."""
    evidence = public_evidence(tests, probed)
    for test in tests:
        if not test.hidden or test.withheld is not None:
            continue
        test.withheld = {name: getattr(test, name) for name in FIELDS if getattr(test, name) is not None}
        for name in FIELDS:
            setattr(test, name, None)
        test.output = _visible_output(test, _chosen(evidence.get(test.exercise, [])), hint)


def _visible_output(test: TestResult, example: dict | None, hint) -> str:
    """The fixed text of a sealed hidden test (sets its public ``mistake``/``counterexample``)."""
    if not_graded.reason(test):
        return not_graded.message()
    if test.passed:
        return ""
    if test.score > 0:
        lines = [_("This hidden test earned part of its points; its inputs and your values on them are not shown.")]
    else:
        lines = [_("This hidden test failed; its inputs and your values on them are not shown.")]
    if example is None:
        return lines[0]
    if example.get("mistake"):
        test.mistake = example["mistake"]
        test.convention = example.get("convention")
        lines.append(hint(test.mistake) if hint else f"[{test.mistake}]")
    if example.get("what") and example.get("line"):   # a probe's: shown beside the test in the reports
        test.counterexample = {"what": example["what"], "line": example["line"], "mistake": example.get("mistake")}
        lines.append(_("The same mistake on a public input: {line}").format(line=example["line"]) if example.get("mistake")
                     else _("On a public input the kit fixed, your code gives: {line}").format(line=example["line"]))
    elif example.get("test") and example.get("line"):
        lines.append(_("The public test \"{test}\" shows it: {line}").format(test=example["test"], line=example["line"]))
    return "\n".join(lines)


def instructor_record(results: Results) -> dict | None:
    """What ``results`` withhold from the student, for the instructor's own file or log:
    ``{"run": {"execution_time": ...}, "tests": {test id: {"name", the withheld fields}}}``; None
    when nothing is withheld."""
    tests = {t.nodeid or t.name: {"name": t.name, **t.withheld} for t in results.tests if t.withheld is not None}
    if not tests and results.withheld is None:
        return None
    return {"run": dict(results.withheld or {}), "tests": tests}
