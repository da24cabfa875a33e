"""The process-wide state a test starts in: captured before any student code, restored between tests.

A student's module can change its whole process at import (``torch.set_default_dtype`` "for
precision", ``torch.set_grad_enabled(False)`` from a notebook) or monkeypatch torch
(``F.softmax = ...``), and the change would outlive its own tests. :mod:`.runner` undoes it:

- every ``reset`` (before each test) puts back the items of :data:`ITEMS` (~30 us), so that no
  test depends on what an earlier test's code did to them;
- ``fresh`` (before the first test of another exercise) also puts back the whole module state
  (every module's, class's and function's attributes, every container they hold:
  :mod:`.snapshot`, ~15 ms) and the ``sys.modules`` entries of the snapshot (:func:`restore`
  with ``deep=True``), after :mod:`.runner` dropped the student's modules, and :func:`leftovers`
  names what it cannot undo (a thread, a process, inference mode, a torch mode or operator
  registration, a lowered resource limit, an audit hook, registries changed while a module was
  imported): the parent then replaces the child.

Each item of :data:`ITEMS` is ``(name, get, set)``; why each matters is in ``docs/DESIGN.md``
(per-test state). Standard library and torch only: this module runs in the child.
"""

from __future__ import annotations

import _signal
import gc
import os
import resource
import signal
import sys
import warnings

from . import snapshot


def _torch():
    import torch

    return torch


def _flush_denormal() -> bool:
    """Whether denormals are flushed to zero now (torch has no getter: a denormal is multiplied)."""
    torch = _torch()
    return float(torch.tensor([1e-39], dtype=torch.float32).mul(1.0)[0]) == 0.0


def _device_context():
    torch = _torch()
    return getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None), torch._C._len_torch_function_stack()


def _set_device_context(saved) -> None:
    """Back to the saved default-device context and torch-function mode stack depth."""
    torch = _torch()
    context, depth = saved
    if getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None) is not context:
        try:
            torch.set_default_device(None if context is None else context.device)
        except Exception:
            torch._GLOBAL_DEVICE_CONTEXT.device_context = context
    while torch._C._len_torch_function_stack() > depth:  # a mode a student entered and never left
        torch._C._pop_torch_function_stack()


HOOKS = ("_global_backward_pre_hooks", "_global_backward_hooks", "_global_is_full_backward_hook",
         "_global_forward_pre_hooks", "_global_forward_hooks", "_global_forward_hooks_with_kwargs",
         "_global_forward_hooks_always_called", "_global_module_registration_hooks",
         "_global_parameter_registration_hooks", "_global_buffer_registration_hooks")


def _module_hooks():
    from torch.nn.modules import module

    return {name: dict(getattr(module, name)) for name in HOOKS if isinstance(getattr(module, name, None), dict)}


def _set_module_hooks(saved) -> None:
    from torch.nn.modules import module

    for name, hooks in saved.items():
        current = getattr(module, name, None)
        if current is None or not isinstance(current, dict):
            continue
        if current.keys() != hooks.keys():
            current.clear()
            current.update(hooks)


def _backend_flags():
    torch = _torch()
    return (torch.backends.mkldnn.enabled, torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
            torch.backends.cudnn.deterministic, torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32)


def _set_backend_flags(saved) -> None:
    torch = _torch()
    (torch.backends.mkldnn.enabled, torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
     torch.backends.cudnn.deterministic, torch.backends.cuda.matmul.allow_tf32,
     torch.backends.cudnn.allow_tf32) = saved


