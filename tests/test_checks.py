"""The suite-author API (:mod:`autograder.checks`: expectations, formulas, inputs, oracles,
weights) against the reference solutions and PyTorch."""

import ast
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torch import nn

import autograder.checks
from autograder.checks import expectations
from autograder.checks import formulas, inputs, oracles, weights
from autograder.child import tasks
from autograder.sandbox.errors import SubmissionError


def test_distinct_draws_different_values_in_range():
    rng = torch.Generator().manual_seed(0)
    values = inputs.distinct(rng, 5, 2, 9, exclude=(4,))
    assert len(set(values)) == 5 and all(2 <= v <= 9 and v != 4 for v in values)
    evens = inputs.distinct(rng, 3, 2, 7, even=True)
    assert sorted(evens) == [2, 4, 6]
    with pytest.raises(ValueError, match="candidates"):
        inputs.distinct(rng, 4, 1, 3)


def test_padding_mask_pads_the_end_and_fully_masks_requested_rows():
    rng = torch.Generator().manual_seed(1)
    mask = inputs.random_padding_mask(rng, 4, 6, fully_masked=(3,))
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
    want = oracles.mha_forward(state, 12, 3, x, x, x, key_padding_mask=kpm)
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


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 3, 5, 4), (1, 3, 4)])
def test_call_noncontiguous_keeps_the_last_axis_dense(shape):
    """The contract's promise (exercises/README.md, Contiguity): non-contiguous inputs, last axis of
    stride 1, so ``view_as_complex`` on a reshape (an LLM's RoPE) works while ``x.view(-1)`` does not."""
    x = torch.randn(*shape)

    def look(t):
        return t.is_contiguous(), t.stride()[-1], t.clone(), torch.view_as_real(
            torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2))).flatten(-2)

    contiguous, last_stride, values, through_complex = tasks.run("call_noncontiguous", look, x)
    assert contiguous is False and last_stride == 1
    assert torch.equal(values, x) and torch.equal(through_complex, x)
    with pytest.raises(RuntimeError):
        tasks.run("call_noncontiguous", lambda t: t.view(-1), x)


def _cloned_stack(kind, num_layers, d_model, heads, d_ff, norm_first, rng):
    """The stack as PyTorch's own constructor builds it (one layer deep-copied ``num_layers`` times)."""
    layer = oracles.torch_layer(kind, d_model, heads, d_ff, norm_first=norm_first, rng=rng)
    norm = nn.LayerNorm(d_model) if norm_first else None
    if kind == "encoder":
        stack = nn.TransformerEncoder(layer, num_layers, norm=norm, enable_nested_tensor=False)
    else:
        stack = nn.TransformerDecoder(layer, num_layers, norm=norm)
    return oracles.randomize_(stack, rng).eval()


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_torch_stack_draws_what_the_cloning_constructor_drew(kind, norm_first):
    """No deep copies, same oracle: same weights, same next draws of the test's generator and of
    the global RNG, same outputs as a stack built by PyTorch's cloning constructor."""
    rngs = [torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)]
    torch.manual_seed(7)
    old = _cloned_stack(kind, 3, 12, 3, 20, norm_first, rngs[0])
    old_global = torch.rand(3)
    torch.manual_seed(7)
    new = oracles.torch_stack(kind, 3, 12, 3, 20, norm_first=norm_first, rng=rngs[1])
    assert torch.equal(torch.rand(3), old_global)
    assert torch.equal(torch.rand(4, generator=rngs[0]), torch.rand(4, generator=rngs[1]))
    assert type(new) is type(old) and len(new.layers) == 3 and not new.training
    assert new.state_dict().keys() == old.state_dict().keys()
    assert all(torch.equal(new.state_dict()[k], v) for k, v in old.state_dict().items())
    assert len({id(layer) for layer in new.layers}) == 3
    x = torch.randn(2, 5, 12, generator=rngs[0])
    args = (x,) if kind == "encoder" else (x, x[:, :4])
    assert torch.equal(oracles.run(new, *args), oracles.run(old, *args))


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_kit_state_makes_the_reference_stack_give_pytorchs_numbers(ref, kind):
    rng = torch.Generator().manual_seed(6)
    stack = oracles.torch_stack(kind, 2, 12, 3, 20, norm_first=True, rng=rng)
    x, memory = torch.randn(2, 5, 12, generator=rng), torch.randn(2, 4, 12, generator=rng)
    kpm = inputs.padding_mask([5, 3], 5)
    if kind == "encoder":
        mine = ref.encoder.Encoder(2, 12, 3, 20, norm_first=True)
        want, args = oracles.run(stack, x, src_key_padding_mask=kpm), (x,)
    else:
        mine = ref.decoder.Decoder(2, 12, 3, 20, norm_first=True)
        want, args = oracles.run(stack, x, memory, tgt_key_padding_mask=kpm), (x, memory)
    weights.load(mine, weights.kit_state(stack))
    mine.eval()
    got = mine(*args, key_padding_mask=kpm) if kind == "encoder" else mine(*args, tgt_key_padding_mask=kpm)
    assert torch.allclose(got[~kpm], want[~kpm], atol=1e-5)
    with pytest.raises(TypeError, match="Linear"):
        weights.kit_state(nn.Linear(2, 2))
    kept = mine.norm.weight.detach().clone()   # a state that names less: the module keeps the rest
    weights.load(mine, {k: v.flip(0) for k, v in weights.kit_state(stack).items() if k != "norm.weight"})
    assert torch.equal(mine.norm.weight, kept)


