"""Weights, masks, inputs and checks for the composite suites (encoder, decoder, transformer).

PyTorch's ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer`` (``batch_first=True``,
``activation="relu"``) are the public oracles. Their parameters are redrawn from a seeded
``torch.Generator`` (LayerNorm gains away from 1, so pre- and post-LN cannot agree by accident)
and copied into the kit's parameter names (exercises/README.md, exercises 5-8): a student's layer loaded
with the returned state dict must give PyTorch's numbers. The oracles run through PyTorch's slow
path (:func:`oracle` keeps autograd on): its eval fast path under ``no_grad`` writes zeros at
padded positions.

Everything here is trusted parent-side code; it never imports a submission.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from autograder import testing
from autograder.i18n import _

# ----------------------------------------------------------------------------- weights


def randomize_(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Redraw every parameter of ``module`` in place from ``generator``; returns ``module``.

    Matrices get ``N(0, 1/fan_in)`` (keeps attention scores in softmax's sensitive range),
    LayerNorm gains ``1 + 0.2 N(0, 1)``, every bias ``0.1 N(0, 1)``.
    """
    with torch.no_grad():
        for name, param in module.named_parameters():
            noise = torch.randn(param.shape, generator=generator, dtype=torch.float64)
            if param.dim() >= 2:
                value = noise / param.shape[-1] ** 0.5
            elif name.endswith("weight"):
                value = 1.0 + 0.2 * noise
            else:
                value = 0.1 * noise
            param.copy_(value.to(param.dtype))
    return module


def _linear_state(linear: nn.Linear, prefix: str) -> dict[str, torch.Tensor]:
    state = {f"{prefix}weight": linear.weight.detach().clone()}
    if linear.bias is not None:
        state[f"{prefix}bias"] = linear.bias.detach().clone()
    return state


def mha_state(mha: nn.MultiheadAttention, prefix: str = "") -> dict[str, torch.Tensor]:
    """An ``nn.MultiheadAttention``'s weights under the kit's names (``q_proj``, ``k_proj``,
    ``v_proj``, ``out_proj``): ``in_proj_weight`` split in three row blocks, as exercises/README.md 5 fixes."""
    d = mha.embed_dim
    w = mha.in_proj_weight.detach()
    state = {}
    for i, name in enumerate(("q_proj", "k_proj", "v_proj")):
        state[f"{prefix}{name}.weight"] = w[i * d:(i + 1) * d].clone()
        if mha.in_proj_bias is not None:
            state[f"{prefix}{name}.bias"] = mha.in_proj_bias.detach()[i * d:(i + 1) * d].clone()
    state.update(_linear_state(mha.out_proj, f"{prefix}out_proj."))
    return state


def _norm_state(norm: nn.LayerNorm, prefix: str) -> dict[str, torch.Tensor]:
    return {f"{prefix}weight": norm.weight.detach().clone(), f"{prefix}bias": norm.bias.detach().clone()}


def encoder_layer_state(layer: nn.TransformerEncoderLayer, prefix: str = "") -> dict[str, torch.Tensor]:
    """The kit ``EncoderLayer`` state dict holding ``layer``'s weights."""
    state = mha_state(layer.self_attn, f"{prefix}self_attn.")
    state.update(_linear_state(layer.linear1, f"{prefix}feed_forward.linear1."))
    state.update(_linear_state(layer.linear2, f"{prefix}feed_forward.linear2."))
    state.update(_norm_state(layer.norm1, f"{prefix}norm1."))
    state.update(_norm_state(layer.norm2, f"{prefix}norm2."))
    return state


def decoder_layer_state(layer: nn.TransformerDecoderLayer, prefix: str = "") -> dict[str, torch.Tensor]:
    """The kit ``DecoderLayer`` state dict holding ``layer``'s weights (``multihead_attn`` is
    the kit's ``cross_attn``)."""
    state = mha_state(layer.self_attn, f"{prefix}self_attn.")
    state.update(mha_state(layer.multihead_attn, f"{prefix}cross_attn."))
    state.update(_linear_state(layer.linear1, f"{prefix}feed_forward.linear1."))
    state.update(_linear_state(layer.linear2, f"{prefix}feed_forward.linear2."))
    for i in (1, 2, 3):
        state.update(_norm_state(getattr(layer, f"norm{i}"), f"{prefix}norm{i}."))
    return state


