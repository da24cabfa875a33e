"""Feedback and class reports rendered with jinja2 from ``templates/``.

* :func:`render_feedback` -> ``feedback.html`` / ``feedback.md`` for one submission, from its
  results dict (results.json): total and per-exercise scores, the named mistakes first (each hint
  once, with the tests it affects), then each message shared by many tests once with its count
  (:mod:`autograder.reports.causes`), the untouched TODOs folded below them, failing tests first with
  their values, passing ones folded, and pictures (:mod:`autograder.reports.pictures`).
* ``summary.html`` for a class: :mod:`autograder.reports.summary`, with this module's templates.

Reports are self-contained: CSS inline, pictures as PNG data URIs, no scripts, no network.
Student-chosen text (ids, error messages naming their files, printed output) is data: control
characters are shown as escapes (:func:`autograder.intake.untrusted.shown`), HTML is autoescaped and
``feedback.md`` escapes Markdown (the ``md`` filter) or fences output.
Hidden tests (visibility ``after_published``) appear by name, status, points and a hint only:
never their output, source or expected values; a hidden failure whose named mistake a public test
of the same grading also found shows that public test's values beside it
(:mod:`autograder.reports.counterexamples`). Text is translated through
:mod:`autograder.i18n` (jinja2's i18n extension with the kit's gettext catalog).
"""

from __future__ import annotations

import re

from pathlib import Path

import jinja2

from autograder import __version__, exercises, paths
from autograder.i18n import _, language, ngettext, using
from autograder.intake.textfiles import write_text_atomic
from autograder.intake.untrusted import markdown, shown
from autograder.reports import pictures as pics  # ``pictures`` is an argument of the renderers
from autograder.reports import causes as shared_causes
from autograder.reports import counterexamples
from autograder.results import not_graded
from autograder.results.model import Results, TestResult, as_results



class ReportError(ValueError):
    """A results dict lacks what a report needs (names the missing key)."""


