"""Hidden tests of exercise 7 (encoder.py): random distinct dimensions and edge cases, compared
with the reference solution (weights drawn from the test's seed and loaded into both)."""

import pytest
import torch

from autograder.checks import inputs, oracles, weights, say
from autograder.checks import _, expect_reference, once

pytestmark = pytest.mark.exercise("encoder")


@once  # the same draws for every student of a run: built once per process
def _setup(rng, norm_first, batch=None, length=None):
    dims = inputs.layer_dims(rng)
    b = batch or dims["B"]
    s = length or dims["S"]
    d = dims["H"] * dims["hd"]
    stack = oracles.torch_stack("encoder", 2, d, dims["H"], dims["ff"], norm_first=norm_first, rng=rng)
    x = torch.randn(b, s, d, generator=rng)
    return dims, d, weights.kit_state(stack), x, inputs.padding_mask(inputs.lengths(rng, b, s), s)


def _run(dims, d, state, x, kpm, norm_first, dtype=torch.float32):
    def run(impl):
        m = weights.loaded(impl.encoder.Encoder(2, d, dims["H"], dims["ff"], dropout=0.1, norm_first=norm_first),
                           state, "Encoder", dtype=dtype)
        return m(x.to(dtype), key_padding_mask=kpm)
    return run


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_random_dimensions(student, rng, norm_first):
    """Encoder matches the reference on random distinct B, S, heads, head_dim, d_ff
    ko: 서로 다른 무작위 B, S, 헤드 수, head_dim, d_ff에서 Encoder가 참조 구현과 같습니다"""
    dims, d, state, x, kpm = _setup(rng, norm_first)
    expect_reference(_run(dims, d, state, x, kpm, norm_first), student,
                     what=f"Encoder(2, {d}, {dims['H']}, {dims['ff']}, norm_first={norm_first})"
                          f"(x[{list(x.shape)}], mask)",
                     valid=inputs.valid_positions(kpm))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_batch_one_length_one(student, rng):
    """Encoder works on one sequence of one token
    ko: 길이 1인 시퀀스 하나에서도 Encoder가 동작합니다"""
    dims, d, state, x, kpm = _setup(rng, True, batch=1, length=1)
    expect_reference(_run(dims, d, state, x, kpm, True), student, what="Encoder(...)(x[1, 1, d])")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_float64(student, rng):
    """Encoder in float64 returns float64 with the reference's values
    ko: float64 Encoder가 float64로 참조 구현과 같은 값을 냅니다"""
    dims, d, state, x, kpm = _setup(rng, False)
    expect_reference(_run(dims, d, state, x, kpm, False, torch.float64), student,
                     what="Encoder(...).double()(x.double())", valid=inputs.valid_positions(kpm))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_fully_padded_sequence(student, rng):
    """A sequence that is all padding neither disturbs the others nor produces NaN
    ko: 전부 패딩인 시퀀스가 있어도 다른 시퀀스는 그대로이고 NaN이 나오지 않습니다"""
    dims, d, state, x, kpm = _setup(rng, False)
    # one more sequence, all padding (overwriting the last row could leave no partly padded one)
    x = torch.cat((x, x[:1].flip(1)))
    kpm = torch.cat((kpm, torch.ones_like(kpm[:1])))
    got = expect_reference(_run(dims, d, state, x, kpm, False), student,
                           what=say("Encoder(...)(x, mask with a fully padded row)",
                                    "Encoder(...)(x, 한 행이 전부 패딩인 mask)"), valid=inputs.valid_positions(kpm))
    assert bool(torch.isfinite(got).all()), _("the output contains NaN or inf in the fully padded sequence")
