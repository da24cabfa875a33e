"""Attention as in the Annotated Transformer: masked_fill(mask == 0, -1e9)."""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got dropout_p={dropout_p}")
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout_p > 0.0:
        p_attn = torch.nn.functional.dropout(p_attn, p=dropout_p)
    return torch.matmul(p_attn, value), p_attn
