"""PyTorch modules as oracles: ``nn.MultiheadAttention`` holding a kit state dict, and randomised
``nn.TransformerEncoderLayer``/``nn.TransformerDecoderLayer`` (``batch_first=True``,
``activation="relu"``) and stacks of them.

Parameters are redrawn from a seeded ``torch.Generator`` (LayerNorm gains away from 1, so pre- and
post-LN cannot agree by accident); :func:`autograder.checks.weights.kit_state` copies them into
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
from autograder.checks import weights

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
            param.copy_(drawn_value(name, noise).to(param.dtype))
    return module


def drawn_value(name: str, noise: torch.Tensor) -> torch.Tensor:
    """The value :func:`randomize_` gives the parameter ``name`` from standard-normal ``noise`` of its
    shape: ``noise / sqrt(fan_in)`` for a matrix, ``1 + 0.2 noise`` for a 1-D ``...weight`` (a
    LayerNorm gain), ``0.1 noise`` for a bias."""
    if noise.dim() >= 2:
        return noise / noise.shape[-1] ** 0.5
    if name.endswith("weight"):
        return 1.0 + 0.2 * noise
    return 0.1 * noise


def run(module: nn.Module, *args, **kwargs):
    """``module(*args, **kwargs)`` through PyTorch's slow path (autograd on), detached (a tensor,
    or a tuple of them for ``nn.MultiheadAttention``).

    Key-padding masks given by keyword are merged into their attention's mask first
    (:func:`merged_mask`), the sum ``F.multi_head_attention_forward`` forms itself, so the numbers
    are the same; what this skips is PyTorch's shape check of a key-padding mask
    (``torch._check_with``), whose first call imports sympy: about 0.4 s added to every grading
    process's first submission."""
    kwargs = _folded(module, args, kwargs)
    with torch.enable_grad():
        out = module(*args, **kwargs)
    return tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach()


# Each attention a PyTorch module runs: (the positional argument of its queries, batch first;
# the keyword of its attention mask; that of its key-padding mask).
_ATTENTIONS = {
    nn.MultiheadAttention: ((0, "attn_mask", "key_padding_mask"),),
    nn.TransformerEncoderLayer: ((0, "src_mask", "src_key_padding_mask"),),
    nn.TransformerEncoder: ((0, "mask", "src_key_padding_mask"),),
    nn.TransformerDecoderLayer: ((0, "tgt_mask", "tgt_key_padding_mask"),
                                 (0, "memory_mask", "memory_key_padding_mask")),
    nn.TransformerDecoder: ((0, "tgt_mask", "tgt_key_padding_mask"),
                            (0, "memory_mask", "memory_key_padding_mask")),
}


def _folded(module: nn.Module, args: tuple, kwargs: dict) -> dict:
    """``kwargs`` with each key-padding mask merged into its attention mask (:func:`run`)."""
    attentions = _ATTENTIONS.get(type(module), ())
    if not any(kwargs.get(padding) is not None for *_, padding in attentions):
        return kwargs
    num_heads = _num_heads(module)
    kwargs = dict(kwargs)
    for q, attn, padding in attentions:
        if kwargs.get(padding) is not None:
            kwargs[attn] = merged_mask(kwargs.get(attn), kwargs.pop(padding), num_heads, args[q].shape[1],
                                       args[q].dtype)
    return kwargs


def _num_heads(module: nn.Module) -> int:
    if isinstance(module, nn.MultiheadAttention):
        return module.num_heads
    layer = module.layers[0] if hasattr(module, "layers") else module
    return layer.self_attn.num_heads


def _additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A boolean mask (True = blocked) as ``0``/``-inf`` of ``dtype``; a float mask as it is."""
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype).masked_fill_(mask, float("-inf"))
    return mask


def merged_mask(attn_mask: torch.Tensor | None, key_padding_mask: torch.Tensor, num_heads: int,
                tgt_len: int, dtype: torch.dtype) -> torch.Tensor:
    """The one additive mask of shape ``(B * num_heads, tgt_len, S)`` and ``dtype`` that
    ``F.multi_head_attention_forward`` makes of ``attn_mask`` (``(tgt_len, S)`` or
    ``(B * num_heads, tgt_len, S)``, boolean or additive, or None) and ``key_padding_mask``
    (``(B, S)``, True = padding, or additive): ``attn_mask + key_padding_mask`` broadcast over heads
    and queries, with booleans turned into ``0``/``-inf`` first, as PyTorch does.

    Raises ValueError when ``key_padding_mask`` is not two-dimensional."""
    if key_padding_mask.dim() != 2:
        raise ValueError(f"key_padding_mask must be (B, S), got shape {tuple(key_padding_mask.shape)}")
    batch, src_len = key_padding_mask.shape
    padding = (_additive(key_padding_mask, dtype).view(batch, 1, 1, src_len).expand(-1, num_heads, -1, -1)
               .reshape(batch * num_heads, 1, src_len))
    merged = padding if attn_mask is None else _additive(attn_mask, dtype) + padding
    return merged.expand(batch * num_heads, tgt_len, src_len).contiguous()


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
    ``state``, its weights under the kit's names (:func:`autograder.checks.weights.kit_state`);
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


def transformer_case(src, tgt, *, src_vocab: int, tgt_vocab: int, d_model: int, num_heads: int, d_ff: int,
                     num_layers: int, max_len: int, pad_id: int, rng: torch.Generator) -> Case:
    """The contract's ``Transformer`` (exercises/README.md 9; Post-LN stacks of ``num_layers`` on each
    side) computed with PyTorch's modules and the public formulas, with weights drawn from ``rng``:
    ``state`` under the kit's names (the positional encoding's buffer is the formula's table) and
    ``expected``, the logits ``forward(src, tgt)`` must give (rows of padded target positions are
    PyTorch's; compare the others). ``module`` is not available (None)."""
    from autograder.checks import formulas

    encoder = torch_stack("encoder", num_layers, d_model, num_heads, d_ff, norm_first=False, rng=rng)
    decoder = torch_stack("decoder", num_layers, d_model, num_heads, d_ff, norm_first=False, rng=rng)
    table = formulas.sinusoidal_table(max_len, d_model)[None]
    state = {"src_embed.embedding.weight": torch.randn(src_vocab, d_model, generator=rng),
             "tgt_embed.embedding.weight": torch.randn(tgt_vocab, d_model, generator=rng),
             "pos_encoding.pe": table, **weights.kit_state(encoder, "encoder."), **weights.kit_state(decoder, "decoder."),
             "generator.weight": torch.randn(tgt_vocab, d_model, generator=rng) / d_model ** 0.5,
             "generator.bias": 0.1 * torch.randn(tgt_vocab, generator=rng)}

    def embedded(ids, weight):
        return nn.functional.embedding(ids, weight) * d_model ** 0.5 + table[:, :ids.shape[1]]

    memory = run(encoder, embedded(src, state["src_embed.embedding.weight"]), src_key_padding_mask=src == pad_id)
    out = run(decoder, embedded(tgt, state["tgt_embed.embedding.weight"]), memory,
              tgt_mask=torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool).triu(1),
              tgt_key_padding_mask=tgt == pad_id, memory_key_padding_mask=src == pad_id)
    return Case(state, nn.functional.linear(out, state["generator.weight"], state["generator.bias"]), None)
