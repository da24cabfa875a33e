"""The submission's own traceback frames of an exception, for the child's error record.

:func:`student_frames` keeps the frames whose file lies in the submission folder (the kit's and
torch's frames say nothing a student can act on) and, for the innermost of them (the function of
the student's that raised, or that called the torch operation that raised), describes its
arguments: a tensor by its dtype and shape, ``None``, a bool, a small int, or a type name. Values
of tensors are never read, so the record says nothing about an input a student may not see that
its shapes do not (and the parent shows a hidden test's failure without any output).

This module runs in the child and imports nothing of the kit (see :mod:`.runner`).
"""

from __future__ import annotations

import os
import traceback

MAX_FRAMES = 8
MAX_ARGS = 8
MAX_NAME = 40
MAX_DIMS = 8


def describe_value(value) -> dict:
    """A plain record of one argument: ``{"t": "tensor", "dtype": "float32", "shape": [2, 5]}``,
    ``{"t": "none"}``, ``{"t": "bool", "v": True}``, ``{"t": "int", "v": 4}`` (|v| < 10**6),
    or ``{"t": "type", "name": "Linear"}``. Never raises."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            shape = [int(n) for n in tuple(value.shape)[:MAX_DIMS]]
            return {"t": "tensor", "dtype": str(value.dtype).replace("torch.", "")[:MAX_NAME], "shape": shape}
        if value is None:
            return {"t": "none"}
        if isinstance(value, bool):
            return {"t": "bool", "v": bool(value)}
        if isinstance(value, int) and abs(value) < 10**6:
            return {"t": "int", "v": int(value)}
        return {"t": "type", "name": type(value).__name__[:MAX_NAME]}
    except BaseException:  # a hostile object: say nothing about it
        return {"t": "type", "name": "?"}


def frame_args(frame) -> list:
    """``[[name, record], ...]`` for the declared arguments of ``frame`` (``self`` left out)."""
    try:
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        names = [n for n in code.co_varnames[:count] if n != "self"][:MAX_ARGS]
        local = frame.f_locals
        return [[n[:MAX_NAME], describe_value(local.get(n))] for n in names if n in local]
    except BaseException:
        return []


def student_frames(exc: BaseException, submission: str) -> list:
    """The frames of ``exc``'s traceback inside ``submission`` (a real path), innermost last,
    at most :data:`MAX_FRAMES`; the innermost carries ``args`` (:func:`frame_args`)."""
    frames, last = [], None
    try:
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            path = os.path.realpath(frame.f_code.co_filename)
            if path.startswith(submission + os.sep):
                line = traceback.extract_tb(tb, limit=1)[0]
                frames.append({"file": os.path.relpath(path, submission), "line": line.lineno,
                               "func": line.name, "code": (line.line or "")[:200]})
                last = frame
            tb = tb.tb_next
        if frames and last is not None:
            frames[-1]["args"] = frame_args(last)
    except Exception:
        pass
    return frames[-MAX_FRAMES:]
