"""Hidden tests of exercise 5, ``multi_head_attention.py``: random sizes, edge cases, the reference."""

import pytest
import torch

from autograder.checks import inputs, weights, say
from autograder.checks import expect_raises, expect_reference

pytestmark = pytest.mark.exercise("multi_head_attention")


def _sizes(rng, count=3):
    """(heads, head_dim, *others): all different, heads >= 2."""
    heads, head_dim, *rest = inputs.distinct(rng, count + 2, 2, 7)
    return heads, head_dim, rest


def _module(impl, d_model, heads, state, *, bias=True, dtype=None):
    return weights.loaded(impl.multi_head_attention.MultiHeadAttention(d_model, heads, bias=bias), state, dtype=dtype)


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_random_cross_attention_with_a_fully_padded_row(student, rng):
    """random B, S_q, S_k, H, head_dim (all different), padding with one fully padded batch row, both weight forms

    ko: 모두 다른 임의의 B, S_q, S_k, H, head_dim, 한 배치 행이 전부 패딩, 두 가지 가중치 형태
    """
    heads, head_dim, (batch, q_len, k_len) = _sizes(rng)
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model)
    x, memory = inputs.randn(rng, batch, q_len, d_model), inputs.randn(rng, batch, k_len, d_model)
    kpm = inputs.random_padding_mask(rng, batch, k_len, fully_masked=(batch - 1,))

    def run(impl):
        m = _module(impl, d_model, heads, state)
        return m(x, memory, memory, key_padding_mask=kpm), m(x, memory, memory, key_padding_mask=kpm,
                                                             average_attn_weights=False)[1]

    expect_reference(run, student, what=f"MultiHeadAttention({d_model}, {heads})(x[{batch}, {q_len}, {d_model}], "
                                        f"memory[{batch}, {k_len}, {d_model}], ..., key_padding_mask)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_float64(student, rng):
    """float64 weights and inputs give float64 outputs equal to the reference

    ko: float64 가중치와 입력에서 정답과 같은 float64 출력이 나옵니다
    """
    heads, head_dim, (batch, length) = _sizes(rng, 2)
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model, dtype=torch.float64)
    x = inputs.randn(rng, batch, length, d_model, dtype=torch.float64)
    causal = torch.ones(length, length, dtype=torch.bool).triu(1)

    def run(impl):
        return _module(impl, d_model, heads, state, dtype=torch.float64)(x, x, x, attn_mask=causal)

    expect_reference(run, student, what=say(f"MultiHeadAttention({d_model}, {heads}).double()(x float64, causal attn_mask)",
                                            f"MultiHeadAttention({d_model}, {heads}).double()(float64 x, 인과 attn_mask)"))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_one_token(student, rng):
    """batch 1 with one query and one key

    ko: 배치 1, query 1개, key 1개
    """
    heads, head_dim, _ = _sizes(rng, 0)
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model)
    x = inputs.randn(rng, 1, 1, d_model)

    def run(impl):
        return _module(impl, d_model, heads, state)(x, x, x)

    expect_reference(run, student, what=f"MultiHeadAttention({d_model}, {heads})(x[1, 1, {d_model}], x, x)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_without_bias(student, rng):
    """bias=False: the four projections have no bias and the numbers still match

    ko: bias=False: 네 투영에 bias가 없고 결과가 여전히 같습니다
    """
    heads, head_dim, (batch, length) = _sizes(rng, 2)
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model, bias=False)
    x = inputs.randn(rng, batch, length, d_model)

    def run(impl):
        return _module(impl, d_model, heads, state, bias=False)(x, x, x)

    expect_reference(run, student, what=f"MultiHeadAttention({d_model}, {heads}, bias=False)(x, x, x)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_non_contiguous_inputs(student, rng):
    """MultiHeadAttention gives the same result on non-contiguous query, key and value

    ko: 연속(contiguous)이 아닌 query, key, value 에서도 MultiHeadAttention이 같은 결과를 냅니다
    """
    heads, head_dim, (batch, q_len, k_len) = _sizes(rng)
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model)
    x, memory = inputs.randn(rng, batch, q_len, d_model), inputs.randn(rng, batch, k_len, d_model)

    def run(impl):
        return inputs.noncontiguous(impl, _module(impl, d_model, heads, state), x, memory, memory)

    expect_reference(run, student, what=say(f"MultiHeadAttention({d_model}, {heads}) on non-contiguous inputs",
                                            f"연속(contiguous)이 아닌 입력에 대한 MultiHeadAttention({d_model}, {heads})"))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_both_masks_and_no_weights(student, rng):
    """attn_mask and key_padding_mask together; need_weights=False returns (output, None)

    ko: attn_mask와 key_padding_mask를 함께 쓰고, need_weights=False이면 (출력, None)을 반환합니다
    """
    heads, head_dim, (batch,) = _sizes(rng, 1)
    length, = inputs.distinct(rng, 1, 3, 8, exclude=(heads, head_dim, batch))  # >= 3: a key is padded
    d_model = heads * head_dim
    state = weights.mha_state(rng, d_model)
    x = inputs.randn(rng, batch, length, d_model)
    kpm = inputs.random_padding_mask(rng, batch, length)
    causal = torch.ones(length, length, dtype=torch.bool).triu(1)

    def run(impl):
        return _module(impl, d_model, heads, state)(x, x, x, key_padding_mask=kpm, attn_mask=causal,
                                                    need_weights=False)

    # the rows of padded queries are the public convention test's (exercises/README.md 5)
    expect_reference(run, student, what=f"MultiHeadAttention({d_model}, {heads})(x, x, x, key_padding_mask, attn_mask, "
                                        f"need_weights=False)", valid=(inputs.valid_positions(kpm), None))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_attn_mask_raises_value_error(student, rng):
    """an attn_mask whose shape is not [S_q, S_k] raises ValueError naming attn_mask

    ko: 모양이 [S_q, S_k]가 아닌 attn_mask는 attn_mask를 밝힌 ValueError를 냅니다
    """
    heads, head_dim, (batch, length) = _sizes(rng, 2)
    d_model = heads * head_dim
    x = inputs.randn(rng, batch, length, d_model)
    m = student.multi_head_attention.MultiHeadAttention(d_model, heads)
    bad = torch.zeros(length + 1, length, dtype=torch.bool)
    expect_raises(lambda: m(x, x, x, attn_mask=bad), what=f"MultiHeadAttention(...)(x[{batch}, {length}, "
                                                          f"{d_model}], attn_mask[{length + 1}, {length}])",
                  names=("attn_mask", "mask", "S_q", "S_k"), values=(length + 1, length))
