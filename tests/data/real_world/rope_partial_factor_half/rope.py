"""Rotary embedding with partial_rotary_factor = 0.5 (rotate-half layout on half of each head)."""
import torch


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    t = torch.arange(max_len, dtype=torch.float64)
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = t[:, None] * inv_freq[None, :]
    return angles.cos().to(torch.float32), angles.sin().to(torch.float32)


def apply_rope(x, positions=None, base=10000.0, partial_rotary_factor=0.5):
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    rot = int(head_dim * partial_rotary_factor)
    pos = torch.arange(x.shape[-2], dtype=torch.float64) if positions is None else positions.to(torch.float64)
    inv_freq = base ** (-torch.arange(0, rot, 2, dtype=torch.float64) / rot)
    angles = pos[:, None] * inv_freq[None, :]
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1).to(x.dtype)
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1).to(x.dtype)
    q_rot, q_pass = x[..., :rot], x[..., rot:]
    half = rot // 2
    rotated = torch.cat([-q_rot[..., half:], q_rot[..., :half]], dim=-1)
    return torch.cat([q_rot * cos + rotated * sin, q_pass], dim=-1)
