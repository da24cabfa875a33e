"""Attack: ignore SIGTERM and SIGINT, then hang."""
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)


def _hang(*args, **kwargs):
    while True:
        time.sleep(0.05)


sinusoidal_table = PositionalEncoding = _hang
