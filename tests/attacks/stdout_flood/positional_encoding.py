"""Attack: flood stdout and stderr without end."""
import sys


def _flood(*args, **kwargs):
    line = "PASSED " * 10000 + "\n"
    while True:
        sys.stdout.write(line)
        sys.stderr.write(line)


sinusoidal_table = PositionalEncoding = _flood
