"""Kit-provided routines that run inside the child on the student's objects.

The parent calls them with ``RemoteImpl.task(name, *args)``; arguments may be refs to
the student's objects. Typical use: a training loop the kit owns (not the student's)
driving the student's model. Register a routine with :func:`task`.
"""

from __future__ import annotations

import math
import os
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


def preload() -> None:
    """Import ahead what the training routines would otherwise import in every child.

    Every ``torch.optim`` optimizer imports ``torch._dynamo`` on its first use (its methods
    are wrapped by ``torch._disable_dynamo``, which imports lazily): about 1.8 s, as much as
    ``import torch`` itself (torch 2.14, measured 2026-12-01), paid once per training child, so
    twice per graded submission (the AutoEncoder's and the Transformer's). The zygote calls this
    before it forks the first training child (``Limits.preload_training``), so every training child
    inherits the module (about 160 MB more resident memory in the zygote, shared copy-on-write; no
    thread started); a batch without training never pays it. A failure is left to the child, which
    then imports it itself.
    """
    try:
        import torch._dynamo  # noqa: F401
    except Exception:  # the zygote must keep serving; the child's own import will say what is wrong
        pass


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


# -- training routines (the training checks) --------------------------------------------------------
# They run in the child on the student's own classes; the parent sends every tensor (the
# child never reads a dataset). The student's module can replace them at import time, so the
# parent trusts nothing they report: it uses only the trained state_dict, loaded into a fresh
# child or into the reference, and measures outputs itself (autograder.checks.training).


@task
def fit_autoencoder(module, latent_dim: int, images, labels, epochs: int, lr: float,
                    batch_size: int, seed: int):
    """Build ``module.ConvAutoEncoder(latent_dim)`` and train it with the student's own
    ``module.train_autoencoder(model, loader, epochs=epochs, lr=lr)``.

    ``images`` float32 ``[N, 1, 28, 28]`` in [0, 1] and ``labels`` int64 ``[N]`` become a
    ``TensorDataset`` served by a ``DataLoader(batch_size, shuffle=True)`` whose shuffling
    generator and the model's initialisation are seeded with ``seed``. Returns
    ``{"model": the trained model, "losses": what train_autoencoder returned, "initial":
    the state_dict before training, "trained": the state_dict after}`` (state_dicts as
    plain tensors, taken before the parent sends any held-out image). The parent uses
    "initial" and "losses" only to word feedback, never for points.
    """
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(seed)
    model = module.ConvAutoEncoder(latent_dim)
    initial = _plain_state(model)
    loader = DataLoader(TensorDataset(images, labels), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    losses = module.train_autoencoder(model, loader, epochs=epochs, lr=lr)
    model.eval()
    return {"model": model, "losses": losses, "initial": initial, "trained": _plain_state(model)}


def _plain_state(model) -> dict:
    """``model.state_dict()`` as detached plain tensors (a copy)."""
    return {str(k): v.detach().clone() for k, v in model.state_dict().items()}


@task
def fit_transformer(module, config: dict, src, tgt, steps: int, batch_size: int, lr: float,
                    seed: int, pad_id: int, warmup: int = 0):
    """Train ``module.Transformer(**config)`` with the kit's loop (not the student's).

    Teacher forcing: batch ``k`` is rows ``k*batch_size:(k+1)*batch_size`` of ``src``
    (Long ``[N, S]``) and ``tgt`` (Long ``[N, T]``, BOS first, padded with ``pad_id``); the
    model sees ``tgt[:, :-1]`` and is trained with cross-entropy (padding ignored) to
    predict ``tgt[:, 1:]``, ``steps`` Adam steps with the learning rate of
    :func:`scheduled_lr` (peak ``lr``, ``warmup`` warm-up steps; ``warmup=0``: constant ``lr``),
    dropout as configured. The model's initialisation is seeded with ``seed``. Returns ``{"model": the trained model in eval
    mode, "losses": the loss of each step, "trained": its state_dict as plain tensors}``.

    Raises:
        ValueError: ``forward`` returns the wrong shape, or the loss stops being finite
            (the message gives the step).
    """
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = module.Transformer(**config)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    vocab = int(config["tgt_vocab_size"])
    losses = []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = scheduled_lr(step, steps, lr, warmup)
        rows = slice(step * batch_size, (step + 1) * batch_size)
        src_b, tgt_in, tgt_out = src[rows], tgt[rows, :-1], tgt[rows, 1:]
        logits = model(src_b, tgt_in)
        expected = (src_b.shape[0], tgt_in.shape[1], vocab)
        if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != expected:
            got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
            raise ValueError(f"Transformer.forward(src, tgt) returned {got}, expected shape {list(expected)}")
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1), ignore_index=pad_id)
        if not torch.isfinite(loss):
            raise ValueError(f"the training loss became {float(loss)} at step {step}")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    model.eval()
    return {"model": model, "losses": losses, "trained": _plain_state(model)}


def scheduled_lr(step: int, steps: int, lr: float, warmup: int) -> float:
    """The learning rate of step ``step`` (0-based) of ``steps`` in :func:`fit_transformer`.

    ``warmup == 0``: ``lr`` throughout. Otherwise a linear warm-up to ``lr`` over the first
    ``warmup`` steps (``lr * (step + 1) / warmup``), then a cosine decay from ``lr`` towards
    0 over the remaining steps (the last step gets a small positive rate): the usual Transformer
    schedule (Vaswani et al. 2017 warm up; Loshchilov & Hutter 2017, SGDR, decay), which lets
    a short run use a larger peak rate without diverging early or ending noisy.
    """
    if warmup <= 0:
        return lr
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup + 1) / max(1, steps - warmup + 1)
    return lr * 0.5 * (1.0 + math.cos(math.pi * progress))


@task
def probe(hidden_paths=(), outside_paths=()):
    """What the sandbox looks like from inside (for ``tkit doctor`` and the kit's tests):
    ids, rlimits, whether ``hidden_paths`` can be seen, whether ``outside_paths`` (and ``/``)
    can be written, whether a TCP connection can be opened, the processes visible."""
    import resource
    import socket

    def writable(path):
        try:
            with open(os.path.join(path, ".tkit-probe"), "w") as f:
                f.write("x")
            os.remove(os.path.join(path, ".tkit-probe"))
            return True
        except OSError:
            return False

    def network():
        try:
            with socket.create_connection(("1.1.1.1", 53), timeout=1.0):
                return "connected"
        except OSError as exc:
            return f"refused: {exc.strerror or exc}"

    limits = {name: resource.getrlimit(getattr(resource, name))[0]
              for name in ("RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_NOFILE")}
    status = {}
    try:
        with open("/proc/self/status") as f:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        pass
    procs = [p for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
    return {
        "uid": os.getuid(), "euid": os.geteuid(), "pid": os.getpid(), "cwd": os.getcwd(),
        "no_new_privs": status.get("NoNewPrivs", "?").strip(),
        "rlimits": limits, "network": network(), "processes_visible": len(procs),
        "hidden_seen": [p for p in hidden_paths if os.path.exists(p)],
        "writable": [p for p in ("/", *outside_paths) if writable(p) and not _inside(p, os.getcwd())],
        "cwd_writable": writable("."),
    }


@task
def channel(step: str, name: str, token: int, value: int = 0):
    """One step of a probe of the kernel paths between two children (:mod:`.channels`; for
    ``tkit doctor`` and the kit's tests): ``{"value": n or None, "error": "..."}``."""
    from . import channels

    return channels.run(step, name, token, value)


def _inside(path: str, folder: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip("/") + "/")
