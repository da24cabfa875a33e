"""Public tests of exercise 2, ``positional_encoding.py``: the sinusoidal table and its buffer.

Each test's hidden twin draws other sizes (tables up to the default 5000 positions, so every band
of rows counts) through the ``example`` fixture."""

import pytest
import torch

from autograder.checks import formulas, mistaken, tolerance, weights
from autograder.checks import expect_differs, expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("positional_encoding")

LONGEST = 5000   # PositionalEncoding's default max_len: the twins' tables reach it


@pytest.mark.kind("values")
@pytest.mark.points(1.5)
def test_table_matches_the_formula(student, example):
    """sinusoidal_table(50, 16): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)

    ko: sinusoidal_table(50, 16)이 PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)와 같습니다
    """
    max_len, = example.sizes((50,), 64, LONGEST)
    d_model, = example.sizes((16,), 4, 48, even=True)

    def run(impl):
        return impl.positional_encoding.sinusoidal_table(max_len, d_model)

    expect_equal(run, student, formulas.sinusoidal_table(max_len, d_model), what=f"sinusoidal_table({max_len}, {d_model})",
                 atol=tolerance.position_atol(max_len), known_mistakes=mistaken.pe_table(max_len, d_model))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_odd_d_model_raises_value_error(student, example):
    """an odd d_model raises ValueError naming d_model

    ko: 홀수 d_model은 d_model을 밝힌 ValueError를 냅니다
    """
    max_len, = example.sizes((10,), 2, 40)
    d_model, = example.sizes((7,), 3, 41, exclude=range(0, 42, 2))
    pe = student.positional_encoding
    expect_raises(lambda: pe.sinusoidal_table(max_len, d_model), what=f"sinusoidal_table({max_len}, {d_model})",
                  names=("d_model",), values=(d_model,))
    expect_raises(lambda: pe.PositionalEncoding(d_model, max_len), what=f"PositionalEncoding({d_model}, max_len={max_len})",
                  names=("d_model",), values=(d_model,))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_forward_adds_the_first_s_rows(student, example):
    """forward(x) = x + PE[:S] for batch-first x [B, S, d_model]; eval mode disables dropout

    ko: 배치 우선 x [B, S, d_model]에 대해 forward(x) = x + PE[:S]; eval 모드에서는 드롭아웃이 꺼집니다
    """
    batch, = example.sizes((3,), 2, 4)
    length, = example.sizes((7,), 64, 1000)
    d_model, = example.sizes((12,), 4, 24, even=True)
    max_len, = example.sizes((30,), length, LONGEST)
    x = torch.randn(batch, length, d_model, generator=example.rng(2))

    def run(impl):
        m = impl.positional_encoding.PositionalEncoding(d_model, max_len=max_len, dropout=0.3)
        m.eval()
        return m(x)

    expect_equal(run, student, x + formulas.sinusoidal_table(length, d_model),
                 what=f"PositionalEncoding({d_model}, {max_len}, dropout=0.3).eval()(x)", atol=tolerance.position_atol(length),
                 known_mistakes=mistaken.mapped(mistaken.pe_table(length, d_model), lambda table: x + table))


@pytest.mark.kind("names")
@pytest.mark.points(1.5)
def test_pe_is_a_persistent_buffer(student, example):
    """pe is a persistent buffer [1, max_len, d_model]: in state_dict(), not a parameter, follows .double()

    ko: pe는 [1, max_len, d_model] persistent buffer입니다: state_dict()에 있고, parameter가 아니며, .double()을 따릅니다
    """
    d_model, = example.sizes((8,), 4, 32, even=True)
    max_len, = example.sizes((20,), 2, 200)
    module = f"PositionalEncoding({d_model}, max_len={max_len})"
    weights.expect_names(lambda impl: impl.positional_encoding.PositionalEncoding(d_model, max_len=max_len), student,
                         {"pe": torch.zeros(1, max_len, d_model)}, what=module, unmatched=False)

    def run(impl):   # other buffers and attributes are the student's to add (exercises/README.md)
        m = impl.positional_encoding.PositionalEncoding(d_model, max_len=max_len)
        in_state = "pe" in m.state_dict()
        is_parameter = "pe" in [name for name, _ in m.named_parameters()]
        pe = m.double().pe
        return in_state, is_parameter, str(pe.dtype), list(pe.shape)

    expect_equal(run, student, (True, False, "torch.float64", [1, max_len, d_model]),
                 what=say(f"{module}: ('pe' in state_dict(), 'pe' a parameter, pe.dtype after .double(), pe.shape)",
                          f"{module}: ('pe'가 state_dict()에 있는지, 'pe'가 파라미터인지, .double() 뒤의 pe.dtype, pe.shape)"))

    def rows(impl):  # the premise: the buffer holds a table that tells positions apart
        pe = impl.positional_encoding.PositionalEncoding(d_model, max_len=max_len).pe
        return pe[0, 0], pe[0, 1]

    expect_differs(rows, student, what=say(f"{module}.pe: rows 0 and 1 (positions 0 and 1)",
                                           f"{module}.pe의 0행과 1행 (위치 0과 1)"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_too_long_sequence_raises_value_error(student, example):
    """a sequence longer than max_len raises ValueError

    ko: max_len보다 긴 시퀀스는 ValueError를 냅니다
    """
    d_model, = example.sizes((4,), 4, 16, even=True)
    max_len, = example.sizes((5,), 2, 60)
    m = student.positional_encoding.PositionalEncoding(d_model, max_len=max_len)
    longer = max_len + 1
    expect_raises(lambda: m(torch.zeros(2, longer, d_model)),
                  what=say(f"PositionalEncoding({d_model}, max_len={max_len})(x with S={longer})",
                           f"PositionalEncoding({d_model}, max_len={max_len})(S={longer}인 x)"),
                  names=("max_len", "S", "seq_len", "sequence length", "length"), values=(longer, max_len))
