"""Legitimate: multi-head attention with its own attention, an nn.Dropout on the weights (returned after
dropout) and a precomputed scale."""
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    b, s, d = x.shape
    if d % num_heads:
        raise ValueError(f"d_model={d} is not divisible by num_heads={num_heads}")
    return x.reshape(b, s, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.scale = self.head_dim ** -0.5
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        b, s_q, s_k = query.shape[0], query.shape[1], key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, s_k):
            raise ValueError(f"key_padding_mask must be [{b}, {s_k}], got {tuple(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (s_q, s_k):
            raise ValueError(f"attn_mask must be [{s_q}, {s_k}], got {tuple(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.num_heads) * self.scale
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        scores = q @ k.transpose(-2, -1)
        blocked = torch.zeros(1, 1, s_q, s_k, dtype=torch.bool, device=q.device)
        if attn_mask is not None:
            blocked = blocked | attn_mask
        if key_padding_mask is not None:
            blocked = blocked | key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1).masked_fill(blocked.all(-1, keepdim=True), 0.0)
        weights = self.attn_drop(weights)
        out = self.out_proj(merge_heads(weights @ v))
        if not need_weights:
            return out, None
        return out, weights.mean(dim=1) if average_attn_weights else weights
