"""RoPE as in GPT-NeoX / LLaMA's reference code: the rotate-half layout."""
import torch


def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(max_len, dtype=torch.float32), inv_freq)
    return freqs.cos(), freqs.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=x.device, dtype=torch.float64) / head_dim))
    freqs = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin
