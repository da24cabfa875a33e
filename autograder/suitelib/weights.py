"""Weights made by the test, and PyTorch modules built from them as oracles.

A test loads the same state dict into the student's module, the reference and the
mutants (``m.load_state_dict(state)``), so outputs are comparable number for number.
Names follow exercises/README.md (``q_proj.weight``, ``linear1.bias``, ...).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from autograder.suitelib.draw import randn


def linear_state(rng: torch.Generator, prefix: str, in_features: int, out_features: int, *,
                 bias: bool = True, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """``{prefix.weight: [out, in], prefix.bias: [out]}`` drawn like ``nn.Linear``'s default scale
    (standard normal times ``1/sqrt(in_features)``). ``prefix`` may be empty."""
    dot = f"{prefix}." if prefix else ""
    state = {f"{dot}weight": randn(rng, out_features, in_features, dtype=dtype, scale=1 / math.sqrt(in_features))}
    if bias:
        state[f"{dot}bias"] = randn(rng, out_features, dtype=dtype, scale=0.5)
    return state


def mha_state(rng: torch.Generator, d_model: int, *, bias: bool = True, prefix: str = "",
              dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """A ``MultiHeadAttention`` state dict: ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``
    (each ``[d_model, d_model]`` plus ``[d_model]`` bias when ``bias``)."""
    state: dict[str, torch.Tensor] = {}
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        state.update(linear_state(rng, prefix + name, d_model, d_model, bias=bias, dtype=dtype))
    return state


def ffn_state(rng: torch.Generator, d_model: int, d_ff: int, *, prefix: str = "",
              dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """A ``PositionwiseFeedForward`` state dict: ``linear1`` ``[d_ff, d_model]``, ``linear2`` ``[d_model, d_ff]``."""
    state = linear_state(rng, prefix + "linear1", d_model, d_ff, dtype=dtype)
    state.update(linear_state(rng, prefix + "linear2", d_ff, d_model, dtype=dtype))
    return state


def torch_mha(state: dict[str, torch.Tensor], d_model: int, num_heads: int, *, prefix: str = "") -> nn.MultiheadAttention:
    """``nn.MultiheadAttention(batch_first=True)`` in eval mode holding ``state``'s weights.

    The named projections are stacked into ``in_proj_weight``/``in_proj_bias`` in q, k, v
    order (head ``h`` = rows ``h*head_dim:(h+1)*head_dim`` of each, PyTorch's layout).
    """
    bias = f"{prefix}q_proj.bias" in state
    dtype = state[f"{prefix}q_proj.weight"].dtype
    mha = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True, dtype=dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([state[f"{prefix}{n}_proj.weight"] for n in "qkv"]))
        mha.out_proj.weight.copy_(state[f"{prefix}out_proj.weight"])
        if bias:
            mha.in_proj_bias.copy_(torch.cat([state[f"{prefix}{n}_proj.bias"] for n in "qkv"]))
            mha.out_proj.bias.copy_(state[f"{prefix}out_proj.bias"])
    return mha.eval()


def torch_mha_forward(state, d_model: int, num_heads: int, query, key, value, *, key_padding_mask=None,
                      attn_mask=None, average_attn_weights: bool = True):
    """PyTorch's ``(output, weights)`` for these weights and inputs (the slow path, with gradients
    enabled, so the fast path's padding shortcuts do not apply). Rows whose keys are all
    blocked come out as NaN in PyTorch: compare only the others."""
    mha = torch_mha(state, d_model, num_heads)
    with torch.enable_grad():
        out, weights = mha(query, key, value, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                           need_weights=True, average_attn_weights=average_attn_weights)
    return out.detach(), weights.detach()
