"""The class report, ``summary.html``, rendered with the templates of :mod:`autograder.reports.render`:
the roster (:mod:`autograder.reports.roster`), score distribution, pass rate of every test, the most
common named mistakes, the slowest submissions and the scores a regrade changed."""

from __future__ import annotations

import statistics
from collections import Counter

from autograder import __version__, exercises
from autograder.i18n import language, using
from autograder.intake.untrusted import shown
from autograder.reports import causes as shared_causes
from autograder.reports import pictures as pics
from autograder.reports import roster
from autograder.reports.render import _mistake, environment, picture_labels, test_view
from autograder.results import not_graded
from autograder.results.model import Results, as_results

SLOWEST = 10


def summary_context(class_results: dict[str, Results | dict], feedback_href=None, regrades=None) -> dict:
    """The template context of ``summary.html`` from ``{student id: results}`` (results of
    submissions that could not be graded carry an ``error``). ``feedback_href(student id)``
    gives the roster's link to that student's ``feedback.html`` (see :mod:`autograder.reports.roster`);
    ``regrades``: the students whose score a regrade moved (``records.regrades.report_rows``)."""
    class_results = {sid: as_results(r) for sid, r in class_results.items()}
    graded = {sid: r for sid, r in class_results.items() if not r.error}
    errors = {shown(sid): shown(r.error) for sid, r in class_results.items() if r.error}
    scores = [r.score for r in graded.values()]
    max_score = max((float(r.max_score or 0) for r in graded.values()), default=0.0)
    tests: dict[str, dict] = {}
    mistakes: Counter = Counter()
    for results in graded.values():
        mistakes.update(roster.named_mistakes(results))   # each student counted once per mistake
        for test in results.tests:
            key = test.nodeid or test.name
            row = tests.setdefault(key, {"view": test_view(test), "passed": 0, "total": 0, "not_graded": 0})
            if not_graded.reason(test):   # not judged: counts neither way in the pass rate
                row["not_graded"] += 1
                continue
            row["total"] += 1
            row["passed"] += test.passed
    test_rows = [{**row["view"], "passed_n": row["passed"], "total_n": row["total"], "not_graded_n": row["not_graded"],
                  "rate": round(100 * row["passed"] / row["total"]) if row["total"] else 0}
                 for row in tests.values()]
    order = {name: i for i, name in enumerate(exercises.NAMES)}
    test_rows.sort(key=lambda r: (order.get(r["exercise"], 99), r["rate"]))
    slowest = sorted(graded.items(), key=lambda kv: -float(kv[1].total_time or 0))[:SLOWEST]
    return {
        "lang": language(), "kit_version": __version__, "n": len(class_results), "n_graded": len(graded),
        "errors": errors, "max_score": max_score,
        "stats": _stats(scores),
        "histogram": _histogram(scores, max_score),
        "exercise_means": _exercise_means(graded),
        "tests": test_rows,
        "mistakes": [{**(_mistake(mid) or {}), "count": n, "exercise": _mistake_exercise(mid)}
                     for mid, n in mistakes.most_common()],
        "slowest": [{"student": shown(sid), "seconds": float(r.total_time or 0), "score": r.score}
                    for sid, r in slowest],
        "not_graded": {shown(sid): not_graded.of_results(r) for sid, r in sorted(graded.items())
                       if not_graded.of_results(r)},
        "roster": [{**row, "mistakes": [_mistake(m) for m in row["mistakes"]]}
                   for row in roster.rows(class_results, feedback_href)],
        "roster_exercises": roster.graded_exercises(class_results),
        "seeds": roster.seeds(class_results),
        "attention": [{**row, "causes": [{**c, "hint": shared_causes.hint(c["kind"])} for c in row["causes"]]}
                      for row in roster.needs_attention(class_results) if not row["error"]],   # errors: listed once, above
        "regrades": [{**row, "student": shown(row["student"]), "why": shown(row["why"]),
                      "tests": [{**t, "test": shown(t["test"])} for t in row["tests"]]} for row in regrades or []],
    }


def _histogram(scores: list[float], max_score: float) -> str:
    """The score distribution's picture; '' without scores or when plotting fails (the summary goes on)."""
    if not scores:
        return ""
    try:
        return pics.draw_histogram(scores, max_score, picture_labels())
    except Exception:   # noqa: BLE001 - whatever the plotting stack raises costs the picture only
        return ""


def _stats(scores: list[float]) -> dict:
    if not scores:
        return {}
    return {"mean": round(statistics.fmean(scores), 2), "median": round(statistics.median(scores), 2),
            "min": min(scores), "max": max(scores),
            "stdev": round(statistics.pstdev(scores), 2)}


def _exercise_means(graded: dict[str, Results]) -> list[dict]:
    rows = []
    for ex in exercises.EXERCISES:
        got = [r.exercise(ex.name) for r in graded.values()]
        got = [g for g in got if g and not g.not_graded]   # a mean of judged scores only
        if not got:
            continue
        mean = statistics.fmean(g.score for g in got)
        top = max(g.max_score for g in got)
        rows.append({"name": ex.name, "title": ex.title, "mean": round(mean, 2),
                     "max_score": top, "percent": round(100 * mean / top) if top else 0,
                     "full": sum(g.score >= g.max_score for g in got), "n": len(got)})
    return rows


def _mistake_exercise(mistake_id: str) -> str:
    from autograder.mistakes import catalog_or_none

    catalog = catalog_or_none()   # instructor-only: the student edition has none
    try:
        return catalog.by_id(mistake_id).exercise if catalog is not None else ""
    except KeyError:
        return ""


def render_summary(class_results: dict[str, Results | dict], *, lang: str | None = None, feedback_href=None,
                   regrades=None) -> str:
    """``summary.html`` as text (see :func:`summary_context`)."""
    with using(lang):
        return environment().get_template("summary.html").render(
            **summary_context(class_results, feedback_href, regrades))
