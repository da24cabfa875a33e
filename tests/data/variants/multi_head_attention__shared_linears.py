"""Multi-head attention that holds its four projections under the contract's names and also in a
``linears`` list (the Annotated Transformer's loop), with its softmax scale in a buffer."""

import math

import torch
from torch import nn

from attention import scaled_dot_product_attention
from masks import combine_masks


def split_heads(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(b, s, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.head_dim, self.dropout = num_heads, d_model // num_heads, dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.linears = nn.ModuleList([self.q_proj, self.k_proj, self.v_proj, self.out_proj])
        self.register_buffer("inv_scale", torch.tensor(1.0 / math.sqrt(self.head_dim)))

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                average_attn_weights=True):
        b, s_q, _ = query.shape
        s_k = key.shape[1]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (b, s_k):
            raise ValueError(f"key_padding_mask must be [B, S_k] = [{b}, {s_k}], got {list(key_padding_mask.shape)}")
        if attn_mask is not None and tuple(attn_mask.shape) != (s_q, s_k):
            raise ValueError(f"attn_mask must be [S_q, S_k] = [{s_q}, {s_k}], got {list(attn_mask.shape)}")
        q, k, v = (split_heads(layer(x), self.num_heads) for layer, x in zip(self.linears, (query, key, value)))
        out, weights = scaled_dot_product_attention(q, k, v, combine_masks(attn_mask, key_padding_mask),
                                                    self.dropout if self.training else 0.0)
        out = self.linears[3](merge_heads(out))
        if not need_weights:
            return out, None
        return out, weights.mean(dim=1) if average_attn_weights else weights
