"""Attack: NaN outputs of the right shape and dtype (NaN != NaN tricks)."""
import torch


def sinusoidal_table(max_len, d_model):
    return torch.full((max_len, d_model), float("nan"))


class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.register_buffer("pe", torch.full((1, max_len, d_model), float("nan")))

    def forward(self, x):
        return torch.full_like(x, float("nan"))
