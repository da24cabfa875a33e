"""Hidden tests of exercise 2, ``positional_encoding.py``: random sizes, edge cases, the reference."""

import pytest
import torch

from autograder.checks import inputs, say, tolerance
from autograder.checks import expect_raises, expect_reference

pytestmark = pytest.mark.exercise("positional_encoding")

# d_model of a test that compares values: at least two (sin, cos) pairs. With d_model = 2 the only
# frequency is 1 whatever the exponent, and both layouts are (sin, cos): every exponent and layout
# mistake then gives the right table, and a draw of 2 made the grade move with the seed.
MIN_WIDTH = 4
LONGEST = 5000   # PositionalEncoding's default max_len: the value tests reach it, so every band of rows counts


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_random_tables_and_the_default_length(student, rng):
    """random short tables, and the default 5000 positions, match the reference within float32 rounding

    ko: 임의의 짧은 표와 기본 길이 5000의 표가 float32 반올림 오차 안에서 정답과 같습니다
    """
    max_len, = inputs.distinct(rng, 1, 1, 90)
    d_short, d_long = inputs.distinct(rng, 2, MIN_WIDTH, 40, even=True, exclude=(max_len,))

    def short(impl):
        return impl.positional_encoding.sinusoidal_table(max_len, d_short)

    def long(impl):
        return impl.positional_encoding.sinusoidal_table(LONGEST, d_long)

    expect_reference(short, student, what=f"sinusoidal_table({max_len}, {d_short})",
                     atol=tolerance.position_atol(max_len))
    expect_reference(long, student, what=f"sinusoidal_table({LONGEST}, {d_long})",
                     atol=tolerance.position_atol(LONGEST))


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_forward_random_shapes_full_length_one_token_float64(student, rng):
    """S == max_len at the default max_len (every position), batch 1 with length 1, and float64 input (output follows its dtype)

    ko: 기본 max_len에서 S == max_len (모든 위치), 배치 1·길이 1, float64 입력 (출력은 입력의 dtype을 따름)
    """
    batch = inputs.integer(rng, 1, 3)
    d_model, = inputs.distinct(rng, 1, MIN_WIDTH, 24, even=True, exclude=(batch,))
    full = inputs.randn(rng, batch, LONGEST, d_model)
    one = inputs.randn(rng, 1, 1, d_model, dtype=torch.float64)

    def run(impl):
        m = impl.positional_encoding.PositionalEncoding(d_model)
        return m(full), m(one)

    expect_reference(run, student, what=say(f"PositionalEncoding({d_model}) on x[{batch}, {LONGEST}, {d_model}] and a "
                                            f"float64 x[1, 1, {d_model}]",
                                            f"x[{batch}, {LONGEST}, {d_model}]와 float64 x[1, 1, {d_model}]에 대한 "
                                            f"PositionalEncoding({d_model})"), atol=tolerance.position_atol(LONGEST))


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_forward_non_contiguous_input(student, rng):
    """PositionalEncoding gives the same result on a non-contiguous input

    ko: 연속(contiguous)이 아닌 입력에서도 PositionalEncoding이 같은 결과를 냅니다
    """
    d_model, = inputs.distinct(rng, 1, MIN_WIDTH, 20, even=True)
    batch, length = inputs.distinct(rng, 2, 2, 20, even=True, exclude=(d_model,))
    x = inputs.randn(rng, batch, length, d_model)

    def run(impl):
        m = impl.positional_encoding.PositionalEncoding(d_model, max_len=length + 3)
        return inputs.noncontiguous(impl, m, x)

    expect_reference(run, student, what=say(f"PositionalEncoding({d_model}, {length + 3}) on a non-contiguous x",
                                            f"연속(contiguous)이 아닌 x에 대한 PositionalEncoding({d_model}, {length + 3})"),
                     atol=tolerance.position_atol(length))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_length_limit_and_odd_width(student, rng):
    """S = max_len + 1 raises ValueError, and so does an odd d_model

    ko: S = max_len + 1이나 홀수 d_model은 ValueError를 냅니다
    """
    max_len, d_model = inputs.distinct(rng, 2, 2, 30, even=True)
    pe = student.positional_encoding
    m = pe.PositionalEncoding(d_model, max_len=max_len)
    expect_raises(lambda: m(torch.zeros(1, max_len + 1, d_model)),
                  what=say(f"PositionalEncoding({d_model}, max_len={max_len})(x with S={max_len + 1})",
                           f"PositionalEncoding({d_model}, max_len={max_len})(S={max_len + 1}인 x)"),
                  names=("max_len", "S", "seq_len", "sequence length", "length"), values=(max_len + 1, max_len))
    expect_raises(lambda: pe.sinusoidal_table(max_len, d_model + 1), what=f"sinusoidal_table({max_len}, {d_model + 1})",
                  names=("d_model",), values=(d_model + 1,))
