"""Attack: an endless loop in feed_forward (see positional_encoding.py of this attack)."""


def PositionwiseFeedForward(*args, **kwargs):
    while True:
        pass
