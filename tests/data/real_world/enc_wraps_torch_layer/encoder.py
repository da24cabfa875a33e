"""An encoder built on PyTorch's own nn.TransformerEncoderLayer."""
import torch.nn as nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, batch_first=True,
                                                norm_first=norm_first)

    def forward(self, x, key_padding_mask=None):
        return self.layer(x, src_key_padding_mask=key_padding_mask)


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