def stack_state(stack: nn.TransformerEncoder | nn.TransformerDecoder) -> dict[str, torch.Tensor]:
    """The kit ``Encoder``/``Decoder`` state dict holding a PyTorch stack's weights
    (``layers.<i>.*`` and, when the stack has one, the final ``norm.*``)."""
    layer_state = encoder_layer_state if isinstance(stack, nn.TransformerEncoder) else decoder_layer_state
    state = {}
    for i, layer in enumerate(stack.layers):
        state.update(layer_state(layer, f"layers.{i}."))
    if stack.norm is not None:
        state.update(_norm_state(stack.norm, "norm."))
    return state


def torch_layer(kind: str, d_model: int, num_heads: int, d_ff: int, *, norm_first: bool,
                generator: torch.Generator, dropout: float = 0.0) -> nn.Module:
    """A randomised PyTorch ``TransformerEncoderLayer`` (``kind="encoder"``) or
    ``TransformerDecoderLayer`` (``kind="decoder"``) in eval mode (batch first, ReLU)."""
    cls = {"encoder": nn.TransformerEncoderLayer, "decoder": nn.TransformerDecoderLayer}[kind]
    layer = cls(d_model, num_heads, dim_feedforward=d_ff, dropout=dropout, activation="relu",
                batch_first=True, norm_first=norm_first)
    return randomize_(layer, generator).eval()


def torch_stack(kind: str, num_layers: int, d_model: int, num_heads: int, d_ff: int, *,
                norm_first: bool, generator: torch.Generator) -> nn.Module:
    """A randomised PyTorch ``TransformerEncoder``/``TransformerDecoder`` of ``num_layers``
    layers, with a final LayerNorm exactly when ``norm_first`` (the kit's rule), in eval mode."""
    layer = torch_layer(kind, d_model, num_heads, d_ff, norm_first=norm_first, generator=generator)
    norm = nn.LayerNorm(d_model) if norm_first else None
    if kind == "encoder":
        stack = nn.TransformerEncoder(layer, num_layers, norm=norm, enable_nested_tensor=False)
    else:
        stack = nn.TransformerDecoder(layer, num_layers, norm=norm)
    return randomize_(stack, generator).eval()


def oracle(module: nn.Module, *args, **kwargs) -> torch.Tensor:
    """``module(*args, **kwargs)`` through PyTorch's slow path (autograd on), detached."""
    with torch.enable_grad():
        return module(*args, **kwargs).detach()


def load_weights(module, state: dict[str, torch.Tensor], what: str) -> None:
    """Load ``state`` into a (student's or reference) module; fail clearly when the module has
    parameters or buffers the state does not name (its attribute names differ from the contract).

    Keys of ``state`` the module lacks are ignored here: the module then computes something
    else, and the output comparison says so (and can name the mistake, e.g. a missing final norm).
    """
    missing, _unexpected = module.load_state_dict(state, strict=False)
    if missing:
        raise AssertionError(_("{what} has parameters or buffers the exercise does not name: {keys}; "
                               "use the attribute names of the exercise").format(
            what=what, keys=", ".join(sorted(missing)[:8])))


# ----------------------------------------------------------------------------- inputs and masks


def padding_mask(lengths, size: int) -> torch.Tensor:
    """``Bool[B, size]``, True at positions ``>= lengths[b]`` (padding), PyTorch's convention."""
    lengths = torch.as_tensor(lengths)
    return torch.arange(size)[None, :] >= lengths[:, None]


def causal_mask(size: int) -> torch.Tensor:
    """``Bool[size, size]``, True strictly above the diagonal (position i may not see j > i)."""
    return torch.ones(size, size, dtype=torch.bool).triu(1)


def swap_first_two(batch: int) -> torch.Tensor:
    """``Long[batch]``: the permutation of a batch that swaps examples 0 and 1 and keeps the rest."""
    order = torch.arange(batch)
    order[:2] = torch.tensor([1, 0])
    return order


