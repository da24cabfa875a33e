"""Attack: a torch.Tensor subclass with wrong values whose comparisons all say "equal"."""
import torch


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ in ("allclose", "equal", "isclose", "__eq__", "eq"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})

    def __eq__(self, other):
        return True


def sinusoidal_table(max_len, d_model):
    return torch.zeros(max_len, d_model).as_subclass(Liar)


class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.register_buffer("pe", torch.zeros(1, max_len, d_model).as_subclass(Liar))

    def forward(self, x):
        return torch.zeros_like(x).as_subclass(Liar)
