"""Decoder with a hand-written LayerNorm whose gain and shift are declared but never used."""
import torch
import torch.nn as nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class MyLayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mu = x.mean(dim=-1, keepdim=True)
        var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.eps)


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = MyLayerNorm(d_model), MyLayerNorm(d_model), MyLayerNorm(d_model)
        self.dropout1, self.dropout2, self.dropout3 = nn.Dropout(dropout), nn.Dropout(dropout), nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
        def sa(h):
            return self.self_attn(h, h, h, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask)[0]

        def ca(h):
            return self.cross_attn(h, memory, memory, key_padding_mask=memory_key_padding_mask)[0]

        if self.norm_first:
            x = x + self.dropout1(sa(self.norm1(x)))
            x = x + self.dropout2(ca(self.norm2(x)))
            return x + self.dropout3(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout1(sa(x)))
        x = self.norm2(x + self.dropout2(ca(x)))
        return self.norm3(x + self.dropout3(self.feed_forward(x)))


class Decoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.norm = MyLayerNorm(d_model) if norm_first else None

    def forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, tgt_key_padding_mask, memory_key_padding_mask)
        if self.norm is not None:
            x = self.norm(x)
        return x
