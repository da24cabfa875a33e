"""One options route: the plugin receives the run's GradingOptions object itself (no --tkit-*
arguments, no second writer of results.json), and what ``tkit grade`` is given reaches it."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from click.testing import CliRunner

from autograder import cli, paths
from autograder.options import GradingOptions
from autograder.results.model import Results
from autograder.run import grading, plugin

SUITE = '''
import pytest

pytestmark = pytest.mark.visibility("public")

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
def test_causal(student):
    """make_causal_mask(3) has 3 blocked positions"""
    assert int(student.masks.make_causal_mask(3).sum()) == 3
'''


@pytest.fixture
def toy(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copyfile(paths.solutions_dir() / "masks.py", sub / "masks.py")
    suite = tmp_path / "suite" / "test_run_options_toy.py"   # a name no other test's suite has
    suite.parent.mkdir()
    suite.write_text(SUITE)
    return sub, suite


@pytest.mark.slow   # a grading run
def test_the_plugin_grades_with_the_options_object_it_is_given(toy, monkeypatch):
    sub, suite = toy
    seen, argv = [], []
    real_init, real_main = plugin.GradingSession.__init__, pytest.main

    def init(self, submission, options=None):
        seen.append(options)
        real_init(self, submission, options)

    def main(args, plugins=()):
        argv.extend(args)
        return real_main(args, plugins=plugins)

    monkeypatch.setattr(plugin.GradingSession, "__init__", init)
    monkeypatch.setattr(pytest, "main", main)
    options = GradingOptions(files=[suite], seed=11, lang="ko", call_timeout=7.5, time_limit=60.0)
    results = grading.grade_folder(sub, options)
    assert seen == [options] and seen[0] is options        # the object itself, not a rebuilt copy
    assert not [a for a in argv if a.startswith("--tkit") or a == "--submission"]
    assert isinstance(results, Results) and results.seed == 11 and results.score == 1.0


@pytest.mark.slow   # a grading run
def test_grading_options_have_no_results_path_and_grading_writes_nothing(toy, tmp_path):
    assert "results_path" not in {f.name for f in dataclasses.fields(GradingOptions)}
    sub, suite = toy
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    results = grading.grade_submission(sub, files=[suite], seed=2)
    assert isinstance(results, Results) and results.score == 1.0
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_tkit_grade_time_limit_reaches_the_options(tmp_path, monkeypatch):
    from autograder.run import batch

    got = []

    def grade_many(todo, out_dir, *, options, on_result, workers, progress):
        got.append(options)
        return batch.BatchStats(total=len(todo))

    monkeypatch.setattr(batch, "grade_many", grade_many)
    sub = tmp_path / "alice"
    sub.mkdir()
    run = CliRunner().invoke(cli.main, ["grade", str(sub), "--out", str(tmp_path / "out"), "--exercise", "masks",
                                        "--seed", "1", "--time-limit", "42", "--workers", "2"])
    # the stand-in grades nothing, so alice is reported as not graded (exit 1): only the options matter here
    assert run.exit_code == 1 and "could not be graded: alice" in run.output, run.output
    assert [o.time_limit for o in got] == [42.0]
    run = CliRunner().invoke(cli.main, ["grade", str(sub), "--out", str(tmp_path / "out2"), "--time-limit", "0"])
    assert run.exit_code == 2 and "time limit must be a positive number, got 0.0" in run.output
