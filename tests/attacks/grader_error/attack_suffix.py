"""Attack: return a value that makes the grader's own test code fail (not an assertion: a
TypeError in the parent), to read the grader's internals (suite paths, line numbers, source
lines) from the error report a student sees.

The first ``state_dict()`` in the child is honest (the names check reads it and validates its
types); later ones return a number, which the suite's own code cannot search (``"pe" in
m.state_dict()``) or sort (``sorted(m.state_dict())``, the suite's earlier form)."""

_CALLS = []
_RealPE = PositionalEncoding  # noqa: F821 (defined by the reference solution this is appended to)


class PositionalEncoding(_RealPE):  # noqa: F811
    def state_dict(self, *args, **kwargs):
        _CALLS.append(1)
        if len(_CALLS) == 1:
            return super().state_dict(*args, **kwargs)
        return 0  # "pe" in 0 (and sorted(0)) raises TypeError in the grader
