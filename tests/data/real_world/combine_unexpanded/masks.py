"""Masks written from a tutorial; combine_masks ORs the padding mask in without new axes."""
import torch


def make_padding_mask(token_ids, pad_id=0):
    return token_ids == pad_id


def make_causal_mask(size, device=None):
    if size < 0:
        raise ValueError(f"size must be >= 0, got size={size}")
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=dim).masked_fill(mask, 0.0)


def combine_masks(attn_mask=None, key_padding_mask=None):
    if attn_mask is not None and attn_mask.dim() != 2:
        raise ValueError(f"attn_mask must be [S_q, S_k], got attn_mask.shape={tuple(attn_mask.shape)}")
    if key_padding_mask is not None and key_padding_mask.dim() != 2:
        raise ValueError(f"key_padding_mask must be [B, S_k], got key_padding_mask.shape={tuple(key_padding_mask.shape)}")
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return attn_mask.unsqueeze(0).unsqueeze(0)
    if attn_mask is None:
        return key_padding_mask.unsqueeze(1).unsqueeze(2)
    if attn_mask.shape[-1] != key_padding_mask.shape[-1]:
        raise ValueError(f"attn_mask and key_padding_mask must share S_k, got attn_mask.shape="
                         f"{tuple(attn_mask.shape)}, key_padding_mask.shape={tuple(key_padding_mask.shape)}")
    combined = attn_mask | key_padding_mask
    return combined.unsqueeze(1)
