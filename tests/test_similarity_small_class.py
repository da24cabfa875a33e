"""Similarity in a class too small for "code most of the class wrote" to mean anything
(``matcher.SMALL_CLASS`` students or fewer): two students are compared without the reference's
code, the pairs are ranked and none is flagged, and the report says so on its first screen."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

import cli
from autograder.similarity import matcher, report

from conftest import REPO_ROOT

SAMPLE = REPO_ROOT / "examples" / "sample_class"


def _entries(folder):
    return sorted((p.stem if p.is_file() else p.name, p) for p in folder.iterdir() if p.name != "README.md")


def test_the_sample_class_is_ranked_not_flagged_and_its_first_screen_says_so(tmp_path):
    result = matcher.compare_class(_entries(SAMPLE))
    assert result.small_class and len(result.students) == 6 <= matcher.SMALL_CLASS
    assert not any(p.flagged for p in result.pairs) and not any(p.flagged for p in result.structure)
    students = [p for p in result.pairs if p.student_b is not None]
    # before: 135 flagged pairs, the first screen all 100 % (the reference-derived code everyone shares)
    assert students and max(p.similarity for p in students) < matcher.FLAG_THRESHOLD
    assert any(p.student_b is None and p.similarity == 1.0 for p in result.pairs)   # each student vs the reference
    shown = report.shown_pairs(result)
    assert shown and all(p.ranked for p in shown) and shown[0].student_b is not None   # students' pairs first
    html = report.render_html(result)
    assert html.index("A small class (6 students, 10 or fewer)") < html.index("<h2>Method</h2>")
    assert "ranked, the most similar first; none is flagged" in html and "Most similar pairs (ranked)" in html


def test_a_real_copy_in_a_small_class_ranks_first(tmp_path):
    for sid in ("alice", "chen", "farid"):
        shutil.copytree(SAMPLE / sid, tmp_path / sid)
    shutil.copytree(SAMPLE / "alice", tmp_path / "gil")   # alice's own style (einsum, the query scaled first), copied
    result = matcher.compare_class(_entries(tmp_path), names=["attention"])
    ranked = [p for p in report.shown_pairs(result) if p.student_b is not None]
    # the only pair of students above the CSV's floor: the share of alice's code that is neither the
    # stub's nor the reference's (alice's own einsum form is mostly the reference's tokens) and gil has too
    assert [(p.student_a, p.student_b) for p in ranked] == [("alice", "gil")] and not ranked[0].flagged
    assert ranked[0].similarity > 0.1 and ranked[0].slices is not None   # its matching code shown side by side
    run = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path), "--out", str(tmp_path / "out"),
                                        "--exercise", "attention", "--workers", "1"])
    assert run.exit_code == 0, run.output
    assert "similarity: a class of 4 (10 or fewer): pairs ranked, none flagged" in run.output
