"""Public tests of exercise 11, ``autoencoder.py``: shapes, pixel range and training on MNIST.

The training tests need MNIST (``tkit data mnist --download``, or ``--data-dir`` /
``TKIT_DATA_DIR``); see :mod:`autograder.suitelib.training` for the fixed budget.
"""

import math

import pytest
import torch

from autograder.i18n import _
from autograder.suitelib import training
from autograder.testing import Mismatch, check

pytestmark = pytest.mark.exercise("autoencoder")

GEN = torch.Generator().manual_seed(11)
IMAGES = torch.rand(3, 1, 28, 28, generator=GEN)
CODES = torch.randn(3, 8, generator=GEN) * 10


@pytest.mark.points(1.5)
def test_shapes(student):
    """encode gives [B, latent_dim]; decode and forward give [B, 1, 28, 28]

    ko: encode 는 [B, latent_dim], decode 와 forward 는 [B, 1, 28, 28] 를 돌려줍니다
    """
    for latent_dim in (8, 32):
        def code_shape(impl, latent_dim=latent_dim):
            m = impl.autoencoder.ConvAutoEncoder(latent_dim)
            m.eval()
            return tuple(m.encode(IMAGES).shape)

        def image_shapes(impl, latent_dim=latent_dim):
            m = impl.autoencoder.ConvAutoEncoder(latent_dim)
            m.eval()
            return tuple(m.decode(torch.zeros(3, latent_dim)).shape), tuple(m(IMAGES).shape)

        check(code_shape, student, (3, latent_dim), what=f"ConvAutoEncoder({latent_dim}).encode(x).shape")
        check(image_shapes, student, ((3, 1, 28, 28), (3, 1, 28, 28)),
              what=f"ConvAutoEncoder({latent_dim}): (decode(z).shape, forward(x).shape)")


@pytest.mark.points(0.5)
def test_forward_is_decode_of_encode(student):
    """forward(x) is exactly decode(encode(x)): no path around the bottleneck

    ko: forward(x) 는 정확히 decode(encode(x)) 입니다 (병목을 건너뛰는 경로가 없습니다)
    """
    def run(impl):
        m = impl.autoencoder.ConvAutoEncoder(8)
        m.eval()
        return m(IMAGES) - m.decode(m.encode(IMAGES))

    check(run, student, torch.zeros(3, 1, 28, 28), what="ConvAutoEncoder(8): forward(x) - decode(encode(x))",
          atol=1e-6, rtol=0)


@pytest.mark.points(1)
def test_outputs_are_pixels(student):
    """decode and forward return values in [0, 1], even for large codes

    ko: decode 와 forward 의 출력은 큰 코드에서도 [0, 1] 범위에 있습니다
    """
    def run(impl):
        m = impl.autoencoder.ConvAutoEncoder(8)
        m.eval()
        out = torch.cat([m.decode(CODES), m(IMAGES)])
        return out.isfinite().all() & (out >= 0).all() & (out <= 1).all()

    check(run, student, torch.tensor(True),
          what="ConvAutoEncoder(8): every value of decode(10 * randn) and forward(x) in [0, 1]")


def losses_problem(losses, epochs: int) -> str | None:
    """Why ``losses`` is not ``epochs`` finite, strictly decreasing floats (None when it is)."""
    if not isinstance(losses, list) or len(losses) != epochs or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in losses):
        return _("train_autoencoder should return a list of {n} floats (one per epoch), got {got}").format(
            n=epochs, got=repr(losses)[:200])
    if not all(math.isfinite(v) for v in losses):
        return _("train_autoencoder returned non-finite losses: {losses}").format(losses=losses)
    if not all(b < a for a, b in zip(losses, losses[1:])):
        return _("the mean loss per epoch should decrease over {n} epochs, got {losses}").format(
            n=epochs, losses=losses)
    return None


@pytest.mark.training
@pytest.mark.points(2)
def test_training_losses_decrease(student, attach):
    """train_autoencoder returns one finite mean loss per epoch, decreasing, and updates the weights

    ko: train_autoencoder 는 에폭마다 유한한 평균 손실을 돌려주고, 손실이 줄어들며, 가중치를 갱신합니다
    """
    run = training.autoencoder_run(student)
    if not run.weights_changed:
        zero = isinstance(run.losses, list) and all(v == 0 for v in run.losses)
        raise Mismatch(_("after train_autoencoder the model's weights are exactly the initial ones"),
                       training.named_mistake("autoencoder_identity" if zero else "autoencoder_no_optimizer_step"))
    problem = losses_problem(run.losses, training.AE.epochs)
    if problem is None:
        attach("loss_curve", losses=run.losses)
    assert problem is None, problem


@pytest.mark.training
@pytest.mark.points(2)
def test_learns_mnist(student, attach):
    """after the fixed training budget, decode(encode(x)) reconstructs held-out digits better than the average digit

    ko: 정해진 학습 후 decode(encode(x)) 가 처음 보는 숫자 이미지를 평균 이미지보다 잘 복원합니다
    """
    run = training.autoencoder_run(student)
    assert run.problem is None, run.problem
    attach("ae_reconstructions", **run.examples)
    assert run.mse <= training.AE.learns_mse, training.mse_message(run.mse, training.AE.learns_mse)
