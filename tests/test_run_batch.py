"""A class batch (:mod:`autograder.run.batch`): shards, a failing report step, Ctrl-C, workers
forked from a parent without torch."""

from __future__ import annotations


def test_a_failing_report_step_does_not_stop_the_batch(tmp_path, monkeypatch):
    from autograder.run import batch, grading

    monkeypatch.setattr(grading, "grade_submission", lambda path, out, **o: {"score": 1.0, "who": path.name})
    seen = []

    def on_result(sid, path, result):
        seen.append(sid)
        if sid == "a":
            raise TypeError("a drawing step tripped on odd data")

    todo = [(name, tmp_path / name) for name in ("a", "b", "c")]
    batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=1)
    assert seen == ["a", "b", "c"]
