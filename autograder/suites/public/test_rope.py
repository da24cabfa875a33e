"""Public tests of exercise 10 (bonus), ``rope.py``: RoFormer rotations of interleaved pairs."""

import pytest
import torch

from autograder.checks import formulas, mistaken
from autograder.checks import expect_consistent, expect_differs, expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("rope")

X = torch.randn(2, 3, 6, 8, generator=torch.Generator().manual_seed(13))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_angles_match_the_formula(student):
    """rope_angles(8, 10) = (cos, sin) of pos * 10000^(-2i/8), each [10, 4]

    ko: rope_angles(8, 10)은 pos * 10000^(-2i/8)의 (cos, sin)이고 각각 [10, 4]입니다
    """
    def run(impl):
        return impl.rope.rope_angles(8, 10)

    expect_equal(run, student, formulas.rope_angles(8, 10), what="rope_angles(8, 10)",
                 known_mistakes=mistaken.rope_angles(8, 10))


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_rotation_matches_the_formula(student):
    """each pair (x[2i], x[2i+1]) at position pos turns counter-clockwise by pos * 10000^(-2i/head_dim)

    ko: 위치 pos의 각 쌍 (x[2i], x[2i+1])이 pos * 10000^(-2i/head_dim)만큼 반시계 방향으로 회전합니다
    """
    def run(impl):
        return impl.rope.apply_rope(X)

    expect_equal(run, student, formulas.apply_rope(X), what="apply_rope(x[2, 3, 6, 8])",
                 known_mistakes=mistaken.rope(X))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_norms_kept_and_scores_relative(student):
    """rotation keeps every vector's norm, and q·k depends only on the distance of their positions

    ko: 회전은 벡터의 길이를 바꾸지 않고, q·k는 두 위치의 차이에만 의존합니다
    """
    q, k = X[:1, :1, :1], X[:1, :1, 1:2]

    def run(impl):
        rope = impl.rope.apply_rope
        far_q, far_k = rope(q, torch.tensor([7])), rope(k, torch.tensor([3]))
        near_q, near_k = rope(q, torch.tensor([4])), rope(k, torch.tensor([0]))
        return far_q.norm(dim=-1), (far_q * far_k).sum(), (near_q * near_k).sum()

    expect_consistent(run, student, lambda got: (q.norm(dim=-1), got[2], got[2]),
                      what=say("(norm after rotation, q at 7 · k at 3, q at 4 · k at 0)",
                               "(회전 뒤의 노름, 위치 7의 q · 위치 3의 k, 위치 4의 q · 위치 0의 k)"), atol=1e-4)

    def rotated(impl):  # the premise: the rotation changes q·k (code that rotates nothing is trivially relative)
        rope = impl.rope.apply_rope
        return (q * k).sum(), (rope(q, torch.tensor([4])) * rope(k, torch.tensor([0]))).sum()

    expect_differs(rotated, student, what=say("q·k before and after rotating q to position 4 (k at 0)",
                                             "q를 위치 4로 회전하기 전과 후의 q·k (k는 위치 0)"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.25)
def test_odd_head_dim_raises_value_error(student):
    """an odd head_dim raises ValueError naming head_dim

    ko: 홀수 head_dim은 head_dim을 밝힌 ValueError를 냅니다
    """
    rope = student.rope
    expect_raises(lambda: rope.apply_rope(torch.zeros(1, 1, 3, 5)), what="apply_rope(x[1, 1, 3, 5])",
                  names=("head_dim", "x"), values=(5,))
    expect_raises(lambda: rope.rope_angles(5, 4), what="rope_angles(5, 4)", names=("head_dim",), values=(5,))
