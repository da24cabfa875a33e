"""Public tests of exercise 5, ``multi_head_attention.py``: heads, and nn.MultiheadAttention as the oracle."""

import pytest
import torch

from autograder.checks import inputs, mistaken, oracles, weights
from autograder.checks import expect_differs, expect_equal, expect_raises, expect_same, say

pytestmark = pytest.mark.exercise("multi_head_attention")

D_MODEL, HEADS = 12, 3
STATE = weights.mha_state(torch.Generator().manual_seed(7), D_MODEL)
GEN = torch.Generator().manual_seed(8)
X = torch.randn(2, 5, D_MODEL, generator=GEN)
MEMORY = torch.randn(2, 4, D_MODEL, generator=GEN)
KPM = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])


def _module(impl, dropout=0.0):
    return weights.loaded(impl.multi_head_attention.MultiHeadAttention(D_MODEL, HEADS, dropout=dropout), STATE)


def _keys_matter(student):
    """The premise of the property tests: changing one valid key (not its value) changes the output
    (attention that ignores the keys, e.g. uniform weights, swaps and masks vacuously)."""
    changed = X.clone()
    changed[:, 1] += 1.0

    def run(impl):
        m = _module(impl)
        return m(X, X, X, key_padding_mask=KPM)[0], m(X, changed, X, key_padding_mask=KPM)[0]

    expect_differs(run, student, what=say("MultiHeadAttention(12, 3)(x, key, x) output after changing key 1",
                                      "key 1을 바꾼 뒤 MultiHeadAttention(12, 3)(x, key, x)의 출력"))


def _earlier_tokens_matter(student):
    """The premise of the causality test: with the causal mask, the output at position 2 changes when
    token 0 changes."""
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    changed = X.clone()
    changed[:, 0] += 1.0

    def run(impl):
        m = _module(impl)
        return m(X, X, X, attn_mask=causal)[0][:, 2], m(changed, changed, changed, attn_mask=causal)[0][:, 2]

    expect_differs(run, student, what=say("causal self-attention output at position 2 after changing token 0",
                                      "토큰 0을 바꾼 뒤 위치 2의 인과 셀프 어텐션 출력"))


def _projections_used(student):
    """The premise of the projection-names test: each of q_proj, k_proj, v_proj and out_proj reaches
    the output (a module can hold the four layers and use only some)."""
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        state = dict(STATE)
        state[f"{name}.weight"] = STATE[f"{name}.weight"].flip(0)

        def run(impl, state=state):
            m = impl.multi_head_attention.MultiHeadAttention
            return (weights.loaded(m(D_MODEL, HEADS), STATE)(X, MEMORY, MEMORY)[0],
                    weights.loaded(m(D_MODEL, HEADS), state)(X, MEMORY, MEMORY)[0])

        expect_differs(run, student, what=say(f"MultiHeadAttention(12, 3)(x, memory, memory) after changing {name}.weight",
                                          f"{name}.weight를 바꾼 뒤의 MultiHeadAttention(12, 3)(x, memory, memory)"))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_split_and_merge_heads(student):
    """split_heads gives head h the features h*D/H:(h+1)*D/H as [B, H, S, D/H]; merge_heads undoes it

    ko: split_heads는 헤드 h에 특징 h*D/H:(h+1)*D/H를 [B, H, S, D/H]로 주고, merge_heads는 이를 되돌립니다
    """
    y = torch.randn(2, 3, 5, 2, generator=torch.Generator().manual_seed(9))

    def run(impl):
        mha = impl.multi_head_attention
        return mha.split_heads(X[..., :6], 3), mha.merge_heads(y)

    expected = (X[..., :6].reshape(2, 5, 3, 2).transpose(1, 2), y.transpose(1, 2).reshape(2, 5, 6))
    expect_equal(run, student, expected, what="(split_heads(x[2, 5, 6], 3), merge_heads(y[2, 3, 5, 2]))",
                 known_mistakes=mistaken.split_merge(X[..., :6], 3, y))