def _autocast():
    torch = _torch()
    return (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"), torch.is_autocast_cache_enabled())


def _set_autocast(saved) -> None:
    torch = _torch()
    torch.set_autocast_enabled("cpu", saved[0])
    torch.set_autocast_dtype("cpu", saved[1])
    torch.set_autocast_cache_enabled(saved[2])


# the signals whose handlers a student's module might set and a later test would feel
SIGNALS = tuple(getattr(signal, name) for name in (
    "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2",
    "SIGCHLD", "SIGPIPE", "SIGXFSZ", "SIGXCPU", "SIGSEGV", "SIGFPE", "SIGBUS", "SIGABRT") if hasattr(signal, name))
TIMERS = tuple(getattr(signal, name) for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")
               if hasattr(signal, name))


def _signals():
    handlers = {}
    for sig in SIGNALS:
        try:
            handlers[sig] = _signal.getsignal(sig)  # the raw handler (signal's wraps it in an enum: slower)
        except (OSError, ValueError):
            pass
    return handlers


def _set_signals(saved) -> None:
    for timer in TIMERS:
        signal.setitimer(timer, 0)   # an alarm a student set must not fire in a later test
    for sig, handler in saved.items():
        if handler is not None and _signal.getsignal(sig) is not handler:
            try:
                _signal.signal(sig, handler)
            except (OSError, ValueError, TypeError):
                pass


def _environ():
    return dict(getattr(os.environ, "_data", os.environ))  # the encoded form: no decoding per reset


def _set_environ(saved) -> None:
    data = getattr(os.environ, "_data", None)
    if data is None or data != saved:
        os.environ.clear()
        decode = getattr(os.environ, "decodekey", lambda v: v), getattr(os.environ, "decodevalue", lambda v: v)
        os.environ.update({decode[0](k): decode[1](v) for k, v in saved.items()})


def _warning_filters():
    return list(warnings.filters)


def _set_warning_filters(saved) -> None:
    if warnings.filters != saved:
        warnings.filters[:] = saved
        warnings._filters_mutated()


def _streams():
    return sys.stdin, sys.stdout, sys.stderr, sys.displayhook, sys.excepthook


def _set_streams(saved) -> None:
    sys.stdin, sys.stdout, sys.stderr, sys.displayhook, sys.excepthook = saved


def _umask() -> int:
    mask = os.umask(0o022)  # reading it means setting it: set back at once
    os.umask(mask)
    return mask


def _set_threads(n: int) -> None:
    torch = _torch()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


# (name, get, set): the per-test state, restored at every reset (docs/DESIGN.md says why each matters)
ITEMS = (
    ("grad mode", lambda: _torch().is_grad_enabled(), lambda v: _torch().set_grad_enabled(v)),
    ("default dtype", lambda: _torch().get_default_dtype(), lambda v: _torch().set_default_dtype(v)),
    ("default device", _device_context, _set_device_context),
    ("deterministic algorithms",
     lambda: (_torch().are_deterministic_algorithms_enabled(), _torch().is_deterministic_algorithms_warn_only_enabled()),
     lambda v: _torch().use_deterministic_algorithms(v[0], warn_only=v[1])),
    ("anomaly detection", lambda: (_torch().is_anomaly_enabled(), _torch().is_anomaly_check_nan_enabled()),
     lambda v: _torch().set_anomaly_enabled(v[0], v[1])),
    ("intra-op threads", lambda: _torch().get_num_threads(), _set_threads),
    ("float32 matmul precision", lambda: _torch().get_float32_matmul_precision(),
     lambda v: _torch().set_float32_matmul_precision(v)),
    ("autocast (CPU)", _autocast, _set_autocast),
    ("flush denormal", _flush_denormal, lambda v: _torch().set_flush_denormal(v)),
    ("backend flags (mkldnn, cudnn, tf32)", _backend_flags, _set_backend_flags),
    ("global nn.Module hooks", _module_hooks, _set_module_hooks),
    ("recursion limit", sys.getrecursionlimit, sys.setrecursionlimit),
    ("thread switch interval", sys.getswitchinterval, sys.setswitchinterval),
    ("trace and profile hooks", lambda: (sys.gettrace(), sys.getprofile()),
     lambda v: (sys.settrace(v[0]), sys.setprofile(v[1]))),
    ("garbage collector", lambda: (gc.isenabled(), gc.get_threshold()),
     lambda v: (gc.enable() if v[0] else gc.disable(), gc.set_threshold(*v[1]))),
    ("warning filters", _warning_filters, _set_warning_filters),
    ("standard streams and hooks", _streams, _set_streams),
    ("working directory", os.getcwd, os.chdir),
    ("environment", _environ, _set_environ),
    ("umask", lambda: _umask(), os.umask),
    ("signal handlers and timers", _signals, _set_signals),
    ("sys.path", lambda: list(sys.path), lambda v: sys.path.__setitem__(slice(None), v)),
)

# put back without comparing: a pending timer is not read, and reading flush-denormal costs a tensor op
ALWAYS = ("signal handlers and timers", "flush denormal")

class Snapshot:
    """What :func:`capture` saw: each item's value, and (for a deep restore) the module state
    (:class:`.snapshot.ModuleState`), ``sys.modules``, the counts :func:`leftovers` compares and the
    process's marks (:func:`process_marks`)."""

    def __init__(self):
        self.values: dict[str, object] = {}
        self.module_state: snapshot.ModuleState | None = None
        self.modules: dict = {}
        self.counts: dict[str, int] = {}
        self.marks: dict = {}


def capture(deep: bool = True) -> Snapshot:
    """The current state (call before any student code runs); ``deep``: also what a deep
    :func:`restore` needs (the module state: the zygote's walk re-based here, ~15 ms, or a walk of
    its own, ~90 ms)."""
    snap = Snapshot()
    for name, get, _ in ITEMS:
        try:
            snap.values[name] = get()
        except Exception:  # an item this torch lacks is left alone
            pass
    if not deep:
        return snap
    snap.counts = _counts()
    snap.modules = dict(sys.modules)
    snap.module_state = snapshot.for_this_child()
    snap.marks = process_marks()
    return snap


def restore(snap: Snapshot, deep: bool = False) -> list[str]:
    """Put back every item of ``snap`` (and with ``deep``, the whole module state and the
    ``sys.modules`` entries that existed then: :func:`.snapshot.put_back`); returns the names of
    the items that failed and what the module state's restore cannot vouch for."""
    failed = []
    for name, get, put in ITEMS:
        if name in snap.values:
            saved = snap.values[name]
            try:
                if name in ALWAYS or get() != saved:  # a setter may be slow the first time (~2 s for
                    put(saved)                        # use_deterministic_algorithms): only when changed
            except Exception:
                failed.append(name)
    if deep and snap.modules:
        if not snap.modules.items() <= sys.modules.items():
            for key, module in snap.modules.items():
                if sys.modules.get(key) is not module:
                    sys.modules[key] = module
        if snap.module_state is not None:
            failed += snapshot.put_back(snap.module_state)
    return failed


def _counts() -> dict[str, int]:
    """What :func:`leftovers` compares: threads, torch modes, operator overrides, inference mode."""
    import threading

    torch = _torch()
    library = sys.modules.get("torch.library")
    return {"Python threads": threading.active_count(),
            "torch dispatch modes": torch._C._len_torch_dispatch_stack(),
            "torch function modes": torch._C._len_torch_function_stack(),
            # kernels registered for torch's own operators (torch.library.Library("aten", "IMPL")): a
            # new operator, or torch's lazy imports (which register their own namespaces), harm no one
            "torch operator overrides": sum(1 for key in getattr(library, "_impls", ()) if key.startswith(("aten/", "prims/"))),
            "inference mode": int(torch.is_inference_mode_enabled())}


def process_marks() -> dict:
    """What a module can change and no restore can undo: the resource limits (a hard limit cannot
    be raised again) and the audit hooks added since :func:`.snapshot.watch_audit_hooks`."""
    limits = {}
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            try:
                limits[name] = resource.getrlimit(getattr(resource, name))
            except (ValueError, OSError):
                pass
    return {"resource limits": limits, "audit hooks": dict(snapshot.AUDITED)}


def leftovers(snap: Snapshot) -> list[str]:
    """What a restore cannot undo and the process now has more of than at :func:`capture`
    (threads still running, torch modes entered, operators registered, inference mode on,
    child processes alive) or has other than then (resource limits, audit hooks): the names,
    empty when none."""
    now = _counts()
    left = [name for name, count in snap.counts.items() if now.get(name, 0) > count]
    marks = process_marks()
    left += [name for name, value in snap.marks.items() if marks.get(name) != value]
    try:
        while True:  # reap what has exited; a child still running is left over
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                left.append("child processes")
                break
    except ChildProcessError:
        pass
    return left


