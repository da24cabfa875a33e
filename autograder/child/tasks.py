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
