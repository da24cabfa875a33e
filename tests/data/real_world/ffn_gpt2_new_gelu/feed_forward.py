"""A GPT-2 style MLP block (c_fc, NewGELU, c_proj), adapted to the exercise's constructor."""
import math

import torch
import torch.nn as nn


class NewGELU(nn.Module):
    """The GELU of the GPT-2 code: the tanh approximation."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
        self.c_fc = nn.Linear(d_model, d_ff)
        self.gelu = NewGELU()
        self.c_proj = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.dropout(x)
        return self.c_proj(x)
