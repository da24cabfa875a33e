"""Hidden tests of exercise 8 (decoder.py): random distinct dimensions and edge cases, compared
with the reference solution (weights drawn from the test's seed and loaded into both)."""

import pytest
import torch

from autograder.checks import inputs, oracles, weights, say
from autograder.checks import _, expect_reference, once

pytestmark = pytest.mark.exercise("decoder")


@once  # the same draws for every student of a run: built once per process
def _setup(rng, norm_first, batch=None, tgt_len=None):
    dims = inputs.layer_dims(rng)
    b, t, s = batch or dims["B"], tgt_len or dims["T"], dims["S"]
    d = dims["H"] * dims["hd"]
    stack = oracles.torch_stack("decoder", 2, d, dims["H"], dims["ff"], norm_first=norm_first, rng=rng)
    x = torch.randn(b, t, d, generator=rng)
    memory = torch.randn(b, s, d, generator=rng)
    tgt_len_b = inputs.lengths(rng, b, t, longest=0)
    src_len_b = inputs.lengths(rng, b, s, longest=b - 1)
    masks = dict(tgt_mask=inputs.causal_mask(t), tgt_key_padding_mask=inputs.padding_mask(tgt_len_b, t),
                 memory_key_padding_mask=inputs.padding_mask(src_len_b, s))
    return dims, d, weights.kit_state(stack), x, memory, masks


def _run(dims, d, state, x, memory, masks, norm_first, dtype=torch.float32):
    def run(impl):
        m = weights.loaded(impl.decoder.Decoder(2, d, dims["H"], dims["ff"], dropout=0.1, norm_first=norm_first),
                           state, "Decoder", dtype=dtype)
        return m(x.to(dtype), memory.to(dtype), **masks)
    return run


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_random_dimensions(student, rng, norm_first):
    """Decoder matches the reference on random distinct B, T, S, heads, head_dim, d_ff
    ko: 서로 다른 무작위 B, T, S, 헤드 수, head_dim, d_ff에서 Decoder가 참조 구현과 같습니다"""
    dims, d, state, x, memory, masks = _setup(rng, norm_first)
    expect_reference(_run(dims, d, state, x, memory, masks, norm_first), student,
                     what=f"Decoder(2, {d}, {dims['H']}, {dims['ff']}, norm_first={norm_first})(x[{list(x.shape)}], "
                          f"memory[{list(memory.shape)}], masks)",
                     valid=inputs.valid_positions(masks["tgt_key_padding_mask"]))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_batch_one_length_one(student, rng):
    """Decoder works on one target of one token
    ko: 길이 1인 타깃 하나에서도 Decoder가 동작합니다"""
    dims, d, state, x, memory, masks = _setup(rng, True, batch=1, tgt_len=1)
    expect_reference(_run(dims, d, state, x, memory, masks, True), student,
                     what="Decoder(...)(x[1, 1, d], memory, masks)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_float64_fully_padded_memory(student, rng):
    """Decoder in float64 matches the reference, with one source that is all padding and no NaN
    ko: float64 Decoder가 참조 구현과 같고, 전부 패딩인 소스가 있어도 NaN이 없습니다"""
    dims, d, state, x, memory, masks = _setup(rng, False)
    masks["memory_key_padding_mask"][0] = True
    got = expect_reference(_run(dims, d, state, x, memory, masks, False, torch.float64), student,
                           what=say("Decoder(...).double()(x, memory, masks with a fully padded source)",
                                    "Decoder(...).double()(x, memory, 소스 하나가 전부 패딩인 masks)"),
                           valid=inputs.valid_positions(masks["tgt_key_padding_mask"]))
    assert bool(torch.isfinite(got).all()), _("the output contains NaN or inf for the fully padded source")
