"""Feed-forward with a hand-written erf GELU (the sqrt(2) went missing)."""
import torch
from torch import nn


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 2.0))


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        return self.linear2(self.dropout(gelu(self.linear1(x))))
