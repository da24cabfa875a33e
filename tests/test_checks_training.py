"""The training checks (:mod:`autograder.checks.training`,
:mod:`autograder.checks.transformer_training`): the reversal task, linear credit and the
thresholds (MNIST itself: ``test_mnist.py``; the secret draws: ``test_checks_draws.py``).

Data: the official MNIST test set shipped in ``datasets/mnist`` (or ``TKIT_DATA_DIR``). The threshold tests train the reference and the catalog mutants with the
grading budgets of :mod:`autograder.checks.training` and
:mod:`autograder.checks.transformer_training` (in this process, one torch thread, as in the
child) and check that the reference passes with margin while an untrained model, an identity
AutoEncoder, a skip path, a training loop that never steps and a Transformer without the causal
mask fail; two tests grade cheating submissions in real children (more attacks:
``test_checks_training_attacks.py``).
"""

import os
import shutil
from pathlib import Path

import pytest
import torch

from autograder.checks import training, training_loop
from autograder.checks import transformer_training as tt
from autograder.mistakes import catalog, implementations
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl
from grading_runs import run_suites

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TKIT_DATA_DIR") or REPO / "datasets" / "mnist")


# -- the reversal task -------------------------------------------------------------------------------


def test_reversal_data_and_exact_match():
    src, tgt = tt.reversal_data(50, seed=1)
    for s, t in zip(src.tolist(), tgt.tolist()):
        symbols = [v for v in s if v != tt.PAD]
        assert t[: len(symbols) + 2] == [tt.BOS, *symbols[::-1], tt.EOS]
        assert all(v == tt.PAD for v in t[len(symbols) + 2:])
    assert tt.exact_match(tgt, tgt).all()
    wrong = tgt.clone()
    wrong[0, 1] = 3 if wrong[0, 1] != 3 else 4
    truncated = tgt[:, :3]
    assert tt.exact_match(wrong, tgt).tolist() == [False] + [True] * 49
    assert not tt.exact_match(truncated, tgt)[(tgt != tt.PAD).sum(1) > 3].any()


def test_the_transformer_schedule_warms_up_then_decays():
    from autograder.child.graph_training import scheduled_lr

    rates = [scheduled_lr(step, 10, 0.01, 3) for step in range(10)]
    assert rates[:3] == pytest.approx([0.01 / 3, 0.02 / 3, 0.01])  # linear warm-up to the peak
    assert all(a > b > 0 for a, b in zip(rates[2:], rates[3:]))  # then a strictly falling cosine
    assert rates[6] == pytest.approx(0.005)  # half-way through the decay: half the peak
    assert [scheduled_lr(step, 10, 0.01, 0) for step in (0, 9)] == [0.01, 0.01]  # no warm-up: constant


def test_a_training_child_starts_with_what_the_optimizers_import(tmp_path):
    """``torch.optim`` imports ``torch._dynamo`` on first use (~1.3 s); before forking a child whose
    limits say it trains (``Limits.preload_training``), the zygote imports it once
    (``tasks.preload``), so a training child finds it loaded and makes an optimizer at once."""
    (tmp_path / "probe_mod.py").write_text(
        "import sys\n"
        "def loaded():\n"
        "    return 'torch._dynamo' in sys.modules\n"
        "def adam_steps():\n"
        "    import torch\n"
        "    w = torch.zeros(3, requires_grad=True)\n"
        "    opt = torch.optim.Adam([w], lr=0.1)\n"
        "    w.sum().backward()\n"
        "    opt.step()\n"
        "    return w.detach().tolist()\n", encoding="utf-8")
    impl = RemoteImpl(tmp_path, Limits(preload_training=True))
    try:
        assert impl.probe_mod.loaded() is True and impl.info["launcher"] == "zygote"
        assert impl.probe_mod.adam_steps() == pytest.approx([-0.1, -0.1, -0.1])
    finally:
        impl.close()


def test_the_secret_symbol_code_maps_the_reversed_symbols():
    code = torch.tensor([0, 1, 2, 9, 8, 7, 6, 5, 4, 3])
    src, tgt = tt.reversal_data(20, seed=1, symbols=code)
    plain_src, plain_tgt = tt.reversal_data(20, seed=1)
    assert torch.equal(src, plain_src) and torch.equal(tgt, code[plain_tgt])


# -- credit ------------------------------------------------------------------------------------------


def test_linear_credit():
    assert training.linear_credit(0.02, 0.055, 0.030) == 1.0
    assert training.linear_credit(0.0425, 0.055, 0.030) == pytest.approx(0.5)
    assert training.linear_credit(0.4, 0.2, 0.6) == pytest.approx(0.5)
    assert training.linear_credit(float("nan"), 0.2, 0.6) == 0.0


# -- thresholds ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_reference_autoencoder_passes_with_margin_and_is_deterministic(one_thread):
    runs = [training.autoencoder_run(implementations.reference(), data_dir=DATA, cache=False, seed=11) for _ in range(2)]
    first = runs[0]
    assert first.problem is None and first.learned()
    assert training_loop.losses_problem(first.losses, training.AE.epochs) is None
    assert first.mse * 1.3 <= training.AE.full_credit_mse, first.mse
    assert first.mse_before > 3 * training.AE.learns_mse, first.mse_before
    assert all(r.mse == first.mse and r.mse_before == first.mse_before for r in runs[1:])
    other = training.autoencoder_run(implementations.reference(), data_dir=DATA, cache=False, seed=12)
    assert other.mse != first.mse  # another run seed, other digits


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["autoencoder_no_optimizer_step", "autoencoder_identity",
                                       "autoencoder_skip_path"])
