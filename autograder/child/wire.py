"""The wire format between the grading parent and the student's child process.

A message is a fixed 12-byte frame header (``<IQ``: JSON length, tensor-blob length),
a UTF-8 JSON object, and an optional safetensors blob. Values inside the JSON are
tagged so that the receiver rebuilds only plain data:

========================  ==============================================
Python value              JSON
========================  ==============================================
None, bool, str, int      themselves
float                     itself when finite, else ``{"t": "float", "v": "nan"}``
tuple / list              ``{"t": "tuple"|"list", "v": [...]}``
dict                      ``{"t": "dict", "v": [[key, value], ...]}``
torch.Tensor              ``{"t": "tensor", "k": key into the blob, ...}``
torch.dtype / device      ``{"t": "dtype"|"device", "v": "float32"|"cpu"}``
anything else             ``{"t": "ref", "id": n, "ck": class key, ...}`` (``type``, ``mro`` and
                          ``calls`` in the first ref of each class a child sends)
========================  ==============================================

Tensors travel through safetensors, a format that holds raw bytes, dtypes and
shapes only, so decoding never runs code: a tensor subclass, a pickled object or a
lying ``__eq__`` cannot cross from the child to the parent. JSON is parsed
strictly (``NaN``/``Infinity`` literals are refused).

This file is copied into the child's sandbox, so it imports only the standard
library, torch and safetensors.
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from typing import Any, Callable

FRAME = struct.Struct("<IQ")
MAX_JSON_BYTES = 8 * 1024 * 1024
MAX_BLOB_BYTES = 256 * 1024 * 1024  # the largest legitimate payload (a PE table, digits) is ~15 MB
MAX_ITEMS = 100_000
MAX_DEPTH = 32


class WireError(Exception):
    """The peer sent something that is not a valid message (size, JSON, tags)."""


class EncodeError(Exception):
    """A value cannot be sent (unsupported tensor dtype, too deep, too many items)."""


def _reject_constant(name: str) -> Any:
    raise WireError(f"non-standard JSON constant {name!r}")


# one encoder and one decoder for every message (``json.dumps``/``loads`` with options build
# a new one at each call, ~5 us, a few hundred times per submission on each side)
_JSON_OUT = json.JSONEncoder(allow_nan=False, ensure_ascii=True, separators=(",", ":"))
_JSON_IN = json.JSONDecoder(parse_constant=_reject_constant)


def pack(header: dict, tensors: dict | None = None) -> bytes:
    """Frame one message: ``header`` (JSON-able dict) and ``tensors`` (name -> plain tensor)."""
    body = _JSON_OUT.encode(header).encode()
    blob = save_tensors(tensors) if tensors else b""
    return FRAME.pack(len(body), len(blob)) + body + blob


_SAFETENSORS_DTYPES = {
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64", "int8": "I8", "int16": "I16",
    "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL",
}


def save_tensors(tensors: dict) -> bytes:
    """``tensors`` (name -> plain CPU tensor) in the safetensors format, read back by
    ``safetensors.torch.load`` (which :func:`unpack` uses, so what is received is checked as
    before): an 8-byte little-endian header length, a JSON header (dtype, shape, data offsets)
    and the raw little-endian bytes. Written here because ``safetensors.torch.save`` costs
    several times more on the small tensors of a test (67 us vs 19 us for three [2, 5, 12]
    tensors); any other dtype, or a big-endian machine, goes through ``save`` itself."""
    dtypes = [_SAFETENSORS_DTYPES.get(str(t.dtype).replace("torch.", "")) for t in tensors.values()]
    if None in dtypes or sys.byteorder != "little":
        from safetensors.torch import save

        return save(tensors)
    header, chunks, offset = {}, [], 0
    for (name, tensor), dtype in zip(tensors.items(), dtypes):
        tensor = tensor.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        if tensor.is_neg() or tensor.is_conj():  # lazily negated views: their values, materialised
            tensor = tensor.resolve_neg().resolve_conj()
        if dtype == "BF16":  # numpy has no bfloat16: its bytes through a uint8 view
            raw = tensor.contiguous().reshape(-1).view(torch_uint8()).numpy().tobytes()
        else:
            raw = tensor.numpy().tobytes()  # C order, whatever the strides
        header[name] = {"dtype": dtype, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = _JSON_OUT.encode(header).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as safetensors writes it
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def torch_uint8():
    """``torch.uint8`` (torch is imported on first use: this module is imported before it)."""
    import torch

    return torch.uint8


def unpack(body: bytes, blob: bytes) -> tuple[dict, dict]:
    """Parse a framed message's parts; returns (header, tensors). Raises WireError."""
    try:
        header = _JSON_IN.decode(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"malformed JSON: {exc}") from None
    if not isinstance(header, dict):
        raise WireError("message is not a JSON object")
    tensors: dict = {}
    if blob:
        from safetensors.torch import load

        try:
            tensors = load(blob)
        except Exception as exc:  # safetensors raises its own error types
            raise WireError(f"malformed tensor blob: {exc}") from None
    return header, tensors


