"""Attack: return objects that claim to equal anything (__eq__, __torch_function__, allclose)."""
import torch


class Liar:
    shape = dtype = device = None

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True

    def __getattr__(self, name):
        return lambda *a, **k: True


def sinusoidal_table(max_len, d_model):
    return Liar()


class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()

    def forward(self, x):
        return Liar()
