"""The torch functions and classes the contract forbids, seen where a student's module reaches them.

exercises/README.md: students may not use ``nn.MultiheadAttention``,
``F.multi_head_attention_forward``, ``F.scaled_dot_product_attention`` or any ``nn.Transformer*``
class. :func:`install` (before any student code, so the per-test state snapshot of :mod:`.state`
holds the wrappers) wraps each of them: a call (or, for a class, a construction or a forward) whose
caller is a module of the submission folder is recorded as ``[api, module]`` (``module`` the
innermost submission module on the stack); :func:`take` hands the records of one request to
:mod:`.runner`, which adds them to its reply, and the parent reads them back with :func:`records`. The wrappers then call the original: the student's
values are graded as usual, and the parent decides what the use costs
(:mod:`autograder.checks.forbidden`). A use from the kit's own code (no submission frame) is not
recorded.

This names what the code called; it is no barrier (code can reach ``torch._C`` directly), and
nothing the parent decides on trusts it beyond naming the functions. Standard library and torch
only: this module runs in the child.
"""

from __future__ import annotations

import functools
import os
import sys

FUNCTIONS = ("scaled_dot_product_attention", "multi_head_attention_forward")
CLASSES = ("MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer")
MAX_RECORDS = 16

_seen: list[list[str]] = []
_folders: tuple[str, ...] = ()


def _caller_module() -> str | None:
    """The innermost module of the submission folder on the stack (its file's stem), or None."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_folders):
            return os.path.splitext(os.path.basename(filename))[0]
        frame = frame.f_back
    return None


def _note(api: str) -> None:
    module = _caller_module()
    if module is not None and [api, module] not in _seen and len(_seen) < MAX_RECORDS:
        _seen.append([api, module])


def _function(original, api: str):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        _note(api)
        return original(*args, **kwargs)

    wrapper.__tkit_forbidden__ = True
    return wrapper


def install(submission: str) -> None:
    """Record the uses of the forbidden functions and classes from files under ``submission``
    (:func:`wrap` first, where the process has not done it yet)."""
    global _folders
    real = os.path.realpath(submission)
    _folders = tuple({os.path.join(real, ""), os.path.join(os.path.abspath(submission), "")})
    wrap()


def wrap() -> None:
    """Wrap the forbidden functions of ``torch.nn.functional`` and the ``__init__`` and ``forward`` of
    the forbidden ``torch.nn`` classes, once per process (a wrapped one is left as it is). The
    zygote calls it before it takes the module state every child puts back
    (:mod:`.snapshot`), so the wrappers are part of that state, not a change a child made."""
    import torch.nn as nn
    import torch.nn.functional as F

    for name in FUNCTIONS:
        original = getattr(F, name, None)
        if original is not None and not getattr(original, "__tkit_forbidden__", False):
            setattr(F, name, _function(original, f"F.{name}"))
    for name in CLASSES:
        cls = getattr(nn, name, None)
        if cls is None:
            continue
        for method in ("__init__", "forward"):
            original = cls.__dict__.get(method)
            if original is not None and not getattr(original, "__tkit_forbidden__", False):
                setattr(cls, method, _function(original, f"nn.{name}"))


def take() -> list[list[str]]:
    """The ``[api, module]`` records since the last call (and forget them)."""
    records = list(_seen)
    _seen.clear()
    return records


def records(value) -> list[tuple[str, str]]:
    """The ``(api, module)`` records of a reply's ``forbidden`` field, read in the parent as data: plain
    short strings only, at most :data:`MAX_RECORDS` (anything else is ignored)."""
    if not isinstance(value, list):
        return []
    return [(rec[0], rec[1]) for rec in value[:MAX_RECORDS]
            if isinstance(rec, list) and len(rec) == 2 and all(isinstance(v, str) and len(v) <= 80 for v in rec)]