def test_expect_consistent_compares_the_output_with_a_function_of_it():
    """``expect_consistent(run, student, rule)``: the student's output must equal ``rule(output)``;
    a mismatch is named (here from ``known_mistakes``: no catalog search outside a grading run).
    ``expect_equal`` takes values only."""
    pair = (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
    assert expectations.expect_consistent(lambda impl: impl, pair, lambda got: (got[0], got[0]), what="pair") is pair
    bad = (torch.tensor([1.0, 2.0]), torch.tensor([2.0, 1.0]))
    with pytest.raises(expectations.Mismatch) as caught:
        expectations.expect_consistent(lambda impl: impl, bad, lambda got: (got[0], got[0]), what="pair",
                                       known_mistakes={"pe_sin_cos_swapped": lambda: bad,
                                                       "pe_halves_concatenated": lambda: pair})
    assert caught.value.mistake.id == "pe_sin_cos_swapped"
    assert expectations.expect_equal(lambda impl: impl, pair, pair, what="pair") is pair
    with pytest.raises(TypeError, match="expect_consistent"):
        expectations.expect_equal(lambda impl: impl, pair, lambda got: got, what="pair")


def test_expect_property_and_expect_same_name_the_mistake_once():
    assert expectations.expect_same(lambda impl: (impl, impl), torch.ones(2), what="twice")[0].sum() == 2
    with pytest.raises(expectations.Mismatch, match="second call"):
        expectations.expect_same(lambda impl: (impl, impl + 1), torch.ones(2), what="second call")

    def verify(got):
        raise expectations.Mismatch("never right")

    with pytest.raises(expectations.Mismatch, match="never right") as caught:
        expectations.expect_property(lambda impl: impl, torch.ones(2), verify)
    assert caught.value.mistake is None
    with pytest.raises(KeyError):    # other errors pass through unchanged
        with expectations.naming_mistakes(lambda impl: impl, 1, known_mistakes={"x": lambda: 1}):
            raise KeyError("x")


SUITES = Path(autograder.checks.__file__).resolve().parents[1] / "suites"


def test_the_package_exports_the_api_and_stays_cheap_to_import():
    """Every name of ``autograder.checks.__all__`` resolves; the lazy ones are the names its
    ``TYPE_CHECKING`` block imports (what release.py and readers see); importing the package
    alone imports no torch."""
    for name in autograder.checks.__all__:
        assert getattr(autograder.checks, name) is not None
    assert set(autograder.checks.__all__) == set(autograder.checks._LAZY) | {"_", "say"}
    assert autograder.checks.expect_reference is expectations.expect_reference
    assert autograder.checks.Mismatch is expectations.Mismatch
    with pytest.raises(AttributeError):
        autograder.checks.check
    tree = ast.parse(Path(autograder.checks.__file__).read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    assert {(node.module, a.name) for node in guarded.body for a in node.names} == \
        {(module, name) for name, module in autograder.checks._LAZY.items()}
    code = "import sys, autograder.checks; from autograder.checks import _, say; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("path", sorted(SUITES.glob("*/test_*.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_suites_import_the_kit_only_from_autograder_checks(path):
    """One import root for suite authors: ``from autograder.checks import ...``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    roots |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {r for r in roots if r.split(".")[0] == "autograder"} <= {"autograder.checks"}


def test_loaded_loads_converts_and_switches_to_eval(ref):
    gen = torch.Generator().manual_seed(9)
    state = weights.ffn_state(gen, 6, 10)
    m = weights.loaded(ref.feed_forward.PositionwiseFeedForward(6, 10, dropout=0.5), state, "FFN", dtype=torch.float64)
    assert not m.training and m.linear1.weight.dtype == torch.float64
    assert torch.equal(m.linear1.weight, state["linear1.weight"].double())
    strict = weights.loaded(ref.feed_forward.PositionwiseFeedForward(6, 10), state)
    assert torch.equal(strict.linear2.bias, state["linear2.bias"]) and not strict.training
    less = weights.loaded(ref.feed_forward.PositionwiseFeedForward(6, 10), {k: v for k, v in state.items()
                                                                           if k != "linear2.bias"}, "FFN")
    assert torch.equal(less.linear2.weight, state["linear2.weight"])   # its own bias kept
    with pytest.raises(SubmissionError, match="nothing for the exercise's extra") as raised:   # strict: a key it lacks
        weights.loaded(ref.feed_forward.PositionwiseFeedForward(6, 10), {**state, "extra": torch.zeros(1)})
    assert raised.value.kind == "names"
