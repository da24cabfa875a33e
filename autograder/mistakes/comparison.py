"""Comparing a submission's output with the expected one: :func:`compare`, :func:`distance`
and the :class:`Mismatch` they raise. Importable from :mod:`autograder.checks.expectations`.

Messages of hidden tests never print expected values (they must not leak them): only
shapes, dtypes, where the first difference is, how large it is, and the student's
own value there. Public tests (whose formulas are public) also show the expected value
at the first difference.

:func:`signature` is the instructor-side fingerprint of a wrong output (the behaviour evidence
of :mod:`autograder.similarity.behaviour`); it never reaches a student.
"""

from __future__ import annotations

import math
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

import torch

from autograder.child import wire
from autograder.context import current
from autograder.i18n import _

if TYPE_CHECKING:  # instructor-only: the student edition ships no mistake catalog
    from autograder.mistakes import catalog

PLAIN_TENSOR_TYPES = ("torch.Tensor", "torch.nn.parameter.Parameter")

#: The contract's one tolerance (exercises/README.md, "Conventions"): a value passes within
#: ``ATOL + RTOL * |expected|``, whatever the dtype (a float64 input computed in float32 passes).
#: Every check reads it from here; a suite passes another ``atol`` only through
#: :func:`position_atol`.
ATOL, RTOL = 1e-5, 1e-4


def position_atol(max_position: int) -> float:
    """The tolerance of values computed from positions up to ``max_position`` (a PE table, RoPE
    angles and rotations): :data:`ATOL` plus one float32 rounding of an angle ``pos * w`` (``w <=
    1``), ``max_position * 2**-23`` (5000: 6e-4), which computing the angles in float32, as the
    source tutorials do, may cost (exercises/README.md 2 and 10)."""
    return ATOL + max(int(max_position), 0) * 2.0 ** -23


class Mismatch(AssertionError):
    """The submission's output differs from the expected one. ``mistake`` is the
    catalog entry that reproduces the student's output, when one does."""

    signature: str | None = None   # set by naming_mistakes: see signature()
    got: Any = None                # what the outermost compare() compared, and its valid mask
    valid: Any = None

    def __init__(self, message: str, mistake: catalog.Mutant | None = None):
        super().__init__(message)
        self.message = message
        self.mistake = mistake

    def __str__(self) -> str:
        if self.mistake is None:
            return self.message
        label = _("Different convention") if self.mistake.convention else _("Likely mistake")
        return f"{self.message}\n{label}: {self.mistake.hint()} [{self.mistake.id}]"


def _fmt_index(flat: int, shape) -> str:
    idx = []
    for dim in reversed(list(shape)):
        idx.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return "(" + ", ".join(str(i) for i in reversed(idx)) + ")"


def describe_type(value: Any) -> str:
    if hasattr(value, "tkit_type"):
        return value.tkit_type
    return type(value).__name__


def compare(got: Any, expected: Any, *, what: str, atol: float = ATOL, rtol: float = RTOL,
            valid: torch.Tensor | None = None, check_dtype: bool = True, equal_nan: bool = False,
            show_expected: bool | None = None) -> None:
    """Raise :class:`Mismatch` unless ``got`` matches ``expected``.

    Structures (tuple, list, dict, None, numbers, strings) are compared item by item; tensors
    by type (plain tensors only), shape, dtype (when ``check_dtype``), NaN/inf and
    values within ``atol + rtol * |expected|``. ``valid`` (bool, broadcastable to the
    tensor) restricts the value comparison to True positions, e.g. unpadded ones.
    ``show_expected`` adds the expected value at the first wrong position to the message;
    by default it does so in public tests only (hidden tests keep their values private).
    The mismatch keeps the outermost call's ``got`` and ``valid`` (for its :func:`signature`).
    """
    try:
        _compare(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected)
    except Mismatch as exc:
        exc.got, exc.valid = got, valid   # a reference; the signature is computed only for a student's failure
        raise


