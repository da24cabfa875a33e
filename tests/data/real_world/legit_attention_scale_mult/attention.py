"""Legitimate: attention that scales the queries by d_k ** -0.5 before the product and uses the kit's
masked_softmax."""
import torch.nn.functional as F

from masks import masked_softmax


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p must be in [0, 1], got dropout_p={dropout_p}")
    scores = (query * query.shape[-1] ** -0.5) @ key.transpose(-2, -1)
    weights = masked_softmax(scores, mask, dim=-1)
    if dropout_p > 0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ value, weights
