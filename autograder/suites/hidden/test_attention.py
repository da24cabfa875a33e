"""Hidden tests of exercise 4, ``attention.py``: random shapes, masks, edge cases, the reference."""

import pytest
import torch

from autograder.checks import formulas, inputs, say
from autograder.checks import expect_equal, expect_raises, expect_reference

pytestmark = pytest.mark.exercise("attention")


def _qkv(rng, *lead, q_len, k_len, d_k, d_v, dtype=torch.float32):
    return (inputs.randn(rng, *lead, q_len, d_k, dtype=dtype), inputs.randn(rng, *lead, k_len, d_k, dtype=dtype),
            inputs.randn(rng, *lead, k_len, d_v, dtype=dtype))


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_random_4d_with_padding_and_fully_blocked_rows(student, rng):
    """random [B, H, S, d] (all sizes different) with a padding + random mask and a fully blocked batch row

    ko: 크기가 모두 다른 임의의 [B, H, S, d], 패딩 + 임의 마스크, 완전히 가려진 배치 행
    """
    batch, heads, q_len, k_len, d_k, d_v = inputs.distinct(rng, 6, 2, 10)
    q, k, v = _qkv(rng, batch, heads, q_len=q_len, k_len=k_len, d_k=d_k, d_v=d_v)
    mask = inputs.attention_mask(rng, batch, q_len, k_len, fully_masked=(batch - 1,), p=0.2)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_reference(run, student, what=f"scaled_dot_product_attention(q[{batch}, {heads}, {q_len}, {d_k}], "
                                        f"k[..., {k_len}, {d_k}], v[..., {k_len}, {d_v}], mask)")


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_float64_with_a_2d_causal_mask(student, rng):
    """float64 3-D inputs with a [S_q, S_k] causal-style mask broadcast over the batch

    ko: 배치 전체에 브로드캐스트되는 [S_q, S_k] 인과 형태 마스크와 float64 3차원 입력
    """
    batch, q_len, d_k, d_v = inputs.distinct(rng, 4, 2, 9)
    k_len = q_len + 1
    if k_len == d_k:  # keep S_k apart from d_k, so that scaling by the wrong one shows
        d_k = inputs.distinct(rng, 1, 2, 10, exclude=(batch, q_len, k_len, d_v))[0]
    q, k, v = _qkv(rng, batch, q_len=q_len, k_len=k_len, d_k=d_k, d_v=d_v, dtype=torch.float64)
    mask = torch.ones(q_len, k_len, dtype=torch.bool).triu(2)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v, mask=mask)

    expect_reference(run, student, what=say(f"scaled_dot_product_attention(float64 q[{batch}, {q_len}, {d_k}], "
                                        f"k[.., {k_len}, ..], v, causal-style mask[{q_len}, {k_len}])",
                                            f"scaled_dot_product_attention(float64 q[{batch}, {q_len}, {d_k}], k[.., {k_len}, ..], v, 인과 마스크 형태의 mask[{q_len}, {k_len}])"))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_one_query_one_key(student, rng):
    """batch 1 with one query and one key: the weight is 1 and the output is the value

    ko: 배치 1, query 1개, key 1개: 가중치는 1, 출력은 value 그대로입니다
    """
    d_k, d_v = inputs.distinct(rng, 2, 2, 9)
    q, k, v = _qkv(rng, 1, q_len=1, k_len=1, d_k=d_k, d_v=d_v)

    def run(impl):
        return impl.attention.scaled_dot_product_attention(q, k, v)

    expect_equal(run, student, formulas.attention(q, k, v), what=f"scaled_dot_product_attention(q[1, 1, {d_k}], "
                                                                 f"k[1, 1, {d_k}], v[1, 1, {d_v}])")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_non_contiguous_inputs(student, rng):
    """scaled_dot_product_attention gives the same result on non-contiguous query, key and value

    ko: 연속(contiguous)이 아닌 query, key, value 에서도 scaled_dot_product_attention이 같은 결과를 냅니다
    """
    batch, q_len, k_len, d_k, d_v = inputs.distinct(rng, 5, 3, 10)  # S_k >= 3: a key is padded (a mask
    q, k, v = _qkv(rng, batch, q_len=q_len, k_len=k_len, d_k=d_k, d_v=d_v)  # ignored passed with S_k = 2)
    mask = inputs.random_padding_mask(rng, batch, k_len)[:, None, :]

    def run(impl):
        return inputs.noncontiguous(impl, impl.attention.scaled_dot_product_attention, q, k, v, mask=mask)

    expect_reference(run, student, what=say("scaled_dot_product_attention on non-contiguous q, k, v",
                                            "연속(contiguous)이 아닌 q, k, v에 대한 scaled_dot_product_attention"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_dropout_raises_value_error(student, rng):
    """dropout_p outside [0, 1] raises ValueError (as F.dropout itself does)

    ko: [0, 1] 밖의 dropout_p는 (F.dropout처럼) ValueError를 냅니다
    """
    q, k, v = _qkv(rng, 1, q_len=2, k_len=3, d_k=4, d_v=5)
    sdpa = student.attention.scaled_dot_product_attention
    # the contract is silent here, so what PyTorch does is right: F.dropout's own ValueError counts
    expect_raises(lambda: sdpa(q, k, v, dropout_p=1.5), what="scaled_dot_product_attention(..., dropout_p=1.5)")
