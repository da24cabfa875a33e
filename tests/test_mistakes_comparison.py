"""The comparison of a submission's output with the expected one
(:mod:`autograder.mistakes.comparison`, used through :mod:`autograder.checks.expectations`): what
passes, what fails and the words it says, never the expected values."""

import math

import pytest
import torch

from autograder.checks import expectations


def test_compare_names_shape_dtype_nan_and_values():
    e = torch.zeros(2, 3)
    with pytest.raises(expectations.Mismatch, match=r"wrong shape: expected \[2, 3\], got \[3, 2\]"):
        expectations.compare(torch.zeros(3, 2), e, what="out")
    with pytest.raises(expectations.Mismatch, match="wrong dtype: expected torch.float32, got torch.float64"):
        expectations.compare(torch.zeros(2, 3, dtype=torch.float64), e, what="out")
    with pytest.raises(expectations.Mismatch, match=r"contains NaN at 1 of 6 positions \(first at \(1, 2\)\)"):
        expectations.compare(torch.tensor([[0, 0, 0], [0, 0, math.nan]]), e, what="out")
    with pytest.raises(expectations.Mismatch, match=r"wrong values at 1 of 6 positions \(first at \(0, 1\), "
                                               r"where you returned 0.5\), largest difference 0.5"):
        expectations.compare(torch.tensor([[0, 0.5, 0], [0, 0, 0]]), e, what="out")
    with pytest.raises(expectations.Mismatch, match="should be a tensor, got tuple"):
        expectations.compare((e,), e, what="out")
    expectations.compare(torch.tensor([[9.0, 0, 0], [0, 0, 0]]), e, what="out",
                    valid=torch.tensor([[False, True, True], [True, True, True]]))


def test_messages_never_show_expected_values():
    expected = torch.full((4,), 123.456)
    with pytest.raises(expectations.Mismatch) as err:
        expectations.compare(torch.zeros(4), expected, what="out")
    assert "123.456" not in str(err.value)


def test_compare_passes_and_fails_as_before_on_nan_inf_and_masked_values():
    """compare() checks the common all-close case first; what passes and what fails, and why, is
    unchanged."""
    from autograder.mistakes.comparison import Mismatch, compare

    nan, inf = float("nan"), float("inf")
    passing = [([1.0, nan, inf], [1.0 + 1e-7, nan, inf], None),
               ([5.0, 2.0], [1.0, 2.0], torch.tensor([False, True])),   # the wrong value is masked out
               ([-inf, 0.0], [-inf, 0.0], None)]
    failing = [([1.0, nan], [1.0, 2.0], None, "NaN"), ([inf, 0.0], [1.0, 0.0], None, "inf"),
               ([inf], [-inf], None, "wrong values"), ([1.0, 2.1], [1.0, 2.0], None, "wrong values"),
               ([5.0, 2.0], [1.0, 2.0], torch.tensor([True, True]), "wrong values")]
    for got, expected, valid in passing:
        compare(torch.tensor(got), torch.tensor(expected), what="x", valid=valid)
    for got, expected, valid, why in failing:
        with pytest.raises(Mismatch, match=why):
            compare(torch.tensor(got), torch.tensor(expected), what="x", valid=valid)
