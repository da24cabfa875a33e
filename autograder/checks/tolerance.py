"""The contract's one tolerance, for suites (defined in :mod:`autograder.mistakes.comparison`,
where every comparison reads it): a value passes within ``ATOL + RTOL * |expected|`` whatever the
dtype; values computed from positions up to ``n`` allow ``position_atol(n)`` instead of ``ATOL``."""

from autograder.mistakes.comparison import ATOL, RTOL, position_atol

__all__ = ["ATOL", "RTOL", "position_atol"]
