"""Encoder layer that forgets the Add of Add & Norm."""
from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


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
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(self.self_attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0])
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
            return x
        attn_out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
        out1 = self.norm1(self.dropout1(attn_out))
        ffn_out = self.feed_forward(out1)
        return self.norm2(self.dropout2(ffn_out))


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, key_padding_mask=None):
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)
        if self.norm is not None:
            x = self.norm(x)
        return x