def batch_permuted(value: Any, order: torch.Tensor) -> Any:
    """``value`` (a tensor whose first axis is the batch, or a tuple/list of them, or None) reordered
    by ``order`` along the batch axis."""
    if isinstance(value, (tuple, list)):
        return tuple(batch_permuted(v, order) for v in value)
    return None if value is None else value[order]


def valid_positions(padding: torch.Tensor) -> torch.Tensor:
    """``Bool[B, S, 1]``: True at unpadded positions, for ``compare(..., valid=...)``."""
    return ~padding[:, :, None]


def replace_where(x: torch.Tensor, where: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``x`` with the positions where ``where`` (``Bool[B, S]``) is True redrawn from ``generator``."""
    noise = 3.0 * torch.randn(x.shape, generator=generator, dtype=x.dtype)
    return torch.where(where[:, :, None], noise, x)


def tokens(generator: torch.Generator, lengths, size: int, vocab: int, pad_id: int = 0) -> torch.Tensor:
    """``Long[B, size]`` of random ids in ``[1, vocab)`` (never ``pad_id``), ``pad_id`` from
    ``lengths[b]`` on."""
    ids = torch.randint(1, vocab, (len(lengths), size), generator=generator)
    ids = torch.where(ids == pad_id, torch.full_like(ids, vocab - 1 if pad_id != vocab - 1 else 1), ids)
    return ids.masked_fill(padding_mask(lengths, size), pad_id)


def distinct_dims(generator: torch.Generator, ranges: dict[str, tuple[int, int]],
                  even: tuple[str, ...] = ()) -> dict[str, int]:
    """Draw one int per name from its inclusive range, all different from each other (so a
    swapped axis cannot pass by accident); names in ``even`` get even values. The narrowest
    ranges are drawn first, so that a wide range cannot take the only values a narrow one has.

    Raises:
        ValueError: a range has no value left.
    """
    used: set[int] = set()
    out: dict[str, int] = {}
    for name, (low, high) in sorted(ranges.items(), key=lambda item: item[1][1] - item[1][0]):
        choices = [v for v in range(low, high + 1) if v not in used and (name not in even or v % 2 == 0)]
        if not choices:
            raise ValueError(f"no value left for {name} in [{low}, {high}] besides {sorted(used)}")
        value = choices[int(torch.randint(len(choices), (1,), generator=generator))]
        used.add(value)
        out[name] = value
    return {name: out[name] for name in ranges}


def layer_dims(generator: torch.Generator) -> dict[str, int]:
    """Random distinct sizes for a hidden layer test: ``B`` (batch), ``S`` (source length),
    ``T`` (target length), ``H`` (heads), ``hd`` (head_dim, so ``d_model = H * hd``), ``ff`` (d_ff)."""
    return distinct_dims(generator, {"B": (2, 4), "S": (5, 9), "T": (3, 8), "H": (2, 4), "hd": (2, 6),
                                     "ff": (10, 20)})


# ----------------------------------------------------------------------------- property checks


def expect_property(run: Callable[[Any], Any], student, verify: Callable[[Any], None], *, atol: float = 1e-5,
                    rtol: float = 1e-4, valid=None) -> Any:
    """A property check on the submission's own outputs: ``verify(run(student))`` raises
    :class:`autograder.testing.Mismatch` when the property fails; the catalog mutant whose
    ``run`` reproduces the student's outputs is then named, as in :func:`autograder.testing.check`.
    ``run`` must build everything it uses (modules included) so that a mutant's run draws the
    same random numbers. Returns the outputs."""
    got = run(student)
    try:
        verify(got)
    except testing.Mismatch as exc:
        exc.mistake = testing.identify(run, got, atol=atol, rtol=rtol, valid=valid)
        raise
    return got


def expect_same(run: Callable[[Any], tuple[Any, Any]], student, *, what: str, atol: float = 1e-5,
                rtol: float = 1e-4, valid=None) -> tuple[Any, Any]:
    """:func:`expect_property` for ``run(impl) -> (before, after)``, two outputs of the submission
    that must agree (e.g. logits before and after changing later tokens); ``valid`` restricts
    the comparison to some positions."""
    def verify(got):
        testing.compare(got[1], got[0], what=what, atol=atol, rtol=rtol, valid=valid)

    return expect_property(run, student, verify, atol=atol, rtol=rtol,
                           valid=(valid, valid) if valid is not None else None)
