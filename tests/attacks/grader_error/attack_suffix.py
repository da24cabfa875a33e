"""Attack: return a value that makes the grader's own test code fail (not an assertion: a
TypeError in the parent), to read the grader's internals (suite paths, line numbers, source
lines) from the error report a student sees.

The first ``state_dict()`` in the child is honest (the names check reads it and validates its
types); later ones return keys that ``sorted()`` in the suite's own code cannot order."""

_CALLS = []
_RealPE = PositionalEncoding  # noqa: F821 (defined by the reference solution this is appended to)


class PositionalEncoding(_RealPE):  # noqa: F811
    def state_dict(self, *args, **kwargs):
        _CALLS.append(1)
        if len(_CALLS) == 1:
            return super().state_dict(*args, **kwargs)
        return {0: "zero", "pe": "one"}  # sorted() of mixed keys raises TypeError in the grader
