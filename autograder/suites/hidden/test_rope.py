"""Hidden tests of exercise 10 (bonus), ``rope.py``: random shapes, positions, float64, the reference."""

import pytest
import torch

from autograder.checks import expect_differs, expect_reference, inputs, say, tolerance

pytestmark = pytest.mark.exercise("rope")

# head_dim of every test: at least two rotated pairs. With head_dim = 2 there is one pair at
# frequency 1, so the rotate-half layout and every exponent mistake rotate exactly as the formula
# does, and a draw of 2 made the grade move with the seed.
MIN_WIDTH = 4
# The value tests reach every frequency of common widths (head_dim up to 64, angle tables up to 128)
# and positions into the thousands: code right only for the first pairs or the first positions fails.
MAX_WIDTH, MAX_POSITION = 64, 2000


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_random_shapes_with_positions(student, rng):
    """random [B, H, S, head_dim] (all different) rotated by given positions (an offset, as in decoding)

    ko: 모두 다른 임의의 [B, H, S, head_dim]을 주어진 위치(디코딩처럼 오프셋)만큼 회전
    """
    batch, heads, length = inputs.distinct(rng, 3, 2, 7)
    head_dim, = inputs.distinct(rng, 1, MIN_WIDTH, MAX_WIDTH, even=True, exclude=(batch, heads, length))
    x = inputs.randn(rng, batch, heads, length, head_dim)
    positions = torch.arange(length) + inputs.integer(rng, 1, MAX_POSITION)

    def run(impl):
        return impl.rope.apply_rope(x, positions)

    expect_reference(run, student,
                     what=f"apply_rope(x[{batch}, {heads}, {length}, {head_dim}], positions={positions.tolist()})",
                     atol=tolerance.position_atol(int(positions.max())))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_float64_and_non_contiguous(student, rng):
    """float64 input keeps its dtype; a non-contiguous input gives the same result

    ko: float64 입력은 dtype을 유지하고, 연속이 아닌 입력에서도 같은 결과가 나옵니다
    """
    batch, heads, length = inputs.distinct(rng, 3, 2, 7)
    head_dim, = inputs.distinct(rng, 1, MIN_WIDTH, MAX_WIDTH, even=True, exclude=(batch, heads, length))
    x = inputs.randn(rng, batch, heads, length, head_dim)

    positions = torch.arange(length) + inputs.integer(rng, 0, MAX_POSITION)

    def run(impl):
        rope = impl.rope.apply_rope
        return rope(x.double(), positions), inputs.noncontiguous(impl, rope, x, positions)

    expect_reference(run, student,
                     what=say(f"apply_rope on float64 and non-contiguous x[{batch}, {heads}, {length}, {head_dim}], "
                              f"positions={positions.tolist()}",
                              f"float64이고 연속이 아닌 x[{batch}, {heads}, {length}, {head_dim}]에 대한 apply_rope, "
                              f"positions={positions.tolist()}"), atol=tolerance.position_atol(int(positions.max())))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_one_position_and_random_angles(student, rng):
    """length 1 (position 0 is not rotated), and rope_angles of a random size

    ko: 길이 1 (위치 0은 회전하지 않음), 그리고 임의 크기의 rope_angles
    """
    head_dim, = inputs.distinct(rng, 1, MIN_WIDTH, 2 * MAX_WIDTH, even=True)
    max_len = inputs.integer(rng, 1, MAX_POSITION)
    x = inputs.randn(rng, 1, 1, 1, head_dim)

    def run(impl):
        return impl.rope.apply_rope(x), impl.rope.rope_angles(head_dim, max_len)

    expect_reference(run, student, what=say(f"apply_rope(x[1, 1, 1, {head_dim}]) and rope_angles({head_dim}, {max_len})",
                                            f"apply_rope(x[1, 1, 1, {head_dim}])와 rope_angles({head_dim}, {max_len})"),
                     atol=tolerance.position_atol(max_len))

    def moved(impl):  # the premise: code that rotates nothing leaves position 0 alone vacuously
        return x, impl.rope.apply_rope(x, torch.tensor([1]))

    expect_differs(moved, student, what=say(f"x[1, 1, 1, {head_dim}] and apply_rope(x, positions=[1])",
                                              f"x[1, 1, 1, {head_dim}]와 apply_rope(x, positions=[1])"))
