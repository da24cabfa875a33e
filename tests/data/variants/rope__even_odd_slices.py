"""RoPE with the angles in float64 and the rotation written on even and odd slices, re-interleaved
with ``torch.stack(...).flatten``; the input's dtype kept."""

import torch


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    theta = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
    return theta.cos().float(), theta.sin().float()


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim} (x.shape={list(x.shape)})")
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    theta = pos.double()[:, None] * inv_freq[None, :]
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
