"""Public tests of exercise 2, ``positional_encoding.py``: the sinusoidal table and its buffer."""

import pytest
import torch

from autograder.checks import formulas, mistaken, weights
from autograder.checks import expect_differs, expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("positional_encoding")


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_table_matches_the_formula(student):
    """sinusoidal_table(50, 16): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)

    ko: sinusoidal_table(50, 16)이 PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)와 같습니다
    """
    def run(impl):
        return impl.positional_encoding.sinusoidal_table(50, 16)

    expect_equal(run, student, formulas.sinusoidal_table(50, 16), what="sinusoidal_table(50, 16)", atol=2e-5, rtol=0,
                 known_mistakes=mistaken.pe_table(50, 16))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_odd_d_model_raises_value_error(student):
    """an odd d_model raises ValueError naming d_model

    ko: 홀수 d_model은 d_model을 밝힌 ValueError를 냅니다
    """
    pe = student.positional_encoding
    expect_raises(lambda: pe.sinusoidal_table(10, 7), what="sinusoidal_table(10, 7)", names=("d_model",), values=(7,))
    expect_raises(lambda: pe.PositionalEncoding(7, 10), what="PositionalEncoding(7, max_len=10)", names=("d_model",), values=(7,))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_forward_adds_the_first_s_rows(student):
    """forward(x) = x + PE[:S] for batch-first x [B, S, d_model]; eval mode disables dropout

    ko: 배치 우선 x [B, S, d_model]에 대해 forward(x) = x + PE[:S]; eval 모드에서는 드롭아웃이 꺼집니다
    """
    x = torch.randn(3, 7, 12, generator=torch.Generator().manual_seed(2))

    def run(impl):
        m = impl.positional_encoding.PositionalEncoding(12, max_len=30, dropout=0.3)
        m.eval()
        return m(x)

    expect_equal(run, student, x + formulas.sinusoidal_table(7, 12),
                 what="PositionalEncoding(12, 30, dropout=0.3).eval()(x)", atol=2e-5,
                 known_mistakes=mistaken.mapped(mistaken.pe_table(7, 12), lambda table: x + table))


@pytest.mark.kind("names")
@pytest.mark.points(1.5)
def test_pe_is_a_persistent_buffer(student):
    """pe is a persistent buffer [1, max_len, d_model]: in state_dict(), not a parameter, follows .double()

    ko: pe는 [1, max_len, d_model] persistent buffer입니다: state_dict()에 있고, parameter가 아니며, .double()을 따릅니다
    """
    weights.expect_names(lambda impl: impl.positional_encoding.PositionalEncoding(8, max_len=20), student,
                         {"pe": torch.zeros(1, 20, 8)}, what="PositionalEncoding(8, max_len=20)", unmatched=False)

    def run(impl):
        m = impl.positional_encoding.PositionalEncoding(8, max_len=20)
        keys = sorted(m.state_dict())
        params = [name for name, _ in m.named_parameters()]
        pe = m.double().pe
        return keys, params, str(pe.dtype), list(pe.shape)

    expect_equal(run, student, (["pe"], [], "torch.float64", [1, 20, 8]),
                 what=say("PositionalEncoding(8, max_len=20): (state_dict keys, parameter names, pe.dtype after .double(), "
                          "pe.shape)", "PositionalEncoding(8, max_len=20): (state_dict 키, 파라미터 이름, "
                          ".double() 뒤의 pe.dtype, pe.shape)"))

    def rows(impl):  # the premise: the buffer holds a table that tells positions apart
        pe = impl.positional_encoding.PositionalEncoding(8, max_len=20).pe
        return pe[0, 0], pe[0, 1]

    expect_differs(rows, student, what=say("PositionalEncoding(8, max_len=20).pe: rows 0 and 1 (positions 0 and 1)",
                                        "PositionalEncoding(8, max_len=20).pe의 0행과 1행 (위치 0과 1)"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_too_long_sequence_raises_value_error(student):
    """a sequence longer than max_len raises ValueError

    ko: max_len보다 긴 시퀀스는 ValueError를 냅니다
    """
    m = student.positional_encoding.PositionalEncoding(4, max_len=5)
    expect_raises(lambda: m(torch.zeros(2, 6, 4)), what=say("PositionalEncoding(4, max_len=5)(x with S=6)", "PositionalEncoding(4, max_len=5)(S=6인 x)"),
                  names=("max_len", "S", "seq_len", "sequence length", "length"), values=(6, 5))
