"""PyTorch modules as oracles: ``nn.MultiheadAttention`` holding a kit state dict, and randomised
``nn.TransformerEncoderLayer``/``nn.TransformerDecoderLayer`` (``batch_first=True``,
``activation="relu"``) and stacks of them.

Parameters are redrawn from a seeded ``torch.Generator`` (LayerNorm gains away from 1, so pre- and
post-LN cannot agree by accident); :func:`autograder.suitelib.weights.kit_state` copies them into
the kit's parameter names (exercises/README.md, exercises 5-8), so a student's module loaded with
that state dict must give PyTorch's numbers. Oracles run through PyTorch's slow path
(:func:`run` keeps autograd on): its eval fast path under ``no_grad`` writes zeros at padded
positions, and NaN where every key is blocked (compare only the other rows).

Everything here is trusted parent-side code; it never imports a submission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from autograder import memo
from autograder.suitelib import weights

LAYER_CLASSES = {"encoder": nn.TransformerEncoderLayer, "decoder": nn.TransformerDecoderLayer}
STACK_CLASSES = {"encoder": nn.TransformerEncoder, "decoder": nn.TransformerDecoder}


def randomize_(module: nn.Module, rng: torch.Generator) -> nn.Module:
    """Redraw every parameter of ``module`` in place from ``rng``; returns ``module``.

    Matrices get ``N(0, 1/fan_in)`` (keeps attention scores in softmax's sensitive range),
    LayerNorm gains ``1 + 0.2 N(0, 1)``, every bias ``0.1 N(0, 1)``.
    """
    with torch.no_grad():
        for name, param in module.named_parameters():
            noise = torch.randn(param.shape, generator=rng, dtype=torch.float64)
            if param.dim() >= 2:
                value = noise / param.shape[-1] ** 0.5
            elif name.endswith("weight"):
                value = 1.0 + 0.2 * noise
            else:
                value = 0.1 * noise
            param.copy_(value.to(param.dtype))
    return module


def run(module: nn.Module, *args, **kwargs):
    """``module(*args, **kwargs)`` through PyTorch's slow path (autograd on), detached (a tensor,
    or a tuple of them for ``nn.MultiheadAttention``)."""
    with torch.enable_grad():
        out = module(*args, **kwargs)
    return tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach()


def torch_mha(state: dict[str, torch.Tensor], d_model: int, num_heads: int, *, prefix: str = "") -> nn.MultiheadAttention:
    """``nn.MultiheadAttention(batch_first=True)`` in eval mode holding a kit ``MultiHeadAttention``
    state dict (``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``, under ``prefix``).

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


