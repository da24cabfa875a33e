"""Public tests of exercise 11, ``autoencoder.py``: shapes, pixel range and training on MNIST.

The training tests need MNIST (``tkit data mnist --download``, or ``--data-dir`` /
``TKIT_DATA_DIR``); see :mod:`autograder.checks.training` for the budget and for what the
grader measures itself (every figure that earns points).
"""

import math

import pytest
import torch

from autograder.checks import mistaken, training, training_loop
from autograder.checks import Mismatch, expect_differs, expect_equal, say

pytestmark = pytest.mark.exercise("autoencoder")



class _Case:
    """A test's inputs: 3 images, codes of width 8 (times 10) and the widths (8, 32) in the public
    tests; in the twins other widths, batch sizes, images and codes."""

    def __init__(self, example):
        self.latent_dim, other = example.sizes((8, 32), 2, 64)
        self.widths = (self.latent_dim, other)
        batch, = example.sizes((3,), 2, 6)
        gen = example.rng(11)
        self.images = torch.rand(batch, 1, 28, 28, generator=gen)
        self.codes = torch.randn(batch, self.latent_dim, generator=gen) * 10


def _decode_uses_z(student, case):
    """The premise of every test below: decode(z) depends on z and forward(x) on x (a decoder that
    returns a constant image has every shape and range right)."""
    latent_dim = case.latent_dim

    def codes(impl):
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        out = m.decode(torch.randn(2, latent_dim, generator=torch.Generator().manual_seed(12)))
        return out[0], out[1]

    def images(impl):
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        out = m(case.images[:2])
        return out[0], out[1]

    expect_differs(codes, student, what=say(f"ConvAutoEncoder({latent_dim}).decode(z) for two different codes z",
                                           f"서로 다른 두 코드 z에 대한 ConvAutoEncoder({latent_dim}).decode(z)"),
                   atol=1e-6)
    expect_differs(images, student, what=say(f"ConvAutoEncoder({latent_dim})(x) for two different images x",
                                            f"서로 다른 두 이미지 x에 대한 ConvAutoEncoder({latent_dim})(x)"), atol=1e-6)


@pytest.mark.kind("shapes")
@pytest.mark.points(1.2)
def test_shapes(student, example):
    """encode gives [B, latent_dim]; decode and forward give [B, 1, 28, 28]

    ko: encode는 [B, latent_dim], decode와 forward는 [B, 1, 28, 28]를 돌려줍니다
    """
    case = _Case(example)
    images, (first, second) = case.images, case.widths
    batch = images.shape[0]

    def code_shapes(impl):
        return tuple(tuple(impl.autoencoder.ConvAutoEncoder(latent_dim).eval().encode(images).shape)
                     for latent_dim in case.widths)

    expect_equal(code_shapes, student, ((batch, first), (batch, second)),
                 what=f"(ConvAutoEncoder({first}).encode(x).shape, ConvAutoEncoder({second}).encode(x).shape)",
                 known_mistakes=mistaken.fixed_bottleneck(case.widths))
    for latent_dim in case.widths:
        def image_shapes(impl, latent_dim=latent_dim):
            m = impl.autoencoder.ConvAutoEncoder(latent_dim)
            m.eval()
            return tuple(m.decode(torch.zeros(batch, latent_dim)).shape), tuple(m(images).shape)

        expect_equal(image_shapes, student, ((batch, 1, 28, 28), (batch, 1, 28, 28)),
                     what=f"ConvAutoEncoder({latent_dim}): (decode(z).shape, forward(x).shape)")
    _decode_uses_z(student, case)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_forward_is_decode_of_encode(student, example):
    """forward(x) is exactly decode(encode(x)): no path around the bottleneck

    ko: forward(x)는 정확히 decode(encode(x))입니다 (병목을 건너뛰는 경로가 없습니다)
    """
    case = _Case(example)
    images, latent_dim = case.images, case.latent_dim
    seen = {}

    def run(impl):
        impl.seed(11)  # the same initial weights wherever it runs (the mistakes are named by output)
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        seen["de"] = m.decode(m.encode(images))
        return m(images) - seen["de"]

    known = {"autoencoder_identity": lambda: images - seen["de"],
             "autoencoder_skip_path": lambda: (seen["de"] + images).clamp(0, 1) - seen["de"]}
    expect_equal(run, student, torch.zeros_like(images),
                 what=f"ConvAutoEncoder({latent_dim}): forward(x) - decode(encode(x))", known_mistakes=known)
    _decode_uses_z(student, case)


