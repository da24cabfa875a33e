"""Public tests of exercise 8 (decoder.py): DecoderLayer and Decoder.

Oracles: PyTorch's nn.TransformerDecoderLayer / nn.TransformerDecoder (batch first, ReLU) with the
same randomised weights, run through PyTorch's slow path; properties: causal leakage, memory
padding invariance, eval determinism. Small sizes: B=3, T=5, S=7, d_model=16, 4 heads, d_ff=24 (in
each test's hidden twin, other sizes through the ``example`` fixture, and other values through the
twin's seed).
"""

import pytest
import torch

from autograder.checks import inputs, mistaken, oracles, weights
from autograder.checks import expect_equal, expect_same, say

pytestmark = pytest.mark.exercise("decoder")

TGT_LENGTHS = [5, 3, 4]
SRC_LENGTHS = [7, 2, 5]


class _Dims:
    """The sizes of a test: B=3, T=5, S=7, d_model=16, 4 heads, d_ff=24 and the row lengths above
    in the public tests; other sizes and lengths in their twins."""

    def __init__(self, example):
        self.B, = example.sizes((3,), 2, 4)
        self.T, = example.sizes((5,), 4, 9)   # >= 4: the leakage test changes the tokens after position 2
        self.S, = example.sizes((7,), 3, 10, exclude=(self.T,))
        self.H, head_dim = example.sizes((4, 4), 2, 5)
        self.D = self.H * head_dim
        self.FF, = example.sizes((24,), 6, 32)
        self.tgt_lengths = example.pick(TGT_LENGTHS, lambda rng: inputs.lengths(rng, self.B, self.T).tolist())
        self.src_lengths = example.pick(SRC_LENGTHS, lambda rng: inputs.lengths(rng, self.B, self.S).tolist())

    def inputs(self, seed):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(self.B, self.T, self.D, generator=gen)
        memory = torch.randn(self.B, self.S, self.D, generator=gen)
        return (gen, x, memory, inputs.padding_mask(self.tgt_lengths, self.T),
                inputs.padding_mask(self.src_lengths, self.S))

    def decoder(self, impl, norm_first=False):
        return impl.decoder.Decoder(2, self.D, self.H, self.FF, dropout=0.0, norm_first=norm_first)


def _layer_run(dims, state, x, memory, norm_first, dropout=0.0, calls=1, **masks):
    def run(impl):
        m = weights.loaded(impl.decoder.DecoderLayer(dims.D, dims.H, dims.FF, dropout=dropout, norm_first=norm_first),
                           state, "DecoderLayer")
        outs = tuple(m(x, memory, **masks) for _ in range(calls))
        return outs[0] if calls == 1 else outs
    return run


