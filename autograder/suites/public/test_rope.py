"""Public tests of exercise 10 (bonus), ``rope.py``: RoFormer rotations of interleaved pairs.

Each test's hidden twin draws other sizes (head_dim up to 64, so every frequency of common widths
counts), positions and values through the ``example`` fixture."""

import pytest
import torch

from autograder.checks import formulas, inputs, mistaken, tolerance
from autograder.checks import expect_consistent, expect_differs, expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("rope")



def _x(example):
    """x ``[2, 3, 6, 16]`` in the public tests (head_dim 16: a quarter of the head is two pairs, so
    partial rotary in the rotate-half layout differs from interleaved partial rotary); in the twin
    ``[B, H, S, head_dim]``, head_dim up to 64 and S from 65 to 160 (positions past the first few dozen count)."""
    batch, heads = example.sizes((2, 3), 1, 3)
    length, = example.sizes((6,), 65, 160)
    head_dim, = example.sizes((16,), 4, 64, even=True)
    return torch.randn(batch, heads, length, head_dim, generator=example.rng(13))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_angles_match_the_formula(student, example):
    """rope_angles(8, 10) = (cos, sin) of pos * 10000^(-2i/8), each [10, 4]

    ko: rope_angles(8, 10)은 pos * 10000^(-2i/8)의 (cos, sin)이고 각각 [10, 4]입니다
    """
    head_dim, = example.sizes((8,), 4, 128, even=True)
    max_len, = example.sizes((10,), 2, 2048)

    def run(impl):
        return impl.rope.rope_angles(head_dim, max_len)

    expect_equal(run, student, formulas.rope_angles(head_dim, max_len), what=f"rope_angles({head_dim}, {max_len})",
                 atol=tolerance.position_atol(max_len), known_mistakes=mistaken.rope_angles(head_dim, max_len))


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_rotation_matches_the_formula(student, example):
    """each pair (x[2i], x[2i+1]) at position pos turns counter-clockwise by pos * 10000^(-2i/head_dim)

    ko: 위치 pos의 각 쌍 (x[2i], x[2i+1])이 pos * 10000^(-2i/head_dim)만큼 반시계 방향으로 회전합니다
    """
    x = _x(example)

    def run(impl):
        return impl.rope.apply_rope(x)

    expect_equal(run, student, formulas.apply_rope(x), what=f"apply_rope(x{list(x.shape)})",
                 atol=tolerance.position_atol(x.shape[-2]), known_mistakes=mistaken.rope(x))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_norms_kept_and_scores_relative(student, example):
    """rotation keeps every vector's norm, and q·k depends only on the distance of their positions

    ko: 회전은 벡터의 길이를 바꾸지 않고, q·k는 두 위치의 차이에만 의존합니다
    """
    x = _x(example)
    q, k = x[:1, :1, :1], x[:1, :1, 1:2]
    far, near, distance = example.pick((7, 4, 4), lambda rng: (inputs.integer(rng, 40, 200), inputs.integer(rng, 1, 39),
                                                               inputs.integer(rng, 1, 39)))
    distance = min(distance, near)

    def run(impl):
        rope = impl.rope.apply_rope
        far_q, far_k = rope(q, torch.tensor([far])), rope(k, torch.tensor([far - distance]))
        near_q, near_k = rope(q, torch.tensor([near])), rope(k, torch.tensor([near - distance]))
        return far_q.norm(dim=-1), (far_q * far_k).sum(), (near_q * near_k).sum()

    expect_consistent(run, student, lambda got: (q.norm(dim=-1), got[2], got[2]),
                      what=say(f"(norm after rotation, q at {far} · k at {far - distance}, q at {near} · k at {near - distance})",
                               f"(회전 뒤의 노름, 위치 {far}의 q · 위치 {far - distance}의 k, 위치 {near}의 q · 위치 "
                               f"{near - distance}의 k)"), atol=tolerance.position_atol(far))

    def rotated(impl):  # the premise: the rotation changes q·k (code that rotates nothing is trivially relative)
        rope = impl.rope.apply_rope
        return (q * k).sum(), (rope(q, torch.tensor([near])) * rope(k, torch.tensor([near - distance]))).sum()

    expect_differs(rotated, student, what=say(f"q·k before and after rotating q to position {near} (k at {near - distance})",
                                              f"q를 위치 {near}로 회전하기 전과 후의 q·k (k는 위치 {near - distance})"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.25)
def test_odd_head_dim_raises_value_error(student, example):
    """an odd head_dim raises ValueError naming head_dim

    ko: 홀수 head_dim은 head_dim을 밝힌 ValueError를 냅니다
    """
    rope = student.rope
    head_dim, = example.sizes((5,), 3, 33, exclude=range(0, 34, 2))
    length, max_len = example.sizes((3, 4), 2, 12)
    expect_raises(lambda: rope.apply_rope(torch.zeros(1, 1, length, head_dim)),
                  what=f"apply_rope(x[1, 1, {length}, {head_dim}])", names=("head_dim", "x"), values=(head_dim,))
    expect_raises(lambda: rope.rope_angles(head_dim, max_len), what=f"rope_angles({head_dim}, {max_len})",
                  names=("head_dim",), values=(head_dim,))
