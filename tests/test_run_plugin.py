"""The kit's pytest plugin (:mod:`autograder.run.plugin`) grading a submission: results.json,
what a submission cannot override, per-exercise time shares, one torch thread, the hidden tests'
fresh child.

These tests use small hand-written submissions and tiny suites of their own (written to a
temporary folder), so they do not depend on the exercise suites' details.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from grading_runs import run_suites


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


SUITE = '''
import pytest, torch
from autograder.checks import expect_equal

pytestmark = pytest.mark.exercise("masks")


@pytest.mark.points(2)
def test_causal(student):
    """the causal mask of size 3"""
    expected = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    expect_equal(lambda impl: impl.masks.make_causal_mask(3), student, expected, what="make_causal_mask(3)")


@pytest.mark.points(1)
def test_seeded(student, seed, partial):
    """half credit, and the seed"""
    partial.award(0.5, "half")
    assert isinstance(seed, int)
'''


def run_toy_suite(tmp_path: Path, submission: Path, seed: int = 7) -> dict:
    suite = write(tmp_path / "suite" / "public", {"test_toy.py": SUITE})
    return run_suites(submission, files=[suite / "test_toy.py"], seed=seed)


def test_results_follow_the_gradescope_schema(tmp_path):
    sub = write(tmp_path / "alice", {"masks.py": """
        import torch
        def make_causal_mask(size, device=None):
            return torch.tril(torch.ones(size, size, dtype=torch.bool), diagonal=-1)
    """})
    results = run_toy_suite(tmp_path, sub)
    assert set(results) >= {"score", "execution_time", "output", "tests"}
    assert results["score"] == 0.5 and results["extra_data"]["seed"] == 7
    first, second = results["tests"]
    assert set(first) >= {"name", "score", "max_score", "status", "output", "visibility", "tags"}
    assert first["name"] == "masks: the causal mask of size 3"
    assert (first["score"], first["max_score"], first["status"]) == (0.0, 2.0, "failed")
    assert first["tags"][0] == "masks" and first["visibility"] == "visible"
    assert "make_causal_mask(3) has wrong values at 6 of 9 positions" in first["output"]
    assert (second["score"], second["status"], second["output"]) == (0.5, "failed", "half")


def test_a_submission_conftest_and_ini_cannot_force_a_pass(tmp_path):
    sub = write(tmp_path / "mallory", {
        "masks.py": "def make_causal_mask(size, device=None):\n    raise NotImplementedError('masks: todo')\n",
        "conftest.py": """
            import pytest
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(item, call):
                outcome = yield
                outcome.get_result().outcome = "passed"
        """,
        "pytest.ini": "[pytest]\naddopts = -p no:autograder.run.plugin\n",
    })
    results = run_toy_suite(tmp_path, sub)
    assert results["tests"][0]["status"] == "failed"
    assert "not implemented yet" in results["tests"][0]["output"]


SHARES_SUITE = '''
import pytest

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
@pytest.mark.parametrize("i", range(4))
def test_slow(student, i):
    """a slow call"""
    assert student.masks.slow() == 1

@pytest.mark.exercise("embedding")
@pytest.mark.points(1)
@pytest.mark.parametrize("i", range(3))
def test_fast(student, i):
    """a fast call"""
    assert student.embedding.fast() == 2
'''


def test_an_exercise_that_uses_up_its_time_share_costs_no_other(tmp_path):
    """masks (8 points) and embedding (5 points) share 2.6 s: masks' calls of 0.6 s each use up
    its 1.6 s; embedding, graded after it, keeps all its points."""
    suite = write(tmp_path / "suite" / "public", {"test_shares.py": SHARES_SUITE})
    sub = write(tmp_path / "slowpoke", {"masks.py": "import time\ndef slow():\n    time.sleep(0.6)\n    return 1\n",
                                        "embedding.py": "def fast():\n    return 2\n"})
    results = run_suites(sub, files=[suite / "test_shares.py"], seed=1, time_limit=2.6, call_timeout=2.0)
    by_exercise = {}
    for t in results["tests"]:
        by_exercise.setdefault(t["tags"][0], []).append(t)
    assert [t["status"] for t in by_exercise["embedding"]] == ["passed"] * 3
    assert [t["status"] for t in by_exercise["masks"]][:2] == ["passed", "passed"]
    last = by_exercise["masks"][-1]
    assert last["extra_data"]["failure"] == "time_limit"
    assert "the time limit for masks (1.6 s of the submission's 2.6 s) was reached" in last["output"]


THREADS_SUITE = """
import pytest
import torch

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
def test_threads(student):
    assert torch.get_num_threads() == 1, torch.get_num_threads()
