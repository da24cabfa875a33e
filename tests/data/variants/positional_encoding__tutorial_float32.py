"""The positional encoding as the PyTorch tutorial writes it: the angles in float32 through
exp(-log(10000) / d_model), the table in a persistent buffer ``pe`` and the positions kept in a
non-persistent buffer of its own."""

import math

import torch
from torch import nn


def sinusoidal_table(max_len, d_model):
    if d_model % 2:
        raise ValueError(f"d_model must be even, got d_model={d_model}")
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0))
        self.register_buffer("positions", torch.arange(max_len), persistent=False)

    def forward(self, x):
        if x.size(1) > self.pe.size(1):
            raise ValueError(f"sequence length S={x.size(1)} exceeds max_len={self.pe.size(1)}")
        return self.dropout(x + self.pe[:, : x.size(1)].to(x.dtype))
