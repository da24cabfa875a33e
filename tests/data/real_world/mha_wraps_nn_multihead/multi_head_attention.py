"""Multi-head attention that wraps PyTorch's nn.MultiheadAttention."""
import torch.nn as nn


def split_heads(x, num_heads):
    b, s, d = x.shape
    if d % num_heads:
        raise ValueError(f"d_model={d} must be divisible by num_heads={num_heads}")
    return x.reshape(b, s, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        return self.attn(query, key, value, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                         need_weights=need_weights, average_attn_weights=average_attn_weights)