def _compare(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected) -> None:
    if show_expected is None:
        ctx = current(required=False)
        show_expected = ctx is not None and ctx.visibility == "public"
    if isinstance(expected, torch.Tensor):
        _compare_tensor(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected)
    elif isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            raise Mismatch(_("{what} should be a tuple of {n} items, got {type}").format(
                what=what, n=len(expected), type=describe_type(got)))
        if len(got) != len(expected):
            raise Mismatch(_("{what} should have {n} items, got {m}").format(
                what=what, n=len(expected), m=len(got)))
        for i, (g, e) in enumerate(zip(got, expected)):
            v = valid[i] if isinstance(valid, (tuple, list)) else valid
            compare(g, e, what=_("item {i} of {what}").format(i=i, what=what), atol=atol, rtol=rtol, valid=v,
                    check_dtype=check_dtype, equal_nan=equal_nan, show_expected=show_expected)
    elif isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise Mismatch(_("{what} should have the keys {keys}").format(what=what, keys=sorted(expected)))
        for k in expected:
            compare(got[k], expected[k], what=f"{what}[{k!r}]", atol=atol, rtol=rtol, valid=valid,
                    check_dtype=check_dtype, equal_nan=equal_nan, show_expected=show_expected)
    elif expected is None:
        if got is not None:
            raise Mismatch(_("{what} should be None, got {type}").format(what=what, type=describe_type(got)))
    elif isinstance(expected, bool) or isinstance(expected, int) and not isinstance(expected, bool):
        if type(got) is not type(expected) or got != expected:
            raise Mismatch(_("{what} should be {expected!r}, got {got!r}").format(
                what=what, expected=expected, got=got if isinstance(got, (int, float, str)) else describe_type(got)))
    elif isinstance(expected, str):
        if not isinstance(got, str) or got != expected:
            raise Mismatch(_("{what} should be {expected!r}, got {got!r}").format(
                what=what, expected=expected, got=got if isinstance(got, (int, float, str)) else describe_type(got)))
    elif isinstance(expected, float):
        if not isinstance(got, (int, float)) or isinstance(got, bool) or not math.isclose(
                got, expected, rel_tol=rtol, abs_tol=atol):
            raise Mismatch(_("{what} differs from the expected number (got {got!r})").format(
                what=what, got=got if isinstance(got, (int, float)) else describe_type(got)))
    else:
        raise TypeError(f"compare() cannot handle expected values of type {type(expected).__name__}")


def _compare_tensor(got, expected, what, atol, rtol, valid, check_dtype, equal_nan, show_expected=False) -> None:
    if not isinstance(got, torch.Tensor):
        raise Mismatch(_("{what} should be a tensor, got {type}").format(what=what, type=describe_type(got)))
    sent_cls = wire.tensor_info(got).get("cls")
    if sent_cls and sent_cls not in PLAIN_TENSOR_TYPES:
        raise Mismatch(_("{what} is a tensor subclass ({cls}); return a plain torch.Tensor").format(
            what=what, cls=sent_cls))
    if tuple(got.shape) != tuple(expected.shape):
        raise Mismatch(_("{what} has the wrong shape: expected {expected}, got {got}").format(
            what=what, expected=list(expected.shape), got=list(got.shape)))
    if check_dtype and got.dtype != expected.dtype:
        raise Mismatch(_("{what} has the wrong dtype: expected {expected}, got {got}").format(
            what=what, expected=expected.dtype, got=got.dtype))
    sent_dev = wire.tensor_info(got).get("dev")
    if sent_dev and sent_dev.split(":")[0] != expected.device.type:
        raise Mismatch(_("{what} is on the wrong device: expected {expected}, got {got}").format(
            what=what, expected=expected.device.type, got=sent_dev))
    g = got.detach().to(torch.float64) if got.is_floating_point() else got.detach()
    e = expected.detach().to(device=g.device, dtype=g.dtype) if got.is_floating_point() else expected.detach()
    mask = torch.ones(g.shape, dtype=torch.bool)
    if valid is not None:
        mask = torch.broadcast_to(valid.to(torch.bool).cpu(), g.shape)
    if g.is_floating_point():
        # the common case first: every compared value close (NaN where NaN is expected, the same
        # infinities), which is exactly when none of the checks below fails
        if (torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True) | ~mask).all():
            return
        bad_nan = torch.isnan(g) & ~torch.isnan(e) & mask
        if bad_nan.any():
            raise Mismatch(_("{what} contains NaN at {n} of {m} positions (first at {idx})").format(
                what=what, n=int(bad_nan.sum()), m=int(mask.sum()),
                idx=_fmt_index(int(bad_nan.flatten().nonzero()[0]), g.shape)))
        bad_inf = torch.isinf(g) & ~torch.isinf(e) & mask
        if bad_inf.any():
            raise Mismatch(_("{what} contains inf at {n} of {m} positions (first at {idx})").format(
                what=what, n=int(bad_inf.sum()), m=int(mask.sum()),
                idx=_fmt_index(int(bad_inf.flatten().nonzero()[0]), g.shape)))
        close = torch.isclose(g, e, rtol=rtol, atol=atol) | (torch.isnan(g) & torch.isnan(e))
    else:
        close = g == e
    wrong = ~close & mask
    if wrong.any():
        first = int(wrong.flatten().nonzero()[0])
        diff = (g - e).abs()[wrong] if g.is_floating_point() else None
        detail = ""
        if diff is not None:
            finite = diff[torch.isfinite(diff)]
            if finite.numel():
                detail = _(", largest difference {diff:.3g}").format(diff=float(finite.max()))
        if show_expected:
            detail = _(", expected {value}").format(value=_shown(e.flatten()[first].item())) + detail
        raise Mismatch(_("{what} has wrong values at {n} of {m} positions (first at {idx}, where you "
                         "returned {value}){detail}").format(
            what=what, n=int(wrong.sum()), m=int(mask.sum()), idx=_fmt_index(first, g.shape),
            value=_shown(g.flatten()[first].item()), detail=detail))


