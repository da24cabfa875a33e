"""Known mistakes written from the public formulas: the ``known_mistakes=`` a public test hands
to its check (:func:`autograder.checks.expectations.expect_equal`) so that self-check names the
mistake (:mod:`autograder.mistakes.diagnosis`).

Each builder returns ``{mistake id: callable}``; the callable computes what a submission with
that one mistake returns on the test's inputs, from the formulas of EXERCISES.md
(:mod:`autograder.checks.formulas`) or PyTorch's own modules, never from the reference
solutions. Callables run only when the student's output has already failed the test.
Sources of the mistakes: the catalog entries of the same ids (public bug reports and errata).
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

import torch
import torch.nn.functional as F

from autograder.checks import formulas, oracles
from autograder.mistakes import families
from autograder.mistakes.diagnosis import KnownMistakes, When


def mapped(known: KnownMistakes, then: Callable[[Any], Any]) -> KnownMistakes:
    """``known`` with ``then`` applied to each output (e.g. a table added to the test's input)."""
    return {key: (lambda make=make: then(make())) for key, make in known.items() if not isinstance(make, When)}


def joined(*parts: KnownMistakes) -> KnownMistakes:
    """One mistake per id found in every part, giving the tuple of the parts' outputs (for a
    test whose ``run`` returns several results)."""
    common = [key for key in parts[0] if all(key in part for part in parts[1:])]
    out: dict = {}
    for key in common:
        if all(isinstance(part[key], When) for part in parts):   # structural: every part's test holds
            out[key] = When(lambda got, key=key: len(got) == len(parts) and
                            all(part[key].test(g) for part, g in zip(parts, got)))
        elif not any(isinstance(part[key], When) for part in parts):
            out[key] = lambda key=key: tuple(part[key]() for part in parts)
    return out


def _pe(max_len: int, d_model: int, *, pos_shift: float = 0.0, sin_exp=None, cos_exp=None,
        swap: bool = False, halves: bool = False) -> torch.Tensor:
    """The table with exponents ``sin_exp``/``cos_exp`` (per pair, default 2i/d_model)."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None] + pos_shift
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    sin = torch.sin(pos / 10000.0 ** (two_i / d_model if sin_exp is None else sin_exp))
    cos = torch.cos(pos / 10000.0 ** (two_i / d_model if cos_exp is None else cos_exp))
    if swap:
        sin, cos = cos, sin
    if halves:
        return torch.cat((sin, cos), dim=-1).float()
    return torch.stack((sin, cos), dim=-1).reshape(max_len, d_model).float()


def pe_table(max_len: int, d_model: int) -> KnownMistakes:
    """Mistakes of ``sinusoidal_table(max_len, d_model)`` (float32 ``[max_len, d_model]``)."""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    half = torch.arange(0, d_model // 2, dtype=torch.float64)
    return {
        "pe_sin_cos_swapped": lambda: _pe(max_len, d_model, swap=True),
        "pe_halves_concatenated": lambda: _pe(max_len, d_model, halves=True),
        "pe_exponent_i_over_d": lambda: _pe(max_len, d_model, sin_exp=half / d_model, cos_exp=half / d_model),
        "pe_exponent_per_column": lambda: _pe(max_len, d_model, cos_exp=(two_i + 1) / d_model),
        "pe_integer_exponent": lambda: _pe(max_len, d_model, sin_exp=0 * two_i, cos_exp=0 * two_i),
        "pe_positions_from_one": lambda: _pe(max_len, d_model, pos_shift=1.0),
    }


def causal_mask(size: int) -> KnownMistakes:
    """Mistakes of ``make_causal_mask(size)`` (``Bool[size, size]``)."""
    ones = torch.ones(size, size, dtype=torch.bool)
    return {
        "mask_causal_inverted": lambda: ones.tril(0),
        "mask_causal_diagonal_masked": lambda: ones.triu(0),
        "mask_causal_transposed": lambda: ones.tril(-1),
        # the right positions in a 0/1 number mask (torch.triu(torch.ones(S, S), 1)): not a bool one
        "mask_causal_float": When(lambda got: got.dtype != torch.bool and torch.equal(got.ne(0).cpu(), ones.triu(1))),
    }


def padding_mask(token_ids: torch.Tensor, pad_id: int) -> KnownMistakes:
    """Mistakes of ``make_padding_mask(token_ids, pad_id)``."""
    return {"mask_padding_inverted": lambda: token_ids != pad_id}


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> KnownMistakes:
    """Mistakes of ``masked_softmax(scores, mask)`` over the last axis."""
    known: KnownMistakes = {"mask_softmax_wrong_axis": lambda: formulas.masked_softmax(scores, mask, dim=-2)}
    if mask is not None:
        known["mask_softmax_polarity_inverted"] = lambda: formulas.masked_softmax(scores, ~mask)
        known["mask_zero_fill"] = lambda: torch.softmax(
            scores.double().masked_fill(torch.broadcast_to(mask, scores.shape), 0.0), dim=-1).to(scores.dtype)
    return known


def _attention(query, key, value, mask=None, *, scale=None, dim=-1, after=1.0, invert=False, weights_of=None):
    """``(output, weights)`` of attention with the scores multiplied by ``scale`` (default
    1/sqrt(d_k)), the softmax over ``dim``, the weights then multiplied by ``after``, and the
    mask's polarity inverted when ``invert``; ``weights_of(scores, mask)`` (a family's way of
    applying the mask, :data:`autograder.mistakes.families.ATTENTION_MASK`) replaces the masked softmax."""
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query.double() @ key.double().transpose(-2, -1) * scale
    if mask is not None and invert:
        mask = ~mask
    if weights_of is not None and mask is not None:
        weights = weights_of(scores, torch.broadcast_to(mask, scores.shape)) * after
    else:
        weights = formulas.masked_softmax(scores, mask, dim=dim) * after
    return (weights @ value.double()).to(query.dtype), weights.to(query.dtype)


def attention(query, key, value, mask=None) -> KnownMistakes:
    """Mistakes of ``scaled_dot_product_attention(query, key, value, mask)``, and of the masked
    softmax it calls: the scale family (:data:`autograder.mistakes.families.ATTENTION_SCALE`), the
    mask family (``ATTENTION_MASK``, with a mask) and the softmax's axis and place."""
    d_k, s_q, s_k = query.shape[-1], query.shape[-2], key.shape[-2]
    heads = query.shape[1] if query.dim() == 4 else 1
    known: KnownMistakes = {
        v.id: (lambda v=v: _attention(query, key, value, mask, scale=v.formula(d_k, s_q, s_k, heads)))
        for v in families.ATTENTION_SCALE}
    known.update({
        "attention_softmax_over_queries": lambda: _attention(query, key, value, mask, dim=-2),
        "attention_scaled_after_softmax": lambda: _attention(query, key, value, mask, scale=1.0,
                                                             after=1 / math.sqrt(d_k)),
    })
    if mask is not None:
        known["mask_softmax_polarity_inverted"] = lambda: _attention(query, key, value, mask, invert=True)
        known.update({v.id: (lambda v=v: _attention(query, key, value, mask, weights_of=v.formula))
                      for v in families.ATTENTION_MASK})
    return known