@pytest.mark.kind("values")
@pytest.mark.points(1)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_layer_matches_pytorch(student, seed, example, norm_first):
    """DecoderLayer with a causal tgt_mask gives nn.TransformerDecoderLayer's numbers (same weights)
    ko: 인과 tgt_mask를 준 DecoderLayer가 같은 가중치의 nn.TransformerDecoderLayer와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, memory, _, _ = dims.inputs(seed)
    causal = inputs.causal_mask(dims.T)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), dict(tgt_mask=causal), norm_first=norm_first,
                          rng=gen)
    expect_equal(_layer_run(dims, oracle.state, x, memory, norm_first, tgt_mask=causal), student, oracle.expected,
                 what=f"DecoderLayer({dims.D}, {dims.H}, {dims.FF}, norm_first={norm_first})(x, memory, tgt_mask=causal)",
                 known_mistakes=mistaken.flipped_norm("decoder", oracle.module, norm_first, x, memory, tgt_mask=causal))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_swapping_two_examples_swaps_their_outputs(student, seed, example):
    """Decoder: swapping two examples of the batch swaps their outputs and changes nothing else
    ko: Decoder: 배치의 두 예제를 바꾸면 두 출력만 서로 바뀌고 나머지는 그대로입니다"""
    dims = _Dims(example)
    _, x, memory, tgt_pad, mem_pad = dims.inputs(seed)
    order = inputs.swap_first_two(dims.B)

    def call(m, o):
        return m(x[o], memory[o], tgt_mask=inputs.causal_mask(dims.T), tgt_key_padding_mask=tgt_pad[o],
                 memory_key_padding_mask=mem_pad[o])

    def run(impl):
        m = dims.decoder(impl)
        m.eval()
        return call(m, order), call(m, torch.arange(dims.B))[order]

    expect_same(run, student, what=say("Decoder output on the batch with examples 0 and 1 swapped, against "
                                       "the swapped outputs", "예제 0과 1을 바꾼 배치의 Decoder 출력(바뀐 출력과 비교)"), valid=inputs.valid_positions(tgt_pad[order]))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_layer_with_all_masks(student, seed, example):
    """DecoderLayer with causal, target-padding and memory-padding masks gives PyTorch's numbers
    ko: 인과, 타깃 패딩, memory 패딩 마스크를 모두 준 DecoderLayer가 PyTorch와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, memory, tgt_pad, mem_pad = dims.inputs(seed)
    masks = dict(tgt_mask=inputs.causal_mask(dims.T), tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), masks, norm_first=False, rng=gen)
    expect_equal(_layer_run(dims, oracle.state, x, memory, False, **masks), student, oracle.expected,
                 what="DecoderLayer(...)(x, memory, tgt_mask, tgt_key_padding_mask, memory_key_padding_mask)",
                 valid=inputs.valid_positions(tgt_pad))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_no_mask_unless_given(student, seed, example):
    """With tgt_mask=None the layer applies no causal mask (as PyTorch): same numbers as unmasked PyTorch
    ko: tgt_mask=None이면 인과 마스크를 적용하지 않습니다 (PyTorch와 같음)"""
    dims = _Dims(example)
    gen, x, memory, _, _ = dims.inputs(seed)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), norm_first=False, rng=gen)
    expect_equal(_layer_run(dims, oracle.state, x, memory, False), student, oracle.expected,
                 what=say("DecoderLayer(...)(x, memory) without masks", "마스크 없는 DecoderLayer(...)(x, memory)"))


