"""Attention that zeroes the blocked weights after the softmax."""
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got dropout_p={dropout_p}")
    scores = query @ key.transpose(-2, -1) / math.sqrt(key.shape[-1])
    attn = F.softmax(scores, dim=-1)
    if mask is not None:
        attn = attn * (~mask).to(attn.dtype)
    attn = F.dropout(attn, p=dropout_p, training=dropout_p > 0)
    return attn @ value, attn
