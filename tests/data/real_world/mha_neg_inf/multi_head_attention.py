"""Multi-head attention written from scratch (masked_fill with -inf, as PyTorch does)."""
import math

import torch
import torch.nn as nn

from masks import combine_masks


def split_heads(x, num_heads):
    b, s, d = x.shape
    if d % num_heads != 0:
        raise ValueError(f"d_model must be divisible by num_heads, got d_model={d}, num_heads={num_heads}")
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.transpose(1, 2).contiguous().view(b, s, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model must be divisible by num_heads, got d_model={d_model}, num_heads={num_heads}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.shape[-1] != self.d_model:
                raise ValueError(f"{name} must be [B, S, d_model], got {name}.shape={tuple(t.shape)}")
        b, sq, _ = query.shape
        sk = key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, sk):
            raise ValueError(f"key_padding_mask must be [{b}, {sk}], got key_padding_mask.shape={tuple(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (sq, sk):
            raise ValueError(f"attn_mask must be [{sq}, {sk}], got attn_mask.shape={tuple(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        mask = combine_masks(attn_mask, key_padding_mask)
        if mask is not None:
            scores = scores.masked_fill(mask, float('-inf'))
        attn = torch.softmax(scores, dim=-1)
        attn = torch.nn.functional.dropout(attn, p=self.dropout if self.training else 0.0)
        out = self.out_proj(merge_heads(attn @ v))
        if not need_weights:
            return out, None
        return out, attn.mean(dim=1) if average_attn_weights else attn
