"""From pytest's reports to a submission's :class:`~autograder.results.model.Results`.

The plugin's :class:`~autograder.run.plugin.GradingSession` calls these as its tests finish:
:func:`record_test` turns one test's report into a :class:`~autograder.results.model.TestResult`
(points, partial credit, the student-facing explanation of a failure, the not-graded marker of
a grader-side problem), and :func:`build_results` assembles the submission's results at the end
of the run (a note on tests whose exercise uses a failing component, per-exercise points, the
not-graded summary). ``session`` is the plugin's session: ``meta`` (nodeid -> exercise, points,
visibility, description), ``records``, ``partials``, ``attachments``, ``remote``, ``seed``,
``submission``, ``options``, ``run`` (the run's :class:`autograder.context.RunState`).
"""

from __future__ import annotations

import dataclasses
import time

from autograder import __version__, exercises
from autograder.checks import expectations
from autograder.i18n import _
from autograder.intake.textfiles import clean_text
from autograder.mistakes import comparison
from autograder.results import grader_errors, not_graded, withheld
from autograder.run import origin
from autograder.results.model import VISIBILITY, ExerciseScore, Results, TestResult
from autograder.run import payment
from autograder.sandbox.remote import SubmissionError

MAX_TEST_OUTPUT = 6000


def record_test(session, item, call, report, ctx) -> TestResult:
    """The record of the test ``item`` from its pytest ``report`` (``call.excinfo`` explains a
    failure); ``ctx`` is the test's :class:`autograder.context.TestContext`."""
    meta = session.meta[item.nodeid]
    points = meta["points"]
    extra: dict = {"nodeid": item.nodeid, "duration": round(report.duration, 4)}
    if ctx.served:
        extra["served"] = list(ctx.served)
    if report.passed:
        credit = session.partials.get(item.nodeid)
        fraction = credit.fraction if credit else 1.0
        score = round(points * fraction, 4)
        status = "passed" if fraction >= 1.0 else "failed"
        output = credit.note if credit else ""
    elif report.skipped:
        score, status = 0.0, "failed"
        output = _("this test was skipped: {reason}").format(reason=report.longrepr[-1]
                                                             if isinstance(report.longrepr, tuple) else "")
    else:
        score, status = 0.0, "failed"
        output = explain(session, call.excinfo, extra, ctx, item)
    attachments = session.attachments.get(item.nodeid)
    if attachments is not None and attachments.figures:
        extra["figures"] = attachments.figures
    output = clean_text(output)
    if len(output) > MAX_TEST_OUTPUT:
        output = output[:MAX_TEST_OUTPUT] + "\n...[truncated]"
    extra["other"] = marks(meta)
    return TestResult(name=f"{meta['exercise']}: {meta['description']}", score=score, max_score=points,
                      status=status, output=output, visibility=VISIBILITY[meta["visibility"]],
                      tags=[meta["exercise"], meta["visibility"]], kind=meta.get("kind"), **extra)


def explain(session, excinfo, extra: dict, ctx, item=None) -> str:
    """The student-facing text of a failure; sets the failure's fields of ``extra`` (``mistake``,
    ``convention``, ``components_at_fault``, ``failure``, ``not_graded``, and the instructor-side
    ``signature`` of a wrong output). A grader error's
    details go to the instructor's log only. A test that loaded its weights under the student's
    other attribute names (:func:`autograder.checks.weights.load`) says so. ``item`` (the pytest
    item) lets an unexpected exception be tried on the reference (:mod:`autograder.run.origin`)."""
    text = _explain(session, excinfo, extra, ctx, item)
    renamed = session.run.renamed.get(ctx.nodeid)
    if renamed and excinfo is not None and isinstance(excinfo.value, AssertionError) \
            and not isinstance(excinfo.value, SubmissionError):
        text = _with_renamed(text, renamed)
    return text


def _explain(session, excinfo, extra: dict, ctx, item) -> str:
    if excinfo is None:
        return _("failed")
    exc = excinfo.value
    if isinstance(exc, expectations.Mismatch):
        sig = exc.signature or (comparison.signature(exc.got, exc.valid) if exc.got is not None else None)
        if sig is not None:   # instructor-side: TestResult.signature, never in results.json
            extra["signature"] = sig
        if exc.mistake is not None:
            extra["mistake"] = exc.mistake.id
            session.run.named.setdefault(exc.mistake.exercise, set()).add(exc.mistake.id)
            extra["convention"] = exc.mistake.convention
        text = str(exc)
        blamed, culprits = session.run.blamed.get(ctx.nodeid, (None, ()))
        if blamed:   # an integration test: the composite's own code was right on the reference components
            extra["components_at_fault"] = list(culprits) or True
            text += "\n" + _("Your {file} is right: with the reference's components it gives the expected result. "
                              "This integration test runs it with your own components, and its {points:g} "
                              "point(s) are lost to {modules}.").format(
                file=f"{blamed}.py", points=session.meta[ctx.nodeid]["points"],
                modules=", ".join(f"{c}.py" for c in culprits) or _("the modules it imports"))
        return with_printed(text, session.remote.test_output)
    if isinstance(exc, SubmissionError):
        extra["failure"] = exc.kind
        text = exc.message
        mistake = known_mistake(exc.mistake)
        if mistake is not None:   # the exception's likely cause is a known mistake: name it
            extra["mistake"] = mistake.id
            extra["convention"] = mistake.convention
            session.run.named.setdefault(mistake.exercise, set()).add(mistake.id)
            line = mistake_line(mistake.id)
            text = text.replace(exc.cause, line) if exc.cause and exc.cause in text else text + "\n" + line
        return with_printed(text, exc.output or session.remote.test_output)
    if isinstance(exc, AssertionError):
        return with_printed(str(exc) or _("failed"), session.remote.test_output)
    reason = not_graded.reason_for(exc)
    if reason:   # a grader-side problem (missing data): not the student's failure
        extra[not_graded.KEY] = reason
        return not_graded.message()
    if item is not None and origin.student_caused(item, session.remote, ctx):   # the kit's code on the student's value
        extra["failure"] = "bad_return"
        return with_printed(origin.message(exc, session.remote.last_received), session.remote.test_output)
    extra[not_graded.KEY] = grader_errors.NOT_GRADED_REASON  # details go to the instructor's log only
    return grader_errors.record(exc, nodeid=extra["nodeid"], submission=str(session.submission),
                                log_path=session.options.error_log)


def _with_renamed(text: str, renamed: list[str]) -> str:
    """A failing test's message, with the note that its weights went to renamed attributes."""
    return text + "\n" + _("This test loaded its weights into your attributes of other names, matched to the "
                           "exercise's by shape and registration order ({renamed}); if that matching is wrong, "
                           "use the exercise's names.").format(renamed=", ".join(renamed[:8]))


def known_mistake(mistake_id: str | None):
    """The catalog's mutant (instructor kit) or the public formulas' :class:`~autograder.mistakes.
    diagnosis.Known` entry of ``mistake_id``; None when neither holds it (or no id)."""
    if not mistake_id:
        return None
    from autograder.mistakes import catalog_or_none, diagnosis

    catalog = catalog_or_none()
    if catalog is not None:
        try:
            return catalog.by_id(mistake_id)
        except KeyError:
            pass
    return diagnosis.lookup(mistake_id)


def mistake_line(mistake_id: str) -> str:
    """The "Likely mistake: <hint> [id]" line of a known mistake (the id alone when unknown)."""
    mistake = known_mistake(mistake_id)
    return str(comparison.Mismatch("", mistake)).strip() if mistake is not None else f"[{mistake_id}]"


def with_printed(text: str, printed: str) -> str:
    """A failing test's message, followed by what the submission printed during the test."""
    if printed.strip():
        text += "\n" + _("Your code printed:") + "\n" + printed.rstrip()
    return text


def build_results(session, started: float, probed: dict | None = None, hidden_from: float | None = None) -> Results:
    """The submission's results from the session's records (a test without one: "not run");
    ``started`` is the run's ``time.monotonic()`` start, ``hidden_from`` when the hidden tests
    started (None: none ran). Every hidden test is sealed (:func:`autograder.results.withheld.seal`,
    with the probes' evidence ``probed``) before anything else reads it, twins included; then the
    points follow the values (:func:`autograder.run.payment.apply`, which folds the twins away); the
    visible ``execution_time`` ends where the hidden tests began (the whole run's is withheld)."""
    records = [session.records.get(nodeid) or not_run(session.meta[nodeid], nodeid) for nodeid in session.meta]
    withheld.seal(records, probed, hint=mistake_line)
    raw = [dataclasses.replace(t, other=dict(t.other)) for t in records]
    tests = payment.apply(records)
    failing: dict[str, int] = {}
    for t in tests:
        if t.status == "failed" and not t.not_graded:
            failing[t.exercise] = failing.get(t.exercise, 0) + 1
    for t in tests:
        if t.status != "failed" or t.not_graded or t.served:   # over the reference's components: its own code
            continue
        deps = [d for d in exercises.get(t.exercise).depends if failing.get(d)]
        if deps:
            t.failing_components = deps
            t.output += "\n" + _("Note: this exercise uses your {deps}, which fail their own tests; "
                                 "fix those first.").format(deps=", ".join(f"{d}.py" for d in deps))
    per_exercise: dict[str, ExerciseScore] = {}
    for t in tests:
        entry = per_exercise.setdefault(t.exercise, ExerciseScore())
        entry.score = round(entry.score + t.score, 4)
        entry.max_score = round(entry.max_score + t.max_score, 4)
    score = round(sum(t.score for t in tests), 4)
    max_score = round(sum(t.max_score for t in tests), 4)
    total = round(time.monotonic() - started, 3)
    results = Results(
        score=score, execution_time=total if hidden_from is None else round(hidden_from - started, 3),
        output=_("{score} of {max} points").format(score=f"{score:g}", max=f"{max_score:g}"),
        visibility="visible", stdout_visibility="hidden", tests=tests,
        kit_version=__version__, seed=session.seed, max_score=max_score, exercises=per_exercise,
        submission=str(session.submission), child=session.remote.info, raw_tests=raw,
        withheld=None if hidden_from is None else {"execution_time": total})
    not_graded.summarize(results)
    return results


def not_run(meta: dict, nodeid: str) -> TestResult:
    """The record of a selected test that never reported (e.g. the run was stopped)."""
    return TestResult(name=f"{meta['exercise']}: {meta['description']}", score=0.0, max_score=meta["points"],
                      status="failed", output=_("not run"), visibility=VISIBILITY[meta["visibility"]],
                      tags=[meta["exercise"], meta["visibility"]], nodeid=nodeid, kind=meta.get("kind"),
                      other=marks(meta))


def marks(meta: dict) -> dict:
    """What :mod:`.payment` reads of a test besides its kind: the public test a twin copies, the part
    of its exercise it grades (``other`` entries, absent when not set)."""
    return {key: meta[name] for key, name in ((payment.TWIN_OF, "twin_of"), (payment.PART, "part")) if meta.get(name)}
