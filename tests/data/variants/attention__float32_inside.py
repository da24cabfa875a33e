"""Scaled dot-product attention computed in float32 whatever the input's dtype (the contract allows
it: one tolerance, whatever the dtype), with einsum, cast back to the input's dtype."""

import math

import torch
import torch.nn.functional as F

from masks import masked_softmax


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    dtype = query.dtype
    q, k, v = query.float(), key.float(), value.float()
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    if dropout_p > 0:
        weights = F.dropout(weights, p=dropout_p)
    elif dropout_p < 0:
        raise ValueError(f"dropout_p must be in [0, 1], got {dropout_p}")
    return torch.einsum("...qk,...kd->...qd", weights, v).to(dtype), weights.to(dtype)
