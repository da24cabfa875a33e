"""Legitimate: GPT-J's rotate_every_two on the whole head (interleaved pairs, counter-clockwise)."""
import torch


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    t = torch.arange(max_len, dtype=torch.float64)
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    return freqs.cos().float(), freqs.sin().float()


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    freqs = torch.einsum("i,j->ij", pos.to(torch.float64), inv_freq)
    sin = freqs.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    cos = freqs.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    return x * cos + rotate_every_two(x) * sin