def _shown(value) -> str:
    return str(value) if isinstance(value, bool) else f"{value:.6g}"


def distance(got: Any, expected: Any, valid=None) -> float:
    """How far ``got`` is from ``expected``: the largest absolute difference over the
    compared positions (inf on a structure, shape or NaN-pattern difference)."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(expected.shape):
            return math.inf
        g = got.detach().double()
        e = expected.detach().double()
        mask = torch.ones(g.shape, dtype=torch.bool) if valid is None else torch.broadcast_to(
            valid.to(torch.bool).cpu(), g.shape)
        if not mask.any():
            return 0.0
        g, e = g[mask], e[mask]
        nan_g, nan_e = torch.isnan(g), torch.isnan(e)
        if not torch.equal(nan_g, nan_e):
            return math.inf
        keep = ~nan_g
        g, e = g[keep], e[keep]
        if not g.numel():
            return 0.0
        inf_mismatch = (torch.isinf(g) | torch.isinf(e)) & (g != e)
        if inf_mismatch.any():
            return math.inf
        finite = torch.isfinite(e)
        return float((g[finite] - e[finite]).abs().max()) if finite.any() else 0.0
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return math.inf
        return max((distance(g, e, valid[i] if isinstance(valid, (tuple, list)) else valid)
                    for i, (g, e) in enumerate(zip(got, expected))), default=0.0)
    if expected is None:
        return 0.0 if got is None else math.inf
    if isinstance(expected, str):
        return 0.0 if got == expected else math.inf
    if isinstance(expected, (int, float)):
        if not isinstance(got, (int, float)):
            return math.inf
        return abs(float(got) - float(expected))
    return math.inf


SIGNATURE_BITS = 6        # mantissa bits a float keeps in a signature (a step of 1.6-3.1 %)
SIGNATURE_FLOOR = 1e-4    # floats smaller than this in magnitude count as 0
SIGNATURE_LOW_DISTINCT = 3  # fewer distinct compared values than this: a low-information output
LOW_INFORMATION = "c:"    # the prefix of a low-information output's signature


def signature(got: Any, valid=None) -> str | None:
    """A bounded fingerprint of a wrong output ``got``: 16 hex digits of blake2b over a
    canonical encoding (types, shapes, dtypes, and each compared value rounded to
    :data:`SIGNATURE_BITS` mantissa bits, values under :data:`SIGNATURE_FLOOR` as 0, positions
    outside ``valid`` as 0), so that the float noise of equivalent code (another order of the
    same operations, ~1e-7) almost never changes it. A constant output, a single number or a
    two-valued one (zeros, NaN everywhere, a boolean mask) is prefixed :data:`LOW_INFORMATION`:
    independent students often share it. None when ``got`` cannot be encoded. Instructor-side
    only (the gradebook), never in anything a student sees."""
    digest = blake2b(digest_size=8, person=b"tkit-behaviour")
    distinct: set = set()
    try:
        _encode(got, valid, digest.update, distinct, depth=0)
    except Exception:  # noqa: BLE001 - a value the encoding does not know: no signature
        return None
    prefix = LOW_INFORMATION if len(distinct) < SIGNATURE_LOW_DISTINCT else ""
    return prefix + digest.hexdigest()


def _quantized(values):
    """float64 numpy ``values`` as int64 codes: ``(mantissa rounded to SIGNATURE_BITS, exponent)``
    packed, small values 0, NaN and the infinities their own codes."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    mantissa, exponent = np.frexp(np.where(np.isfinite(values), values, 0.0))
    steps = np.round(mantissa * (1 << SIGNATURE_BITS)).astype(np.int64)
    carry = np.abs(steps) == (1 << SIGNATURE_BITS)   # 0.999.. rounded up: the next power of two
    steps = np.where(carry, steps // 2, steps)
    exponent = exponent.astype(np.int64) + carry
    codes = steps * 4096 + exponent
    codes = np.where(np.abs(values) < SIGNATURE_FLOOR, 0, codes)
    codes = np.where(np.isnan(values), 1 << 40, codes)
    return np.where(np.isinf(values), np.sign(np.nan_to_num(values)).astype(np.int64) * ((1 << 40) + 1), codes)


def _encode(value: Any, valid, update, distinct: set, depth: int) -> None:
    """Feed ``value``'s canonical bytes to ``update``; add up to ``SIGNATURE_LOW_DISTINCT`` of its
    distinct compared values to ``distinct``."""
    import numpy as np

    if depth > 20:
        raise ValueError("nested too deeply")
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        update(f"T{t.dtype}{tuple(t.shape)}".encode())
        if t.is_complex():
            t = torch.view_as_real(t)
        array = t.to(torch.float64).numpy() if t.is_floating_point() else t.to(torch.int64).numpy()
        if isinstance(valid, torch.Tensor):
            try:   # a wrong shape that valid does not broadcast to: every value counts
                mask = torch.broadcast_to(valid.to(torch.bool).cpu(), value.shape).numpy()
            except RuntimeError:
                mask = None
            if mask is not None and array.shape != mask.shape:   # a complex tensor's real/imaginary axis
                mask = mask[..., None].repeat(array.shape[-1], axis=-1)
            if mask is not None:
                array = np.where(mask, array, 0)
        codes = _quantized(array) if t.is_floating_point() else array.astype(np.int64)
        update(np.ascontiguousarray(codes).tobytes())
        if len(distinct) < SIGNATURE_LOW_DISTINCT:
            distinct.update(np.unique(codes)[:SIGNATURE_LOW_DISTINCT].tolist())
    elif isinstance(value, (tuple, list)):
        update(f"L{len(value)}".encode())
        for i, item in enumerate(value):
            _encode(item, valid[i] if isinstance(valid, (tuple, list)) and i < len(valid) else
                    (None if isinstance(valid, (tuple, list)) else valid), update, distinct, depth + 1)
    elif isinstance(value, dict):
        update(f"D{len(value)}".encode())
        for key in sorted(value, key=repr):
            update(b"K" + repr(key).encode("utf-8", "surrogatepass")[:200])
            _encode(value[key], valid, update, distinct, depth + 1)
    elif value is None or isinstance(value, (bool, int, str)):
        update(f"V{type(value).__name__}:".encode() + repr(value).encode("utf-8", "surrogatepass"))
        distinct.add(repr(value))
    elif isinstance(value, float):
        code = int(_quantized([value])[0])
        update(f"F{code}".encode())
        distinct.add(code)
    else:   # a handle or another object: its type only
        update(f"O{describe_type(value)}".encode())
        distinct.add(describe_type(value))
