"""Attack (with feed_forward.py): endless loops in every call of two exercises, so that the child
dies again and again; rope.py and autoencoder.py are correct (the references). Dying children
must cost only the looping exercises: rope and autoencoder keep their full marks, and the whole
submission stays within its time limit."""


def sinusoidal_table(max_len, d_model):
    while True:
        pass


def PositionalEncoding(*args, **kwargs):
    while True:
        pass
