"""Attack: read the hidden tests' draws off what a student sees of them.

Every call prints its sizes (``LEAK-PRINT[...]``); a call whose length is 0 mod 3 raises with its
sizes in the message (``LEAK-RAISE[...]``), 1 mod 3 gives the table with sin and cos swapped,
2 mod 3 the table of positions counted from 1. The named mistake of a hidden test would then tell
the hidden length mod 3, its printed output and its exception the sizes themselves. The errors
the contract asks for (``ValueError``) come back as ``RuntimeError``, so that no test passes: the
attack earns nothing, only what it could read counts."""

_real_table = sinusoidal_table  # noqa: F821 (defined by the reference solution this is appended to)
_RealPE = PositionalEncoding  # noqa: F821


def _leaky_table(max_len, d_model):
    print(f"LEAK-PRINT[{max_len}, {d_model}]")
    try:
        if max_len % 3 == 0:
            raise RuntimeError(f"LEAK-RAISE[{max_len}, {d_model}]")
        if max_len % 3 == 1:
            return _real_table(max_len, d_model).view(max_len, -1, 2).flip(-1).reshape(max_len, d_model)
        return _real_table(max_len + 1, d_model)[1:]
    except ValueError as exc:
        raise RuntimeError(f"LEAK-RAISE[{max_len}, {d_model}] {exc}") from None


def sinusoidal_table(max_len, d_model):  # noqa: F811
    return _leaky_table(max_len, d_model)


class PositionalEncoding(_RealPE):  # noqa: F811
    def forward(self, x):
        print(f"LEAK-PRINT{list(x.shape)}")
        if x.shape[1] % 3 == 0:
            raise RuntimeError(f"LEAK-RAISE{list(x.shape)}")
        try:
            return super().forward(x)
        except ValueError as exc:
            raise RuntimeError(f"LEAK-RAISE{list(x.shape)} {exc}") from None
