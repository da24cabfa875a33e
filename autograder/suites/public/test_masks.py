"""Public tests of exercise 3, ``masks.py``: padding and causal masks, masked softmax, combining."""

import pytest
import torch

from autograder.checks import formulas, mistaken
from autograder.checks import expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("masks")

IDS = torch.tensor([[5, 3, 0, 0], [0, 7, 1, 3]])


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_padding_mask_is_true_at_padding(student):
    """make_padding_mask is True exactly where token_ids == pad_id (pad_id 0, then 3)

    ko: make_padding_mask는 token_ids == pad_id 인 곳에서만 True입니다 (pad_id 0, 그다음 3)
    """
    def run(impl):
        masks = impl.masks
        return masks.make_padding_mask(IDS), masks.make_padding_mask(IDS, pad_id=3)

    expect_equal(run, student, (IDS == 0, IDS == 3), what=say("make_padding_mask(token_ids) and (..., pad_id=3)",
                                                       "make_padding_mask(token_ids)와 (..., pad_id=3)"),
                 known_mistakes=mistaken.joined(mistaken.padding_mask(IDS, 0), mistaken.padding_mask(IDS, 3)))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_causal_mask_blocks_the_future_only(student):
    """make_causal_mask(5) is True strictly above the diagonal (a bool tensor); size 1 blocks nothing

    ko: make_causal_mask(5)는 대각선 바로 위부터 True 인 bool 텐서이고, 크기 1은 아무것도 가리지 않습니다
    """
    def run(impl):
        masks = impl.masks
        return masks.make_causal_mask(5), masks.make_causal_mask(1)

    expected = (torch.ones(5, 5, dtype=torch.bool).triu(1), torch.zeros(1, 1, dtype=torch.bool))
    expect_equal(run, student, expected, what=say("make_causal_mask(5) and make_causal_mask(1)",
                                             "make_causal_mask(5)와 make_causal_mask(1)"),
                 known_mistakes=mistaken.joined(mistaken.causal_mask(5), mistaken.causal_mask(1)))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_masked_softmax_tutorial_example(student):
    """scores [[2.0, 1.0, 0.5, 3.0]] with the last key blocked give [[0.6285, 0.2312, 0.1402, 0.0000]]

    ko: 점수 [[2.0, 1.0, 0.5, 3.0]]에서 마지막 key를 가리면 [[0.6285, 0.2312, 0.1402, 0.0000]]입니다
    """
    scores = torch.tensor([[2.0, 1.0, 0.5, 3.0]])
    mask = torch.tensor([[False, False, False, True]])

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    expect_equal(run, student, torch.tensor([[0.6285, 0.2312, 0.1402, 0.0000]]),
                 what="masked_softmax([[2.0, 1.0, 0.5, 3.0]], [[False, False, False, True]])", atol=1e-4,
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_masked_softmax_broadcasts_the_mask(student):
    """a [B, 1, S_k] mask broadcast over [B, S_q, S_k] scores: blocked weights are 0, each row sums to 1

    ko: [B, 1, S_k] 마스크가 [B, S_q, S_k] 점수로 브로드캐스트됩니다: 가려진 가중치는 0, 각 행의 합은 1
    """
    scores = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(3))
    mask = torch.tensor([[[False, False, True, False, True]], [[True, False, False, False, False]]])

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    expect_equal(run, student, formulas.masked_softmax(scores, mask),
                 what="masked_softmax(scores[2, 3, 5], mask[2, 1, 5])",
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_fully_masked_row_gives_zeros(student):
    """a row whose keys are all blocked gives all-zero weights, never NaN

    ko: 모든 key가 가려진 행은 NaN이 아니라 모두 0인 가중치를 줍니다
    """
    scores = torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.3, 0.1, -0.2, 0.7]])
    mask = torch.tensor([[False, True, False, False], [True, True, True, True], [False, False, False, False]])

    def run(impl):
        return impl.masks.masked_softmax(scores, mask)

    expect_equal(run, student, formulas.masked_softmax(scores, mask),
                 what=say("masked_softmax(scores[3, 4], mask with row 1 fully blocked)",
                          "masked_softmax(scores[3, 4], 행 1이 모두 가려진 mask)"),
                 known_mistakes=mistaken.masked_softmax(scores, mask))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_combine_masks_shapes_and_values(student):
    """combine_masks gives [1, 1, S_q, S_k], [B, 1, 1, S_k], None, and [B, 1, S_q, S_k] blocking where either blocks

    ko: combine_masks는 [1, 1, S_q, S_k], [B, 1, 1, S_k], None, 그리고 둘 중 하나라도 가리면 True 인 [B, 1, S_q, S_k]를 줍니다
    """
    attn = torch.ones(3, 4, dtype=torch.bool).triu(2)
    kpm = torch.tensor([[False, False, False, True], [False, True, True, True]])

    def singles(impl):
        combine = impl.masks.combine_masks
        return combine(attn, None), combine(None, kpm), combine(None, None)

    def both(impl):
        return impl.masks.combine_masks(attn, kpm)

    expect_equal(singles, student, (attn[None, None], kpm[:, None, None], None),
                 what="(combine_masks(attn_mask[3, 4], None), combine_masks(None, key_padding_mask[2, 4]), "
                      "combine_masks(None, None))")
    expect_equal(both, student, attn[None, None] | kpm[:, None, None],
                 what="combine_masks(attn_mask[3, 4], key_padding_mask[2, 4])")


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_masks_raise_value_error(student):
    """a mask that does not broadcast and masks that disagree on S_k raise ValueError

    ko: 브로드캐스트되지 않는 마스크와 S_k가 다른 두 마스크는 ValueError를 냅니다
    """
    masks = student.masks
    expect_raises(lambda: masks.masked_softmax(torch.zeros(2, 4), torch.zeros(3, dtype=torch.bool)),
                  what="masked_softmax(scores[2, 4], mask[3])",
                  names=("mask", "scores"), values=(3, 4))
    expect_raises(lambda: masks.combine_masks(torch.zeros(3, 4, dtype=torch.bool), torch.zeros(2, 5, dtype=torch.bool)),
                  what="combine_masks(attn_mask[3, 4], key_padding_mask[2, 5])",
                  names=("S_k", "attn_mask", "key_padding_mask", "mask"), values=(4, 5))
