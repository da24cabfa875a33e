"""``train_autoencoder`` earns its share of the AutoEncoder exercise (:mod:`autograder.checks.training_loop`).

The loop's three tests (parameters after Adam on the reconstruction loss with ``zero_grad`` per
batch; each epoch's mean loss; the model left in training mode, moved to ``device``) are worth
20 % of the exercise: a loop that is missing or trains nothing leaves at most 9.6 of 12, the
reference keeps 12 (the slow test grades both, training included).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import exercises
from autograder.checks import training_loop
from autograder.child import tasks
from autograder.mistakes import implementations
from autograder.run import rubric

REPO = Path(__file__).resolve().parent.parent
LOOP_TESTS = "test_train_autoencoder_"


def _report(**changes) -> tuple[dict, dict]:
    initial, batches = training_loop.loop_probe(4)
    out = tasks.run("run_train_autoencoder", implementations.reference().autoencoder, initial, batches,
                    training_loop.LOOP.epochs, training_loop.LOOP.lr)
    out.update(changes)
    return out, initial


def test_the_loop_is_a_fifth_of_the_autoencoder():
    tests = [t for t in rubric.collect() if t.exercise == "autoencoder"]
    loop = [t for t in tests if LOOP_TESTS in t.nodeid]
    assert len(loop) == 3 and not any(t.training for t in loop)
    assert sum(t.points for t in tests) == pytest.approx(exercises.get("autoencoder").points) == 12
    assert sum(t.points for t in loop) == pytest.approx(0.2 * 12)


def test_the_reference_loop_leaves_the_model_training_on_the_device():
    out, initial = _report()
    assert out["training"] is True and out["moved"] is True
    assert training_loop.mode_verdict(out, initial) is None
    assert training_loop.parameters_verdict(out["state"], out["losses"], *training_loop.loop_probe(4)) == (None, None)
    assert training_loop.losses_verdict(out["state"], out["losses"], *training_loop.loop_probe(4)) == (None, None)


@pytest.mark.parametrize("changes, words", [
    ({"training": False}, "evaluation mode"),
    ({"moved": False}, "never moved to the device"),
    ({"training": False, "moved": False}, "evaluation mode"),
])
def test_a_loop_that_leaves_the_model_elsewhere_fails_the_mode_test(changes, words):
    out, initial = _report(**changes)
    assert words in training_loop.mode_verdict(out, initial)


def test_a_loop_that_trains_nothing_earns_nothing_for_the_mode():
    out, initial = _report()
    out["state"] = {k: v.clone() for k, v in initial.items()}
    assert "trained nothing" in training_loop.mode_verdict(out, initial)
    assert "trained nothing" in training_loop.mode_verdict({"training": True, "moved": True}, initial)


def test_the_probe_model_notes_where_it_is_moved():
    import torch

    model = tasks.probe_autoencoder()
    model.to(torch.float64)
    assert model.tkit_moved_to == []
    model.to("cpu")
    model.cpu()
    model.to(device=torch.device("cpu"))
    assert model.tkit_moved_to == ["cpu", "cpu", "cpu"]


def _with_loop(folder: Path, body: str) -> Path:
    source = (REPO / "solutions" / "autoencoder.py").read_text()
    start = source.index("    ### BEGIN SOLUTION", source.index("def train_autoencoder"))
    end = source.index("    ### END SOLUTION", start) + len("    ### END SOLUTION")
    folder.mkdir(parents=True)
    (folder / "autoencoder.py").write_text(source[:start] + body + source[end:])
    return folder


@pytest.mark.slow
def test_a_missing_or_idle_loop_leaves_at_most_four_fifths(tmp_path):
    from grading_runs import run_suites

    loops = {"missing": '    raise NotImplementedError("train_autoencoder")',
             "idle": "    model.to(device)\n    model.train()\n    return [0.05 / (e + 1) for e in range(epochs)]"}
    for name, body in loops.items():
        results = run_suites(_with_loop(tmp_path / name, body), names=["autoencoder"], seed=20240901, pictures=False)
        assert results["extra_data"]["exercises"]["autoencoder"]["score"] <= 9.6 + 1e-9, name
        loop = [t for t in results["tests"] if LOOP_TESTS in t["extra_data"]["nodeid"]]
        assert len(loop) == 3 and all(t["score"] == 0 for t in loop), name
    reference = tmp_path / "reference"
    reference.mkdir()
    shutil.copyfile(REPO / "solutions" / "autoencoder.py", reference / "autoencoder.py")
    results = run_suites(reference, names=["autoencoder"], seed=20240901, pictures=False)
    assert results["extra_data"]["exercises"]["autoencoder"]["score"] == 12
