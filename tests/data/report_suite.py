"""A tiny grading suite for the report tests (run by tests/test_reports_render.py through the plugin).

Not a kit suite: its points do not add up to the exercises'. It exercises what the reports
show: a passing/failing public test with a named mistake and attached plot data, a hidden
test, and a Korean test name.
"""

import pytest
import torch

from autograder.checks import expect_equal
from autograder.reports.pictures import formula_table

pytestmark = [pytest.mark.exercise("positional_encoding"), pytest.mark.visibility("public")]


@pytest.mark.points(2)
def test_table(student, attach):
    """the table matches the formula
    ko: 표가 공식과 일치한다"""
    expected = formula_table(8, 8).float()
    got = student.positional_encoding.sinusoidal_table(8, 8)
    attach("pe_table", got=got, expected=expected)
    expect_equal(lambda impl: impl.positional_encoding.sinusoidal_table(8, 8), student, expected,
                 what="sinusoidal_table(8, 8)")


@pytest.mark.points(1)
@pytest.mark.visibility("hidden")
def test_hidden_table(student):
    """a longer table matches the reference"""
    expect_equal(lambda impl: impl.positional_encoding.sinusoidal_table(12, 6), student,
                 formula_table(12, 6).float(), what="sinusoidal_table(12, 6)")


@pytest.mark.points(1)
@pytest.mark.exercise("masks")
def test_causal(student):
    """the causal mask blocks the future"""
    expect_equal(lambda impl: impl.masks.make_causal_mask(3), student,
                 torch.ones(3, 3, dtype=torch.bool).triu(1), what="make_causal_mask(3)")
