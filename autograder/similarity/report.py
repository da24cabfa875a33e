"""Writing a class's similarity (:mod:`autograder.similarity.matcher`, :mod:`autograder.similarity.behaviour`):
``similarity.csv``, ``similarity-behaviour.csv`` and ``similarity.html``.

The CSV has exactly the columns ``student_a,student_b,exercise,similarity``: one row per pair and
exercise whose similarity is at least :data:`~autograder.similarity.matcher.CSV_MIN`, the most similar
first; a row against the reference solution has an empty ``student_b``. Student ids are data: a
cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (the
OWASP rule against formula injection) and a cell holding a line break is quoted
(:func:`autograder.intake.untrusted.csv_text`, as in ``grades.csv``); the HTML is rendered by jinja2
with autoescaping.

``similarity-behaviour.csv`` has the columns ``student_a,student_b,exercise,shared_wrong_tests,rarity``:
one row per pair and exercise the behaviour evidence flags, the highest score first;
``shared_wrong_tests`` lists the tests' short ids separated by ``; ``, each followed by its
mistake's name in brackets when it has one (``[c:]`` for a low-information output); ``rarity``
is the score (2 decimals). Without a gradebook it holds the header only.

``similarity-structure.csv`` has the columns ``student_a,student_b,exercise,structure,shared``: the
structural matcher's pairs (:mod:`autograder.similarity.structural`) at or above its ``CSV_MIN``, the
most similar first (``structure`` with 4 decimals, ``shared`` the features in common). It is a
separate file because a rewritten copy can score 0 in code similarity, below ``similarity.csv``'s floor.

The HTML is self-contained (no script, font or style from the network): in a small class
(``matcher.SMALL_CLASS`` students at most) a first-screen note that pairs are ranked, not flagged,
with the reference's code left out of student pairs; the method and its
thresholds, the students refused, and the flagged (or ranked) pairs (at most :data:`~autograder.similarity.matcher.TOP`,
the most similar first), each with both modules side by side and the matching regions marked,
a section of the pairs the structural matcher flags (with both modules whole, side by side, folded,
where copydetect did not flag the pair) and one of the pairs the behaviour evidence
flags; each flagged pair says which evidence flagged it (``code``, ``structure``, ``behaviour``,
joined by ``+``).
"""

from __future__ import annotations

from pathlib import Path

from autograder.intake.textfiles import write_text_atomic
from autograder.intake.untrusted import csv_text as csv_text_of_rows
from autograder.reports import render
from autograder.similarity import behaviour as behaviour_evidence
from autograder.similarity import matcher, structural

CSV_COLUMNS = ("student_a", "student_b", "exercise", "similarity")
BEHAVIOUR_COLUMNS = ("student_a", "student_b", "exercise", "shared_wrong_tests", "rarity")
STRUCTURE_COLUMNS = ("student_a", "student_b", "exercise", "structure", "shared")
KINDS = ("code", "structure", "behaviour")  # the order evidence is named in
CONTEXT_LINES = 3  # unmatched lines kept around each matching region in the side-by-side view


def csv_text(result: matcher.Result) -> str:
    """The CSV of ``result.pairs`` (similarity with 4 decimals)."""
    return csv_text_of_rows([CSV_COLUMNS, *([pair.student_a, pair.student_b or "", pair.exercise,
                                             f"{pair.similarity:.4f}"] for pair in result.pairs)])


def structure_csv_text(result: matcher.Result) -> str:
    """The CSV of ``result.structure`` (the structural pairs at or above ``structural.CSV_MIN``)."""
    return csv_text_of_rows([STRUCTURE_COLUMNS, *([p.student_a, p.student_b or "", p.exercise,
                                                   f"{p.structure:.4f}", str(p.shared)] for p in result.structure)])


def _key(student_a: str, student_b: str | None, exercise: str) -> tuple:
    return (student_a, None, exercise) if student_b is None else (*sorted((student_a, student_b)), exercise)


def shared_tests_text(pair: behaviour_evidence.BehaviourPair) -> str:
    """The ``shared_wrong_tests`` cell: each test's short id, its mistake's name in brackets."""
    return "; ".join(t.label + (f" [{t.mistake}]" if t.mistake else " [c:]" if t.low_information else "")
                     for t in pair.shared)


def behaviour_csv_text(behaviour: behaviour_evidence.BehaviourResult | None) -> str:
    """The CSV of the flagged behaviour pairs (the header only without evidence)."""
    flagged = behaviour.flagged if behaviour is not None else []
    return csv_text_of_rows([BEHAVIOUR_COLUMNS, *([p.student_a, p.student_b, p.exercise, shared_tests_text(p),
                                                   f"{p.rarity:.2f}"] for p in flagged)])


