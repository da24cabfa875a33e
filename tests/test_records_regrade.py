"""A hidden test corrected mid-term: ``--resume`` regrades the whole class (the fingerprint of what
grades changed) and the regrade report lists exactly the students whose score moved, by how
much, and the tests that moved. A real grading run of a toy hidden suite (slow)."""

from __future__ import annotations

import csv
import shutil
import sys

import pytest

from autograder import paths
from autograder.records import fingerprint
from autograder.records.class_run import ClassRecords
from autograder.run import batch

from conftest import REPO_ROOT

pytestmark = pytest.mark.slow

SUITE = '''
import pytest
import torch

pytestmark = [pytest.mark.visibility("hidden"), pytest.mark.exercise("masks")]


@pytest.mark.points(2)
def test_causal(student):
    """make_causal_mask(3) blocks 3 positions"""
    assert int(student.masks.make_causal_mask(3).sum()) == 3


@pytest.mark.points(2)
def test_padding(student):
    """make_padding_mask gives a bool tensor"""
    mask = student.masks.make_padding_mask(torch.tensor([[4, 0]]), 0)
    assert CHECK
'''
BEFORE = "mask.dtype == torch.bool"                                               # the test as first written
AFTER = "mask.dtype == torch.bool and mask.flatten().tolist() == [False, True]"   # corrected: values too


def _grade(out, todo, suite, resume: bool) -> ClassRecords:
    fingerprint._of.cache_clear()   # one process here grades twice; `tkit grade` is a process per run
    records = ClassRecords(out, options={}, lang="en", grading=fingerprint.of_grading(files=[suite]))
    try:
        batch.grade_many(records.plan(todo, resume), out, options=dict(files=[suite], seed=5),
                         on_result=records.on_result, workers=1)
        records.finish()
    finally:
        records.close()
    return records


def test_a_corrected_hidden_test_regrades_the_class_and_the_report_names_who_moved(tmp_path):
    suite = tmp_path / "suite" / "test_regrade_toy.py"   # a name no other test's suite has
    suite.parent.mkdir()
    suite.write_text(SUITE.replace("CHECK", BEFORE))
    sources = {"ann": paths.solutions_dir() / "masks.py",                                   # right
               "ben": REPO_ROOT / "examples" / "sample_class" / "chen" / "masks.py",        # padding mask inverted
               "cho": paths.exercises_dir() / "masks.py"}                                   # the stub
    todo = []
    for sid, source in sources.items():
        (tmp_path / "class" / sid).mkdir(parents=True)
        shutil.copyfile(source, tmp_path / "class" / sid / "masks.py")
        todo.append((sid, tmp_path / "class" / sid))
    out = tmp_path / "out"
    first = _grade(out, todo, suite, resume=False)
    assert {sid: r.score for sid, r in first.recorded.items()} == {"ann": 4.0, "ben": 4.0, "cho": 0.0}

    unchanged = _grade(out, todo, suite, resume=True)
    assert unchanged.recorded == {} and not (out / "regrades.csv").exists()

    suite.write_text(SUITE.replace("CHECK", AFTER))
    sys.modules.pop(suite.stem, None)   # pytest in this process imported the first version; `tkit grade` is a new process
    fixed = _grade(out, todo, suite, resume=True)
    assert fixed.reasons == {"ann": "grader changed", "ben": "grader changed", "cho": "grader changed"}
    assert sorted(fixed.recorded) == ["ann", "ben", "cho"]   # the whole class regraded
    with open(out / "regrades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student_id"], r["old_score"], r["new_score"], r["change"], r["why"]) for r in rows] == [
        ("ben", "4", "2", "-2", "grader changed (suites)")]
    assert rows[0]["tests_moved"] == "masks: make_padding_mask gives a bool tensor: 2 -> 0"
    assert "Scores a regrade changed" in (out / "summary.html").read_text(encoding="utf-8")