def _mha(state, num_heads, query, key, value, *, key_padding_mask=None, attn_mask=None, average=True,
         split_ok=True, merge_ok=True, scale=None, out="linear", reduce="mean", weights_of=None, transposed=False):
    """Multi-head attention written from the formulas with one step changed (see :func:`mha`):
    ``scale`` multiplies ``q k^T`` (default 1/sqrt(head_dim)), ``weights_of(scores, mask)`` applies
    the mask instead of the masked softmax, ``transposed`` applies every weight as ``x @ W``."""
    def linear(x, name):
        bias = state.get(f"{name}.bias")
        weight = state[f"{name}.weight"].double()
        return F.linear(x.double(), weight.t() if transposed else weight, None if bias is None else bias.double())

    batch, width = query.shape[0], query.shape[-1]
    head_dim = width // num_heads

    def split(x):
        if split_ok:
            return x.reshape(batch, x.shape[1], num_heads, head_dim).transpose(1, 2)
        return x.reshape(batch, num_heads, x.shape[1], head_dim)

    mask = None
    if attn_mask is not None:
        mask = attn_mask[None, None]
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        mask = pad if mask is None else mask | pad
    q, k, v = split(linear(query, "q_proj")), split(linear(key, "k_proj")), split(linear(value, "v_proj"))
    if scale is not None or weights_of is not None:
        scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(head_dim) if scale is None else scale)
        if weights_of is not None and mask is not None:
            weights = weights_of(scores, torch.broadcast_to(mask, scores.shape))
        else:
            weights = formulas.masked_softmax(scores, mask)
        heads = weights @ v
    else:
        heads, weights = formulas.attention(q, k, v, mask)
    seq_len = query.shape[1]
    merged = (heads.transpose(1, 2) if merge_ok else heads).reshape(batch, seq_len, width)
    output = merged if out == "none" else linear(merged, "out_proj")
    if out == "relu":
        output = torch.relu(output)
    if average:
        weights = weights.sum(dim=1) if reduce == "sum" else weights.mean(dim=1)
    return output.to(query.dtype), weights.to(query.dtype)


