"""The report's pictures (:mod:`autograder.reports.pictures`): figures collected from the
reference and from the grading session, drawn like torchvision's grid, malformed data refused,
a picture step that fails costing no point."""

import shutil
import time
from pathlib import Path

import pytest

from autograder import paths
from autograder.reports import pictures, render
from autograder.run import grading
from grading_runs import run_suites

SUITE = Path(__file__).parent / "data" / "report_suite.py"


def test_the_image_grid_lays_out_like_torchvision():
    import torch
    from torchvision.utils import make_grid

    rows = torch.rand(2, 3, 5, 4) * 1.4 - 0.2
    ours = pictures.image_grid(rows.numpy())
    theirs = make_grid(rows.clamp(0, 1).reshape(6, 1, 5, 4), nrow=3, padding=2, pad_value=1.0)[0]
    assert ours.shape == tuple(theirs.shape)
    assert abs(ours - theirs.double().numpy()).max() < 1e-6


class _StuckRemote:
    """A remote whose child cannot start: what the pictures step meets after a crash."""

    deadline = None
    exercise = "attention"

    def begin_test(self, exercise, served=()):
        self.exercise = exercise

    def reset(self, seed=None):
        raise RuntimeError("the grading child process failed to start: EOF")


def test_the_pictures_step_is_bounded_and_never_raises():
    remote = _StuckRemote()
    figures, problems = pictures.collect_from_session(remote, ["attention"], timeout=5.0)
    assert figures == {} and "failed to start" in problems["*"]
    assert remote.exercise is None                       # charged to no exercise's share
    assert 0 < remote.deadline - time.monotonic() <= 5.0


def test_pictures_from_the_reference_code(ref):
    figures, problems = pictures.collect(ref)
    assert problems == {}
    weights = figures["attention_padded"]["weights"]
    blocked = figures["attention_padded"]["blocked"]
    assert all(abs(sum(row) - 1) < 1e-5 for row in weights)
    assert all(w == 0 for row, brow in zip(weights, blocked) for w, b in zip(row, brow) if b)
    causal = figures["attention_causal"]
    assert causal["blocked"][0] == [False] + [True] * 5 and causal["weights"][0][0] == pytest.approx(1.0)
    drawn = pictures.render(figures, render.picture_labels())
    assert [d["name"] for d in drawn] == ["pe_table", "attention_padded", "attention_causal"]
    assert all(d["uri"].startswith("data:image/png;base64,") for d in drawn)


PE_DIES_ON_THE_PICTURE = (
    "import os\nfrom _reference import sinusoidal_table as _table\n\n\n"
    "def sinusoidal_table(max_len, d_model):\n"
    "    if (max_len, d_model) == (32, 32):   # only the pictures' input\n"
    "        os._exit(3)\n"
    "    return _table(max_len, d_model)\n")


@pytest.mark.slow
def test_pictures_come_from_the_grading_session(tmp_path):
    """One pass: the figures' data is collected from the grading child and written into the one
    results.json; a picture step that kills the child is a picture problem, never a lost point."""
    good, dying = tmp_path / "good", tmp_path / "dying"
    for folder in (good, dying):
        folder.mkdir()
        shutil.copyfile(paths.solutions_dir() / "masks.py", folder / "masks.py")
    shutil.copyfile(paths.solutions_dir() / "positional_encoding.py", good / "positional_encoding.py")
    shutil.copyfile(paths.solutions_dir() / "positional_encoding.py", dying / "_reference.py")
    (dying / "positional_encoding.py").write_text(PE_DIES_ON_THE_PICTURE)
    results = grading.grade_submission(good, files=[SUITE], seed=7, pictures=True).to_gradescope()
    table = results["extra_data"]["figures"]["pe_table"]
    assert len(table["got"]) == 32 and len(table["got"][0]) == 32
    assert max(abs(g - e) for gr, er in zip(table["got"], table["expected"]) for g, e in zip(gr, er)) < 1e-5
    assert "figure_problems" not in results["extra_data"]
    died = run_suites(dying, files=[SUITE], seed=7, pictures=True)
    assert died["score"] == 4.0 and all(t["status"] == "passed" for t in died["tests"])
    assert "pe_table" in died["extra_data"]["figure_problems"] and "pe_table" not in died["extra_data"]["figures"]
    html = render.render_feedback(died, "html", student="dying", lang="en")
    assert "Not drawn (no points depend on the pictures):" in html
    assert "Positional encoding: your table beside the formula: " in html


def test_pictures_reject_malformed_data():
    drawn = pictures.render({"pe_table": {"got": [[0.0]]}, "loss_curve": {"losses": []}}, render.picture_labels())
    assert drawn[0]["error"] == "figure 'pe_table' lacks the field 'expected'"
    assert drawn[1]["error"] == "figure 'loss_curve' needs 'losses', a non-empty list of numbers"
    ae = pictures.render({"ae_reconstructions": {"originals": [[[0.0] * 28] * 28] * 3,
                                                 "reconstructions": [[[1.0] * 28] * 28] * 3},
                          "loss_curve": {"losses": [0.3, 0.1, 0.05]}}, render.picture_labels())
    assert [d["name"] for d in ae] == ["ae_reconstructions", "loss_curve"] and all("uri" in d for d in ae)


def test_the_loss_curve_counts_epochs_in_whole_numbers():
    """Three epochs are ticked 1, 2, 3 (matplotlib's default locator wrote 1.25, 1.5, ...)."""
    import matplotlib.pyplot as plt

    fig = pictures.loss_figure({"losses": [0.08, 0.03, 0.02]}, render.picture_labels())
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert [t for t in ax.get_xticks() if low <= t <= high] == [1.0, 2.0, 3.0]
    plt.close(fig)
