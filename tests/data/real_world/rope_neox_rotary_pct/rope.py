"""Rotary embedding as in GPT-NeoX: rotate-half layout on the first rotary_pct of each head."""
import torch

ROTARY_PCT = 0.25


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    freqs = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
    return freqs.cos().float(), freqs.sin().float()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    rotary_ndims = int(head_dim * ROTARY_PCT)
    seq_len = x.shape[-2]
    if positions is None:
        positions = torch.arange(seq_len)
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_ndims, 2, dtype=torch.float64) / rotary_ndims))
    freqs = torch.outer(positions.to(torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    x_rot, x_pass = x[..., :rotary_ndims], x[..., rotary_ndims:]
    x_rot = x_rot * cos + rotate_half(x_rot) * sin
    return torch.cat((x_rot, x_pass), dim=-1)
