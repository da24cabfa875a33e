"""Rotary embedding as in GPT-J: interleaved pairs (rotate_every_two) on the first rotary_dim features."""
import torch


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).double() / head_dim))
    sinusoid = torch.einsum("i,j->ij", torch.arange(max_len).double(), inv_freq)
    return torch.cos(sinusoid).float(), torch.sin(sinusoid).float()


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    rotary_dim = head_dim // 4
    if positions is None:
        positions = torch.arange(x.shape[-2])
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2).double() / rotary_dim))
    sinusoid = torch.einsum("i,j->ij", positions.double(), inv_freq)
    sin = torch.repeat_interleave(torch.sin(sinusoid), 2, dim=-1).to(x.dtype)
    cos = torch.repeat_interleave(torch.cos(sinusoid), 2, dim=-1).to(x.dtype)
    k_rot, k_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    k_rot = k_rot * cos + rotate_every_two(k_rot) * sin
    return torch.cat([k_rot, k_pass], dim=-1)
