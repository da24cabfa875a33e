"""A tiny suite whose public test cannot see a mistake its hidden test names (for
tests/test_run_counterexample.py): with d_model = 2 there is one frequency, exponent 0, so an
exponent mistake gives the right public table; the hidden test draws a wider table from the
run's seed and names the mistake."""

import pytest

from autograder.checks import expect_equal, inputs
from autograder.reports.pictures import formula_table

pytestmark = [pytest.mark.exercise("positional_encoding"), pytest.mark.visibility("public")]


@pytest.mark.points(1)
def test_narrow_table(student):
    """a two-column table matches the formula"""
    expect_equal(lambda impl: impl.positional_encoding.sinusoidal_table(6, 2), student,
                 formula_table(6, 2).float(), what="sinusoidal_table(6, 2)")


@pytest.mark.points(2)
@pytest.mark.visibility("hidden")
def test_hidden_wide_table(student, rng):
    """a wider table of drawn size matches the formula"""
    length, d_model = inputs.integer(rng, 13, 30), 2 * inputs.integer(rng, 6, 15)
    expect_equal(lambda impl: impl.positional_encoding.sinusoidal_table(length, d_model), student,
                 formula_table(length, d_model).float(), what=f"sinusoidal_table({length}, {d_model})")
