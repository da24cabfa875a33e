"""A feed-forward written with einsum and [d_in, d_out] kernels (the JAX/Flax layout)."""
import math

import torch
import torch.nn as nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
        self.w1 = nn.Parameter(torch.randn(d_model, d_ff) / math.sqrt(d_model))
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.randn(d_ff, d_model) / math.sqrt(d_ff))
        self.b2 = nn.Parameter(torch.zeros(d_model))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = torch.relu(torch.einsum("...d,df->...f", x, self.w1) + self.b1)
        return torch.einsum("...f,fd->...d", self.dropout(h), self.w2) + self.b2
