"""Hidden tests of exercise 11, ``autoencoder.py``: random sizes and the graded reconstruction quality.

The reconstruction test shares the public tests' training run (one run per submission, see
:mod:`autograder.checks.training`); its credit is linear between the "learns something" bar
and the full-credit bar set from the reference.
"""

import pytest
import torch

from autograder.checks import Mismatch, expect_differs, expect_equal, say, training

pytestmark = pytest.mark.exercise("autoencoder")


@pytest.mark.kind("shapes")
@pytest.mark.points(1)
def test_latent_dim_respected(student, rng):
    """for a random latent_dim and batch size, z is [B, latent_dim] and decode(z) is [B, 1, 28, 28]

    ko: 임의의 latent_dim과 배치 크기에서 z는 [B, latent_dim], decode(z)는 [B, 1, 28, 28]입니다
    """
    latent_dim = int(torch.randint(2, 49, (), generator=rng))
    batch = int(torch.randint(1, 6, (), generator=rng))
    images = torch.rand(batch, 1, 28, 28, generator=rng)

    def run(impl):
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        z = m.encode(images)
        return tuple(z.shape), tuple(m.decode(z).shape)

    codes = torch.randn(2, latent_dim, generator=rng)

    def two_codes(impl):  # the premise: decode(z) depends on z (a constant image has every shape right)
        m = impl.autoencoder.ConvAutoEncoder(latent_dim)
        m.eval()
        out = m.decode(codes)
        return out[0], out[1]

    expect_differs(two_codes, student, what=say(f"ConvAutoEncoder({latent_dim}).decode(z) for two different codes z",
                                               f"서로 다른 두 코드 z에 대한 ConvAutoEncoder({latent_dim}).decode(z)"),
                   atol=1e-6)
    expect_equal(run, student, ((batch, latent_dim), (batch, 1, 28, 28)),
                 what=say(f"ConvAutoEncoder({latent_dim}) on {batch} images: (encode(x).shape, decode(z).shape)",
                          f"이미지 {batch}장에 대한 ConvAutoEncoder({latent_dim}): (encode(x).shape, decode(z).shape)"))


@pytest.mark.kind("values")
@pytest.mark.training
@pytest.mark.points(3.4)
def test_reconstruction_quality(student, partial):
    """held-out digits are reconstructed through the latent_dim bottleneck about as well as by the reference

    ko: 처음 보는 숫자를 latent_dim 병목을 거쳐 기준 답안에 가깝게 복원합니다
    """
    run = training.autoencoder_run(student)
    budget = training.AE
    failure = training.autoencoder_failure(run, budget.learns_mse)
    if failure is not None:
        raise Mismatch(failure)
    fraction = training.linear_credit(run.mse, budget.learns_mse, budget.full_credit_mse)
    if fraction < 1.0:
        partial.award(fraction, training.autoencoder_feedback(run, budget.full_credit_mse))