def check_frame(json_len: int, blob_len: int) -> None:
    """Raise WireError when a frame announces more than the limits allow."""
    if json_len > MAX_JSON_BYTES:
        raise WireError(f"message header of {json_len} bytes exceeds {MAX_JSON_BYTES}")
    if blob_len > MAX_BLOB_BYTES:
        raise WireError(f"tensor payload of {blob_len} bytes exceeds {MAX_BLOB_BYTES}")


def read_message(fd: int, inbox: bytearray | None = None) -> tuple[dict, dict]:
    """Blocking read of one message from a file descriptor (the child's side). With ``inbox``
    (kept by the caller between calls), reads as much as has arrived at once and keeps what
    belongs to the next message there: one read for a small message instead of three."""
    if inbox is None:
        head = _read_exact(fd, FRAME.size)
        json_len, blob_len = FRAME.unpack(head)
        check_frame(json_len, blob_len)
        return unpack(_read_exact(fd, json_len), _read_exact(fd, blob_len))
    _fill(fd, inbox, FRAME.size)
    json_len, blob_len = FRAME.unpack_from(inbox)
    check_frame(json_len, blob_len)
    end = FRAME.size + json_len + blob_len
    _fill(fd, inbox, end)
    body, blob = bytes(inbox[FRAME.size:FRAME.size + json_len]), bytes(inbox[FRAME.size + json_len:end])
    del inbox[:end]
    return unpack(body, blob)