def evidence_of(result: matcher.Result, behaviour: behaviour_evidence.BehaviourResult | None) -> dict:
    """``{(student_a, student_b, exercise): evidence}`` for every flagged pair, the evidence the kinds
    that flagged it joined by ``" + "`` in the order of :data:`KINDS` (e.g. ``"code + behaviour"``);
    students in sorted order; a pair with the reference solution has student_b None."""
    kinds: dict = {}
    for kind, pairs in (("code", result.pairs), ("structure", result.structure),
                        ("behaviour", behaviour.flagged if behaviour is not None else [])):
        for p in pairs:
            if p.flagged:
                kinds.setdefault(_key(p.student_a, p.student_b, p.exercise), set()).add(kind)
    return {key: " + ".join(k for k in KINDS if k in found) for key, found in kinds.items()}


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
    """The pairs the HTML shows, the most similar first, at most ``TOP``: the flagged ones, or in
    a small class (``result.small_class``) the ranked ones, two students' pairs before those with
    the reference solution (which every correct answer resembles)."""
    ranked = sorted((p for p in result.pairs if p.ranked), key=lambda p: p.student_b is None)   # stable: by similarity within
    return ([p for p in result.pairs if p.flagged] + ranked)[: matcher.TOP]


def html_context(result: matcher.Result, behaviour: behaviour_evidence.BehaviourResult | None = None) -> dict:
    """The template's variables for ``result`` and the ``behaviour`` evidence (None: none read)."""
    evidence = evidence_of(result, behaviour)
    shown = []
    for pair in shown_pairs(result):
        slices_a, slices_b = pair.slices or (None, None)
        shown.append({"pair": pair,
                      "code_a": segments(result.sources[pair.student_a][pair.exercise], slices_a),
                      "code_b": segments(result.sources[pair.student_b or ""][pair.exercise], slices_b),
                      "evidence": evidence.get(_key(pair.student_a, pair.student_b, pair.exercise),
                                               "ranked" if pair.ranked else "code")})
    code_of = {_key(p.student_a, p.student_b, p.exercise): p.similarity for p in result.pairs}
    structure_flagged = [p for p in result.structure if p.flagged or p.ranked]
    flagged_behaviour = behaviour.flagged if behaviour is not None else []
    return {
        "behaviour": behaviour, "evidence": evidence,
        "behaviour_shown": [{"pair": p, "evidence": evidence[(p.student_a, p.student_b, p.exercise)],
                             "tests": p.shared[:behaviour_evidence.TESTS_SHOWN],
                             "more": max(0, len(p.shared) - behaviour_evidence.TESTS_SHOWN)}
                            for p in flagged_behaviour[:behaviour_evidence.TOP]],
        "behaviour_flagged": len(flagged_behaviour),
        "structure_shown": [{"pair": p, "evidence": evidence.get(_key(p.student_a, p.student_b, p.exercise), "ranked"),
                             "code": code_of.get(_key(p.student_a, p.student_b, p.exercise), 0.0),
                             "sources": _unmarked(result, p)}
                            for p in structure_flagged[:matcher.TOP]],
        "structure_flagged": len(structure_flagged),
        "structure_settings": {name: getattr(structural, name) for name in
                               ("MIN_SIZE", "FLAG_THRESHOLD", "FLAG_MIN_SHARED", "CSV_MIN")},
        "behaviour_settings": {name: getattr(behaviour_evidence, name) for name in
                               ("NAMED_WEIGHT", "COMMON_SHARE", "COMMON_MIN_COUNT", "FLAG_RARITY",
                                "MIN_SHARED_TESTS", "TOP", "TESTS_SHOWN")},
        "result": result, "shown": shown, "flagged": sum(p.flagged for p in result.pairs), "small": result.small_class,
        "with_reference": "" in result.sources,
        "settings": {name: getattr(matcher, name) for name in
                     ("NOISE", "GUARANTEE", "CSV_MIN", "FLAG_THRESHOLD", "FLAG_MIN_MATCH", "TOP",
                      "COMMON_SHARE", "COMMON_MIN_COUNT", "SMALL_CLASS")},
    }


def _unmarked(result: matcher.Result, pair) -> tuple | None:
    """Both modules of a structure-flagged pair the code matcher did not flag (None when it did:
    they are shown side by side above, matches marked), whole and unmarked."""
    key = _key(pair.student_a, pair.student_b, pair.exercise)
    if any(p.flagged and _key(p.student_a, p.student_b, p.exercise) == key for p in result.pairs):
        return None
    sources = [result.sources.get(sid, {}).get(pair.exercise) for sid in (pair.student_a, pair.student_b or "")]
    return tuple(sources) if None not in sources else None


def render_html(result: matcher.Result, behaviour: behaviour_evidence.BehaviourResult | None = None) -> str:
    """``similarity.html`` for ``result`` and the ``behaviour`` evidence (jinja2, autoescaped)."""
    return render.environment().get_template("similarity.html").render(**html_context(result, behaviour))


def write_report(result: matcher.Result, out_dir: Path,
                 behaviour: behaviour_evidence.BehaviourResult | None = None) -> tuple[Path, Path]:
    """Write ``out_dir/similarity.csv``, ``similarity-structure.csv``, ``similarity-behaviour.csv`` and
    ``similarity.html`` (each atomically); returns the paths of the first and the last."""
    out_dir = Path(out_dir)
    csv_path, html_path = out_dir / "similarity.csv", out_dir / "similarity.html"
    write_text_atomic(csv_path, csv_text(result))
    write_text_atomic(out_dir / "similarity-structure.csv", structure_csv_text(result))
    write_text_atomic(out_dir / "similarity-behaviour.csv", behaviour_csv_text(behaviour))
    write_text_atomic(html_path, render_html(result, behaviour))
    return csv_path, html_path
