"""Attack (with rope.py): record every call of the grader into positional_encoding, then print
the record from a failing rope test, hoping the hidden tests' inputs show up under a public test.

Appended to the reference solution. The record holds only sizes (no addresses), so the same
calls print the same text in any run."""

CALLS = []
_real_table = sinusoidal_table  # noqa: F821 (defined by the reference solution this is appended to)
_RealPE = PositionalEncoding  # noqa: F821


def sinusoidal_table(max_len, d_model):  # noqa: F811
    CALLS.append(f"sinusoidal_table({max_len}, {d_model})")
    return _real_table(max_len, d_model)


class PositionalEncoding(_RealPE):  # noqa: F811
    def forward(self, x):
        CALLS.append(f"forward(x{list(x.shape)})")
        return super().forward(x)


