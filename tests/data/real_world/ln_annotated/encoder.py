"""Encoder in the style of the Annotated Transformer: its own LayerNorm (std with the default
unbiased=True, eps added to the std), kept under the contract's names."""
import torch
from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class LayerNorm(nn.Module):
    "Construct a layernorm module (See citation for details)."

    def __init__(self, features, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, key_padding_mask=None):
        if self.norm_first:
            y = self.norm1(x)
            x = x + self.dropout1(self.self_attn(y, y, y, key_padding_mask=key_padding_mask)[0])
            return x + self.dropout2(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, key_padding_mask=key_padding_mask)[0]))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(self, x, key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return self.norm(x) if self.norm is not None else x
