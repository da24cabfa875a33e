# Appended to the reference solution by the test: the right answer, but only after a sleep
# longer than the per-call timeout.
import time as _time

_reference_table = sinusoidal_table


def sinusoidal_table(max_len, d_model):
    _time.sleep(6)
    return _reference_table(max_len, d_model)
