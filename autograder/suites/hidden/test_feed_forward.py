"""Hidden tests of exercise 6, ``feed_forward.py``: random sizes, float64, edge cases, the reference."""

import pytest
import torch

from autograder.checks import inputs, weights, say
from autograder.checks import expect_reference

pytestmark = pytest.mark.exercise("feed_forward")


def _module(impl, d_model, d_ff, state, dtype=None):
    return weights.loaded(impl.feed_forward.PositionwiseFeedForward(d_model, d_ff), state, dtype=dtype)


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_random_sizes_leading_dims_and_float64(student, rng):
    """random B, S, d_model, d_ff (all different) with 4-D input, and a float64 copy

    ko: 모두 다른 임의의 B, S, d_model, d_ff와 4차원 입력, 그리고 float64
    """
    batch, length, d_model, d_ff, extra = inputs.distinct(rng, 5, 2, 16)
    state = weights.ffn_state(rng, d_model, d_ff)
    x = inputs.randn(rng, extra, batch, length, d_model)

    def run(impl):
        return _module(impl, d_model, d_ff, state)(x), _module(impl, d_model, d_ff, state, torch.float64)(x.double())

    expect_reference(run, student, what=say(f"PositionwiseFeedForward({d_model}, {d_ff}) on x[{extra}, {batch}, {length}, "
                                        f"{d_model}], float32 and float64",
                                            f"x[{extra}, {batch}, {length}, {d_model}]에 대한 PositionwiseFeedForward({d_model}, {d_ff}) (float32와 float64)"))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_one_token(student, rng):
    """batch 1, length 1

    ko: 배치 1, 길이 1
    """
    d_model, d_ff = inputs.distinct(rng, 2, 2, 16)
    state = weights.ffn_state(rng, d_model, d_ff)
    x = inputs.randn(rng, 1, 1, d_model)
    state = weights.with_blocked_unit(state, x)  # the ReLU must block something, whatever the draw

    def run(impl):
        return _module(impl, d_model, d_ff, state)(x)

    expect_reference(run, student, what=f"PositionwiseFeedForward({d_model}, {d_ff})(x[1, 1, {d_model}])")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_non_contiguous_input(student, rng):
    """PositionwiseFeedForward gives the same result on a non-contiguous input

    ko: 연속(contiguous)이 아닌 입력에서도 PositionwiseFeedForward가 같은 결과를 냅니다
    """
    batch, length, d_model, d_ff = inputs.distinct(rng, 4, 2, 16)
    state = weights.ffn_state(rng, d_model, d_ff)
    x = inputs.randn(rng, batch, length, d_model)

    def run(impl):
        return inputs.noncontiguous(impl, _module(impl, d_model, d_ff, state), x)

    expect_reference(run, student, what=say(f"PositionwiseFeedForward({d_model}, {d_ff}) on a non-contiguous x",
                                            f"연속(contiguous)이 아닌 x에 대한 PositionwiseFeedForward({d_model}, {d_ff})"))