@pytest.mark.kind("shapes")
@pytest.mark.points(1)
def test_outputs_are_pixels(student, example):
    """decode and forward return values in [0, 1], even for large codes

    ko: decode와 forward의 출력은 큰 코드에서도 [0, 1] 범위에 있습니다
    """
    case = _Case(example)
    images, codes, latent_dim = case.images, case.codes, case.latent_dim

    def run(impl):
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        width = m.encode(images).shape[-1]   # the model's own code width: a range is graded apart from the bottleneck
        z = codes if width == latent_dim else \
            torch.randn(codes.shape[0], width, generator=torch.Generator().manual_seed(13)) * 10
        out = torch.cat([m.decode(z), m(images)])
        return torch.stack([out.isfinite().all(), (out >= 0).all(), (out <= 1).all()])

    expect_equal(run, student, torch.tensor([True, True, True]),
                 what=say(f"ConvAutoEncoder({latent_dim}), decode(10 * randn) and forward(x): (every value finite, >= 0, <= 1)",
                          f"ConvAutoEncoder({latent_dim}), decode(10 * randn)와 forward(x): (모든 값이 유한한지, >= 0 인지, <= 1 인지)"))
    _decode_uses_z(student, case)


def fail_unless_trained(run, bar: float) -> None:
    """Raise a plain-worded Mismatch when ``run`` earns nothing at ``bar`` (see
    :func:`autograder.checks.training.autoencoder_failure`)."""
    failure = training.autoencoder_failure(run, bar)
    if failure is not None:
        raise Mismatch(failure)


@pytest.mark.kind("values")
@pytest.mark.optimizer
@pytest.mark.part("train_autoencoder")
@pytest.mark.points(1.2)
def test_train_autoencoder_follows_adam(student, seed):
    """train_autoencoder runs Adam on the reconstruction loss, zero_grad, backward and step for every batch: the parameters after training are the kit's loop's

    ko: train_autoencoder는 배치마다 재구성 손실로 Adam의 zero_grad, backward, step을 실행합니다: 학습 후 매개변수가 채점기 루프의 결과와 같습니다
    """
    out, initial, batches = training_loop.run_loop(student, seed)
    text, mistake = training_loop.parameters_verdict(out.get("state"), out.get("losses"), initial, batches)
    if text is not None:
        raise Mismatch(text, mistake)


@pytest.mark.kind("values")
@pytest.mark.optimizer
@pytest.mark.part("train_autoencoder")
@pytest.mark.points(0.6)
def test_train_autoencoder_returns_each_epochs_mean_loss(student, seed):
    """train_autoencoder returns one loss per epoch: the mean of that epoch's batch losses

    ko: train_autoencoder는 에폭마다 손실 하나, 곧 그 에폭의 배치 손실 평균을 돌려줍니다
    """
    out, initial, batches = training_loop.run_loop(student, seed)
    text, mistake = training_loop.losses_verdict(out.get("state"), out.get("losses"), initial, batches)
    if text is not None:
        raise Mismatch(text, mistake)


@pytest.mark.kind("property")
@pytest.mark.optimizer
@pytest.mark.part("train_autoencoder")
@pytest.mark.points(0.6)
def test_train_autoencoder_leaves_the_model_training_on_the_device(student, seed):
    """train_autoencoder trains the model given and leaves it in training mode, moved to device

    ko: train_autoencoder는 주어진 모델을 학습시키고 device로 옮긴 채 학습 모드로 남겨 둡니다
    """
    out, initial, _batches = training_loop.run_loop(student, seed)
    problem = training_loop.mode_verdict(out, initial)
    if problem is not None:
        raise Mismatch(problem)


@pytest.mark.kind("values")
@pytest.mark.no_twin("the grader's training draws its digits and transform from the run's secret already")
@pytest.mark.training
@pytest.mark.points(1)
def test_training_lowers_heldout_error(student, attach):
    """trained by the grader's own loop, the model's held-out error falls clearly below that of the average digit

    ko: 채점기 자신의 학습 루프로 학습한 뒤 처음 보는 숫자의 복원 오차가 평균 이미지보다 분명히 낮아집니다
    """
    run = training.autoencoder_run(student)
    fail_unless_trained(run, training.AE.learns_mse)   # the "learns" bar, well under any constant image
    if isinstance(run.losses, list):
        attach("loss_curve", losses=run.losses)


@pytest.mark.kind("values")
@pytest.mark.no_twin("the grader's training draws its digits and transform from the run's secret already")
@pytest.mark.training
@pytest.mark.points(1.5)
def test_learns_mnist(student, attach):
    """after the grader's training budget, decode(encode(x)) reconstructs held-out digits better than the average digit

    ko: 채점기의 학습 후 decode(encode(x))가 처음 보는 숫자 이미지를 평균 이미지보다 잘 복원합니다
    """
    run = training.autoencoder_run(student)
    if run.examples:
        attach("ae_reconstructions", **run.examples)
    if math.isfinite(run.mse):   # Gradescope's leaderboard, when the export asks for it (lower is better)
        attach("leaderboard", title="AutoEncoder: held-out MSE", value=run.mse, order="asc")
    fail_unless_trained(run, training.AE.learns_mse)
