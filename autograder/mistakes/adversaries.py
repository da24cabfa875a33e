"""Degenerate implementations generated from templates over each exercise's signatures.

An exercise's *signatures* (``SIGNATURES`` in its catalog module) are the functions and methods a
student writes.
A *template* (:data:`TEMPLATES`) is a rule that turns a right output into a degenerate one of the
same shape and dtype: a constant, zeros, the identity (the input of that shape), position 0 copied
to every position, the mean over positions, right only below a row, a fixed random table, one
row (one id, one position) for everything. :func:`generate` applies each template to every
signature of an exercise at once (wrapping the reference's functions, so whatever calls them gets
the degenerate output too); :func:`autograder.mistakes.degenerate.all_degenerates` makes them
entries that ``tkit validate`` grades like the hand-written ones (:mod:`.degenerate`, kept for what no
template makes: uniform, self-only or mean-key attention, memory ignored or replaced, a learnable
constant image, pooled-and-upsampled images, ...). Code right only on the public inputs is
:func:`autograder.validate.check_memoriser`'s: the public tests' records of the reference merged
with the hidden tests' and twins' of a generated adversary.

Integer outputs (token ids from ``greedy_decode``) are left as they are: their tests are gated by
the exercise's values tests. Instructor-only material, like the catalog (needs ``solutions/``).
"""

from __future__ import annotations

import importlib

from autograder import exercises


#: template -> (what it does, the transform's body: ``out`` the right output, ``args`` the call's
#: arguments; a floating or bool tensor of the same shape and dtype comes back).
#: A template that makes sense for some exercises only is in :data:`ONLY`.
TEMPLATES = {
    "zeros": ("zeros of the right shape (bool: nothing blocked)", "return _t.zeros_like(out)"),
    "constant": ("a constant (0.5; bool: everything blocked)",
                 "return _t.full_like(out, 0.5) if out.is_floating_point() else _t.ones_like(out)"),
    "identity": ("the input of the output's shape (zeros where none has it)",
                 "same = [a for a in args if isinstance(a, _t.Tensor) and a.shape == out.shape]\n"
                 "    return same[0].to(out.dtype).clone() if same else _t.zeros_like(out)"),
    "first_position": ("position 0 copied to every position",
                       "return out[..., :1, :].expand_as(out).clone() if out.dim() >= 2 else out[:1].expand_as(out).clone()"),
    "mean_position": ("the mean over positions at every position (bool: position 0)",
                      "if out.dim() < 2 or not out.is_floating_point():\n"
                      "        return _tkit_first_position(out, args)\n"
                      "    return out.mean(dim=-2, keepdim=True).expand_as(out).clone()"),
    "one_element": ("one element (one id's row, one position's vector) for everything",
                    "if out.dim() == 0 or not out.numel():\n"
                    "        return out\n"
                    "    flat = out.reshape(-1, out.shape[-1])\n"
                    "    return flat[:1].expand(flat.shape).reshape(out.shape).clone()"),
    "rows_below_16": ("right below row 16, later rows repeat row 15",
                      "return _tkit_rows_below(out, 16)"),
    "rows_below_64": ("right below row 64, later rows repeat row 63",
                      "return _tkit_rows_below(out, 64)"),
    "fixed_random": ("a fixed random tensor of the right shape (bool: a fixed random mask)",
                     "g = _t.Generator().manual_seed(sum(out.shape) * 7919 + out.dim())\n"
                     "    r = _t.rand(out.shape, generator=g)\n"
                     "    return (r < 0.5) if out.dtype == _t.bool else r.to(out.dtype)"),
    "scaled": ("the right values times 1.5 (bool: inverted)",
               "return ~out if out.dtype == _t.bool else out * 1.5"),
}

_PRELUDE = '''
import functools as _functools

import torch as _t


def _tkit_rows_below(out, rows):
    if out.dim() < 2 or out.shape[-2] <= rows:
        return out
    out = out.clone()
    out[..., rows:, :] = out[..., rows - 1:rows, :]
    return out


def _tkit_map(value, args, transform):
    if isinstance(value, _t.Tensor) and (value.is_floating_point() or value.dtype == _t.bool):
        return transform(value, args)
    if isinstance(value, tuple):
        return tuple(_tkit_map(v, args, transform) for v in value)
    return value


def _tkit_wrap(fn, transform):
    @_functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return _tkit_map(fn(*args, **kwargs), args + tuple(kwargs.values()), transform)
    return wrapped
'''


#: template -> the exercises it applies to (others: every exercise). Rows stand for positions in a
#: positional-encoding table; elsewhere rows past 16 never occur, or are not positions (RoPE's
#: rotations at given positions: the registry's ``rope_positions_below_64``).
ONLY = {"rows_below_16": ("positional_encoding",), "rows_below_64": ("positional_encoding",)}
#: An exercise's catalog module names the templates that make no sense for it (``NO_TEMPLATES``).


def signatures(exercise: str) -> tuple[str, ...]:
    """The functions and methods ``exercise``'s student writes (what the templates wrap):
    ``SIGNATURES`` of its catalog module."""
    return _catalog_module(exercise).SIGNATURES


def no_templates(exercise: str) -> tuple[str, ...]:
    """The templates that make no sense for ``exercise`` (``NO_TEMPLATES`` of its catalog module)."""
    return tuple(getattr(_catalog_module(exercise), "NO_TEMPLATES", ()))


def _catalog_module(exercise: str):
    return importlib.import_module(f"autograder.mistakes.catalog.{exercise}")


def _transform(name: str) -> str:
    body = TEMPLATES[name][1]
    return f"def _tkit_{name}(out, args):\n    {body}\n"


def postscript(exercise: str, template: str) -> str:
    """The Python appended to ``solutions/<exercise>.py``: every signature of the exercise wrapped
    with the template's transform (a method through its class, a function by rebinding its name,
    so the module's own callers see the degenerate one too)."""
    needed = ["first_position", template] if template == "mean_position" else [template]
    lines = [_PRELUDE] + [_transform(name) for name in dict.fromkeys(needed)]
    for signature in signatures(exercise):
        lines.append(f"{signature} = _tkit_wrap({signature}, _tkit_{template})")
    return "\n".join(lines)


def generate(names=None) -> list[tuple[str, str, str, str]]:
    """``(id, exercise, what, postscript)`` per template and exercise of ``names`` (all by
    default), ids ``gen_<template>_<exercise>``."""
    selected = [n for n in exercises.NAMES if names is None or n in set(names)]
    return [(f"gen_{template}_{exercise}", exercise, f"generated: {what}", postscript(exercise, template))
            for exercise in selected for template, (what, _body) in TEMPLATES.items()
            if exercise in ONLY.get(template, (exercise,)) and template not in no_templates(exercise)]
