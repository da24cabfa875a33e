"""What a regrade changed: per student, the score before and after and the tests that moved.

When ``tkit grade`` records a submission the gradebook already held under another fingerprint
(:mod:`.fingerprint`: the grader was fixed), other content (a new hand-in) or other options,
:func:`change` compares the two gradings; the gradebook keeps the latest change of each student
(:meth:`autograder.records.gradebook.Gradebook.record`, in the same transaction as the new
grading). :func:`report_rows` lists the students whose score moved under the current grader:
``OUT/regrades.csv`` (:data:`CSV_COLUMNS`) and a section of ``summary.html``.
"""

from __future__ import annotations

import json

from autograder.results.model import Results

CSV_COLUMNS = ("student_id", "why", "old_score", "new_score", "change", "tests_moved")
EPSILON = 1e-9   # points: a change below this is rounding, not a change


def reasons(old: dict, content_hash: str, fingerprint: str, options: str, parts_changed: list[str]) -> list[str]:
    """Why a stored grading (``old``: its gradebook row) differs from the one being recorded:
    ``submission changed``, ``grader changed (<parts>)``, ``options changed``; empty when it
    does not (a rerun of the same grading)."""
    why = []
    if old["content_hash"] != content_hash:
        why.append("submission changed")
    if old["fingerprint"] != fingerprint:
        why.append(f"grader changed ({', '.join(parts_changed)})" if parts_changed else "grader changed")
    if old["options"] != options:
        why.append("options changed")
    return why


def moved_tests(old: Results, new: Results) -> list[dict]:
    """The tests whose points or status differ between two gradings, in the new grading's order
    (then the tests only the old one had): ``{"test", "old", "new", "old_status", "new_status"}``,
    ``old``/``new`` None where the test was not run."""
    before = {t.nodeid or t.name: t for t in old.tests}
    after = {t.nodeid or t.name: t for t in new.tests}
    moved = []
    for key in [*after, *(k for k in before if k not in after)]:
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None and abs(a.score - b.score) <= EPSILON and a.status == b.status:
            continue
        moved.append({"test": (b or a).name, "old": a.score if a else None, "new": b.score if b else None,
                      "old_status": a.status if a else None, "new_status": b.status if b else None})
    return moved


def change(old_row: dict, old: Results, new: Results, why: list[str], new_fingerprint: str) -> dict:
    """The gradebook's ``regrades`` row of one student (see :meth:`Gradebook.record`)."""
    return {"why": "; ".join(why), "old_score": None if old.error else old.score,
            "new_score": None if new.error else new.score, "old_fingerprint": old_row["fingerprint"],
            "new_fingerprint": new_fingerprint, "moved": json.dumps(moved_tests(old, new), ensure_ascii=False)}


def moved(row: dict) -> bool:
    """Whether a regrade changed the score (a not-graded side counts as a change when the other
    was graded)."""
    old, new = row["old_score"], row["new_score"]
    if old is None or new is None:
        return (old is None) != (new is None)
    return abs(float(old) - float(new)) > EPSILON


def report_rows(rows: list[dict]) -> list[dict]:
    """The regrades whose score moved, by student id: ``{"student", "why", "old", "new", "change",
    "tests": [moved tests]}``."""
    out = []
    for row in sorted(rows, key=lambda r: r["student_id"]):
        if not moved(row):
            continue
        old, new = row["old_score"], row["new_score"]
        out.append({"student": row["student_id"], "why": row["why"], "old": old, "new": new,
                    "change": None if old is None or new is None else float(new) - float(old),
                    "tests": json.loads(row["moved"] or "[]")})
    return out


def _points(x) -> str:
    return "" if x is None else f"{float(x):g}"


def csv_rows(report: list[dict]) -> list[list]:
    """``regrades.csv``'s header and rows (``tests_moved``: ``name: old -> new`` joined by ``; ``;
    a side that was not graded or not run is empty)."""
    rows = [list(CSV_COLUMNS)]
    for r in report:
        tests = "; ".join(f"{t['test']}: {_points(t['old'])} -> {_points(t['new'])}" for t in r["tests"])
        change_text = "" if r["change"] is None else f"{r['change']:+g}"
        rows.append([r["student"], r["why"], _points(r["old"]), _points(r["new"]), change_text, tests])
    return rows
