"""Public tests of exercise 7 (encoder.py): EncoderLayer and Encoder.

Oracles: PyTorch's nn.TransformerEncoderLayer / nn.TransformerEncoder (batch first, ReLU) with
the same randomised weights, run through PyTorch's slow path; properties: padding invariance and
eval determinism. Small sizes: B=3, S=6, d_model=16, 4 heads, d_ff=24 (in each test's hidden twin,
other sizes through the ``example`` fixture, and other values through the twin's seed).
"""

import pytest
import torch

from autograder.checks import inputs, mistaken, oracles, weights
from autograder.checks import compare, expect_equal, expect_same, say

pytestmark = pytest.mark.exercise("encoder")

LENGTHS = [6, 4, 1]


class _Dims:
    """The sizes of a test: B=3, S=6, d_model=16, 4 heads, d_ff=24 and the row lengths above in
    the public tests; other sizes and lengths (a row of one token among them) in their twins."""

    def __init__(self, example):
        self.B, self.S = example.sizes((3, 6), 2, 8)
        self.H, head_dim = example.sizes((4, 4), 2, 5)
        self.D = self.H * head_dim
        self.FF, = example.sizes((24,), 6, 32)
        self.lengths = example.pick(LENGTHS, lambda rng: inputs.lengths(rng, self.B, self.S, low=1).tolist())

    def inputs(self, seed):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(self.B, self.S, self.D, generator=gen)
        return gen, x, inputs.padding_mask(self.lengths, self.S)

    def encoder(self, impl, dropout=0.0, norm_first=False):
        return impl.encoder.Encoder(2, self.D, self.H, self.FF, dropout=dropout, norm_first=norm_first)


def _layer_run(dims, state, x, kpm, norm_first, dropout=0.0):
    def run(impl):
        m = weights.loaded(impl.encoder.EncoderLayer(dims.D, dims.H, dims.FF, dropout=dropout, norm_first=norm_first),
                           state, "EncoderLayer")
        return m(x, key_padding_mask=kpm)
    return run


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_layer_matches_pytorch(student, seed, example, norm_first):
    """EncoderLayer gives nn.TransformerEncoderLayer's numbers (same weights, padding mask)
    ko: EncoderLayer가 같은 가중치의 nn.TransformerEncoderLayer와 같은 값을 냅니다 (패딩 마스크 포함)"""
    dims = _Dims(example)
    gen, x, kpm = dims.inputs(seed)
    oracle = oracles.case("encoder", dims.D, dims.H, dims.FF, (x,), dict(src_key_padding_mask=kpm),
                          norm_first=norm_first, rng=gen)
    expect_equal(_layer_run(dims, oracle.state, x, kpm, norm_first), student, oracle.expected,
                 what=f"EncoderLayer({dims.D}, {dims.H}, {dims.FF}, norm_first={norm_first})(x, key_padding_mask)",
                 valid=inputs.valid_positions(kpm),
                 known_mistakes=mistaken.flipped_norm("encoder", oracle.module, norm_first, x,
                                                      src_key_padding_mask=kpm))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_stack_matches_pytorch(student, seed, example, norm_first):
    """Encoder (2 layers, final LayerNorm only for Pre-LN) gives nn.TransformerEncoder's numbers
    ko: Encoder (2층, Pre-LN 일 때만 마지막 LayerNorm)가 nn.TransformerEncoder와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, kpm = dims.inputs(seed)
    oracle = oracles.case("encoder", dims.D, dims.H, dims.FF, (x,), dict(src_key_padding_mask=kpm),
                          norm_first=norm_first, rng=gen, num_layers=2)
    expected, state = oracle.expected, oracle.state

    def run(impl):
        m = weights.loaded(dims.encoder(impl, norm_first=norm_first), state, "Encoder")
        return m(x, key_padding_mask=kpm)

    expect_equal(run, student, expected,
                 what=f"Encoder(2, {dims.D}, {dims.H}, {dims.FF}, norm_first={norm_first})(x, key_padding_mask)",
                 valid=inputs.valid_positions(kpm),
                 known_mistakes=mistaken.flipped_norm("encoder", oracle.module, norm_first, x,
                                                      src_key_padding_mask=kpm))
    if not norm_first:
        norm = dims.encoder(student).norm
        compare(norm, None, what="Encoder(..., norm_first=False).norm")


@pytest.mark.integration
@pytest.mark.kind("values")
@pytest.mark.part("integration")
@pytest.mark.points(1)
def test_with_your_own_components(student, seed, example):
    """integration: with your own multi_head_attention.py, feed_forward.py, attention.py and masks.py, Encoder (2 layers) gives nn.TransformerEncoder's numbers
    ko: 통합: 여러분의 multi_head_attention.py, feed_forward.py, attention.py, masks.py로 Encoder (2층)가 nn.TransformerEncoder와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, kpm = dims.inputs(seed)
    oracle = oracles.case("encoder", dims.D, dims.H, dims.FF, (x,), dict(src_key_padding_mask=kpm), norm_first=False,
                          rng=gen, num_layers=2)

    def run(impl):
        m = weights.loaded(dims.encoder(impl), oracle.state, "Encoder")
        return m(x, key_padding_mask=kpm)

    expect_equal(run, student, oracle.expected, what=f"Encoder(2, {dims.D}, {dims.H}, {dims.FF})(x, key_padding_mask)",
                 valid=inputs.valid_positions(kpm))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_swapping_two_examples_swaps_their_outputs(student, seed, example):
    """Encoder: swapping two examples of the batch swaps their outputs and changes nothing else
    ko: Encoder: 배치의 두 예제를 바꾸면 두 출력만 서로 바뀌고 나머지는 그대로입니다"""
    dims = _Dims(example)
    _, x, kpm = dims.inputs(seed)
    order = inputs.swap_first_two(dims.B)

    def run(impl):
        m = dims.encoder(impl)
        m.eval()
        return m(x[order], key_padding_mask=kpm[order]), m(x, key_padding_mask=kpm)[order]

    expect_same(run, student, what=say("Encoder output on the batch with examples 0 and 1 swapped, against "
                                       "the swapped outputs", "예제 0과 1을 바꾼 배치의 Encoder 출력(바뀐 출력과 비교)"), valid=inputs.valid_positions(kpm[order]))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_padding_invariance(student, seed, example):
    """Changing the padded positions of x leaves the outputs at valid positions unchanged
    ko: x의 패딩 위치 값을 바꿔도 유효한 위치의 출력은 그대로입니다"""
    dims = _Dims(example)
    gen, x, kpm = dims.inputs(seed)
    x2 = inputs.replace_where(x, kpm, gen)

    def run(impl):
        m = dims.encoder(impl)
        m.eval()
        return m(x, key_padding_mask=kpm), m(x2, key_padding_mask=kpm)

    expect_same(run, student, what=say("Encoder output after changing padded positions", "패딩 위치를 바꾼 뒤의 Encoder 출력"),
                valid=inputs.valid_positions(kpm))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
