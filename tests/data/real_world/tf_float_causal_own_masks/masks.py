"""Correct bool-only masks (no float path): a float mask passed in makes `|` raise."""
import torch


def make_padding_mask(token_ids, pad_id=0):
    return token_ids == pad_id


def make_causal_mask(size, device=None):
    if size < 0:
        raise ValueError(f"size must be >= 0, got size={size}")
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(1)


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return scores.softmax(dim)
    try:
        mask = mask.expand_as(scores)
    except RuntimeError:
        raise ValueError(f"mask must broadcast to scores, got mask.shape={tuple(mask.shape)}, "
                         f"scores.shape={tuple(scores.shape)}") from None
    weights = scores.masked_fill(mask, torch.finfo(scores.dtype).min).softmax(dim)
    return weights.masked_fill(mask, 0.0)


def combine_masks(attn_mask=None, key_padding_mask=None):
    if attn_mask is not None and attn_mask.dim() != 2:
        raise ValueError(f"attn_mask must be [S_q, S_k], got attn_mask.shape={tuple(attn_mask.shape)}")
    if key_padding_mask is not None and key_padding_mask.dim() != 2:
        raise ValueError(f"key_padding_mask must be [B, S_k], got key_padding_mask.shape={tuple(key_padding_mask.shape)}")
    if attn_mask is not None and key_padding_mask is not None and attn_mask.shape[-1] != key_padding_mask.shape[-1]:
        raise ValueError(f"attn_mask and key_padding_mask must share S_k, got attn_mask.shape="
                         f"{tuple(attn_mask.shape)}, key_padding_mask.shape={tuple(key_padding_mask.shape)}")
    out = None
    if attn_mask is not None:
        out = attn_mask.view(1, 1, *attn_mask.shape)
    if key_padding_mask is not None:
        pad = key_padding_mask.view(key_padding_mask.shape[0], 1, 1, -1)
        out = pad if out is None else out | pad
    return out
