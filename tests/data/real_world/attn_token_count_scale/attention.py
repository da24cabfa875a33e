"""Scaled dot-product attention that scales by the number of tokens."""
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got dropout_p={dropout_p}")
    num_tokens = query.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(num_tokens)
    if mask is not None:
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)
    if dropout_p > 0:
        weights = F.dropout(weights, p=dropout_p)
    return torch.matmul(weights, value), weights
