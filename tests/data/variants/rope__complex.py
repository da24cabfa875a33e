"""RoPE written like a well-known LLM's reference code: the pairs as complex numbers
(``torch.view_as_complex`` on a reshape), the angles as ``torch.polar`` in float32, the result cast
back with ``.type_as(x)``. Legitimate: the RoFormer layout, computed in float32 whatever the dtype."""

import torch


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def rope_angles(head_dim: int, max_len: int, base: float = 10000.0):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    freqs_cis = precompute_freqs_cis(head_dim, max_len, base)
    return freqs_cis.real, freqs_cis.imag


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    if positions is None:
        positions = torch.arange(seq_len)
    freqs_cis = precompute_freqs_cis(head_dim, int(positions.max()) + 1, base)[positions]
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    x_out = torch.view_as_real(x_ * freqs_cis).flatten(-2)
    return x_out.type_as(x)
