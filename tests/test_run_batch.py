"""A class batch (:mod:`autograder.run.batch`): shards, a failing report step, Ctrl-C, workers
forked from a parent without torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import sandbox
from autograder.run import batch


def test_a_failing_report_step_does_not_stop_the_batch(tmp_path, monkeypatch):
    from autograder.run import batch, grading

    monkeypatch.setattr(grading, "grade_submission", lambda path, options: {"score": 1.0, "who": path.name})
    seen = []

    def on_result(sid, path, result):
        seen.append(sid)
        if sid == "a":
            raise TypeError("a drawing step tripped on odd data")

    todo = [(name, tmp_path / name) for name in ("a", "b", "c")]
    batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=1)
    assert seen == ["a", "b", "c"]


def test_shards_are_disjoint_cover_the_class_and_are_balanced():
    todo = [(f"s{i:02d}", Path(f"/c/s{i:02d}")) for i in (7, 3, 11, 0, 5, 9, 1)]
    shards = [batch.shard(todo, k, 3) for k in range(3)]
    assert [sid for sid, _ in shards[0]] == ["s00", "s05", "s11"]
    assert sorted(sid for s in shards for sid, _ in s) == sorted(sid for sid, _ in todo)
    assert [len(s) for s in shards] == [3, 2, 2]
    assert batch.shard(list(reversed(todo)), 1, 3) == shards[1]
    assert batch.parse_shard("2/5") == (2, 5)
    for bad in ("5/5", "1", "a/b", "-1/3", "0/0"):
        with pytest.raises(ValueError, match="K/N"):
            batch.parse_shard(bad)


def test_ctrl_c_keeps_every_finished_result(tmp_path, monkeypatch):
    graded = []

    def fake_grade(path, options):
        graded.append(path.name)
        return {"score": 1.0, "path": str(path)}

    from autograder.run import grading

    monkeypatch.setattr(grading, "grade_submission", fake_grade)
    seen = []

    def on_result(sid, path, result):
        seen.append((sid, result["score"]))
        if len(seen) == 2:
            raise KeyboardInterrupt

    todo = [(f"s{i}", tmp_path / f"s{i}") for i in range(5)]
    with pytest.raises(batch.Interrupted) as info:
        batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=1)
    assert (info.value.done, info.value.total) == (2, 5)
    assert seen == [("s0", 1.0), ("s1", 1.0)] and graded == ["s0", "s1"]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=0)


SHARED_BATCH = """
import json, sys
from pathlib import Path
from autograder.run import batch
from autograder.sandbox import zygote_parent

marker = Path(sys.argv[2])
started = zygote_parent.Zygote.__init__
def counted(self, *args, **kwargs):   # every zygote started, here or in a (forked) worker
    with open(marker, "a") as f:
        f.write("zygote\\n")
    started(self, *args, **kwargs)
zygote_parent.Zygote.__init__ = counted
assert "torch" not in sys.modules
todo = [(f"s{i}", Path(sys.argv[1])) for i in range(3)]
scores = []
stats = batch.grade_many(todo, Path(sys.argv[3]), workers=2, on_result=lambda sid, p, r: scores.append(r.score),
                         options=dict(names=["masks"], visibility=("public",), seed=1))
print(json.dumps({"scores": scores, "errors": stats.errors}))
"""


@pytest.mark.slow
def test_a_batch_started_without_torch_forks_its_workers_and_shares_one_zygote(tmp_path):
    """`tkit grade --workers 2`: one zygote and one import of torch here for both workers (forked),
    whose children grade as usual."""
    import json
    import subprocess
    import sys

    if sandbox.launcher() != "zygote":
        pytest.fail("this test needs the zygote launcher (Linux)")
    sub = tmp_path / "sub"
    sub.mkdir()
    repo = Path(__file__).resolve().parent.parent
    (sub / "masks.py").write_text((repo / "solutions" / "masks.py").read_text())
    marker = tmp_path / "marker"
    proc = subprocess.run([sys.executable, "-c", SHARED_BATCH, str(sub), str(marker), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["errors"] == 0 and len(got["scores"]) == 3
    assert min(got["scores"]) == max(got["scores"]) > 0
    assert marker.read_text() == "zygote\n"
