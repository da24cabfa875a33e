"""Hidden tests of exercise 3, ``masks.py``: random shapes, fully blocked rows, float64, the reference."""

import pytest

from autograder.checks import inputs, say
from autograder.checks import expect_reference

pytestmark = pytest.mark.exercise("masks")


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_masked_softmax_4d_with_fully_blocked_rows(student, rng):
    """[B, H, S_q, S_k] scores with a combined padding + causal-style mask and fully blocked rows, float32 and float64

    ko: 패딩 + 인과 형태의 마스크와 완전히 가려진 행이 있는 [B, H, S_q, S_k] 점수, float32와 float64
    """
    batch, heads, q_len, k_len = inputs.distinct(rng, 4, 2, 9)
    scores = inputs.randn(rng, batch, heads, q_len, k_len, scale=3.0)
    mask = inputs.attention_mask(rng, batch, q_len, k_len, fully_masked=(batch - 1,), p=0.3)
    scores64 = scores.double()

    def run(impl):
        softmax = impl.masks.masked_softmax
        return softmax(scores, mask), softmax(scores64, mask)

    expect_reference(run, student,
                     what=say(f"masked_softmax(scores[{batch}, {heads}, {q_len}, {k_len}], mask) in float32 and float64",
                              f"masked_softmax(scores[{batch}, {heads}, {q_len}, {k_len}], mask) (float32와 float64)"))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_masked_softmax_other_dim(student, rng):
    """dim=0 normalises over the first axis (blocked positions of that axis get 0)

    ko: dim=0이면 첫 번째 축으로 정규화합니다 (그 축의 가려진 위치는 0)
    """
    a, b, c = inputs.distinct(rng, 3, 2, 8)
    scores = inputs.randn(rng, a, b, c)
    mask = inputs.random_mask(rng, a, 1, c)
    # by construction, for every seed (a random mask blocked nothing under seed 4, and fully blocked a
    # column under seed 5): column 0 blocks one entry and leaves the others open, column c-1 blocks all
    mask[:, :, 0] = False
    mask[0, :, 0] = True
    mask[:, :, c - 1] = True

    def run(impl):
        return impl.masks.masked_softmax(scores, mask, dim=0)

    expect_reference(run, student, what=f"masked_softmax(scores[{a}, {b}, {c}], mask[{a}, 1, {c}], dim=0)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_combine_masks_random_shapes(student, rng):
    """combine_masks on random B, S_q, S_k (all different), in the four cases

    ko: 서로 다른 임의의 B, S_q, S_k에서 combine_masks의 네 가지 경우
    """
    # B >= 2 too: with B = 1 a padding mask ORed in without its new axes broadcasts right
    batch, q_len, k_len = inputs.distinct(rng, 3, 3, 10)
    attn = inputs.random_mask(rng, q_len, k_len)
    kpm = inputs.random_padding_mask(rng, batch, k_len)
    # by construction (under seed 8 a draw with S_k = 1 let a query-axis mask and AND pass): S_k >= 3,
    # S_q != S_k, and key 0 blocked by attn_mask (query 0) but open in every padding row, so OR != AND
    attn[0, 0] = True
    kpm[:, 0] = False

    def singles(impl):
        combine = impl.masks.combine_masks
        return combine(attn, None), combine(None, kpm), combine(None, None)

    def both(impl):
        return impl.masks.combine_masks(attn, kpm)

    expect_reference(singles, student,
                     what=say(f"combine_masks with one of attn_mask[{q_len}, {k_len}], key_padding_mask[{batch}, "
                          f"{k_len}]",
                              f"attn_mask[{q_len}, {k_len}], key_padding_mask[{batch}, {k_len}] 중 하나만 준 combine_masks"))
    expect_reference(both, student,
                     what=f"combine_masks(attn_mask[{q_len}, {k_len}], key_padding_mask[{batch}, {k_len}])")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_padding_and_causal_random_sizes(student, rng):
    """padding masks with a random pad_id, and causal masks of random size, size 1 and size 0

    ko: 임의의 pad_id로 만든 패딩 마스크와 임의 크기·크기 1·크기 0의 인과 마스크
    """
    batch, length, size = inputs.distinct(rng, 3, 2, 12)
    pad_id = inputs.integer(rng, 1, 5)
    ids = inputs.token_ids(rng, 6, batch, length)
    ids[0, -1] = pad_id

    def run(impl):
        masks = impl.masks
        return (masks.make_padding_mask(ids, pad_id=pad_id), masks.make_causal_mask(size),
                masks.make_causal_mask(1), masks.make_causal_mask(0))

    expect_reference(run, student, what=f"make_padding_mask(ids[{batch}, {length}], pad_id={pad_id}), "
                                        f"make_causal_mask({size}), make_causal_mask(1), make_causal_mask(0)")


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_masked_softmax_non_contiguous_scores(student, rng):
    """non-contiguous scores give the same weights

    ko: 연속(contiguous)이 아닌 점수에서도 같은 가중치가 나옵니다
    """
    batch, q_len, k_len = inputs.distinct(rng, 3, 3, 10)  # S_k >= 3: a key is padded (seeds 14, 16 drew 2)
    scores = inputs.randn(rng, batch, q_len, k_len)
    mask = inputs.random_padding_mask(rng, batch, k_len)[:, None, :]

    def run(impl):
        return inputs.noncontiguous(impl, impl.masks.masked_softmax, scores, mask)

    expect_reference(run, student, what=say(f"masked_softmax(non-contiguous scores[{batch}, {q_len}, {k_len}], mask)",
                                            f"masked_softmax(연속이 아닌 scores[{batch}, {q_len}, {k_len}], mask)"))
