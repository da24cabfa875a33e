"""Multi-head attention whose mask is built but never applied (masked_fill's result is dropped)."""
import math

import torch
from torch import nn

from masks import combine_masks


def split_heads(x, num_heads):
    batch, seq, width = x.shape
    if width % num_heads:
        raise ValueError(f"d_model ({width}) must be divisible by num_heads ({num_heads})")
    return x.reshape(batch, seq, num_heads, width // num_heads).transpose(1, 2)


def merge_heads(x):
    batch, heads, seq, d = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.num_heads, self.head_dim, self.dropout = num_heads, d_model // num_heads, dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        b, s_q, s_k = query.shape[0], query.shape[1], key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, s_k):
            raise ValueError(f"key_padding_mask must be ({b}, {s_k}), got {tuple(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (s_q, s_k):
            raise ValueError(f"attn_mask must be ({s_q}, {s_k}), got {tuple(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        mask = combine_masks(attn_mask, key_padding_mask)
        if mask is not None:
            scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if self.training and self.dropout > 0:
            weights = nn.functional.dropout(weights, self.dropout)
        out = self.out_proj(merge_heads(weights @ v))
        if not need_weights:
            return out, None
        return out, weights.mean(dim=1) if average_attn_weights else weights
