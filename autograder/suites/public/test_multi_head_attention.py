"""Public tests of exercise 5, ``multi_head_attention.py``: heads, and nn.MultiheadAttention as the oracle.

The inputs come from :func:`_case` (``MultiHeadAttention(12, 3)``, x ``[2, 5, 12]``, memory ``[2, 4,
12]`` in the public tests); each test's hidden twin draws other sizes, weights and masks."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import inputs, mistaken, oracles, weights
from autograder.checks import (compare, expect_consistent, expect_differs, expect_equal, expect_property, expect_raises,
                               expect_same, say)

pytestmark = pytest.mark.exercise("multi_head_attention")

KPM = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])


class _Case:
    """One test's MultiHeadAttention: ``d_model``, ``heads``, the weights ``state``, a batch ``x``
    ``[B, S, d_model]`` with its key-padding mask ``kpm`` (every row keeps two keys or more, one row
    padded), and ``memory`` ``[B, S_m, d_model]`` (S_m != S) with its own ``memory_kpm``."""

    def __init__(self, example):
        self.heads, head_dim = example.sizes((3, 4), 2, 5)
        self.d_model = self.heads * head_dim
        batch, = example.sizes((2,), 2, 4)
        length, mem_len = example.sizes((5, 4), 3, 8)   # >= 3: a padded row keeps two open keys
        self.state = weights.mha_state(example.rng(7), self.d_model)
        gen = example.rng(8)
        self.x = torch.randn(batch, length, self.d_model, generator=gen)
        self.memory = torch.randn(batch, mem_len, self.d_model, generator=gen)
        self.kpm = example.pick(KPM, lambda rng: inputs.random_padding_mask(rng, batch, length))
        self.memory_kpm = example.pick(KPM[:, :4], lambda rng: inputs.random_padding_mask(rng, batch, mem_len))
        self.name = f"MultiHeadAttention({self.d_model}, {self.heads})"

    def module(self, impl, dropout=0.0):
        return weights.loaded(impl.multi_head_attention.MultiHeadAttention(self.d_model, self.heads, dropout=dropout),
                              self.state)

    def property_module(self, impl):
        """The module of a property test: the test's weights, or the module's own where its
        parameters do not take them (the tests that need the weights explain that once)."""
        return weights.loaded_or_own(impl.multi_head_attention.MultiHeadAttention(self.d_model, self.heads), self.state)

    def oracle(self, query, key, value, **kwargs):
        return oracles.mha_forward(self.state, self.d_model, self.heads, query, key, value, **kwargs)


def _keys_matter(student, case):
    """The premise of the property tests: changing one valid key (not its value) changes the output
    (attention that ignores the keys, e.g. uniform weights, swaps and masks vacuously)."""
    x, kpm = case.x, case.kpm
    changed = x.clone()
    changed[:, 1] += 1.0

    def run(impl):
        m = case.property_module(impl)
        return m(x, x, x, key_padding_mask=kpm)[0], m(x, changed, x, key_padding_mask=kpm)[0]

    expect_differs(run, student, what=say(f"{case.name}(x, key, x) output after changing key 1",
                                          f"key 1을 바꾼 뒤 {case.name}(x, key, x)의 출력"))


def _earlier_tokens_matter(student, case):
    """The premise of the causality test: with the causal mask, the output at position 2 changes when
    token 0 changes."""
    x = case.x
    causal = inputs.causal_mask(x.shape[1])
    changed = x.clone()
    changed[:, 0] += 1.0

    def run(impl):
        m = case.property_module(impl)
        return m(x, x, x, attn_mask=causal)[0][:, 2], m(changed, changed, changed, attn_mask=causal)[0][:, 2]

    expect_differs(run, student, what=say("causal self-attention output at position 2 after changing token 0",
                                      "토큰 0을 바꾼 뒤 위치 2의 인과 셀프 어텐션 출력"))


def _projections_used(student, case):
    """The premise of the projection-names test: each of q_proj, k_proj, v_proj and out_proj reaches
    the output (a module can hold the four layers and use only some)."""
    x, memory = case.x, case.memory
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        state = dict(case.state)
        state[f"{name}.weight"] = case.state[f"{name}.weight"].flip(0)

        def run(impl, state=state):
            m = impl.multi_head_attention.MultiHeadAttention
            return (weights.loaded(m(case.d_model, case.heads), case.state)(x, memory, memory)[0],
                    weights.loaded(m(case.d_model, case.heads), state)(x, memory, memory)[0])

        expect_differs(run, student, what=say(f"{case.name}(x, memory, memory) after changing {name}.weight",
                                              f"{name}.weight를 바꾼 뒤의 {case.name}(x, memory, memory)"))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_split_and_merge_heads(student, example):
    """split_heads gives head h the features h*D/H:(h+1)*D/H as [B, H, S, D/H]; merge_heads undoes it

    ko: split_heads는 헤드 h에 특징 h*D/H:(h+1)*D/H를 [B, H, S, D/H]로 주고, merge_heads는 이를 되돌립니다
    """
    batch, length, heads, head_dim = example.sizes((2, 5, 3, 2), 2, 7)
    x = torch.randn(batch, length, 2 * heads * head_dim, generator=example.rng(8))[..., :heads * head_dim]
    y = torch.randn(batch, heads, length, head_dim, generator=example.rng(9))

    def run(impl):
        mha = impl.multi_head_attention
        return mha.split_heads(x, heads), mha.merge_heads(y)

    expected = (x.reshape(batch, length, heads, head_dim).transpose(1, 2), y.transpose(1, 2).reshape(batch, length, -1))
    expect_equal(run, student, expected, what=f"(split_heads(x{list(x.shape)}, {heads}), merge_heads(y{list(y.shape)}))",
                 known_mistakes=mistaken.split_merge(x, heads, y))


# Rows of padded queries in self-attention: PyTorch computes them like any other row; masking them too
# is a common choice (exercises/README.md 5). One test compares them; every other test compares only
# the rows of unpadded queries (inputs.valid_positions(case.kpm)).


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_self_attention_matches_pytorch(student, example):
    """self-attention with a key-padding mask: same output and head-averaged weights as nn.MultiheadAttention (unpadded query rows)

    ko: 키 패딩 마스크가 있는 셀프 어텐션: nn.MultiheadAttention과 같은 출력과 헤드 평균 가중치 (패딩되지 않은 query 행)
    """
    case = _Case(example)
    x, kpm = case.x, case.kpm

    def run(impl):
        return case.module(impl)(x, x, x, key_padding_mask=kpm)

    unpadded = inputs.valid_positions(kpm)
    expect_equal(run, student, case.oracle(x, x, x, key_padding_mask=kpm), what=f"{case.name}(x, x, x, key_padding_mask)",
                 valid=(unpadded, unpadded), known_mistakes=mistaken.mha(case.state, case.heads, x, x, x, key_padding_mask=kpm))


@pytest.mark.integration
@pytest.mark.kind("values")
@pytest.mark.part("integration")
@pytest.mark.points(1)
def test_with_your_own_components(student, example):
    """integration: with your own attention.py and masks.py, causal self-attention with a key-padding mask matches nn.MultiheadAttention (unpadded query rows)
    ko: 통합: 여러분의 attention.py와 masks.py로 키 패딩 마스크가 있는 인과 셀프 어텐션이 nn.MultiheadAttention과 같습니다 (패딩되지 않은 query 행)"""
    case = _Case(example)
    x, kpm = case.x, case.kpm
    causal = inputs.causal_mask(x.shape[1])

    def run(impl):
        return case.module(impl)(x, x, x, key_padding_mask=kpm, attn_mask=causal)

    unpadded = inputs.valid_positions(kpm)
    expect_equal(run, student, case.oracle(x, x, x, key_padding_mask=kpm, attn_mask=causal),
                 what=f"{case.name}(x, x, x, key_padding_mask, attn_mask=causal)", valid=(unpadded, unpadded))


@pytest.mark.kind("convention")
@pytest.mark.points(0.5)
def test_padded_query_rows_follow_pytorch(student, example):
    """convention: in self-attention, the rows of padded queries are computed like any other row, as nn.MultiheadAttention does

    ko: 규약: 셀프 어텐션에서 패딩된 query의 행도 nn.MultiheadAttention처럼 다른 행과 똑같이 계산합니다
    """
    case = _Case(example)
    x, kpm = case.x, case.kpm

    def run(impl):
        return case.module(impl)(x, x, x, key_padding_mask=kpm)

    expected = case.oracle(x, x, x, key_padding_mask=kpm)
    rows = kpm[..., None]
    masked_rows = (torch.where(rows, case.state["out_proj.bias"], expected[0]), expected[1].masked_fill(rows, 0.0))
    expect_equal(run, student, expected, what=say(f"rows of padded queries of {case.name}(x, x, x, key_padding_mask)",
                                                  f"{case.name}(x, x, x, key_padding_mask)에서 패딩된 query의 행"),
                 valid=(rows, rows), known_mistakes={"mha_padded_queries_masked": lambda: masked_rows})


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_cross_attention_per_head_weights_match_pytorch(student, example):
    """cross-attention (S_q != S_k) with attn_mask and average_attn_weights=False matches nn.MultiheadAttention

    ko: attn_mask와 average_attn_weights=False를 쓴 크로스 어텐션(S_q != S_k)이 nn.MultiheadAttention과 같습니다
    """
    case = _Case(example)
    x, memory = case.x, case.memory
    attn_mask = torch.ones(x.shape[1], memory.shape[1], dtype=torch.bool).triu(1)

    def run(impl):
        return case.module(impl)(x, memory, memory, attn_mask=attn_mask, average_attn_weights=False)

    expected = case.oracle(x, memory, memory, attn_mask=attn_mask, average_attn_weights=False)
    expect_equal(run, student, expected, what=f"{case.name}(x{list(x.shape)}, memory{list(memory.shape)}, memory, "
                                              f"attn_mask{list(attn_mask.shape)}, average_attn_weights=False)",
                 known_mistakes=mistaken.mha(case.state, case.heads, x, memory, memory, attn_mask=attn_mask, average=False))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_swapping_two_examples_swaps_their_outputs(student, example):
    """swapping two examples of the batch swaps their outputs and changes nothing else
    ko: 배치의 두 예제를 바꾸면 두 출력만 서로 바뀌고 나머지는 그대로입니다"""
    case = _Case(example)
    x, memory, mem_kpm = case.x, case.memory, case.memory_kpm
    order = inputs.swap_first_two(x.shape[0])

    def run(impl):
        m = case.property_module(impl)
        swapped = m(x[order], memory[order], memory[order], key_padding_mask=mem_kpm[order])
        return swapped, inputs.batch_permuted(m(x, memory, memory, key_padding_mask=mem_kpm), order)

    expect_same(run, student, what=say(f"{case.name}(x, memory, memory, key_padding_mask) on the "
                                       "batch with examples 0 and 1 swapped, against the swapped outputs",
                                       f"예제 0과 1을 바꾼 배치의 {case.name}(x, memory, memory, "
                                       "key_padding_mask)(바뀐 출력과 비교)"))
    _keys_matter(student, case)


@pytest.mark.kind("names")
@pytest.mark.points(0.5)
def test_named_projections(student, example):
    """the module has q_proj, k_proj, v_proj, out_proj (nn.Linear(d_model, d_model)), num_heads and head_dim

    ko: 모듈에 q_proj, k_proj, v_proj, out_proj (nn.Linear(d_model, d_model)), num_heads, head_dim이 있습니다
    """
    case = _Case(example)
    weights.expect_names(lambda impl: impl.multi_head_attention.MultiHeadAttention(case.d_model, case.heads), student,
                         case.state, what=case.name, unmatched=False)

    def run(impl):
        m = impl.multi_head_attention.MultiHeadAttention(case.d_model, case.heads)
        return weights.shapes(m), m.num_heads, m.head_dim

    contract = {name: list(t.shape) for name, t in case.state.items()}
    expect_consistent(run, student, lambda got: (weights.with_contract(got[0], contract), case.heads,
                                                 case.d_model // case.heads),
                      what=say(f"{case.name}: (state_dict shapes, num_heads, head_dim)",
                               f"{case.name}: (state_dict의 모양, num_heads, head_dim)"),
                      known_mistakes=mistaken.fused_projections(case.d_model))
    _projections_used(student, case)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_padded_keys_do_not_matter(student, example):
    """changing the keys and values at padded positions leaves the output unchanged

    ko: 패딩 위치의 key와 value를 바꿔도 출력이 그대로입니다
    """
    case = _Case(example)
    x, kpm = case.x, case.kpm
    noise = torch.randn(x.shape, generator=example.rng(10)) * kpm[..., None]

    def run(impl):
        m = case.property_module(impl)
        return m(x, x, x, key_padding_mask=kpm)[0], m(x, x + noise, x + noise, key_padding_mask=kpm)[0]

    expect_same(run, student, what=say("output with padded keys/values changed", "패딩된 key/value를 바꾼 뒤의 출력"),
                valid=inputs.valid_positions(kpm))
    _keys_matter(student, case)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_causal_mask_hides_the_future(student, example):
    """with a causal attn_mask, changing tokens after position t leaves the outputs up to t unchanged

    ko: 인과 attn_mask가 있으면 위치 t 뒤의 토큰을 바꿔도 t 까지의 출력은 그대로입니다
    """
    case = _Case(example)
    x = case.x
    causal = inputs.causal_mask(x.shape[1])
    changed = x.clone()
    changed[:, 3:] += 1.0

    def run(impl):
        m = case.property_module(impl)
        return m(x, x, x, attn_mask=causal)[0][:, :3], m(changed, changed, changed, attn_mask=causal)[0][:, :3]

    expect_same(run, student, what=say("outputs 0..2 with tokens 3.. changed", "토큰 3.. 을 바꾼 뒤의 출력 0..2"))
    _earlier_tokens_matter(student, case)


def _output_of_weights(case, weights_per_head: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``out_proj(merge_heads(weights @ v))`` for self-attention on ``x`` with the case's weights: the
    output that per-head weights ``[B, H, S, S]`` give (the formula, in float64)."""
    def linear(h, name):
        return F.linear(h.double(), case.state[f"{name}.weight"].double(), case.state[f"{name}.bias"].double())

    batch, length = x.shape[:2]
    v = linear(x, "v_proj").reshape(batch, length, case.heads, case.d_model // case.heads).transpose(1, 2)
    heads = weights_per_head.double() @ v
    return linear(heads.transpose(1, 2).reshape(batch, length, case.d_model), "out_proj").float()


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_dropout_in_eval_and_in_training(student, seed, example):
    """dropout=0.5: eval() gives nn.MultiheadAttention's numbers twice; train() returns the weights after dropout, those its output used

    ko: dropout=0.5: eval() 에서는 두 번 모두 nn.MultiheadAttention과 같고, train() 에서는 출력에 쓴 드롭아웃 뒤의 가중치를 반환합니다
    """
    case = _Case(example)
    x = case.x
    batch, length = x.shape[:2]

    def run(impl):
        m = case.module(impl, dropout=0.5)
        first, second = m(x, x, x)[0], m(x, x, x)[0]
        m.train()
        impl.seed(seed)
        return first, second, m(x, x, x, average_attn_weights=False)

    out = case.oracle(x, x, x)[0]
    module = f"MultiHeadAttention({case.d_model}, {case.heads}, dropout=0.5)"

    def verify(got):
        compare(got[:2], (out, out), what=say(f"two calls of {module}.eval()(x, x, x)", f"{module}.eval()(x, x, x)의 두 번 호출"))
        trained = got[2]
        if isinstance(trained, (tuple, list)) and len(trained) == 2 and isinstance(trained[1], torch.Tensor) \
                and tuple(trained[1].shape) == (batch, case.heads, length, length):
            compare(trained[0], _output_of_weights(case, trained[1], x),
                    what=say("train() output against out_proj(merge_heads(weights @ v)) of the per-head weights it "
                             "returned", "train() 출력과 반환한 헤드별 가중치로 계산한 out_proj(merge_heads(weights @ v))"))
        else:
            compare(trained, (out, torch.zeros(batch, case.heads, length, length)), what=say(
                f"{module}.train()(x, x, x, average_attn_weights=False)",
                f"{module}.train()(x, x, x, average_attn_weights=False)"),
                    valid=(torch.zeros(1, dtype=torch.bool), torch.zeros(1, dtype=torch.bool)))

    expect_property(run, student, verify)


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_arguments_raise_value_error(student, example):
    """d_model not divisible by num_heads, or a key_padding_mask of the wrong shape, raise ValueError

    ko: d_model이 num_heads로 나누어지지 않거나 key_padding_mask 모양이 틀리면 ValueError가 납니다
    """
    mha = student.multi_head_attention
    heads, = example.sizes((4,), 3, 8)
    d_model = example.pick(10, lambda rng: heads * inputs.integer(rng, 2, 5) + inputs.integer(rng, 1, heads - 1))
    expect_raises(lambda: mha.MultiHeadAttention(d_model, heads), what=f"MultiHeadAttention({d_model}, {heads})",
                  names=("num_heads", "d_model", "heads"), values=(d_model, heads))
    case = _Case(example)
    x = case.x
    length = x.shape[1]
    m = mha.MultiHeadAttention(case.d_model, case.heads)
    expect_raises(lambda: m(x, x, x, key_padding_mask=case.kpm[:, :length - 1]),
                  what=f"{case.name}(x{list(x.shape)}, ..., key_padding_mask[{x.shape[0]}, {length - 1}])",
                  names=("key_padding_mask", "padding mask", "mask", "S_k"), values=(length - 1, length))
