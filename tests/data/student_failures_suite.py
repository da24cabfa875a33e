"""A tiny suite for tests/test_student_failures.py: a test per way a student's value reaches the
kit's code (a function's value checked against the contract, an attribute the test reads, a
constructor's value), and one whose own code is broken (the kit's problem). Not a kit suite."""

import pytest

from autograder.checks import expect_equal
from autograder.reports.pictures import formula_table

pytestmark = [pytest.mark.exercise("positional_encoding"), pytest.mark.visibility("public")]


@pytest.mark.points(1)
def test_table(student):
    """the table matches the formula"""
    expect_equal(lambda impl: impl.positional_encoding.sinusoidal_table(4, 4), student, formula_table(4, 4).float(),
                 what="sinusoidal_table(4, 4)")


@pytest.mark.points(1)
def test_buffer(student):
    """the module keeps its table in the buffer pe"""
    module = student.positional_encoding.PositionalEncoding(4, max_len=6)
    assert tuple(module.pe.shape) == (1, 6, 4)


@pytest.mark.points(1)
def test_broken_test_code(student):
    """a test whose own code is wrong"""
    student.positional_encoding.sinusoidal_table(2, 4)
    {}["a key the kit forgot"]