# Rows of padded queries in self-attention: PyTorch computes them like any other row; masking them too
# is a common choice (exercises/README.md 5). One test compares them; every other test compares only
# the rows of unpadded queries.
UNPADDED_ROWS = inputs.valid_positions(KPM)


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_self_attention_matches_pytorch(student):
    """self-attention with a key-padding mask: same output and head-averaged weights as nn.MultiheadAttention (unpadded query rows)

    ko: 키 패딩 마스크가 있는 셀프 어텐션: nn.MultiheadAttention과 같은 출력과 헤드 평균 가중치 (패딩되지 않은 query 행)
    """
    def run(impl):
        return _module(impl)(X, X, X, key_padding_mask=KPM)

    expected = oracles.mha_forward(STATE, D_MODEL, HEADS, X, X, X, key_padding_mask=KPM)
    expect_equal(run, student, expected, what="MultiHeadAttention(12, 3)(x, x, x, key_padding_mask)",
                 valid=(UNPADDED_ROWS, UNPADDED_ROWS),
                 known_mistakes=mistaken.mha(STATE, HEADS, X, X, X, key_padding_mask=KPM))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_padded_query_rows_follow_pytorch(student):
    """convention: in self-attention, the rows of padded queries are computed like any other row, as nn.MultiheadAttention does

    ko: 규약: 셀프 어텐션에서 패딩된 query의 행도 nn.MultiheadAttention처럼 다른 행과 똑같이 계산합니다
    """
    def run(impl):
        return _module(impl)(X, X, X, key_padding_mask=KPM)

    expected = oracles.mha_forward(STATE, D_MODEL, HEADS, X, X, X, key_padding_mask=KPM)
    rows = KPM[..., None]
    masked_rows = (torch.where(rows, STATE["out_proj.bias"], expected[0]), expected[1].masked_fill(rows, 0.0))
    expect_equal(run, student, expected, what=say("rows of padded queries of MultiHeadAttention(12, 3)(x, x, x, key_padding_mask)",
                                                  "MultiHeadAttention(12, 3)(x, x, x, key_padding_mask)에서 패딩된 query의 행"),
                 valid=(rows, rows), known_mistakes={"mha_padded_queries_masked": lambda: masked_rows})


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_cross_attention_per_head_weights_match_pytorch(student):
    """cross-attention (S_q != S_k) with attn_mask and average_attn_weights=False matches nn.MultiheadAttention

    ko: attn_mask와 average_attn_weights=False를 쓴 크로스 어텐션(S_q != S_k)이 nn.MultiheadAttention과 같습니다
    """
    attn_mask = torch.ones(5, 4, dtype=torch.bool).triu(1)

    def run(impl):
        return _module(impl)(X, MEMORY, MEMORY, attn_mask=attn_mask, average_attn_weights=False)

    expected = oracles.mha_forward(STATE, D_MODEL, HEADS, X, MEMORY, MEMORY, attn_mask=attn_mask,
                                         average_attn_weights=False)
    expect_equal(run, student, expected, what="MultiHeadAttention(12, 3)(x[2, 5, 12], memory[2, 4, 12], memory, "
                                              "attn_mask[5, 4], average_attn_weights=False)",
                 known_mistakes=mistaken.mha(STATE, HEADS, X, MEMORY, MEMORY, attn_mask=attn_mask, average=False))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_swapping_two_examples_swaps_their_outputs(student):
    """swapping two examples of the batch swaps their outputs and changes nothing else
    ko: 배치의 두 예제를 바꾸면 두 출력만 서로 바뀌고 나머지는 그대로입니다"""
    order = inputs.swap_first_two(X.shape[0])

    def run(impl):
        m = _module(impl)
        swapped = m(X[order], MEMORY[order], MEMORY[order], key_padding_mask=KPM[order][:, :4])
        return swapped, inputs.batch_permuted(m(X, MEMORY, MEMORY, key_padding_mask=KPM[:, :4]), order)

    expect_same(run, student, what=say("MultiHeadAttention(12, 3)(x, memory, memory, key_padding_mask) on the "
                                       "batch with examples 0 and 1 swapped, against the swapped outputs",
                                       "예제 0과 1을 바꾼 배치의 MultiHeadAttention(12, 3)(x, memory, memory, "
                                       "key_padding_mask)(바뀐 출력과 비교)"))
    _keys_matter(student)


