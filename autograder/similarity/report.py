"""Writing a class's similarity (:mod:`autograder.similarity.matcher`): ``similarity.csv`` and ``similarity.html``.

The CSV has exactly the columns ``student_a,student_b,exercise,similarity``: one row per pair and
exercise whose similarity is at least :data:`~autograder.similarity.matcher.CSV_MIN`, the most similar
first; a row against the reference solution has an empty ``student_b``. Student ids are data: a
cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (the
OWASP rule against formula injection) and a cell holding a line break is quoted
(:func:`autograder.intake.untrusted.csv_text`, as in ``grades.csv``); the HTML is rendered by jinja2
with autoescaping.

The HTML is self-contained (no script, font or style from the network): the method and its
thresholds, the students refused, and the flagged pairs (at most :data:`~autograder.similarity.matcher.TOP`,
the most similar first), each with both modules side by side and the matching regions marked.
"""

from __future__ import annotations

from pathlib import Path

from autograder.intake.textfiles import write_text_atomic
from autograder.intake.untrusted import csv_text as csv_text_of_rows
from autograder.reports import render
from autograder.similarity import matcher

CSV_COLUMNS = ("student_a", "student_b", "exercise", "similarity")
CONTEXT_LINES = 3  # unmatched lines kept around each matching region in the side-by-side view


def csv_text(result: matcher.Result) -> str:
    """The CSV of ``result.pairs`` (similarity with 4 decimals)."""
    return csv_text_of_rows([CSV_COLUMNS, *([pair.student_a, pair.student_b or "", pair.exercise,
                                             f"{pair.similarity:.4f}"] for pair in result.pairs)])


def segments(code: str, slices, context: int = CONTEXT_LINES) -> list[dict]:
    """``code`` cut into ``{"text", "match", "gap"}`` pieces at the matching regions ``slices`` (a
    2xN array of start/end offsets, or None); unmatched stretches longer than ``2 * context + 1``
    lines keep ``context`` lines at each end around a piece whose ``gap`` counts the lines left out."""
    bounds = sorted(zip(*(slices.tolist() if slices is not None and len(slices[0]) else ([], []))))
    pieces, at = [], 0
    for start, end in bounds:
        start, end = max(start, at), min(end, len(code))
        if start > at:
            pieces.append(_piece(code[at:start]))
        if end > start:
            pieces.append(_piece(code[start:end], match=True))
        at = max(at, end)
    if at < len(code):
        pieces.append(_piece(code[at:]))
    return [cut for i, piece in enumerate(pieces) for cut in _shorten(piece, i, len(pieces), context)]


def _piece(text: str = "", match: bool = False, gap: int = 0) -> dict:
    return {"text": text, "match": match, "gap": gap}


def _shorten(piece: dict, index: int, count: int, context: int) -> list[dict]:
    """An unmatched piece, with the lines more than ``context`` away from a match left out."""
    if piece["match"]:
        return [piece]
    lines = piece["text"].splitlines(keepends=True)
    head = context if index > 0 else 0           # lines after the match before this piece
    tail = context if index < count - 1 else 0   # lines before the match after it
    if len(lines) <= head + tail + 1:
        return [piece]
    kept = [_piece("".join(lines[:head]))] if head else []
    kept.append(_piece(gap=len(lines) - head - tail))
    if tail:
        kept.append(_piece("".join(lines[-tail:])))
    return kept


def shown_pairs(result: matcher.Result) -> list[matcher.Pair]:
    """The pairs the HTML shows: the flagged ones, the most similar first, at most ``TOP``."""
    return [p for p in result.pairs if p.flagged][: matcher.TOP]


def html_context(result: matcher.Result) -> dict:
    """The template's variables for ``result``."""
    shown = []
    for pair in shown_pairs(result):
        slices_a, slices_b = pair.slices or (None, None)
        shown.append({"pair": pair,
                      "code_a": segments(result.sources[pair.student_a][pair.exercise], slices_a),
                      "code_b": segments(result.sources[pair.student_b or ""][pair.exercise], slices_b)})
    return {
        "result": result, "shown": shown, "flagged": sum(p.flagged for p in result.pairs),
        "with_reference": "" in result.sources,
        "settings": {name: getattr(matcher, name) for name in
                     ("NOISE", "GUARANTEE", "CSV_MIN", "FLAG_THRESHOLD", "FLAG_MIN_MATCH", "TOP",
                      "COMMON_SHARE", "COMMON_MIN_COUNT")},
    }


def render_html(result: matcher.Result) -> str:
    """``similarity.html`` for ``result`` (jinja2, autoescaped)."""
    return render.environment().get_template("similarity.html").render(**html_context(result))


def write_report(result: matcher.Result, out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/similarity.csv`` and ``out_dir/similarity.html`` (each atomically);
    returns their paths."""
    out_dir = Path(out_dir)
    csv_path, html_path = out_dir / "similarity.csv", out_dir / "similarity.html"
    write_text_atomic(csv_path, csv_text(result))
    write_text_atomic(html_path, render_html(result))
    return csv_path, html_path