def test_eval_is_deterministic(student, seed, example):
    """With dropout=0.5, eval() makes EncoderLayer deterministic and equal to PyTorch's eval output
    ko: dropout=0.5 라도 eval() 에서는 EncoderLayer가 결정적이며 PyTorch의 eval 출력과 같습니다"""
    dims = _Dims(example)
    gen, x, _ = dims.inputs(seed)
    oracle = oracles.case("encoder", dims.D, dims.H, dims.FF, (x,), norm_first=False, rng=gen, dropout=0.5)
    expected, state = oracle.expected, oracle.state

    def run(impl):
        m = weights.loaded(impl.encoder.EncoderLayer(dims.D, dims.H, dims.FF, dropout=0.5), state, "EncoderLayer")
        return m(x), m(x)

    expect_equal(run, student, (expected, expected), what=say("EncoderLayer(dropout=0.5).eval()(x), called twice",
                                                            "두 번 호출한 EncoderLayer(dropout=0.5).eval()(x)"))


@pytest.mark.kind("names")
@pytest.mark.points(0.25)
def test_attribute_names(student, example):
    """EncoderLayer and Encoder have the attributes of exercises/README.md (self_attn, feed_forward, norm1, norm2; layers, norm)
    ko: EncoderLayer와 Encoder의 속성 이름이 exercises/README.md와 같습니다 (self_attn, feed_forward, norm1, norm2; layers, norm)"""
    dims = _Dims(example)
    D, H, FF = dims.D, dims.H, dims.FF
    gen = example.rng(0)
    layer = weights.kit_state(oracles.torch_layer("encoder", D, H, FF, norm_first=False, rng=gen))
    stack = weights.kit_state(oracles.torch_stack("encoder", 2, D, H, FF, norm_first=True, rng=gen))
    weights.expect_names(lambda impl: impl.encoder.EncoderLayer(D, H, FF), student, layer,
                         what=f"EncoderLayer({D}, {H}, {FF})")
    weights.expect_names(lambda impl: dims.encoder(impl, norm_first=True), student, stack,
                         what=f"Encoder(2, {D}, {H}, {FF}, norm_first=True)")
