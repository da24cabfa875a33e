"""Public tests of exercise 4, ``attention.py``: softmax(Q K^T / sqrt(d_k)) V with masks and dropout.

Each test's hidden twin draws other sizes, tensors and masks of the same kind through the
``example`` fixture."""

import pytest
import torch

from autograder.checks import formulas, inputs, mistaken
from autograder.checks import expect_consistent, expect_equal, say

pytestmark = pytest.mark.exercise("attention")



def _qkv3(example):
    """3-D q, k, v: [2, 3, 4], [2, 5, 4], [2, 5, 6] in the public tests (S_q != S_k, d_v != d_k)."""
    batch, q_len, d_k, d_v = example.sizes((2, 3, 4, 6), 2, 10)
    k_len, = example.sizes((5,), 3, 10, exclude=(q_len, d_k, d_v))   # >= 3: a query blocked in part keeps two keys
    gen = example.rng(4)
    return (torch.randn(batch, q_len, d_k, generator=gen), torch.randn(batch, k_len, d_k, generator=gen),
            torch.randn(batch, k_len, d_v, generator=gen))


def _shape(t: torch.Tensor) -> str:
    return str(list(t.shape))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_matches_the_formula_3d(student, example):
    """3-D inputs: (softmax(Q K^T / sqrt(d_k)) V, weights) with d_v != d_k and S_q != S_k

    ko: 3차원 입력: d_v != d_k, S_q != S_k에서 (softmax(Q K^T / sqrt(d_k)) V, 가중치)
    """
    q, k, v = _qkv3(example)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v)

    expect_equal(run, student, formulas.attention(q, k, v),
                 what=f"scaled_dot_product_attention(q{_shape(q)}, k{_shape(k)}, v{_shape(v)})",
                 known_mistakes=mistaken.attention(q, k, v))


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_matches_the_formula_4d_with_mask(student, example):
    """4-D inputs [B, H, S, d] with a broadcast boolean mask (True = blocked get weight 0)

    ko: 브로드캐스트되는 불리언 마스크(True = 가려져 가중치 0)가 있는 4차원 입력 [B, H, S, d]
    """
    batch, heads = example.sizes((2, 2), 2, 4)
    q_len, d_k, k_len, d_v = example.sizes((3, 4, 5, 3), 3, 10)
    gen = example.rng(5)
    q, k, v = torch.randn(batch, heads, q_len, d_k, generator=gen), torch.randn(batch, heads, k_len, d_k, generator=gen), \
        torch.randn(batch, heads, k_len, d_v, generator=gen)
    mask = example.pick(torch.tensor([[False, True, False, False, True], [False, False, False, True, True]])[:, None, None, :]
                        | torch.tensor([[False, False, True, False, False]] * 3),
                        lambda rng: inputs.attention_mask(rng, batch, q_len, k_len))

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_equal(run, student, formulas.attention(q, k, v, mask),
                 what=f"scaled_dot_product_attention(q{_shape(q)}, k{_shape(k)}, v{_shape(v)}, mask{_shape(mask)})",
                 known_mistakes=mistaken.attention(q, k, v, mask))


@pytest.mark.integration
@pytest.mark.kind("values")
@pytest.mark.part("integration")
@pytest.mark.points(1)
def test_with_your_own_masks(student, example):
    """integration: with your own masks.py, 4-D attention with a padding mask and a fully blocked row gives the formula's numbers
    ko: 통합: 여러분의 masks.py로 패딩 마스크와 전부 가려진 행이 있는 4차원 어텐션이 공식과 같은 값을 냅니다"""
    gen = example.rng(6)
    q, k, v = torch.randn(2, 2, 3, 4, generator=gen), torch.randn(2, 2, 5, 4, generator=gen), \
        torch.randn(2, 2, 5, 3, generator=gen)
    mask = torch.tensor([[False, False, True, False, True], [True, True, True, True, True]])[:, None, None, :]

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_equal(run, student, formulas.attention(q, k, v, mask),
                 what="scaled_dot_product_attention(q[2, 2, 3, 4], k[2, 2, 5, 4], v[2, 2, 5, 3], mask[2, 1, 1, 5])")


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_permutation_equivariance(student, example):
    """permuting keys and values together changes nothing; permuting queries permutes the output rows

    ko: key와 value를 같이 섞으면 결과가 그대로이고, query를 섞으면 출력 행이 같은 순서로 섞입니다
    """
    q, k, v = _qkv3(example)
    perm_q = example.pick(torch.tensor([2, 0, 1]), lambda rng: torch.randperm(q.shape[1], generator=rng))
    perm_k = example.pick(torch.tensor([3, 0, 4, 1, 2]), lambda rng: torch.randperm(k.shape[1], generator=rng))

    def run(impl):
        sdpa = impl.attention.scaled_dot_product_attention
        out, _ = sdpa(q, k, v)
        permuted, _ = sdpa(q[:, perm_q], k[:, perm_k], v[:, perm_k])
        return out, permuted

    expect_consistent(run, student, lambda got: (got[0], got[0][:, perm_q]),
                      what=say("(output, output with permuted q and k, v)",
                                "(출력, q와 k, v의 순서를 바꾼 출력)"))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_fully_masked_query_gives_zeros(student, example):
    """a query whose keys are all blocked gets zero weights and a zero output, never NaN

    ko: 모든 key가 가려진 query는 NaN이 아니라 0 가중치와 0 출력을 받습니다
    """
    q, k, v = (t[:1] for t in _qkv3(example))
    q_len, k_len = q.shape[1], k.shape[1]

    def draw(rng):   # one query fully blocked, every other one with two open keys or more
        mask = inputs.attention_mask(rng, 1, q_len, k_len)[0]
        mask[0, int(torch.randint(0, q_len, (1,), generator=rng))] = True
        return mask

    mask = example.pick(torch.tensor([[False, True, False, True, False], [True] * 5, [False] * 5])[None], draw)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_equal(run, student, formulas.attention(q, k, v, mask),
                 what=say(f"scaled_dot_product_attention(q{_shape(q)}, ..., mask with a query fully blocked)",
                          f"scaled_dot_product_attention(q{_shape(q)}, ..., 쿼리 하나가 모두 가려진 mask)"),
                 known_mistakes=mistaken.attention(q, k, v, mask))


@pytest.mark.kind("property")
@pytest.mark.points(1)
def test_dropout_zeroes_and_rescales_the_weights(student, example):
    """with dropout_p=0.5 each of your weights is 0 or doubled (against your own weights without
    dropout), and the output is the returned weights times V

    ko: dropout_p=0.5이면 각 가중치는 (dropout 없는 여러분의 가중치에 비해) 0 이거나 2배가 되고, 출력은 반환한 가중치와 V의 곱입니다
    """
    batch, q_len, d_k, k_len, d_v = example.sizes((2, 6, 4, 7, 3), 2, 10)
    gen = example.rng(6)
    q, k, v = torch.randn(batch, q_len, d_k, generator=gen), torch.randn(batch, k_len, d_k, generator=gen), \
        torch.randn(batch, k_len, d_v, generator=gen)
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
