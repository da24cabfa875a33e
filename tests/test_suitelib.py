"""The suites' shared helpers (autograder/suitelib) against the reference solutions and PyTorch."""

import math

import pytest
import torch

from autograder.child import tasks
from autograder.suitelib import draw, formulas, weights


def test_distinct_draws_different_values_in_range():
    rng = torch.Generator().manual_seed(0)
    values = draw.distinct(rng, 5, 2, 9, exclude=(4,))
    assert len(set(values)) == 5 and all(2 <= v <= 9 and v != 4 for v in values)
    evens = draw.distinct(rng, 3, 2, 7, even=True)
    assert sorted(evens) == [2, 4, 6]
    with pytest.raises(ValueError, match="candidates"):
        draw.distinct(rng, 4, 1, 3)


def test_padding_mask_pads_the_end_and_fully_masks_requested_rows():
    rng = torch.Generator().manual_seed(1)
    mask = draw.padding_mask(rng, 4, 6, fully_masked=(3,))
    assert mask.dtype == torch.bool and mask.shape == (4, 6)
    assert bool(mask[3].all())
    assert not bool(mask[:3, 0].any())  # at least one valid key in the other rows
    for row in mask[:3]:  # right padding: once padded, padded to the end
        first = int(row.int().argmax()) if row.any() else 6
        assert bool(row[first:].all()) and not bool(row[:first].any())


def test_formulas_agree_with_the_reference(ref):
    gen = torch.Generator().manual_seed(2)
    assert torch.allclose(formulas.sinusoidal_table(60, 10), ref.positional_encoding.sinusoidal_table(60, 10),
                          atol=1e-6)
    scores = torch.randn(2, 3, 5, generator=gen)
    mask = torch.rand(2, 3, 5, generator=gen) < 0.4
    mask[0, 1] = True
    assert torch.allclose(formulas.masked_softmax(scores, mask), ref.masks.masked_softmax(scores, mask), atol=1e-6)
    q, k, v = torch.randn(2, 3, 4, generator=gen), torch.randn(2, 5, 4, generator=gen), torch.randn(2, 5, 6, generator=gen)
    for got, want in zip(formulas.attention(q, k, v, mask[..., :5]),
                         ref.attention.scaled_dot_product_attention(q, k, v, mask=mask[..., :5])):
        assert torch.allclose(got, want, atol=1e-6)
    x = torch.randn(2, 3, 7, 8, generator=gen)
    assert torch.allclose(formulas.apply_rope(x), ref.rope.apply_rope(x), atol=1e-6)
    assert torch.allclose(formulas.apply_rope(x, torch.arange(7) + 5), ref.rope.apply_rope(x, torch.arange(7) + 5),
                          atol=1e-5)
    for got, want in zip(formulas.rope_angles(8, 9), ref.rope.rope_angles(8, 9)):
        assert torch.allclose(got, want, atol=1e-7)


def test_has_visible_key_marks_rows_with_a_visible_key():
    mask = torch.tensor([[False, True], [True, True]])
    assert formulas.has_visible_key(mask, (3, 2, 2)).tolist() == [[[True], [False]]] * 3


def test_torch_mha_oracle_matches_the_reference(ref):
    gen = torch.Generator().manual_seed(3)
    state = weights.mha_state(gen, 12)
    assert state["q_proj.weight"].shape == (12, 12) and state["out_proj.bias"].shape == (12,)
    x = torch.randn(2, 5, 12, generator=gen)
    kpm = torch.tensor([[False] * 4 + [True], [False] * 5])
    m = ref.multi_head_attention.MultiHeadAttention(12, 3)
    m.load_state_dict(state)
    m.eval()
    got = m(x, x, x, key_padding_mask=kpm)
    want = weights.torch_mha_forward(state, 12, 3, x, x, x, key_padding_mask=kpm)
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-5)


def test_linear_state_scale_follows_fan_in():
    state = weights.linear_state(torch.Generator().manual_seed(4), "lin", 400, 300)
    assert set(state) == {"lin.weight", "lin.bias"}
    assert abs(float(state["lin.weight"].std()) - 1 / math.sqrt(400)) < 0.005


def test_call_noncontiguous_hands_over_strided_views_with_the_same_values():
    x = torch.randn(3, 4)
    seen = tasks.run("call_noncontiguous", lambda t, s: (t.is_contiguous(), t.clone(), s), x, s=torch.ones(1))
    assert seen[0] is False and torch.equal(seen[1], x) and torch.equal(seen[2], torch.ones(1))