def test_mistakes_outside_encode_and_decode_do_not_touch_the_training_figures(one_thread, mutant_id):
    """The kit trains ``decode(encode(x))`` with its own loop: a loop that never steps, or a
    ``forward`` around the bottleneck, leaves the recorded computation the reference's (their own
    tests catch them: the loop test, ``test_forward_is_decode_of_encode``)."""
    small = training.AutoencoderBudget(n_train=128, n_heldout=32, epochs=1)
    run = training.autoencoder_run(catalog.by_id(mutant_id).impl(), small, data_dir=DATA, seed=11, cache=False)
    ref = training.autoencoder_run(implementations.reference(), small, data_dir=DATA, seed=11, cache=False)
    assert run.problem is None and (run.mse, run.mse_before) == (ref.mse, ref.mse_before)


def test_wide_latent_cannot_pass_the_bottleneck(one_thread):
    small = training.AutoencoderBudget(n_train=64, n_heldout=8, epochs=1)
    with pytest.raises(RuntimeError, match="8, 32, 7, 7"):  # its decode cannot take [n, latent_dim] codes
        training.autoencoder_run(catalog.by_id("autoencoder_wide_latent").impl(), small, data_dir=DATA)


CHEATER = '''
import torch
from torch import nn

_SEEN = {}


class ConvAutoEncoder(nn.Module):
    """Honest shapes, no learning: decode looks up the images encode saw."""

    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.fc = nn.Linear(784, latent_dim)

    def encode(self, x):
        z = self.fc(x.flatten(1))
        _SEEN[x.shape[0]] = x.clone()
        return z

    def decode(self, z):
        if z.shape[0] in _SEEN:
            return _SEEN[z.shape[0]]
        return torch.full((z.shape[0], 1, 28, 28), 0.5)

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    return [1.0 / (e + 1) for e in range(epochs)]
'''


@pytest.mark.slow
def test_a_cache_around_the_bottleneck_cannot_score(tmp_path):
    (tmp_path / "autoencoder.py").write_text(CHEATER, encoding="utf-8")
    small = training.AutoencoderBudget(n_train=64, n_heldout=200, epochs=2)
    impl = RemoteImpl(tmp_path)
    try:
        run = training.autoencoder_run(impl, small, data_dir=DATA)
    finally:
        impl.close()
    # decode was recorded returning a tensor that no operator of its call computed
    assert run.problem and "no operator computed" in run.problem


@pytest.mark.slow
def test_reference_transformer_passes_untrained_and_unmasked_fail(one_thread):
    reference = tt.transformer_run(implementations.reference(), cache=False, seed=11)
    assert reference.accuracy - 0.15 >= tt.TF.full_credit_acc, reference.accuracy
    assert reference.learned() and reference.loss < 0.2 * reference.loss_before
    again = tt.transformer_run(implementations.reference(), cache=False, seed=11)
    assert again.accuracy == reference.accuracy and again.loss == reference.loss
    untrained = tt.transformer_run(implementations.reference(), tt.TransformerBudget(steps=0), cache=False, seed=11)
    assert untrained.accuracy < tt.TF.partial_acc / 2 and not untrained.learned()
    unmasked = tt.transformer_run(catalog.by_id("transformer_no_causal_mask").impl(), cache=False, seed=11)
    assert unmasked.accuracy < tt.TF.partial_acc / 2, unmasked.accuracy


@pytest.mark.slow
def test_a_hard_coded_reversal_scores_nothing_on_accuracy():
    """A 'Transformer' that reverses the source by index arithmetic (and lets the kit's optimizer
    scale one parameter) decodes plain reversal with its own code; its trained weights in the
    reference model decode nothing, and the lower figure is the grade."""
    folder = Path(__file__).resolve().parent / "attacks" / "hardcoded_reversal"
    small = tt.TransformerBudget(steps=20)
    impl = RemoteImpl(folder)
    try:
        run = tt.transformer_run(impl, small, cache=False, seed=11)
    finally:
        impl.close()
    assert run.accuracy == 0.0 and not run.learned(small)
    assert "contract's parameter names" in run.note


@pytest.mark.slow
def test_the_zygote_imports_for_training_only_in_runs_that_train(tmp_path, monkeypatch):
    """The plugin asks for ``Limits.preload_training`` exactly when a selected test is marked
    ``training``: a run without training never makes the zygote import ``torch._dynamo``."""
    from autograder import paths
    from autograder.sandbox import zygote_parent

    asked = []
    spawn = zygote_parent.Zygote.spawn
    monkeypatch.setattr(zygote_parent.Zygote, "spawn",
                        lambda self, spec, *a, **k: asked.append(spec["preload"]) or spawn(self, spec, *a, **k))
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "exercises", sub, ignore=shutil.ignore_patterns("*.md", "__pycache__"))
    results = run_suites(sub, names=["masks"], seed=1)
    assert results["tests"] and asked and not any(asked)
    asked.clear()
    results = run_suites(sub, files=[paths.suites_dir() / "hidden" / "test_transformer__training.py"], seed=1)
    assert len(results["tests"]) == 2 and results["score"] == 0  # a stub trains nothing
    assert asked and all(asked)