# -- jinja2 ------------------------------------------------------------------------------------
def environment(templates: Path | None = None) -> jinja2.Environment:
    """The jinja2 environment of the report templates (HTML autoescaped, gettext installed)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates or paths.templates_dir())),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=False),
        extensions=["jinja2.ext.i18n"],
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.install_gettext_callables(gettext=lambda s: _(s), ngettext=lambda s, p, n: ngettext(s, p, n),
                                  newstyle=True)
    env.filters["points"] = lambda x: f"{float(x):g}"
    env.filters["fence"] = code_fence
    env.filters["md"] = markdown
    return env


# -- per submission ----------------------------------------------------------------------------
def _in_picture_labels() -> dict:
    """The words drawn inside the pictures (panel titles, axis labels), in the current language."""
    return {
        "yours": _("yours"), "expected": _("expected (formula)"), "difference": _("yours - expected"),
        "dimension": _("dimension i"),
        "position": _("position"), "query": _("query"), "key": _("key"), "epoch": _("epoch"), "loss": _("loss"),
        "originals": _("original"), "reconstructions": _("reconstructed"),
        "score": _("score"), "students": _("students"),
    }


def picture_labels() -> dict:
    """Titles, captions (shown by the report around each picture) and the words drawn inside
    the pictures, all in the current language. Where the language needs a font matplotlib does
    not have (Korean without a CJK font: :func:`autograder.reports.pictures.cjk_font`), the
    words inside the pictures are the English ones, which every font draws, instead of boxes;
    titles and captions stay in the report's language (the browser has its own fonts), and
    ``tkit doctor`` says which font to install."""
    inside = _in_picture_labels()
    if language() == "ko" and not pics.cjk_font():
        with using("en"):
            inside = _in_picture_labels()
    return {
        **inside,
        "pe_table": _("Positional encoding: your table beside the formula"),
        "pe_table_caption": _("Rows are positions, columns are dimensions. Even columns are sines, odd "
                              "columns cosines; the stripes get wider to the right. The third panel is "
                              "yours minus the formula: white where they agree."),
        "attention_padded": _("Attention with padding"),
        "attention_padded_caption": _("Hatched cells are padded keys: their weights must be 0, and each "
                                      "row must sum to 1."),
        "attention_causal": _("Attention with a causal mask"),
        "attention_causal_caption": _("Hatched cells are future positions: a query may only see keys at or "
                                      "before its own position."),
        "ae_reconstructions": _("AutoEncoder: originals and reconstructions"),
        "ae_reconstructions_caption": _("Top row: held-out digits; bottom row: your model's reconstructions. "
                                        "The digits are shown as your model saw them, under this run's secret "
                                        "transform (a rotation or flip, perhaps with inverted intensity): that is "
                                        "why they may look turned."),
        "loss_curve": _("Training loss"),
        "loss_curve_caption": _("Mean training loss of each epoch; it should go down."),
    }



def _mistake(mistake_id: str | None, output: str = "") -> dict | None:
    """``{"id", "hint", "convention"}`` of a named mistake, in the current language: from the
    mistake line the test wrote ("Likely mistake: <hint> [id]"), else from the catalog."""
    if not mistake_id:
        return None
    from autograder.mistakes import catalog_or_none

    catalog = catalog_or_none()   # instructor-only: the student edition has none
    try:
        if catalog is not None:
            mutant = catalog.by_id(mistake_id)
            return {"id": mistake_id, "hint": mutant.hint(), "convention": mutant.convention}
    except KeyError:   # a mistake the catalog does not hold (named from the formulas alone)
        pass
    # read the line the grader wrote
    for line in output.splitlines():
        line = line.rstrip()
        if line.endswith(f"[{mistake_id}]") and ": " in line:
            label, hint = line[: -len(mistake_id) - 2].split(": ", 1)
            return {"id": mistake_id, "hint": hint.strip(), "convention": label.strip() == _("Different convention")}
    return {"id": mistake_id, "hint": "", "convention": False}


def _strip_mistake_line(output: str, mistake_id: str | None) -> str:
    """The test output without the "Likely mistake: ... [id]" line (the report shows it apart)."""
    if not mistake_id:
        return output
    lines = output.splitlines()
    kept = [line for line in lines if not line.rstrip().endswith(f"[{mistake_id}]")]
    return "\n".join(kept)


def test_view(test: TestResult) -> dict:
    """What a report shows of one test record. Hidden tests: name, status, points, hint only."""
    exercise = test.exercise or "?"
    name = test.name
    if name.startswith(f"{exercise}: "):
        name = name[len(exercise) + 2:]
    hidden = test.hidden
    if not_graded.reason(test):   # the grader could not judge it: neither passed nor failed
        return {"name": name, "exercise": exercise, "status": "not graded", "passed": False, "not_graded": True,
                "score": 0.0, "max_score": test.max_score, "hidden": hidden, "mistake": None,
                "components": [], "output": "", "hint": not_graded.message(), "counterexample": None}
    mistake = _mistake(test.mistake, "" if hidden else test.output or "") if not test.passed else None
    view = {
        "name": name, "exercise": exercise, "status": test.status,
        "passed": test.passed, "score": test.score,
        "max_score": test.max_score, "hidden": hidden, "mistake": mistake,
        "components": list(test.failing_components or []), "output": "", "hint": "",
        "not_graded": False, "counterexample": None,
    }
    if view["passed"]:
        view["output"] = "" if hidden else shown(test.output or "", one_line=False)
        return view
    if hidden:
        if not (mistake and mistake["hint"]):   # a named mistake is shown on its own
            view["hint"] = shared_causes.hint(test.failure or "") or _("see the public tests of this exercise")
    else:
        view["output"] = shown(_strip_mistake_line(test.output or "", test.mistake), one_line=False)
    return view


def feedback_context(results: Results | dict, student: str = "", *, pictures: bool = True,
                     self_check: bool = False) -> dict:
    """The template context of ``feedback.html``/``feedback.md`` (current language).
    ``self_check``: a student's own ``tkit check --html`` report (titled for the student).
    Raises ReportError when ``results`` is a dict but not a results.json of the kit."""
    if isinstance(results, dict):
        for key in ("score", "tests", "extra_data"):
            if key not in results:
                raise ReportError(f"results lack {key!r}: not a results.json of the kit")
    results = as_results(results)
    views = [test_view(t) for t in results.tests]
    examples = counterexamples.public_examples(results.tests)
    for view, test in zip(views, results.tests):   # a hidden failure's mistake, shown on public inputs
        view["counterexample"] = counterexamples.for_test(test, examples)
    causes, which = shared_causes.of_tests(results.tests)
    cause_views = [{"id": f"cause-{n + 1}", "kind": c["kind"], "hint": shared_causes.hint(c["kind"]),
                    "output": shown(c["output"], one_line=False), "count": c["count"],
                    "exercises": c["exercises"]} for n, c in enumerate(causes)]
    for i, n in which.items():   # the message is shown once, in its cause
        views[i].update(cause=cause_views[n], output="", hint="")
    for view in views:
        view.setdefault("cause", None)
    groups = []
    for ex in exercises.EXERCISES:
        tests = [v for v in views if v["exercise"] == ex.name]
        failed = sorted((v for v in tests if not v["passed"]), key=lambda v: v["mistake"] is None)
        tests = failed + [v for v in tests if v["passed"]]   # named mistakes, other failures, passes
        if not tests:
            continue
        passed = sum(v["passed"] for v in tests)
        ungraded = sum(v["not_graded"] for v in tests)
        groups.append({
            "name": ex.name, "title": ex.title, "tests": tests,
            "score": round(sum(v["score"] for v in tests), 4), "max_score": round(sum(v["max_score"] for v in tests), 4),
            "passed": passed, "total": len(tests), "not_graded": ungraded,
            "open": [v for v in tests if not v["passed"]], "passes": [v for v in tests if v["passed"]],
            "state": "ok" if passed == len(tests) else ("ng" if passed + ungraded == len(tests) else
                                                        ("some" if passed else "none")),
        })
    grouped = {g["name"] for g in groups}
    mistakes = _named_mistakes([v for g in groups for v in g["open"]])
    counterexamples.mark_repeated([v for g in groups for v in g["open"]])
    for view in views:
        view.setdefault("mistake_again", False)
        view.setdefault("counterexample_again", False)
    max_score = float(results.max_score or sum(g["max_score"] for g in groups) or 0.0)
    figures = dict(results.figures or {})
    for test in results.tests:   # figures attached by visible tests only
        if not test.hidden:
            figures.update(test.figures or {})
    drawn = pics.render(figures, picture_labels()) if pictures else []
    for group in groups:   # each picture beside the tests it explains, in its exercise's section
        group["pictures"] = [p for p in drawn if p["exercise"] == group["name"]]
    return {
        "student": shown(student or Path(str(results.submission or "")).stem),
        "lang": language(), "score": results.score, "max_score": max_score,
        "percent": round(100 * results.score / max_score) if max_score else 0,
        "exercises": groups, "mistakes": mistakes, "passed_n": sum(v["passed"] for v in views),
        "causes": [c for c in cause_views if c["kind"] != "not_implemented"],
        "todo": [c for c in cause_views if c["kind"] == "not_implemented"],
        "failing": [v for v in [v for g in groups for v in g["open"]] + [v for v in views if v["exercise"] not in grouped]
                    if not v["passed"] and not v["not_graded"] and not v["cause"]],
        "ungraded": [v for v in views if v["not_graded"]], "not_graded": not_graded.of_results(results),
        "pictures": [p for p in drawn if p["exercise"] not in grouped],   # of an exercise not graded here
        "picture_problems": _picture_problems(results.figure_problems or {}) if pictures else [],
        "seed": results.seed, "kit_version": results.kit_version or __version__,
        "execution_time": results.execution_time,
        "error": shown(results.error or "", one_line=False),
        "warnings": [shown(w) for w in results.warnings or []],   # what taking the hand-in in changed
        "self_check": self_check, "any_hidden": any(v["hidden"] for v in views),
    }


def _named_mistakes(views: list[dict]) -> list[dict]:
    """The named mistakes of the failing ``views`` (in report order), each once: ``{"id", "hint",
    "convention", "anchor", "count", "exercises"}``, shown first in a report. Each test then names
    its mistake by id only (``mistake_again``), pointing to it."""
    found: dict[str, dict] = {}
    for view in views:
        mistake = view.get("mistake")
        if not mistake:
            continue
        entry = found.setdefault(mistake["id"], {**mistake, "anchor": f"mistake-{len(found) + 1}", "count": 0,
                                                 "exercises": []})
        entry["count"] += 1
        if view["exercise"] not in entry["exercises"]:
            entry["exercises"].append(view["exercise"])
        view["mistake_again"] = True
        view["mistake"] = {**mistake, "anchor": entry["anchor"]}
    return list(found.values())


def _picture_problems(problems: dict) -> list[dict]:
    """``[{"title", "why"}]`` of the pictures that could not be drawn (``Results.figure_problems``:
    figure name, or ``*`` for the whole step, -> why), student text shown as data."""
    labels = picture_labels()
    return [{"title": labels.get(name, _("all pictures") if name == "*" else shown(name)),
             "why": shown(str(why))} for name, why in sorted(problems.items())]


def render_feedback(results: Results | dict, fmt: str = "html", *, student: str = "", lang: str | None = None,
                    pictures: bool = True, self_check: bool = False) -> str:
    """``feedback.html`` (``fmt="html"``) or ``feedback.md`` (``fmt="md"``) as text;
    ``self_check`` titles it for a student's own ``tkit check`` run."""
    if fmt not in ("html", "md"):
        raise ValueError(f"fmt must be 'html' or 'md', got {fmt!r}")

    with using(lang):
        context = feedback_context(results, student, pictures=pictures and fmt == "html",
                                   self_check=self_check)
        return environment().get_template(f"feedback.{fmt}").render(**context)


def write_feedback(results: Results | dict, out_dir: Path, *, student: str = "", lang: str | None = None,
                   pictures: bool = True) -> tuple[Path, Path]:
    """Write ``out_dir/feedback.html`` and ``out_dir/feedback.md``; returns their paths."""
    out_dir = Path(out_dir)
    html_path, md_path = out_dir / "feedback.html", out_dir / "feedback.md"
    write_text_atomic(html_path, render_feedback(results, "html", student=student, lang=lang, pictures=pictures))
    write_text_atomic(md_path, render_feedback(results, "md", student=student, lang=lang, pictures=False))
    return html_path, md_path


def code_fence(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in ``text``, so that what a
    submission printed cannot close the fence and be rendered as Markdown."""
    longest = max((len(run) for run in re.findall(r"`+", text or "")), default=0)
    return "`" * max(3, longest + 1)
