"""Masks as several tutorials write them: ``masked_softmax`` turns the boolean mask into an additive
float mask of 0 and -inf, adds it to the scores, and handles fully blocked rows with ``torch.where``
(a row of -inf gives NaN in the softmax; the where puts zeros there). Right on every value; the
gradient through the where is finite too, but the recorded Transformer training once gave NaN
losses with it (exercises/README.md: the kit must train it)."""

import torch


def make_padding_mask(token_ids, pad_id=0):
    return token_ids == pad_id


def make_causal_mask(size, device=None):
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)


def masked_softmax(scores, mask, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    try:
        mask = torch.broadcast_to(mask, scores.shape)
    except RuntimeError as exc:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to scores of shape "
                         f"{tuple(scores.shape)}") from exc
    additive = torch.zeros(scores.shape, dtype=scores.dtype, device=scores.device).masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores + additive, dim=dim)
    dead = mask.all(dim=dim, keepdim=True)
    return torch.where(dead, torch.zeros_like(weights), weights)


def combine_masks(attn_mask, key_padding_mask):
    if attn_mask is None and key_padding_mask is None:
        return None
    if attn_mask is not None and key_padding_mask is not None and attn_mask.shape[-1] != key_padding_mask.shape[-1]:
        raise ValueError(f"attn_mask has S_k={attn_mask.shape[-1]} but key_padding_mask has "
                         f"S_k={key_padding_mask.shape[-1]}")
    combined = None
    if attn_mask is not None:
        combined = attn_mask[None, None]
    if key_padding_mask is not None:
        padding = key_padding_mask[:, None, None, :]
        combined = padding if combined is None else combined | padding
    return combined