"""


def test_the_grading_process_uses_one_torch_thread_while_it_grades(tmp_path):
    """The parent's torch work is tiny: with several intra-op threads, 2 workers on 2 cores
    wait at barriers (measured 2.5-4x slower per student); the caller's setting comes back."""
    suite = write(tmp_path / "suite" / "public", {"test_threads.py": THREADS_SUITE})
    sub = write(tmp_path / "sub", {"masks.py": "X = 1\n"})
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        results = run_suites(sub, files=[suite / "test_threads.py"], seed=1)
        assert [t["status"] for t in results["tests"]] == ["passed"], results["tests"]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


BUMP = """
COUNT = []

def bump():
    COUNT.append(1)
    return len(COUNT)
"""


BUMP_TEST = '''
import pytest
from autograder.checks import expect_equal

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
@pytest.mark.no_twin("counts the calls in its child: a twin would be the hidden child's second")
def test_bump(student):
    """the first call in this process"""
    expect_equal(lambda impl: impl.masks.bump(), student, 1, what="bump()")
'''


def test_the_hidden_tests_child_is_started_before_the_public_tests_and_shares_nothing(tmp_path, monkeypatch):
    """The hidden tests run in a fresh child started ahead (RemoteImpl.prepare_spare): both
    children exist before the first test, and what the public tests did is not seen."""
    from autograder.sandbox import remote
    from autograder.sandbox import process

    events = []
    real_init = process.ChildProcess.__init__
    monkeypatch.setattr(process.ChildProcess, "__init__",
                        lambda self, *a, **k: events.append("child") or real_init(self, *a, **k))
    real_begin = remote.RemoteImpl.begin_test
    monkeypatch.setattr(remote.RemoteImpl, "begin_test",
                        lambda self, exercise, served=(): events.append("test") or real_begin(self, exercise, served))
    suite = tmp_path / "suite"
    write(suite / "public", {"test_a.py": BUMP_TEST})
    write(suite / "hidden", {"test_b.py": BUMP_TEST})
    sub = write(tmp_path / "sub", {"masks.py": BUMP})
    results = run_suites(sub, files=[suite / "public" / "test_a.py", suite / "hidden" / "test_b.py"], seed=3)
    assert [t["status"] for t in results["tests"]] == ["passed", "passed"]
    assert events == ["child", "child", "test", "test"]


@pytest.mark.slow
def test_the_suites_fixtures_say_what_is_missing_without_a_submission():
    """student and seed read the running test's context, not pytest's request: run
    without a grading session, a suite's tests still stop at the kit's own explanation."""
    import subprocess
    import sys

    from autograder import paths

    suites = paths.suites_dir()
    proc = subprocess.run([sys.executable, "-m", "pytest", str(suites / "public" / "test_masks.py"), "-c",
                           str(suites / "pytest.ini"), "--rootdir", str(suites), "-p", "autograder.run.plugin",
                           "-p", "no:cacheprovider", "-q", "-x"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "these tests grade a submission: run them with tkit check or tkit grade" in proc.stdout


def test_attach_keeps_small_plain_data():
    import torch

    from autograder.run.plugin import Attachments

    attach = Attachments()
    attach("loss_curve", losses=torch.tensor([0.5, 0.25]), note="x")
    assert attach.figures == {"loss_curve": {"losses": [0.5, 0.25], "note": "x"}}
    with pytest.raises(ValueError, match="holds 5000 numbers"):
        attach("big", values=torch.zeros(5000))
