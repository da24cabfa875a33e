"""State dicts under the kit's parameter names: drawn by the test, read from a PyTorch oracle,
loaded into a module.

A test loads the same state dict into the student's module, the reference and the mutants
(:func:`loaded`: the module loaded and in eval mode; :func:`load`), so outputs are comparable
number for number. Names follow exercises/README.md
(``q_proj.weight``, ``linear1.bias``, ``self_attn.q_proj.weight``, ``layers.0.norm1.weight``, ...).
Drawn: :func:`linear_state`, :func:`mha_state`, :func:`ffn_state`; read from a PyTorch module
(:mod:`autograder.checks.oracles`): :func:`kit_state`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from autograder.checks.inputs import randn
from autograder.i18n import _


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


def with_blocked_unit(state: dict[str, torch.Tensor], x: torch.Tensor, *, prefix: str = "") -> dict[str, torch.Tensor]:
    """``state`` (a :func:`ffn_state`) with ``linear1``'s bias of hidden unit 0 moved so that its
    pre-activation is -1 for the first row of ``x``: the ReLU then blocks something for certain,
    and a feed-forward without it cannot pass by luck (with one token and a small ``d_ff``, every
    pre-activation is positive for a quarter of the draws or more)."""
    state = dict(state)
    weight, bias = state[prefix + "linear1.weight"], state[prefix + "linear1.bias"].clone()
    first = x.reshape(-1, x.shape[-1])[0].to(weight.dtype)
    bias[0] = bias[0] - (first @ weight[0] + bias[0]) - 1.0
    state[prefix + "linear1.bias"] = bias
    return state


def _linear(linear: nn.Linear, prefix: str) -> dict[str, torch.Tensor]:
    state = {f"{prefix}weight": linear.weight.detach().clone()}
    if linear.bias is not None:
        state[f"{prefix}bias"] = linear.bias.detach().clone()
    return state


def _mha(mha: nn.MultiheadAttention, prefix: str) -> dict[str, torch.Tensor]:
    """``in_proj_weight`` split in three row blocks (q, k, v), as exercises/README.md 5 fixes."""
    d = mha.embed_dim
    w = mha.in_proj_weight.detach()
    state = {}
    for i, name in enumerate(("q_proj", "k_proj", "v_proj")):
        state[f"{prefix}{name}.weight"] = w[i * d:(i + 1) * d].clone()
        if mha.in_proj_bias is not None:
            state[f"{prefix}{name}.bias"] = mha.in_proj_bias.detach()[i * d:(i + 1) * d].clone()
    state.update(_linear(mha.out_proj, f"{prefix}out_proj."))
    return state


def _layer(layer: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer, prefix: str) -> dict[str, torch.Tensor]:
    """A layer's weights; a decoder layer's ``multihead_attn`` is the kit's ``cross_attn``."""
    state = _mha(layer.self_attn, f"{prefix}self_attn.")
    norms = (1, 2)
    if isinstance(layer, nn.TransformerDecoderLayer):
        state.update(_mha(layer.multihead_attn, f"{prefix}cross_attn."))
        norms = (1, 2, 3)
    state.update(_linear(layer.linear1, f"{prefix}feed_forward.linear1."))
    state.update(_linear(layer.linear2, f"{prefix}feed_forward.linear2."))
    for i in norms:
        state.update(_linear(getattr(layer, f"norm{i}"), f"{prefix}norm{i}."))
    return state


def kit_state(module: nn.Module, prefix: str = "") -> dict[str, torch.Tensor]:
    """A PyTorch oracle's weights as the state dict of the kit's module of the same role (copies).

    ``nn.MultiheadAttention`` -> ``MultiHeadAttention`` (``q_proj``, ``k_proj``, ``v_proj``,
    ``out_proj``); ``nn.TransformerEncoderLayer``/``DecoderLayer`` -> ``EncoderLayer``/``DecoderLayer``
    (``self_attn``, ``cross_attn``, ``feed_forward.linear1/2``, ``norm1..3``);
    ``nn.TransformerEncoder``/``Decoder`` -> ``Encoder``/``Decoder`` (``layers.<i>.*`` and, when the
    stack has one, the final ``norm.*``). Keys are prefixed with ``prefix``.

    Raises:
        TypeError: another kind of module.
    """
    if isinstance(module, nn.MultiheadAttention):
        return _mha(module, prefix)
    if isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        return _layer(module, prefix)
    if isinstance(module, (nn.TransformerEncoder, nn.TransformerDecoder)):
        state = {}
        for i, layer in enumerate(module.layers):
            state.update(_layer(layer, f"{prefix}layers.{i}."))
        if module.norm is not None:
            state.update(_linear(module.norm, f"{prefix}norm."))
        return state
    raise TypeError(f"kit_state(): no kit module matches {type(module).__name__}")


def load(module, state: dict[str, torch.Tensor], what: str) -> None:
    """Load ``state`` into a (student's or reference) module; fail clearly when the module has
    parameters or buffers the state does not name (its attribute names differ from the contract).

    Keys of ``state`` the module lacks are ignored here: the module then computes something
    else, and the output comparison says so (and can name the mistake, e.g. a missing final norm).

    Raises:
        AssertionError: the module has parameters or buffers ``state`` lacks.
    """
    missing, _unexpected = module.load_state_dict(state, strict=False)
    if missing:
        raise AssertionError(_("{what} has parameters or buffers the exercise does not name: {keys}; "
                               "use the attribute names of the exercise").format(
            what=what, keys=", ".join(sorted(missing)[:8])))


def loaded(module, state: dict[str, torch.Tensor], what: str | None = None, *, dtype: torch.dtype | None = None):
    """``module`` with ``state`` loaded, converted to ``dtype`` when given, in eval mode: the
    module a test's ``run(impl)`` calls, built the same way for the student, the reference and
    the mutants (``weights.loaded(impl.encoder.Encoder(2, 8, 2, 16), state, "Encoder")(x)``).

    Args:
        module: a kit module just built from ``impl`` (the student's module is a handle: every
            call runs in the child).
        state: ``{name: tensor}`` under the kit's names (drawn here or read from an oracle by
            :func:`kit_state`); its values are copied into the module's parameters.
        what: the module's name in the message; the state is then loaded by :func:`load` (a
            parameter the state lacks fails clearly, a key the module lacks is ignored). None:
            ``load_state_dict(state)``, strict (PyTorch's error names any key that differs).
        dtype: the module's dtype after loading (``torch.float64``: the same values in float64).

    Returns:
        ``module``.

    Raises:
        AssertionError: (``what`` given) the module has parameters or buffers ``state`` lacks.
        SubmissionError: the student's code failed, (``what`` None) on a key that differs too.
    """
    if what is None:
        module.load_state_dict(state)
    else:
        load(module, state, what)
    if dtype is not None:
        module.to(dtype)
    module.eval()
    return module
