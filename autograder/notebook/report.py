"""The notebook self-check's report: HTML for Jupyter (the feedback page's body, its styles
scoped to the output) and the text of ``tkit check`` elsewhere. See :mod:`autograder.notebook`."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from autograder import i18n
from autograder.i18n import _

_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def _scoped_css(css: str, scope: str) -> str:
    """The report's stylesheet with every selector under ``scope`` (``body``/``main``/``:root``
    become the scope itself), so the page around the output keeps its own styles."""
    def rule(match):
        selectors = []
        for sel in match.group(1).split(","):
            sel = sel.strip()
            if sel in (":root", "body", "main", "*"):
                selectors.append(scope if sel != "*" else f"{scope} *")
            else:
                selectors.append(f"{scope} {sel}")
        return f"{', '.join(selectors)} {{{match.group(2)}}}"

    out, rest = [], css
    media = re.compile(r"(@media[^{]+)\{((?:[^{}]*\{[^{}]*\})*)\s*\}")
    pos = 0
    for m in media.finditer(rest):
        out.append(_CSS_RULE.sub(rule, rest[pos:m.start()]))
        out.append(f"{m.group(1)}{{{_CSS_RULE.sub(rule, m.group(2))}}}")
        pos = m.end()
    out.append(_CSS_RULE.sub(rule, rest[pos:]))
    return "".join(out)


@dataclass
class CheckReport:
    """One :func:`check` run: ``results`` (a :class:`~autograder.results.model.Results`, or None
    when the check could not run), ``notes`` (what the student should know about the code that
    was checked), ``error`` (why it could not run). Shown as HTML in Jupyter, text elsewhere."""

    exercise: str
    results: object = None
    notes: list[str] = field(default_factory=list)
    error: str = ""
    lang: str | None = None
    source: str = ""   # "notebook" (the saved file) or "kernel" (the kernel's definitions)
    verbose: bool = False

    @property
    def passed(self) -> bool:
        """Whether every public test of the exercise passed."""
        return self.results is not None and bool(self.results.tests) and all(t.passed for t in self.results.tests)

    @property
    def score(self) -> float:
        return float(self.results.score) if self.results is not None else 0.0

    def text(self) -> str:
        """The plain-text report: what ``tkit check`` prints (no colour)."""
        from io import StringIO

        from rich.console import Console

        from autograder.reports.console import print_results

        buffer = StringIO()
        with i18n.using(self.lang):
            lines = [_("Note: {note}").format(note=n) for n in self.notes]
            if self.error or self.results is None:
                lines.append(_("The self-check could not run: {error}").format(error=self.error))
                return "\n".join(lines) + "\n"
            console = Console(file=buffer, width=100, color_system=None, force_terminal=False,
                              force_jupyter=False, highlight=False)
            # every message is one argument away here, not one command-line flag away
            print_results(self.results, console=console, verbose=self.verbose, more=self.more_command)
        return "\n".join(lines + [buffer.getvalue().rstrip("\n")]) + "\n"

    @property
    def more_command(self) -> str:
        """The call that shows every failing test's message, where this check runs (a notebook)."""
        return f'tkit.check("{self.exercise}", verbose=True)'

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer, cycle):   # IPython's plain-text display
        printer.text(self.text())

    def _repr_html_(self) -> str:
        from autograder.reports import render

        scope = "tkit-check-report"
        with i18n.using(self.lang):
            notes = "".join('<p class="tkit-note">' + html.escape(_("Note: {note}").format(note=n)) + "</p>"
                            for n in self.notes)
            if self.error or self.results is None:
                message = html.escape(_("The self-check could not run: {error}").format(error=self.error))
                return f'<div class="{scope}">{notes}<pre>{message}</pre></div>'
            page = render.render_feedback(self.results, "html", self_check=True, lang=self.lang)
        style = re.search(r"<style>(.*?)</style>", page, flags=re.S)
        main = re.search(r"<main>(.*?)</main>", page, flags=re.S)
        css = _scoped_css(style.group(1), f".{scope}") if style else ""
        body = main.group(1) if main else html.escape(self.text())
        note_css = f".{scope} .tkit-note {{ background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; }}"
        return f'<div class="{scope}"><style>{css}\n{note_css}</style>{notes}{body}</div>'
