"""Public tests of exercise 3, ``masks.py``: padding and causal masks, masked softmax, combining.

Each test's hidden twin draws other sizes, ids, scores and masks of the same kind through the
``example`` fixture."""

import pytest
import torch

from autograder.checks import formulas, inputs, mistaken
from autograder.checks import expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("masks")

IDS = torch.tensor([[5, 3, 0, 0], [0, 7, 1, 3]])


def _some_open(rng, mask: torch.Tensor) -> torch.Tensor:
    """``mask`` with one random key reopened in each of its rows (``[..., S_k]``) that blocks all."""
    mask = mask.clone()
    rows = mask.reshape(-1, mask.shape[-1])
    for row in rows:
        if bool(row.all()):
            row[int(torch.randint(0, row.numel(), (1,), generator=rng))] = False
    return rows.reshape(mask.shape)


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_padding_mask_is_true_at_padding(student, example):
    """make_padding_mask is True exactly where token_ids == pad_id (pad_id 0, then 3)

    ko: make_padding_mask는 token_ids == pad_id 인 곳에서만 True입니다 (pad_id 0, 그다음 3)
    """
    pad_id, = example.sizes((3,), 1, 9)

    def draw(rng):
        ids = torch.randint(0, 10, (inputs.integer(rng, 2, 5), inputs.integer(rng, 3, 12)), generator=rng)
        ids[0, -1], ids[-1, 0] = 0, pad_id
        return ids

    ids = example.pick(IDS, draw)

    def run(impl):
        masks = impl.masks
        return masks.make_padding_mask(ids), masks.make_padding_mask(ids, pad_id=pad_id)

    expect_equal(run, student, (ids == 0, ids == pad_id),
                 what=say(f"make_padding_mask(token_ids) and (..., pad_id={pad_id})",
                          f"make_padding_mask(token_ids)와 (..., pad_id={pad_id})"),
                 known_mistakes=mistaken.joined(mistaken.padding_mask(ids, 0), mistaken.padding_mask(ids, pad_id)))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_causal_mask_blocks_the_future_only(student, example):
    """make_causal_mask(5) is True strictly above the diagonal (a bool tensor); size 1 blocks nothing

    ko: make_causal_mask(5)는 대각선 바로 위부터 True 인 bool 텐서이고, 크기 1은 아무것도 가리지 않습니다
    """
    size, = example.sizes((5,), 2, 64)

    def run(impl):
        masks = impl.masks
        return masks.make_causal_mask(size), masks.make_causal_mask(1)

    expected = (torch.ones(size, size, dtype=torch.bool).triu(1), torch.zeros(1, 1, dtype=torch.bool))
    expect_equal(run, student, expected, what=say(f"make_causal_mask({size}) and make_causal_mask(1)",
                                                  f"make_causal_mask({size})와 make_causal_mask(1)"),
                 known_mistakes=mistaken.joined(mistaken.causal_mask(size), mistaken.causal_mask(1)))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_masked_softmax_tutorial_example(student, example):
    """scores [[2.0, 1.0, 0.5, 3.0]] with the last key blocked give [[0.6285, 0.2312, 0.1402, 0.0000]]

    ko: 점수 [[2.0, 1.0, 0.5, 3.0]]에서 마지막 key를 가리면 [[0.6285, 0.2312, 0.1402, 0.0000]]입니다
    """
    keys, = example.sizes((4,), 3, 12)
    scores = example.pick(torch.tensor([[2.0, 1.0, 0.5, 3.0]]), lambda rng: torch.randn(1, keys, generator=rng) * 2)
    mask = example.pick(torch.tensor([[False, False, False, True]]),
                        lambda rng: _some_open(rng, inputs.random_mask(rng, 1, keys, p=0.4)))

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    what = f"masked_softmax({scores.tolist()}, {mask.tolist()})" if not example.twin else "masked_softmax(scores, mask)"
    expect_equal(run, student, formulas.masked_softmax(scores, mask), what=what,
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_masked_softmax_broadcasts_the_mask(student, example):
    """a [B, 1, S_k] mask broadcast over [B, S_q, S_k] scores: blocked weights are 0, each row sums to 1

    ko: [B, 1, S_k] 마스크가 [B, S_q, S_k] 점수로 브로드캐스트됩니다: 가려진 가중치는 0, 각 행의 합은 1
    """
    batch, q_len, k_len = example.sizes((2, 3, 5), 2, 12)
    scores = torch.randn(batch, q_len, k_len, generator=example.rng(3))
    mask = example.pick(torch.tensor([[[False, False, True, False, True]], [[True, False, False, False, False]]]),
                        lambda rng: _some_open(rng, inputs.random_mask(rng, batch, 1, k_len, p=0.4)))

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    expect_equal(run, student, formulas.masked_softmax(scores, mask),
                 what=f"masked_softmax(scores[{batch}, {q_len}, {k_len}], mask[{batch}, 1, {k_len}])",
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_fully_masked_row_gives_zeros(student, example):
    """a row whose keys are all blocked gives all-zero weights, never NaN

    ko: 모든 key가 가려진 행은 NaN이 아니라 모두 0인 가중치를 줍니다
    """
    rows, keys = example.sizes((3, 4), 3, 10)
    scores = example.pick(torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.3, 0.1, -0.2, 0.7]]),
                          lambda rng: torch.randn(rows, keys, generator=rng) * 2)

    def draw(rng):
        mask = _some_open(rng, inputs.random_mask(rng, rows, keys, p=0.4))
        mask[int(torch.randint(0, rows, (1,), generator=rng))] = True
        return mask

    mask = example.pick(torch.tensor([[False, True, False, False], [True, True, True, True],
                                      [False, False, False, False]]), draw)

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    expect_equal(run, student, formulas.masked_softmax(scores, mask),
                 what=say(f"masked_softmax(scores[{rows}, {keys}], mask with row 1 fully blocked)",
                          f"masked_softmax(scores[{rows}, {keys}], 행 1이 모두 가려진 mask)"),
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_combine_masks_shapes_and_values(student, example):
    """combine_masks gives [1, 1, S_q, S_k], [B, 1, 1, S_k], None, and [B, 1, S_q, S_k] blocking where either blocks

    ko: combine_masks는 [1, 1, S_q, S_k], [B, 1, 1, S_k], None, 그리고 둘 중 하나라도 가리면 True 인 [B, 1, S_q, S_k]를 줍니다
    """
    batch, q_len, k_len = example.sizes((2, 3, 4), 2, 10)

    def draw_attn(rng):   # key 0 blocked for query 0 and open in every padding row: OR differs from AND
        attn = inputs.random_mask(rng, q_len, k_len)
        attn[0, 0] = True
        return attn

    attn = example.pick(torch.ones(3, 4, dtype=torch.bool).triu(2), draw_attn)
    kpm = example.pick(torch.tensor([[False, False, False, True], [False, True, True, True]]),
                       lambda rng: inputs.random_padding_mask(rng, batch, k_len, min_valid=1))

    def singles(impl):
        combine = impl.masks.combine_masks
        return combine(attn, None), combine(None, kpm), combine(None, None)

    def both(impl):
        return impl.masks.combine_masks(attn, kpm)

    expect_equal(singles, student, (attn[None, None], kpm[:, None, None], None),
                 what=f"(combine_masks(attn_mask[{q_len}, {k_len}], None), combine_masks(None, key_padding_mask[{batch}, "
                      f"{k_len}]), combine_masks(None, None))")
    expect_equal(both, student, attn[None, None] | kpm[:, None, None],
                 what=f"combine_masks(attn_mask[{q_len}, {k_len}], key_padding_mask[{batch}, {k_len}])")


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_masks_raise_value_error(student, example):
    """a mask that does not broadcast and masks that disagree on S_k raise ValueError

    ko: 브로드캐스트되지 않는 마스크와 S_k가 다른 두 마스크는 ValueError를 냅니다
    """
    masks = student.masks
    rows, keys, wrong = example.sizes((2, 4, 3), 2, 9)
    expect_raises(lambda: masks.masked_softmax(torch.zeros(rows, keys), torch.zeros(wrong, dtype=torch.bool)),
                  what=f"masked_softmax(scores[{rows}, {keys}], mask[{wrong}])",
                  names=("mask", "scores"), values=(wrong, keys))
    q_len, k_len, other = example.sizes((3, 4, 5), 2, 9)
    expect_raises(lambda: masks.combine_masks(torch.zeros(q_len, k_len, dtype=torch.bool),
                                              torch.zeros(rows, other, dtype=torch.bool)),
                  what=f"combine_masks(attn_mask[{q_len}, {k_len}], key_padding_mask[{rows}, {other}])",
                  names=("S_k", "attn_mask", "key_padding_mask", "mask"), values=(k_len, other))
