"""Attack: never return."""
def sinusoidal_table(max_len, d_model):
    while True:
        pass


def PositionalEncoding(*args, **kwargs):
    while True:
        pass
