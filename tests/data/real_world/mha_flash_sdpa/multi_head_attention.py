"""GPT-style attention that hands the heads to PyTorch's fused kernel (F.scaled_dot_product_attention)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def split_heads(x, num_heads):
    B, T, C = x.size()
    if C % num_heads != 0:
        raise ValueError(f"d_model={C} must be divisible by num_heads={num_heads}")
    return x.view(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x):
    B, H, T, D = x.size()
    return x.transpose(1, 2).contiguous().view(B, T, H * D)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        B, T, _ = query.shape
        S = key.shape[1]
        if key_padding_mask is not None and key_padding_mask.shape != (B, S):
            raise ValueError(f"key_padding_mask must be [{B}, {S}], got {list(key_padding_mask.shape)}")
        if attn_mask is not None and attn_mask.shape != (T, S):
            raise ValueError(f"attn_mask must be [{T}, {S}], got {list(attn_mask.shape)}")
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        mask = None
        if attn_mask is not None:
            mask = attn_mask[None, None]
        if key_padding_mask is not None:
            pad = key_padding_mask[:, None, None, :]
            mask = pad if mask is None else mask | pad
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           dropout_p=self.dropout if self.training else 0.0)
        out = self.out_proj(merge_heads(y))
        if not need_weights:
            return out, None
        att = torch.softmax(q @ k.transpose(-2, -1) / self.head_dim ** 0.5, dim=-1)
        return out, att.mean(dim=1) if average_attn_weights else att