@pytest.mark.kind("values")
@pytest.mark.points(0.75)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_stack_matches_pytorch(student, seed, example, norm_first):
    """Decoder (2 layers, final LayerNorm only for Pre-LN) gives nn.TransformerDecoder's numbers
    ko: Decoder (2층, Pre-LN 일 때만 마지막 LayerNorm)가 nn.TransformerDecoder와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, memory, tgt_pad, mem_pad = dims.inputs(seed)
    masks = dict(tgt_mask=inputs.causal_mask(dims.T), tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), masks, norm_first=norm_first, rng=gen,
                          num_layers=2)
    expected, state = oracle.expected, oracle.state

    def run(impl):
        m = weights.loaded(dims.decoder(impl, norm_first=norm_first), state, "Decoder")
        return m(x, memory, **masks)

    expect_equal(run, student, expected,
                 what=f"Decoder(2, {dims.D}, {dims.H}, {dims.FF}, norm_first={norm_first})(x, memory, masks)",
                 valid=inputs.valid_positions(tgt_pad),
                 known_mistakes=mistaken.flipped_norm("decoder", oracle.module, norm_first, x, memory, **masks))


@pytest.mark.integration
@pytest.mark.kind("values")
@pytest.mark.part("integration")
@pytest.mark.points(1)
def test_with_your_own_components(student, seed, example):
    """integration: with your own multi_head_attention.py, feed_forward.py, attention.py and masks.py, Decoder (2 layers, all masks) gives nn.TransformerDecoder's numbers
    ko: 통합: 여러분의 multi_head_attention.py, feed_forward.py, attention.py, masks.py로 Decoder (2층, 모든 마스크)가 nn.TransformerDecoder와 같은 값을 냅니다"""
    dims = _Dims(example)
    gen, x, memory, tgt_pad, mem_pad = dims.inputs(seed)
    masks = dict(tgt_mask=inputs.causal_mask(dims.T), tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), masks, norm_first=False, rng=gen,
                          num_layers=2)

    def run(impl):
        m = weights.loaded(dims.decoder(impl), oracle.state, "Decoder")
        return m(x, memory, **masks)

    expect_equal(run, student, oracle.expected, what=f"Decoder(2, {dims.D}, {dims.H}, {dims.FF})(x, memory, masks)",
                 valid=inputs.valid_positions(tgt_pad))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_causal_leakage(student, seed, example):
    """With the causal tgt_mask, changing x after position t leaves the outputs up to t unchanged
    ko: 인과 tgt_mask를 주면 t 이후의 x를 바꿔도 t 까지의 출력은 그대로입니다"""
    dims = _Dims(example)
    gen, x, memory, _, _ = dims.inputs(seed)
    t = 2
    x2 = x.clone()
    x2[:, t + 1:] = torch.randn(dims.B, dims.T - t - 1, dims.D, generator=gen)
    causal = inputs.causal_mask(dims.T)

    def run(impl):
        m = dims.decoder(impl)
        m.eval()
        return m(x, memory, tgt_mask=causal)[:, :t + 1], m(x2, memory, tgt_mask=causal)[:, :t + 1]

    expect_same(run, student, what=say(f"Decoder output at positions 0..{t} after changing later inputs",
                                       f"뒤쪽 입력을 바꾼 뒤 위치 0..{t}의 Decoder 출력"))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_memory_padding_invariance(student, seed, example):
    """Changing padded memory positions leaves the decoder's outputs unchanged
    ko: memory의 패딩 위치 값을 바꿔도 디코더 출력은 그대로입니다"""
    dims = _Dims(example)
    gen, x, memory, _, mem_pad = dims.inputs(seed)
    memory2 = inputs.replace_where(memory, mem_pad, gen)

    def run(impl):
        m = dims.decoder(impl)
        m.eval()
        return (m(x, memory, memory_key_padding_mask=mem_pad),
                m(x, memory2, memory_key_padding_mask=mem_pad))

    expect_same(run, student, what=say("Decoder output after changing padded memory positions",
                                       "memory의 패딩 위치를 바꾼 뒤의 Decoder 출력"))


@pytest.mark.kind("values")
@pytest.mark.points(0.25)
def test_eval_is_deterministic(student, seed, example):
    """With dropout=0.5, eval() makes DecoderLayer deterministic and equal to PyTorch's eval output
    ko: dropout=0.5 라도 eval() 에서는 DecoderLayer가 결정적이며 PyTorch의 eval 출력과 같습니다"""
    dims = _Dims(example)
    gen, x, memory, _, _ = dims.inputs(seed)
    oracle = oracles.case("decoder", dims.D, dims.H, dims.FF, (x, memory), norm_first=False, rng=gen, dropout=0.5)
    expect_equal(_layer_run(dims, oracle.state, x, memory, False, dropout=0.5, calls=2), student,
                 (oracle.expected, oracle.expected), what=say("DecoderLayer(dropout=0.5).eval()(x, memory), called twice",
                           "두 번 호출한 DecoderLayer(dropout=0.5).eval()(x, memory)"))


@pytest.mark.kind("names")
@pytest.mark.points(0.25)
def test_attribute_names(student, example):
    """DecoderLayer and Decoder have the attributes of exercises/README.md (self_attn, cross_attn, feed_forward, norm1..3; layers, norm)
    ko: DecoderLayer와 Decoder의 속성 이름이 exercises/README.md와 같습니다 (self_attn, cross_attn, feed_forward, norm1..3; layers, norm)"""
    dims = _Dims(example)
    D, H, FF = dims.D, dims.H, dims.FF
    gen = example.rng(0)
    layer = weights.kit_state(oracles.torch_layer("decoder", D, H, FF, norm_first=False, rng=gen))
    stack = weights.kit_state(oracles.torch_stack("decoder", 2, D, H, FF, norm_first=True, rng=gen))
    weights.expect_names(lambda impl: impl.decoder.DecoderLayer(D, H, FF), student, layer,
                         what=f"DecoderLayer({D}, {H}, {FF})")
    weights.expect_names(lambda impl: impl.decoder.Decoder(2, D, H, FF, norm_first=True), student, stack,
                         what=f"Decoder(2, {D}, {H}, {FF}, norm_first=True)")
