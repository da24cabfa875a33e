"""An exception raised inside the student's code, worded for the student: which function of
theirs raised, the shapes and dtypes of its arguments, and, where the error is one students
commonly meet, its likely cause.

The child sends, with each exception, the submission's own frames
(:func:`autograder.child.frames.student_frames`); the innermost carries its arguments as
records (a tensor's dtype and shape, ``None``, a bool, a small int, a type name; never a
tensor's values). :func:`call_details` turns them into one line
(``in combine_masks(attn_mask: bool[3, 3], key_padding_mask: bool[2, 5])``) and :func:`likely_cause`
matches the exception against :data:`CAUSES`, in order. A cause may carry the id of a
known mistake (:mod:`autograder.mistakes.diagnosis`, the catalog): the run stage names that
mistake on the failing test (:func:`autograder.run.scoring.explain`).

Everything the child sent is untrusted data: each field is checked for its type and length here.
The sentences go through the message catalog (English and Korean).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from autograder.i18n import _

MAX_SHOWN = 8


def _str(value, limit: int = 60) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _arg_text(rec) -> str:
    """One argument record as text: ``float32[2, 5]``, ``None``, ``True``, ``4``, ``Linear``."""
    if not isinstance(rec, dict):
        return "?"
    kind = rec.get("t")
    if kind == "tensor":
        shape = rec.get("shape")
        dims = [str(n) for n in shape[:MAX_SHOWN] if isinstance(n, int) and not isinstance(n, bool)] \
            if isinstance(shape, list) else []
        return f"{_str(rec.get('dtype'), 20) or '?'}[{', '.join(dims)}]"
    if kind == "none":
        return "None"
    if kind in ("bool", "int") and isinstance(rec.get("v"), (bool, int)):
        return str(rec["v"])
    return _str(rec.get("name"), 40) or "?"


def innermost(err: dict) -> dict:
    """The innermost frame of the submission in an error record (``{}`` when none)."""
    frames = err.get("trace")
    if isinstance(frames, list) and frames and isinstance(frames[-1], dict):
        return frames[-1]
    return {}


def frame_args(frame: dict) -> list[tuple[str, dict]]:
    """``[(name, record), ...]`` of a frame's arguments, the malformed ones dropped."""
    args = frame.get("args")
    if not isinstance(args, list):
        return []
    return [(_str(pair[0], 40), pair[1]) for pair in args[:MAX_SHOWN]
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], dict)]


def call_details(err: dict) -> str:
    """``combine_masks(attn_mask: bool[3, 3], key_padding_mask: bool[2, 5])`` for the innermost
    frame of the submission, or ``""`` when the record has none or it has no arguments."""
    frame = innermost(err)
    func = _str(frame.get("func"), 60)
    args = frame_args(frame)
    if not func or not args:   # the traceback line already names a function without arguments
        return ""
    return f"{func}({', '.join(f'{name}: {_arg_text(rec)}' for name, rec in args)})"


def _tensors(frame: dict) -> dict[str, dict]:
    return {name: rec for name, rec in frame_args(frame) if rec.get("t") == "tensor"}


def _is_float(rec: dict) -> bool:
    return _str(rec.get("dtype"), 20).startswith(("float", "bfloat", "half", "double"))


@dataclass(frozen=True)
class Cause:
    """A recognisable exception: ``matches(type, message, frame)``; ``text()`` the sentence in
    the current language; ``mistake(frame)`` the id of the known mistake it shows, or None."""

    id: str
    matches: Callable[[str, str, dict], bool]
    text: Callable[[], str]
    mistake: Callable[[dict], str | None] = lambda frame: None


_BROADCAST = re.compile(r"size of tensor a \(\d+\) must match the size of tensor b \(\d+\)|"
                        r"shape mismatch|cannot be broadcast|not broadcastable", re.I)


def _padding_arg(frame: dict) -> bool:
    """The frame has a 2-D bool argument named like a padding mask."""
    return any("pad" in name.lower() and _str(rec.get("dtype")) == "bool" and len(rec.get("shape") or []) == 2
               for name, rec in _tensors(frame).items())


def _float_mask_arg(frame: dict) -> bool:
    return any("mask" in name.lower() and _is_float(rec) for name, rec in _tensors(frame).items())