def mha(state, num_heads, query, key, value, **kwargs) -> KnownMistakes:
    """Mistakes of ``MultiHeadAttention`` loaded with ``state`` (the kit's names ``q_proj`` ...):
    ``kwargs`` are ``key_padding_mask``, ``attn_mask`` and ``average`` (average_attn_weights). The
    scale and mask families (:data:`autograder.mistakes.families.MHA_SCALE`, ``MHA_MASK``), the
    weights' layout, the heads' split and merge, the output projection."""
    d_model = query.shape[-1]
    head_dim = d_model // num_heads

    def run(**change):
        return lambda: _mha(state, num_heads, query, key, value, **kwargs, **change)

    known: KnownMistakes = {
        "mha_split_without_transpose": run(split_ok=False, merge_ok=False),
        "mha_split_only_without_transpose": run(split_ok=False),
        "mha_merge_without_transpose": run(merge_ok=False),
        "mha_scaled_by_sqrt_d_model": run(scale=1 / math.sqrt(d_model)),
        "mha_no_out_proj": run(out="none"),
        "mha_relu_after_out_proj": run(out="relu"),
        "mha_weights_transposed": run(transposed=True),
    }
    known.update({v.id: run(scale=v.formula(head_dim, d_model, num_heads, query.shape[1], key.shape[1]))
                  for v in families.MHA_SCALE})
    if kwargs.get("key_padding_mask") is not None or kwargs.get("attn_mask") is not None:
        known.update({v.id: run(weights_of=v.formula) for v in families.MHA_MASK})
    if kwargs.get("average", True):
        known["mha_heads_summed"] = run(reduce="sum")
    return known