@pytest.mark.kind("names")
@pytest.mark.points(0.5)
def test_named_projections(student):
    """the module has q_proj, k_proj, v_proj, out_proj (nn.Linear(d_model, d_model)), num_heads and head_dim

    ko: 모듈에 q_proj, k_proj, v_proj, out_proj (nn.Linear(d_model, d_model)), num_heads, head_dim이 있습니다
    """
    weights.expect_names(lambda impl: impl.multi_head_attention.MultiHeadAttention(D_MODEL, HEADS), student, STATE,
                         what="MultiHeadAttention(12, 3)", unmatched=False)

    def run(impl):
        m = impl.multi_head_attention.MultiHeadAttention(D_MODEL, HEADS)
        shapes = {name: list(t.shape) for name, t in m.state_dict().items()}
        return shapes, m.num_heads, m.head_dim

    expect_equal(run, student, ({name: list(t.shape) for name, t in STATE.items()}, HEADS, D_MODEL // HEADS),
                 what=say("MultiHeadAttention(12, 3): (state_dict shapes, num_heads, head_dim)",
                           "MultiHeadAttention(12, 3): (state_dict의 모양, num_heads, head_dim)"),
                 known_mistakes=mistaken.fused_projections(D_MODEL))
    _projections_used(student)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_padded_keys_do_not_matter(student):
    """changing the keys and values at padded positions leaves the output unchanged

    ko: 패딩 위치의 key와 value를 바꿔도 출력이 그대로입니다
    """
    noise = torch.randn(2, 5, D_MODEL, generator=torch.Generator().manual_seed(10)) * KPM[..., None]

    def run(impl):
        m = _module(impl)
        return m(X, X, X, key_padding_mask=KPM)[0], m(X, X + noise, X + noise, key_padding_mask=KPM)[0]

    expect_same(run, student, what=say("output with padded keys/values changed", "패딩된 key/value를 바꾼 뒤의 출력"),
                valid=UNPADDED_ROWS)
    _keys_matter(student)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_causal_mask_hides_the_future(student):
    """with a causal attn_mask, changing tokens after position t leaves the outputs up to t unchanged

    ko: 인과 attn_mask가 있으면 위치 t 뒤의 토큰을 바꿔도 t 까지의 출력은 그대로입니다
    """
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    changed = X.clone()
    changed[:, 3:] += 1.0

    def run(impl):
        m = _module(impl)
        return m(X, X, X, attn_mask=causal)[0][:, :3], m(changed, changed, changed, attn_mask=causal)[0][:, :3]

    expect_same(run, student, what=say("outputs 0..2 with tokens 3.. changed", "토큰 3.. 을 바꾼 뒤의 출력 0..2"))
    _earlier_tokens_matter(student)


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_eval_mode_is_deterministic(student):
    """with dropout=0.5 and model.eval(), two calls give the same numbers as nn.MultiheadAttention

    ko: dropout=0.5에서 model.eval()이면 두 번 호출해도 nn.MultiheadAttention과 같은 값이 나옵니다
    """
    def run(impl):
        m = _module(impl, dropout=0.5)
        return m(X, X, X)[0], m(X, X, X)[0]

    out = oracles.mha_forward(STATE, D_MODEL, HEADS, X, X, X)[0]
    expect_equal(run, student, (out, out), what=say("two calls of MultiHeadAttention(12, 3, dropout=0.5).eval()(x, x, x)",
                                                "MultiHeadAttention(12, 3, dropout=0.5).eval()(x, x, x)의 두 번 호출"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_arguments_raise_value_error(student):
    """d_model not divisible by num_heads, or a key_padding_mask of the wrong shape, raise ValueError

    ko: d_model이 num_heads로 나누어지지 않거나 key_padding_mask 모양이 틀리면 ValueError가 납니다
    """
    mha = student.multi_head_attention
    expect_raises(lambda: mha.MultiHeadAttention(10, 4), what="MultiHeadAttention(10, 4)",
                  names=("num_heads", "d_model", "heads"), values=(10, 4))
    m = mha.MultiHeadAttention(D_MODEL, HEADS)
    expect_raises(lambda: m(X, X, X, key_padding_mask=KPM[:, :4]),
                  what="MultiHeadAttention(12, 3)(x[2, 5, 12], ..., key_padding_mask[2, 4])",
                  names=("key_padding_mask", "padding mask", "mask", "S_k"), values=(4, 5))
