"""The formulas of exercises/README.md in plain torch: oracles for the public tests.

Public tests ship to students and may not use the reference solutions, so they
compare with these direct transcriptions of the equations (computed in float64 and
cast to the dtype under test). Sources: Vaswani et al. 2017, "Attention Is All You
Need" (sections 3.2.1, 3.4, 3.5); Su et al. 2021, "RoFormer" (eq. 34).
"""

from __future__ import annotations

import math

import torch


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """float32 ``[max_len, d_model]``: ``PE[pos, 2i] = sin(pos / 10000^(2i/d))``, ``PE[pos, 2i+1] = cos(...)``."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]
    angle = pos / 10000.0 ** (two_i / d_model)
    return torch.stack((angle.sin(), angle.cos()), dim=-1).reshape(max_len, d_model).float()


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """Softmax over ``dim`` with True positions of ``mask`` blocked; fully blocked rows are zero.

    Computed in float64 with a ``-inf`` fill, NaN of fully blocked rows replaced by 0, and
    cast back to ``scores.dtype``.
    """
    s = scores.double()
    if mask is not None:
        s = s.masked_fill(torch.broadcast_to(mask, s.shape), float("-inf"))
    return torch.nan_to_num(torch.softmax(s, dim=dim), nan=0.0).to(scores.dtype)


def attention(query, key, value, mask=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(softmax(Q K^T / sqrt(d_k)) V, weights)`` with blocked keys removed (fully blocked rows: zeros)."""
    scores = query.double() @ key.double().transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, mask)
    return (weights @ value.double()).to(query.dtype), weights.to(query.dtype)


def has_visible_key(mask: torch.Tensor, shape) -> torch.Tensor:
    """``BoolTensor[..., S_q, 1]``: True for the query rows of ``shape`` (``[..., S_q, S_k]``) that
    see at least one key under ``mask`` (True = blocked). Use as ``valid=`` where PyTorch gives NaN."""
    return ~torch.broadcast_to(mask, tuple(shape)).all(dim=-1, keepdim=True)


def rope_angles(head_dim: int, max_len: int, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 ``(cos, sin)`` of ``pos * base^(-2i/head_dim)``, each ``[max_len, head_dim/2]``."""
    theta = torch.arange(max_len, dtype=torch.float64)[:, None] * base ** (
        -torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)[None, :]
    return theta.cos().float(), theta.sin().float()


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """RoFormer rotation of interleaved pairs as a complex product: ``(a + ib) * e^{iθ}``."""
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    pos = torch.arange(seq_len, dtype=torch.float64) if positions is None else positions.double()
    theta = pos[:, None] * base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)[None, :]
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], head_dim // 2, 2).contiguous())
    rotated = torch.view_as_real(pairs * torch.polar(torch.ones_like(theta), theta))
    return rotated.reshape(x.shape).to(x.dtype)
