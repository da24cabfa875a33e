"""Encoder with a residual helper that already adds x, used inside another x + ... (Post-LN)."""
from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


def residual(x, sublayer, dropout):
    return x + dropout(sublayer(x))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, key_padding_mask=None):
        attn = lambda h: self.self_attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0]
        if self.norm_first:
            x = residual(x, lambda h: attn(self.norm1(h)), self.dropout1)
            return residual(x, lambda h: self.feed_forward(self.norm2(h)), self.dropout2)
        x = self.norm1(x + residual(x, attn, self.dropout1))
        x = self.norm2(x + residual(x, self.feed_forward, self.dropout2))
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return x if self.norm is None else self.norm(x)
