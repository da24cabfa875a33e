"""Encoder layers written with a residual helper and the two norms also in a ``norms`` list; the
stack keeps its layer count as an attribute."""

from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.norms = nn.ModuleList([self.norm1, self.norm2])
        self.norm_first = norm_first

    def _residual(self, x, sublayer, norm, dropout):
        if self.norm_first:
            return x + dropout(sublayer(norm(x)))
        return norm(x + dropout(sublayer(x)))

    def forward(self, x, key_padding_mask=None):
        x = self._residual(x, lambda h: self.self_attn(h, h, h, key_padding_mask=key_padding_mask)[0],
                           self.norms[0], self.dropout1)
        return self._residual(x, self.feed_forward, self.norms[1], self.dropout2)


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.num_layers = num_layers
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return x if self.norm is None else self.norm(x)