@memo.once  # a function of its arguments: computed once per process for the same contents
def mha_forward(state, d_model: int, num_heads: int, query, key, value, *, key_padding_mask=None,
                attn_mask=None, average_attn_weights: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """PyTorch's ``(output, weights)`` for a kit ``MultiHeadAttention`` state dict and these inputs
    (:func:`torch_mha` run by :func:`run`). Rows whose keys are all blocked come out as NaN."""
    return run(torch_mha(state, d_model, num_heads), query, key, value, key_padding_mask=key_padding_mask,
               attn_mask=attn_mask, need_weights=True, average_attn_weights=average_attn_weights)


def torch_layer(kind: str, d_model: int, num_heads: int, d_ff: int, *, norm_first: bool,
                rng: torch.Generator, dropout: float = 0.0) -> nn.Module:
    """A randomised PyTorch ``TransformerEncoderLayer`` (``kind="encoder"``) or
    ``TransformerDecoderLayer`` (``kind="decoder"``) in eval mode (batch first, ReLU)."""
    layer = LAYER_CLASSES[kind](d_model, num_heads, dim_feedforward=d_ff, dropout=dropout, activation="relu",
                                batch_first=True, norm_first=norm_first)
    return randomize_(layer, rng).eval()


def torch_stack(kind: str, num_layers: int, d_model: int, num_heads: int, d_ff: int, *,
                norm_first: bool, rng: torch.Generator) -> nn.Module:
    """A randomised PyTorch ``TransformerEncoder``/``TransformerDecoder`` of ``num_layers``
    layers, with a final LayerNorm exactly when ``norm_first`` (the kit's rule), in eval mode.

    Built without the deep copies of PyTorch's constructor (which clones one layer
    ``num_layers`` times; a measurable share of a grading): the stack is constructed empty and
    given ``num_layers`` layers constructed directly. The draws are the ones the cloning
    construction made: one layer randomised, then every parameter of the stack in order; the
    extra layers leave the global RNG as the clones did (untouched).
    """
    layers = [torch_layer(kind, d_model, num_heads, d_ff, norm_first=norm_first, rng=rng)]
    global_rng = torch.get_rng_state()
    layers += [LAYER_CLASSES[kind](d_model, num_heads, dim_feedforward=d_ff, dropout=0.0, activation="relu",
                                   batch_first=True, norm_first=norm_first) for _ in range(num_layers - 1)]
    torch.set_rng_state(global_rng)
    norm = nn.LayerNorm(d_model) if norm_first else None
    extra = {"enable_nested_tensor": False} if kind == "encoder" else {}
    stack = STACK_CLASSES[kind](layers[0], 0, norm=norm, **extra)
    stack.layers = nn.ModuleList(layers)
    stack.num_layers = num_layers
    return randomize_(stack, rng).eval()


@dataclass
class Case:
    """What a test needs of a randomised PyTorch layer or stack run on its inputs (:func:`case`):
    ``state``, its weights under the kit's names (:func:`autograder.suitelib.weights.kit_state`);
    ``expected``, its output (:func:`run`); ``module()``, the PyTorch module itself, built again
    from its weights (for a mistake's output, computed only when a test fails)."""

    state: dict
    expected: Any
    module: Callable[[], nn.Module]


def case(kind: str, d_model: int, num_heads: int, d_ff: int, args: tuple, kwargs: dict | None = None, *,
         norm_first: bool, rng: torch.Generator, dropout: float = 0.0, num_layers: int | None = None) -> Case:
    """A randomised ``torch_layer`` (``num_layers`` None) or ``torch_stack`` of ``num_layers`` drawn
    from ``rng`` (the same draws), run on ``args``/``kwargs``: a :class:`Case`. Computed once per
    process for the same arguments and generator state (:func:`autograder.memo.once`); ``rng`` is
    left where the draws leave it either way."""
    state, torch_state, expected = _case(kind, d_model, num_heads, d_ff, tuple(args), dict(kwargs or {}),
                                         norm_first=norm_first, rng=rng, dropout=dropout, num_layers=num_layers)

    def module() -> nn.Module:
        built = _unrandomised(kind, d_model, num_heads, d_ff, norm_first=norm_first, dropout=dropout,
                              num_layers=num_layers)
        built.load_state_dict(torch_state)
        return built.eval()

    return Case(state, expected, module)


@memo.once
def _case(kind, d_model, num_heads, d_ff, args, kwargs, *, norm_first, rng, dropout, num_layers):
    if num_layers is None:
        oracle = torch_layer(kind, d_model, num_heads, d_ff, norm_first=norm_first, rng=rng, dropout=dropout)
    else:
        oracle = torch_stack(kind, num_layers, d_model, num_heads, d_ff, norm_first=norm_first, rng=rng)
    own = {k: v.detach().clone() for k, v in oracle.state_dict().items()}
    return weights.kit_state(oracle), own, run(oracle, *args, **kwargs)


def _unrandomised(kind, d_model, num_heads, d_ff, *, norm_first, dropout, num_layers) -> nn.Module:
    """The module :func:`_case` draws, with PyTorch's initial weights (they are loaded over)."""
    def layer(p):
        return LAYER_CLASSES[kind](d_model, num_heads, dim_feedforward=d_ff, dropout=p, activation="relu",
                                   batch_first=True, norm_first=norm_first)

    if num_layers is None:
        return layer(dropout)
    extra = {"enable_nested_tensor": False} if kind == "encoder" else {}
    stack = STACK_CLASSES[kind](layer(0.0), 0, norm=nn.LayerNorm(d_model) if norm_first else None, **extra)
    stack.layers = nn.ModuleList(layer(0.0) for _ in range(num_layers))
    stack.num_layers = num_layers
    return stack