def _fill(fd: int, inbox: bytearray, n: int) -> None:
    while len(inbox) < n:
        chunk = os.read(fd, min(max(n - len(inbox), 1 << 16), 1 << 20))
        if not chunk:
            raise EOFError("peer closed the channel")
        inbox += chunk


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("peer closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class Encoder:
    """Turns Python values into tagged JSON plus a dict of plain tensors.

    ``make_ref(obj) -> dict`` is called for values that are not plain data (the child
    registers them and returns a ref record); without it such values raise EncodeError.
    """

    def __init__(self, make_ref: Callable[[Any], dict] | None = None):
        self.tensors: dict = {}
        self.make_ref = make_ref
        self._items = 0

    def encode(self, value: Any, depth: int = 0) -> Any:
        self._items += 1
        if self._items > MAX_ITEMS or depth > MAX_DEPTH:
            raise EncodeError("value is too large or too deeply nested to send")
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value
        if kind is float:
            return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
        import torch

        if isinstance(value, torch.Tensor):
            return self._tensor(value)
        if isinstance(value, torch.dtype):
            return {"t": "dtype", "v": str(value).replace("torch.", "")}
        if isinstance(value, torch.device):
            return {"t": "device", "v": str(value)}
        if kind in (tuple, list) or (isinstance(value, tuple) and self.make_ref is not None):
            tag = "list" if kind is list else "tuple"
            return {"t": tag, "v": [self.encode(v, depth + 1) for v in value]}
        if kind is dict or (self.make_ref is not None and _is_plain_mapping(value)):
            return {"t": "dict", "v": [[self.encode(k, depth + 1), self.encode(v, depth + 1)]
                                       for k, v in value.items()]}
        if isinstance(value, (int, float)) and self.make_ref is not None and not isinstance(value, bool):
            # numpy scalars, int/float subclasses: send the plain number
            return self.encode(float(value) if isinstance(value, float) else int(value), depth)
        if self.make_ref is None:
            raise EncodeError(f"cannot send a value of type {kind.__name__}")
        return self.make_ref(value)

    def _tensor(self, value) -> dict:
        import torch

        key = f"t{len(self.tensors)}"
        info = {"t": "tensor", "k": key}  # the flags only where they differ from a plain CPU tensor
        kind = type(value)
        if kind is not torch.Tensor:
            info["cls"] = f"{kind.__module__}.{kind.__qualname__}"
            info["param"] = isinstance(value, torch.nn.Parameter)
        if value.requires_grad:
            info["rg"] = True
        if value.device.type != "cpu":
            info["dev"] = str(value.device)
        plain = value.detach()
        if type(plain) is not torch.Tensor:
            plain = plain.as_subclass(torch.Tensor)
        if plain.is_complex() or plain.is_sparse or plain.layout != torch.strided:
            raise EncodeError(f"cannot send a tensor of dtype {plain.dtype} / layout {plain.layout}")
        self.tensors[key] = plain  # its bytes are copied out when the message is packed (save_tensors)
        return info


def _is_plain_mapping(value: Any) -> bool:
    from collections import OrderedDict

    return isinstance(value, (dict, OrderedDict))


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_DTYPES = (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
)


def decode(value: Any, tensors: dict, make_proxy: Callable[[dict], Any] | None = None) -> Any:
    """Rebuild a value sent by :class:`Encoder`. Anything malformed raises WireError, never
    another exception (a hostile sender controls every byte: unhashable keys, wrong types).

    ``make_proxy(ref_record)`` turns a ref into whatever the receiver uses as a handle;
    without it refs raise WireError. Tensor records come back as plain ``torch.Tensor``;
    the sender's flags (Parameter, requires_grad, device) are read with :func:`tensor_info`.
    """
    try:
        return _decode(value, tensors, make_proxy, 0)
    except WireError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise WireError(f"malformed value ({type(exc).__name__}: {exc})") from None


def _decode(value: Any, tensors: dict, make_proxy: Callable[[dict], Any] | None, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, list):
        raise WireError("untagged list")
    if not isinstance(value, dict) or "t" not in value:
        raise WireError("untagged value")
    tag = value["t"]
    if tag == "float":
        if not isinstance(value.get("v"), str) or value["v"] not in _FLOATS:
            raise WireError("bad float")
        return _FLOATS[value["v"]]
    if tag in ("tuple", "list"):
        items = [_decode(v, tensors, make_proxy, depth + 1) for v in _seq(value.get("v"))]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        out = {}
        for pair in _seq(value.get("v")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("bad dict item")
            key = _decode(pair[0], tensors, make_proxy, depth + 1)
            if not isinstance(key, (str, int, float, bool, type(None), tuple)):
                raise WireError("unhashable dict key")
            out[key] = _decode(pair[1], tensors, make_proxy, depth + 1)
        return out
    if tag == "tensor":
        key = value.get("k")
        if not isinstance(key, str) or key not in tensors:
            raise WireError(f"tensor {key!r} missing from payload")
        t = tensors[key]
        # what the sender said; a plain CPU tensor's record leaves its flags out (one shared dict)
        t.tkit_sent = {**_PLAIN_FLAGS, **{k: value[k] for k in _TENSOR_FLAGS if k in value}} \
            if len(value) > 2 else _PLAIN_FLAGS
        return t
    if tag == "dtype":
        import torch

        if value.get("v") not in _DTYPES:
            raise WireError("unknown dtype")
        return getattr(torch, value["v"])
    if tag == "device":
        import torch

        try:
            return torch.device(str(value.get("v")))
        except (RuntimeError, TypeError):
            raise WireError("bad device") from None
    if tag == "ref":
        if make_proxy is None or not isinstance(value.get("id"), int):
            raise WireError("unexpected object reference")
        return make_proxy(value)
    raise WireError(f"unknown tag {tag!r}")


_TENSOR_FLAGS = ("cls", "param", "rg", "dev")
_PLAIN_FLAGS = {"cls": "torch.Tensor", "param": False, "rg": False, "dev": "cpu"}  # what a record leaves out


def tensor_info(t) -> dict:
    """What the sender said about a decoded tensor: ``cls``, ``param``, ``rg`` (requires_grad),
    ``dev`` (a record sends only those that differ from a plain CPU tensor's); ``{}`` for a tensor
    that did not come through :func:`decode`. Read-only.

    The sender may lie; use this for messages and structure checks, never for scores alone.
    """
    return getattr(t, "tkit_sent", {})


def _seq(v: Any) -> list:
    if not isinstance(v, list):
        raise WireError("expected a JSON array")
    return v
