"""Attack: +inf/-inf outputs of the right shape (inf - inf tricks in tolerances)."""
import torch


def sinusoidal_table(max_len, d_model):
    t = torch.full((max_len, d_model), float("inf"))
    t[:, 1::2] = float("-inf")
    return t


class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.register_buffer("pe", torch.full((1, max_len, d_model), float("inf")))

    def forward(self, x):
        return torch.full_like(x, float("inf"))
