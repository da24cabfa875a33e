"""One message per cause: failures that share one cause are shown once, with a count.

A syntax error, a missing file, a timeout, an untouched TODO ("not implemented yet"), a module
whose parameters match the exercise's neither by name nor by structure (kind ``names``,
:func:`autograder.checks.weights.load`) or a function the contract forbids (kind ``forbidden``) fails
every test that meets it, with the same message; so does a premise several property tests share (a
model that ignores its source: "nothing changed", kind ``repeated``, any public failure whose first
line another public failure repeats). :func:`of_tests` groups the failing tests by
cause so that the reports (:mod:`autograder.reports.render`, :mod:`autograder.reports.console`)
show each message once, at the top, with how many tests it affects; the tests themselves then
only point to it. Presentation only: no score changes.

Hidden tests never give their output: a hidden test joins a cause only when its message is
the one a public test already shows; otherwise its cause carries the kind's hint alone.
"""

from __future__ import annotations

from autograder.i18n import _
from autograder.results import not_graded
from autograder.results.model import TestResult


def N_(message: str) -> str:
    """Mark ``message`` for translation (Babel extracts ``N_``) without translating it yet."""
    return message


FAILURE_HINTS = {
    "missing_file": N_("the module file is missing from the submission"),
    "syntax_error": N_("the module has a syntax error"),
    "import_error": N_("importing the module failed"),
    "not_implemented": N_("a TODO is not implemented yet"),
    "exception": N_("your code raised an exception"),
    "crash": N_("your code crashed the process"),
    "timeout": N_("your code took too long"),
    "time_limit": N_("the time limit for the whole submission was reached"),
    "system_exit": N_("your code exited the process"),
    "encode_error": N_("your code returned a value the grader cannot receive"),
    "bad_return": N_("your code returned a value of the wrong kind"),
    "protocol": N_("your code disturbed the grader's process"),
    "gave_up": N_("the grader skipped the remaining tests after your code crashed or timed out repeatedly"),
    "names": N_("the module's parameters do not match the exercise's names or structure"),
    "forbidden": N_("your code uses a function the contract forbids"),
    "repeated": N_("the same failure in several tests"),
}


def hint(kind: str) -> str:
    """A short, translated hint for a SubmissionError kind ('' when unknown)."""
    return _(FAILURE_HINTS[kind]) if kind in FAILURE_HINTS else ""


# the failure kinds (SubmissionError kinds) that one message explains for many tests
KINDS = ("syntax_error", "missing_file", "timeout", "not_implemented", "names", "forbidden", "bad_return")


def _first_line(text: str | None) -> str:
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


# kinds whose failures are one cause however many files or functions they name: every missing
# file is one "hand in these files", every untouched TODO one "these are still to do"; the cause
# lists each message's first line once (an untouched submission: one block, not one per stub)
BY_KIND = ("missing_file", "not_implemented")


def _key(test: TestResult) -> tuple[str, str]:
    """The cause of a failed test: a timeout per exercise, a missing file or an untouched TODO
    per kind (:data:`BY_KIND`), the others (a syntax error) per message."""
    if test.failure == "timeout":
        return ("timeout", test.exercise)
    if test.failure in BY_KIND:
        return (str(test.failure), "")
    return (str(test.failure), _first_line(test.output))


def _repeated(tests: list[TestResult], causes: list[dict], which: dict[int, int]) -> None:
    """Add a ``repeated`` cause for each first line that two or more failing public tests not yet in
    a cause share (the tests' own messages, the mistake line apart, are then shown once)."""
    groups: dict[str, list[int]] = {}
    for i, test in enumerate(tests):
        if test.passed or test.hidden or i in which or not_graded.reason(test):
            continue
        line = _first_line(test.output)
        if line:
            groups.setdefault(line, []).append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        which.update((i, len(causes)) for i in members)
        causes.append({"kind": "repeated", "output": tests[members[0]].output or "", "count": len(members),
                       "exercises": list(dict.fromkeys(tests[i].exercise for i in members)), "tests": members})


def of_tests(tests: list[TestResult]) -> tuple[list[dict], dict[int, int]]:
    """``(causes, which)``: the causes shared by the failing ``tests`` (in order of first
    appearance) and, for each test index that one covers, the cause's index. A cause is
    ``{"kind", "output" (a public test's message, raw; '' when only hidden tests meet it; for a
    :data:`BY_KIND` cause the first line of each distinct public message, one a line),
    "count", "exercises" (in order of appearance), "tests" (their indexes)}``."""
    causes: list[dict] = []
    by_key: dict[tuple[str, str], int] = {}
    which: dict[int, int] = {}
    failing = [(i, t) for i, t in enumerate(tests)
               if not t.passed and not not_graded.reason(t) and t.failure in KINDS]
    for hidden_pass in (False, True):   # public tests first: they name the message
        for i, test in failing:
            if test.hidden != hidden_pass:
                continue
            key = _key(test)
            if test.hidden and key not in by_key:
                key = (key[0], "hidden:" + test.exercise)   # its own message stays unshown
            if key not in by_key:
                by_key[key] = len(causes)
                causes.append({"kind": key[0], "output": "" if test.hidden else (test.output or ""),
                               "count": 0, "exercises": [], "tests": []})
            cause = causes[by_key[key]]
            if key[0] in BY_KIND and not test.hidden:
                line = _first_line(test.output)
                lines = cause["output"].splitlines()
                if line and line not in lines:
                    cause["output"] = "\n".join(lines + [line]) if cause["count"] else line
            cause["count"] += 1
            cause["tests"].append(i)
            if test.exercise not in cause["exercises"]:
                cause["exercises"].append(test.exercise)
            which[i] = by_key[key]
    _repeated(tests, causes, which)
    order = sorted(range(len(causes)), key=lambda c: min(causes[c]["tests"]))
    renumber = {old: new for new, old in enumerate(order)}
    return [causes[c] for c in order], {i: renumber[c] for i, c in which.items()}