def split_merge(x: torch.Tensor, num_heads: int, y: torch.Tensor) -> KnownMistakes:
    """Mistakes of ``(split_heads(x, num_heads), merge_heads(y))`` (``x [B, S, D]``, ``y [B, H, S, d]``)."""
    batch, seq_len, width = x.shape
    good_split = x.reshape(batch, seq_len, num_heads, width // num_heads).transpose(1, 2)
    bad_split = x.reshape(batch, num_heads, seq_len, width // num_heads)
    good_merge = y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)
    bad_merge = y.reshape(y.shape[0], y.shape[2], -1)
    return {
        "mha_split_without_transpose": lambda: (bad_split, bad_merge),
        "mha_split_only_without_transpose": lambda: (bad_split, good_merge),
        "mha_merge_without_transpose": lambda: (good_split, bad_merge),
    }


def fused_projections(d_model: int) -> KnownMistakes:
    """The fused-QKV convention, seen in ``(state_dict shapes, ...)`` of a ``MultiHeadAttention``:
    one ``[3 * d_model, d_model]`` weight (any name) and no ``q_proj``."""
    def fused(got):
        shapes = got[0]
        return (not any(key.startswith(("q_proj", "k_proj", "v_proj")) for key in shapes)
                and [3 * d_model, d_model] in [list(shape) for shape in shapes.values()])

    return {"mha_fused_qkv": When(fused)}


def feed_forward(state, x) -> KnownMistakes:
    """Mistakes of ``PositionwiseFeedForward`` loaded with ``state`` (``linear1``, ``linear2``), in eval
    mode: the activation family (:data:`autograder.mistakes.families.FFN_ACTIVATION`), the ReLU's
    place and a residual of its own."""
    def lin(h, name):
        return F.linear(h, state[f"{name}.weight"], state[f"{name}.bias"])

    known: KnownMistakes = {v.id: (lambda v=v: lin(v.formula(lin(x, "linear1")), "linear2"))
                            for v in families.FFN_ACTIVATION}
    known.update({
        "ffn_relu_after_output": lambda: F.relu(lin(lin(x, "linear1"), "linear2")),
        "ffn_adds_residual": lambda: x + lin(F.relu(lin(x, "linear1")), "linear2"),
    })
    return known


def ffn_shapes(d_model: int) -> KnownMistakes:
    """Mistakes of ``PositionwiseFeedForward(d_model, d_ff)``'s ``{name: shape}`` state dict."""
    square = {"linear1.weight": [d_model, d_model], "linear1.bias": [d_model],
              "linear2.weight": [d_model, d_model], "linear2.bias": [d_model]}
    return {"ffn_ignores_d_ff": lambda: square}


def embedding(weight: torch.Tensor, token_ids: torch.Tensor) -> KnownMistakes:
    """Mistakes of ``TokenEmbedding`` whose table is ``weight`` (``[vocab_size, d_model]``)."""
    rows, d_model = weight[token_ids], weight.shape[-1]
    return {
        "embedding_no_scale": lambda: rows,
        "embedding_inverse_scale": lambda: rows / math.sqrt(d_model),
        "embedding_scale_d_model": lambda: rows * d_model,
    }


def flipped_norm(kind: str, module, norm_first: bool, *args, **kwargs) -> KnownMistakes:
    """The Pre-LN/Post-LN mix-up of a PyTorch oracle (``nn.TransformerEncoderLayer``/``DecoderLayer``
    or a stack of them; or a function building it, such as :attr:`oracles.Case.module`, called only
    when the variant is): the same weights run with the other ``norm_first``, called with ``args``
    and ``kwargs``. ``kind`` is ``"encoder"`` or ``"decoder"``; the stack's final norm stays as the
    kit's rule puts it (a student whose layers ignore ``norm_first`` still builds it from ``norm_first``)."""
    def run():
        other = copy.deepcopy(module) if isinstance(module, torch.nn.Module) else module()
        for sub in other.modules():
            if hasattr(sub, "norm_first"):
                sub.norm_first = not norm_first
        return oracles.run(other, *args, **kwargs)

    return {f"{kind}_always_{'post' if norm_first else 'pre'}_ln": run}


def _rotate(x: torch.Tensor, *, halves: bool, clockwise: bool, share: int = 1) -> torch.Tensor:
    """RoPE in the interleaved or rotate-half layout, either sense, on the first ``head_dim / share``
    features of each head (frequencies over that width; the rest passed through)."""
    seq_len, rot = x.shape[-2], x.shape[-1] // share
    cos, sin = formulas.rope_angles(rot, seq_len)
    cos, sin = cos.double(), sin.double()
    if clockwise:
        sin = -sin
    xd, rest = x.double()[..., :rot], x.double()[..., rot:]
    a, b = (xd[..., : rot // 2], xd[..., rot // 2:]) if halves else (xd[..., 0::2], xd[..., 1::2])
    first, second = a * cos - b * sin, a * sin + b * cos
    rotated = torch.cat((first, second), dim=-1) if halves else torch.stack((first, second), dim=-1).flatten(-2)
    return torch.cat((rotated, rest), dim=-1).to(x.dtype)


def rope(x: torch.Tensor) -> KnownMistakes:
    """Conventions other than the contract's for ``apply_rope(x)`` (positions 0..S-1): the layout and
    sense of the rotation, and the part of each head rotated (:data:`autograder.mistakes.families.ROPE_PARTIAL`)."""
    known: KnownMistakes = {
        "rope_rotate_half": lambda: _rotate(x, halves=True, clockwise=False),
        "rope_clockwise": lambda: _rotate(x, halves=False, clockwise=True),
        "rope_rotate_half_clockwise": lambda: _rotate(x, halves=True, clockwise=True),
    }
    known.update({v.id: (lambda v=v: _rotate(x, halves=v.params[1], clockwise=False, share=v.params[0]))
                  for v in families.ROPE_PARTIAL if (x.shape[-1] // v.params[0]) % 2 == 0})
    return known


def rope_angles(head_dim: int, max_len: int) -> KnownMistakes:
    """Mistakes of ``rope_angles(head_dim, max_len)``."""
    def i_over_d():
        theta = torch.arange(max_len, dtype=torch.float64)[:, None] * 10000.0 ** (
            -torch.arange(0, head_dim // 2, dtype=torch.float64) / head_dim)[None, :]
        return theta.cos().float(), theta.sin().float()

    return {
        "rope_angles_sin_cos_swapped": lambda: tuple(reversed(formulas.rope_angles(head_dim, max_len))),
        "rope_exponent_i_over_d": i_over_d,
    }


def fixed_bottleneck(widths: tuple[int, int] = (8, 32)) -> KnownMistakes:
    """Mistakes of ``(encode(x).shape for latent_dim widths[0], for widths[1])``: one code width
    whatever ``latent_dim`` is (a structural test, :class:`~autograder.mistakes.diagnosis.When`)."""
    return {"autoencoder_fixed_latent": When(lambda got: got[0][1] == got[1][1] and got[0][1] not in widths)}


def greedy_length(expected: torch.Tensor) -> KnownMistakes:
    """Mistakes of ``greedy_decode(..., max_len)`` whose right answer is ``expected`` (``[B, max_len]``,
    no row ending): one more column, ``max_len`` counted as new tokens after BOS (a convention,
    :data:`autograder.mistakes.families.GREEDY_LENGTH`)."""
    def longer(got):
        return (tuple(got.shape) == (expected.shape[0], expected.shape[1] + 1)
                and torch.equal(got[:, : expected.shape[1]].cpu(), expected))

    return {"transformer_greedy_max_len_off_by_one": When(longer)}