CAUSES: tuple[Cause, ...] = (
    Cause("padding_mask_not_expanded",
          lambda t, m, f: bool(_BROADCAST.search(m)) and _padding_arg(f),
          lambda: _("a key_padding_mask [B, S_k] was combined with a mask or scores of another shape without "
                    "its head and query axes: make it [B, 1, 1, S_k] (key_padding_mask[:, None, None, :]) "
                    "before broadcasting it against [B, H, S_q, S_k]"),
          lambda f: "mask_padding_not_expanded" if _str(f.get("func")) == "combine_masks" else None),
    Cause("float_mask",
          lambda t, m, f: "only supports boolean masks" in m or (_float_mask_arg(f) and (
              re.search(r"not implemented for '(Float|Double|Half|BFloat16)'", m) is not None
              or "only implemented on integer and Boolean" in m)),
          lambda: _("a float mask reached code that needs a bool mask (masked_fill, |, ~): the kit's masks are "
                    "bool, True = blocked; build them with dtype=torch.bool (torch.triu(torch.ones(S, S, "
                    "dtype=torch.bool), diagonal=1)) or convert a 0/1 mask with mask.bool()")),
    Cause("broadcast",
          lambda t, m, f: bool(_BROADCAST.search(m)),
          lambda: _("two tensors whose shapes do not broadcast were combined: shapes line up from the last axis "
                    "(the arguments' shapes are above); a mask must broadcast to the scores [..., S_q, S_k]")),
    Cause("ambiguous_bool",
          lambda t, m, f: "Boolean value of Tensor with more than one" in m,
          lambda: _("a tensor was used as a Python truth value (if mask:, mask1 or mask2, a and b): use "
                    "'mask is not None' to test for a mask and | or & to combine masks")),
    Cause("view_not_contiguous",
          lambda t, m, f: "view size is not compatible with input tensor's size and stride" in m,
          lambda: _("view() on a tensor that is not contiguous (after transpose or permute): use reshape(), "
                    "or .contiguous().view()")),
    Cause("heads_not_split",
          lambda t, m, f: re.search(r"shape '\[[-\d, ]*\]' is invalid for input of size \d+", m) is not None,
          lambda: _("a view/reshape asked for a shape with another number of elements: the heads split the "
                    "last axis, [B, S, D] -> [B, S, H, D/H] (then transpose to [B, H, S, D/H]), and merging "
                    "undoes it; check which axis each size stands for")),
    Cause("linear_input_width",
          lambda t, m, f: "mat1 and mat2 shapes cannot be multiplied" in m,
          lambda: _("a linear layer got a tensor whose last axis is not its input width: check that heads are "
                    "merged back to [B, S, D] before out_proj, and which width (d_model, d_ff) each layer "
                    "maps from and to")),
    Cause("dtype_mix",
          lambda t, m, f: re.search(r"expected (scalar type|m1 and m2 to have the same dtype)|must have the same "
                                    r"dtype|found dtype \w+ but expected|expected .* dtype", m, re.I) is not None,
          lambda: _("tensors of two dtypes were mixed: a tensor the code creates (torch.zeros, torch.tensor, "
                    "torch.arange...) is float32 by default; create it with dtype=x.dtype (and device=x.device) "
                    "of the input")),
    Cause("device_mix",
          lambda t, m, f: "Expected all tensors to be on the same device" in m,
          lambda: _("tensors on two devices were mixed: create new tensors with device=x.device of the input")),
    Cause("dim_out_of_range",
          lambda t, m, f: "Dimension out of range" in m,
          lambda: _("an axis number does not exist for this input: count axes from the end (dim=-1, "
                    "transpose(-2, -1)) so the code works for 3-D and 4-D inputs alike")),
    Cause("index_out_of_range",
          lambda t, m, f: "index out of range in self" in m,
          lambda: _("an embedding lookup got an id outside 0..vocab_size-1 (or a table built with the wrong size)")),
    Cause("none_argument",
          lambda t, m, f: t in ("AttributeError", "TypeError") and "'NoneType'" in m,
          lambda: _("an optional argument (a mask) was None: handle mask=None, key_padding_mask=None and "
                    "attn_mask=None, which the tests pass")),
)


_TORCH_NOT_IMPLEMENTED = re.compile(r'^"\w+" not implemented for \'\w+\'')


def is_torch_not_implemented(message: str) -> bool:
    """A ``NotImplementedError`` that torch raised for an operation on a dtype
    (``"bitwise_or_cpu" not implemented for 'Float'``), not a stub's unfinished TODO."""
    return bool(_TORCH_NOT_IMPLEMENTED.match(message or ""))


def likely_cause(err: dict) -> Cause | None:
    """The first :data:`CAUSES` entry that matches the error record, or None."""
    kind = _str(err.get("type"), 80)
    message = _str(err.get("message"), 4000)
    frame = innermost(err)
    for cause in CAUSES:
        try:
            if cause.matches(kind, message, frame):
                return cause
        except Exception:  # a malformed record: not this cause
            continue
    return None


def explain(err: dict) -> tuple[str, str, str | None]:
    """What an exception's message gains: the line naming the function and its arguments
    (``""`` when the record has no frame of the submission), the likely-cause line (``""`` when
    none is recognised) and the id of the known mistake that cause shows (or None)."""
    details = call_details(err)
    where = _("It was raised in {call}.").format(call=details) if details else ""
    cause = likely_cause(err)
    if cause is None:
        return where, "", None
    return where, _("Likely cause: {cause}").format(cause=cause.text()), cause.mistake(innermost(err))
