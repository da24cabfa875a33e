"""Public tests of exercise 4, ``attention.py``: softmax(Q K^T / sqrt(d_k)) V with masks and dropout."""

import pytest
import torch

from autograder.checks import formulas, mistaken
from autograder.checks import expect_consistent, expect_equal, say

pytestmark = pytest.mark.exercise("attention")

GEN = torch.Generator().manual_seed(4)
Q3, K3, V3 = torch.randn(2, 3, 4, generator=GEN), torch.randn(2, 5, 4, generator=GEN), torch.randn(2, 5, 6, generator=GEN)


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_matches_the_formula_3d(student):
    """3-D inputs: (softmax(Q K^T / sqrt(d_k)) V, weights) with d_v != d_k and S_q != S_k

    ko: 3차원 입력: d_v != d_k, S_q != S_k에서 (softmax(Q K^T / sqrt(d_k)) V, 가중치)
    """
    def run(impl):
        return impl.attention.scaled_dot_product_attention(Q3, K3, V3)

    expect_equal(run, student, formulas.attention(Q3, K3, V3),
                 what="scaled_dot_product_attention(q[2, 3, 4], k[2, 5, 4], "
                      "v[2, 5, 6])", known_mistakes=mistaken.attention(Q3, K3, V3))


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_matches_the_formula_4d_with_mask(student):
    """4-D inputs [B, H, S, d] with a broadcast boolean mask (True = blocked get weight 0)

    ko: 브로드캐스트되는 불리언 마스크(True = 가려져 가중치 0)가 있는 4차원 입력 [B, H, S, d]
    """
    gen = torch.Generator().manual_seed(5)
    q, k, v = torch.randn(2, 2, 3, 4, generator=gen), torch.randn(2, 2, 5, 4, generator=gen), \
        torch.randn(2, 2, 5, 3, generator=gen)
    mask = torch.tensor([[False, True, False, False, True], [False, False, False, True, True]])[:, None, None, :] | \
        torch.tensor([[False, False, True, False, False]] * 3)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_equal(run, student, formulas.attention(q, k, v, mask),
                 what="scaled_dot_product_attention(q[2, 2, 3, 4], k[2, 2, 5, 4], v[2, 2, 5, 3], mask[2, 1, 3, 5])",
                 known_mistakes=mistaken.attention(q, k, v, mask))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_permutation_equivariance(student):
    """permuting keys and values together changes nothing; permuting queries permutes the output rows

    ko: key와 value를 같이 섞으면 결과가 그대로이고, query를 섞으면 출력 행이 같은 순서로 섞입니다
    """
    perm_q, perm_k = torch.tensor([2, 0, 1]), torch.tensor([3, 0, 4, 1, 2])

    def run(impl):
        sdpa = impl.attention.scaled_dot_product_attention
        out, _ = sdpa(Q3, K3, V3)
        permuted, _ = sdpa(Q3[:, perm_q], K3[:, perm_k], V3[:, perm_k])
        return out, permuted

    expect_consistent(run, student, lambda got: (got[0], got[0][:, perm_q]),
                      what=say("(output, output with permuted q and k, v)",
                                "(출력, q와 k, v의 순서를 바꾼 출력)"))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_fully_masked_query_gives_zeros(student):
    """a query whose keys are all blocked gets zero weights and a zero output, never NaN

    ko: 모든 key가 가려진 query는 NaN이 아니라 0 가중치와 0 출력을 받습니다
    """
    mask = torch.tensor([[False, True, False, True, False], [True] * 5, [False] * 5])[None]

    def run(impl):
        return impl.attention.scaled_dot_product_attention(Q3[:1], K3[:1], V3[:1], mask=mask)

    expect_equal(run, student, formulas.attention(Q3[:1], K3[:1], V3[:1], mask),
                 what=say("scaled_dot_product_attention(q[1, 3, 4], ..., mask with query 1 fully blocked)",
                          "scaled_dot_product_attention(q[1, 3, 4], ..., 쿼리 1이 모두 가려진 mask)"),
                 known_mistakes=mistaken.attention(Q3[:1], K3[:1], V3[:1], mask))


@pytest.mark.kind("property")
@pytest.mark.points(1)
def test_dropout_zeroes_and_rescales_the_weights(student):
    """with dropout_p=0.5 each of your weights is 0 or doubled (against your own weights without
    dropout), and the output is the returned weights times V

    ko: dropout_p=0.5이면 각 가중치는 (dropout 없는 여러분의 가중치에 비해) 0 이거나 2배가 되고, 출력은 반환한 가중치와 V의 곱입니다
    """
    gen = torch.Generator().manual_seed(6)
    q, k, v = torch.randn(2, 6, 4, generator=gen), torch.randn(2, 7, 4, generator=gen), torch.randn(2, 7, 3, generator=gen)
    _, formula = formulas.attention(q, k, v)

    def run(impl):
        sdpa = impl.attention.scaled_dot_product_attention
        return sdpa(q, k, v, dropout_p=0.5), sdpa(q, k, v)

    def weights_of(got):
        return got[1] if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], torch.Tensor) else formula

    def expected(got):   # only dropout is checked here: the weights themselves are the formula tests' job
        dropped, plain = weights_of(got[0]), weights_of(got[1])
        return (dropped @ v, torch.where(dropped == 0, torch.zeros_like(plain), plain * 2)), got[1]

    expect_consistent(run, student, expected, what=say("(output, weights) with dropout_p=0.5",
                                                       "dropout_p=0.5 일 때 (출력, 가중치)"))
