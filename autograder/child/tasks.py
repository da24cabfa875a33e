"""Kit-provided routines that run inside the child on the student's objects.

The parent calls them with ``RemoteImpl.task(name, *args)``; arguments may be refs to
the student's objects. Typical use: a training loop the kit owns (not the student's)
driving the student's model. Register a routine with :func:`task`.
"""

from __future__ import annotations

from typing import Callable

TASKS: dict[str, Callable] = {}


def task(fn: Callable) -> Callable:
    """Register ``fn`` under its name."""
    TASKS[fn.__name__] = fn
    return fn


def run(name: str, *args, **kwargs):
    """Run the registered routine ``name``; KeyError names the unknown task."""
    if name not in TASKS:
        raise KeyError(f"unknown kit task {name!r}")
    return TASKS[name](*args, **kwargs)


@task
def ping(value=None):
    """Echo ``value`` (a health check for the engine's own tests)."""
    return value


def _noncontiguous(value):
    """``value`` as a non-contiguous view with the same values (floating tensors of 2+ elements)."""
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 1:
        # every other element of a buffer twice as wide: same values, stride 2 on the last axis
        return torch.stack((value, torch.zeros_like(value)), dim=-1)[..., 0]
    return value


@task
def call_noncontiguous(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with the floating tensor arguments made non-contiguous.

    Tensors always arrive in the child contiguous; this lets the suites check that a
    submission does not rely on ``.view`` of its inputs.
    """
    args = tuple(_noncontiguous(a) for a in args)
    kwargs = {k: _noncontiguous(v) for k, v in kwargs.items()}
    return fn(*args, **kwargs)
