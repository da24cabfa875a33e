"""State dicts under the kit's parameter names: drawn by the test, read from a PyTorch oracle,
loaded into a module.

A test loads the same state dict into the student's module, the reference and the mutants
(:func:`loaded`: the module loaded and in eval mode; :func:`load`), so outputs are comparable
number for number. Names follow exercises/README.md
(``q_proj.weight``, ``linear1.bias``, ``self_attn.q_proj.weight``, ``layers.0.norm1.weight``, ...);
a module with the same structure under other names is loaded under its own (:mod:`.renaming`),
and :func:`expect_names`, one test per exercise, counts the names; a structure that takes no
weights is explained once (:mod:`.structure`), and property tests then run on the module's own weights
(:func:`loaded_or_own`). Drawn: :func:`linear_state`, :func:`mha_state`, :func:`ffn_state`; read from a PyTorch module
(:mod:`autograder.checks.oracles`): :func:`kit_state`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from autograder.checks import forbidden, renaming, structure
from autograder.checks.inputs import randn
from autograder.context import current
from autograder.i18n import _
from autograder.sandbox.errors import SubmissionError


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


def layout(module, prefer=()) -> list[tuple[str, tuple[int, ...]]]:
    """``[(name, shape)]`` of ``module.state_dict()``, in its order, one name per tensor: a tensor
    the module holds under several names (a sublayer kept under two attributes, ``q_proj`` and
    ``linears[0]``) is listed once, under its name in ``prefer`` (the contract's names) when one of
    them is, else under the first. For a student's module this is what its child reports
    (:func:`autograder.child.tasks.state_layout`): read only to rename the grader's own state, see
    :mod:`.renaming`.

    Raises:
        AssertionError: ``state_dict()`` did not give names and tensors.
    """
    rows = _state_layout(module)
    preferred = set(prefer)
    chosen: dict[int, tuple[str, tuple[int, ...]]] = {}
    for index, (name, shape, first) in enumerate(rows):
        if first == index or (name in preferred and chosen[first][0] not in preferred):
            chosen[first] = (name, shape)
    return list(chosen.values())


def _state_layout(module) -> list[tuple[str, tuple[int, ...], int]]:
    """``[(name, shape, index of the first entry of the same tensor)]`` of ``module``'s state dict
    (a student's module: from its child, checked here; a local one: computed here)."""
    from autograder.child import tasks
    from autograder.sandbox.handles import RemoteObject

    rows = module._impl.task("state_layout", module) if isinstance(module, RemoteObject) else tasks.state_layout(module)
    good = isinstance(rows, list) and all(
        isinstance(row, (list, tuple)) and len(row) == 3 and isinstance(row[0], str)
        and isinstance(row[1], (list, tuple)) and all(type(d) is int and d >= 0 for d in row[1])
        and type(row[2]) is int and 0 <= row[2] <= i for i, row in enumerate(rows))
    if not good:
        raise AssertionError(_("{what}.state_dict() did not return names and tensors").format(what=_class(module)))
    out = [(name, tuple(shape), first) for name, shape, first in rows]
    if any(out[first][1] != shape for _name, shape, first in out):
        raise AssertionError(_("{what}.state_dict() did not return names and tensors").format(what=_class(module)))
    return out


def shapes(module) -> dict[str, list[int]]:
    """``{name: shape}`` of ``module.state_dict()`` (a structure test's output: compare it with
    :func:`with_contract`, which lets the student's extra parameters and buffers pass)."""
    return {name: list(shape) for name, shape in layout(module)}


def with_contract(got: dict, contract: dict) -> dict:
    """What a structure test expects of the student's ``{name: value}`` ``got``: the contract's
    entries, and the student's own others as they are (exercises/README.md: parameters, buffers
    and attributes beyond the contract's are the student's to add). Pass ``got`` when it is not a
    dict (the comparison then says what it should be)."""
    return {**got, **contract} if isinstance(got, dict) else contract


def _class(module) -> str:
    """The module's class name (a handle's: what the child reported)."""
    name = getattr(module, "tkit_type", None) or type(module).__name__
    return str(name).rpartition(".")[2]


def _not_loaded(module, state: dict[str, torch.Tensor], student_layout=None) -> SubmissionError:
    """The failure when ``state`` does not go into ``module``: kind ``names``, one message per
    structure naming the attributes and what the contract expects (:func:`.structure.explain`), with
    the mistake the structure shows; a forbidden class the module holds (``nn.MultiheadAttention``)
    is the failure instead (:func:`.forbidden.check`)."""
    ctx = current(required=False)
    if ctx is not None:
        forbidden.check(ctx.run.student)
    theirs = layout(module) if student_layout is None else student_layout
    text, mistake = structure.explain(renaming.layout_of(state), theirs, cls=_class(module),
                                      exercise=ctx.exercise if ctx is not None else None)
    return SubmissionError("names", text, mistake=mistake)


def transformer_state(src_vocab: int, tgt_vocab: int, d_model: int, num_heads: int, num_encoder_layers: int,
                      num_decoder_layers: int, d_ff: int, max_len: int) -> dict[str, torch.Tensor]:
    """Zeros under the names and shapes of the contract's ``Transformer`` (exercises/README.md 9),
    in the reference's order (``src_embed.embedding.weight`` ... ``generator.bias``): the state a
    names test (:func:`expect_names`) compares with, built from PyTorch's layers (no reference)."""
    state = {"src_embed.embedding.weight": torch.zeros(src_vocab, d_model),
             "tgt_embed.embedding.weight": torch.zeros(tgt_vocab, d_model),
             "pos_encoding.pe": torch.zeros(1, max_len, d_model)}
    for kind, layers in (("encoder", num_encoder_layers), ("decoder", num_decoder_layers)):
        layer = (nn.TransformerEncoderLayer if kind == "encoder" else nn.TransformerDecoderLayer)(
            d_model, num_heads, d_ff, batch_first=True)
        stack = (nn.TransformerEncoder(layer, layers, enable_nested_tensor=False) if kind == "encoder"
                 else nn.TransformerDecoder(layer, layers))
        state.update({k: torch.zeros_like(v) for k, v in kit_state(stack, f"{kind}.").items()})
    state.update({"generator.weight": torch.zeros(tgt_vocab, d_model), "generator.bias": torch.zeros(tgt_vocab)})
    return state


def load(module, state: dict[str, torch.Tensor], *, strict: bool = False) -> None:
    """Load ``state`` into a (student's or reference) module, under the module's own names when
    they differ from the contract's but the structure is the same (:mod:`.renaming`).

    When the names agree this is ``module.load_state_dict(state, strict=strict)``. When the module
    has parameters or buffers the state does not name, they are matched to the state's by
    :func:`.renaming.correspond` and the state is loaded under the module's names; the renamed
    attributes are noted for the running test (a failing test then says its weights were matched).
    Without ``strict``, keys of ``state`` the module lacks are ignored here: the module then
    computes something else, and the output comparison says so (and can name the mistake, e.g. a
    missing final norm). Messages name the module's class.

    Raises:
        SubmissionError: kind ``names`` (:func:`_not_loaded`, one message per structure): the module has
            parameters or buffers the state lacks and no correspondence exists, a parameter of another
            shape (a transposed weight), or (``strict``) it lacks some of the state's keys (a bias);
            what the student's ``load_state_dict`` raises otherwise.
    """
    try:
        missing, unexpected = module.load_state_dict(state, strict=False)
    except SubmissionError as exc:   # PyTorch's "size mismatch for linear1.weight": a structure
        if exc.kind != "exception" or "size mismatch" not in exc.error_message:
            raise
        raise _not_loaded(module, state) from None
    if not missing:
        if strict and unexpected:   # the module lacks some of the state's keys (a bias)
            raise _not_loaded(module, state)
        return
    theirs = layout(module, prefer=state)
    try:
        pairs = renaming.correspond(renaming.layout_of(state), theirs, strict=strict)
    except renaming.NoCorrespondence:
        raise _not_loaded(module, state, theirs) from None
    renamed = {pairs[k]: v for k, v in state.items() if k in pairs}
    # the module's other entries (a second name of a shared tensor, the student's own extra
    # parameters and buffers) keep their values; strict: every key of the state reached the module
    _, unexpected = module.load_state_dict(renamed, strict=False)
    if strict and unexpected:
        raise _not_loaded(module, state, theirs)
    ctx = current(required=False)
    if ctx is not None:
        noted = ctx.run.renamed.setdefault(ctx.nodeid, [])
        noted += [r for r in renaming.renamed_attributes(pairs) if r not in noted]


def expect_names(build, student, state: dict[str, torch.Tensor], *, what: str, unmatched: bool = True) -> None:
    """The names test of an exercise: the one test that loses its points when the student's
    module has the exercise's structure under other attribute names (the value tests load their
    weights under the student's names, :func:`load`).

    ``build(student)`` makes the module; ``state`` is a state dict under the exercise's names
    (only names and shapes are read). Passes when the names and shapes agree, or when the only
    renamed attributes are other exercises' (a composite holding a renamed component: that
    component's own names test counts it; :data:`.renaming.COMPONENTS`).

    Args:
        unmatched: when no correspondence exists, fail (True) or return (False: the test compares
            the structure itself next, e.g. to name fused projections).

    Raises:
        AssertionError: renamed attributes of this exercise (each named, ``yours -> exercise's``).
        SubmissionError (kind ``names``, :func:`_not_loaded`): no correspondence (parameters the exercise
            does not name or lacks, other shapes).
    """
    module = build(student)
    ours = renaming.layout_of(state)
    theirs = layout(module, prefer=state)
    if set(ours) <= set(theirs):   # the contract's names and shapes; anything more is the student's
        return
    try:
        pairs = renaming.correspond(ours, theirs, strict=True)
    except renaming.NoCorrespondence:
        if not unmatched:
            return
        raise _not_loaded(module, state, theirs) from None
    ctx = current(required=False)
    renamed = renaming.renamed_attributes(pairs, ctx.exercise if ctx is not None else None)
    if renamed:
        raise AssertionError(_("{what}: attributes named otherwise than in exercises/README.md: {renamed}. The "
                               "other tests loaded their weights under your names (matched to the exercise's by "
                               "shape and registration order), so only this test counts the names: rename them.").format(
            what=what, renamed=", ".join(renamed[:12]) + (", ..." if len(renamed) > 12 else "")))


def loaded(module, state: dict[str, torch.Tensor], what: str | None = None, *, dtype: torch.dtype | None = None):
    """``module`` with ``state`` loaded, converted to ``dtype`` when given, in eval mode: the
    module a test's ``run(impl)`` calls, built the same way for the student, the reference and
    the mutants (``weights.loaded(impl.encoder.Encoder(2, 8, 2, 16), state, "Encoder")(x)``).

    Args:
        module: a kit module just built from ``impl`` (the student's module is a handle: every
            call runs in the child).
        state: ``{name: tensor}`` under the kit's names (drawn here or read from an oracle by
            :func:`kit_state`); its values are copied into the module's parameters, under the
            module's own names when it has the same structure under others (:func:`load`).
        what: given: a key of ``state`` the module lacks is ignored. None: strict, every key
            of ``state`` must reach the module (PyTorch's error names one that does not).
        dtype: the module's dtype after loading (``torch.float64``: the same values in float64).

    Returns:
        ``module``.

    Raises:
        SubmissionError: the student's code failed; kind ``names``: the module has parameters or
            buffers ``state`` lacks and no correspondence (:mod:`.renaming`); (``what`` None) a key
            of ``state`` that does not reach the module.
    """
    load(module, state, strict=what is None)
    if dtype is not None:
        module.to(dtype)
    module.eval()
    return module


def loaded_or_own(module, state: dict[str, torch.Tensor], what: str | None = None):
    """:func:`loaded` for a property test that needs no given weights (a batch swap, causality,
    padded keys): where ``state`` does not go into ``module`` (kind ``names``: another structure,
    already explained once by the tests that need the weights), ``module`` in eval mode with its own
    weights, so the property is still judged on the student's code. A forbidden class in the module
    still fails the test (:func:`.forbidden.check`)."""
    try:
        return loaded(module, state, what)
    except SubmissionError as exc:
        if exc.kind != "names":
            raise
    module.eval()
    return module
