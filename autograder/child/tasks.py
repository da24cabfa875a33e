"""Kit-provided routines that run inside the child on the student's objects.

The parent calls them with ``RemoteImpl.task(name, *args)``; arguments may be refs to
the student's objects. Typical use: a training loop the kit owns (not the student's)
driving the student's model. Register a routine with :func:`task`.
"""

from __future__ import annotations

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


@task
def state_layout(module):
    """``[[name, shape, first], ...]`` of ``module.state_dict(keep_vars=True)``, in its order:
    ``first`` is the index of the first entry holding the same tensor object (its own index when
    none does). A module that holds a sublayer under two names (``q_proj`` and ``linears[0]``)
    lists its tensors twice; the parent keeps one name per tensor (``checks.weights.layout``)."""
    seen: dict[int, int] = {}
    out = []
    for index, (name, tensor) in enumerate(module.state_dict(keep_vars=True).items()):
        out.append([str(name), [int(d) for d in tensor.shape], seen.setdefault(id(tensor), index)])
    return out


def _noncontiguous(value):
    """``value`` as a non-contiguous view with the same values (floating tensors of 2+ elements)
    and a last axis of stride 1, the layouts the exercises themselves produce (exercises/README.md,
    "Contiguity"): a transpose of the two axes before the last one (``split_heads``' output, a
    sequence-first batch seen batch-first) where that is not contiguous, else a slice of a tensor
    twice as wide on the last axis (one part of a fused projection)."""
    import torch

    if not (isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 1):
        return value
    if value.dim() >= 3:
        view = value.transpose(-3, -2).contiguous().transpose(-3, -2)
        if not view.is_contiguous():
            return view
    return torch.cat((value, torch.zeros_like(value)), dim=-1)[..., : value.shape[-1]]


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
# The capture routines run in the student's child and record the model's computation as data
# (:mod:`.graphs`); the training routines run in a child that imports no student file
# (``checks.training.trusted_process``) and train and evaluate those graphs (:mod:`.graph_training`). The
# student's module can replace the capture routines at import time: what they send is only a
# graph, checked, re-initialised and trained by the kit (autograder.checks.training).


@task
def capture_autoencoder(module, latent_dim: int, train_input, eval_input, code_input, seed: int):
    """Build ``module.ConvAutoEncoder(latent_dim)`` (seeded) and record, as graphs, the
    train-mode ``decode(encode(x))`` on ``train_input`` and the eval-mode ``encode`` on
    ``eval_input`` and ``decode`` on ``code_input``. Returns ``{"specs", "train", "encode",
    "decode"}`` (:func:`.graphs.capture`, :func:`.graphs.param_specs`), or ``{"problem": text}``
    when a call cannot be recorded; raises what the student's code raises."""
    import torch

    from . import graphs

    torch.manual_seed(seed)
    model = module.ConvAutoEncoder(latent_dim)
    specs = graphs.param_specs(model)
    try:
        model.train()
        train = graphs.capture(lambda x: model.decode(model.encode(x)), [train_input], model)
        model.eval()
        encode = graphs.capture(model.encode, [eval_input], model)
        decode = graphs.capture(model.decode, [code_input], model)
    except graphs.GraphError as exc:
        return {"problem": graphs.describe(exc)}
    return {"specs": specs, "train": train, "encode": encode, "decode": decode}


@task
def capture_transformer(module, config: dict, train_src, train_tgt, eval_src, eval_tgt, seed: int):
    """Build ``module.Transformer(**config)`` (seeded) and record ``forward(src, tgt)`` as a
    graph in training mode on ``(train_src, train_tgt)`` and in eval mode on ``(eval_src,
    eval_tgt)``. Returns ``{"specs", "train", "eval"}`` or ``{"problem": text}``."""
    import torch

    from . import graphs

    torch.manual_seed(seed)
    model = module.Transformer(**config)
    specs = graphs.param_specs(model)
    try:
        model.train()
        train = graphs.capture(model.forward, [train_src, train_tgt], model)
        model.eval()
        evaluation = graphs.capture(model.forward, [eval_src, eval_tgt], model)
    except graphs.GraphError as exc:
        return {"problem": graphs.describe(exc)}
    return {"specs": specs, "train": train, "eval": evaluation}


@task
def train_autoencoder_graph(captured: dict, images, heldout, latent_dim: int, epochs: int, lr: float,
                            batch_size: int, seed: int, max_constants: int, noise: float = 0.0):
    """:func:`.graph_training.train_autoencoder` (run in a child without student files)."""
    from . import graph_training

    try:
        return graph_training.train_autoencoder(captured, images, heldout, latent_dim, epochs, lr, batch_size,
                                                seed, max_constants, noise)
    except graph_training.UNTRAINABLE as exc:
        return {"problem": graph_training.graphs.describe(exc)}


@task
def train_transformer_graph(captured: dict, src, tgt, held_src, vocab: int, steps: int, batch_size: int,
                            lr: float, warmup: int, seed: int, pad_id: int, bos_id: int, eos_id: int,
                            max_constants: int, components=()):
    """:func:`.graph_training.train_transformer` (run in a child without student files; with
    ``components``, its folder holds the reference solutions those components come from)."""
    from . import graph_training

    try:
        return graph_training.train_transformer(captured, src, tgt, held_src, vocab, steps, batch_size, lr,
                                                warmup, seed, pad_id, bos_id, eos_id, max_constants,
                                                components=tuple(components))
    except graph_training.UNTRAINABLE as exc:
        return {"problem": graph_training.graphs.describe(exc)}


@task
def module_state_differences():
    """What the child's module state differs in from its snapshot (:func:`.snapshot.unexplained`);
    [] in a new child."""
    from . import snapshot

    return snapshot.unexplained()


@task
def run_train_autoencoder(module, model_state: dict, batches: list, epochs: int, lr: float, device: str = "cpu"):
    """Call the student's ``module.train_autoencoder(model, loader, epochs=epochs, lr=lr, device=device)``
    on the kit's small probe model (:func:`probe_autoencoder`) loaded with ``model_state`` and a
    ``DataLoader`` serving ``batches`` (a list of image tensors, in order, labels zero).
    Returns ``{"losses": what it returned, "state": the model's state_dict after, "training": the
    model's mode after, "moved": whether it was moved to ``device`` (``.to``, ``.cpu()`` or
    ``.cuda()``)}``: the parent compares them with its own Adam loop
    (:mod:`autograder.checks.training_loop`)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    model = probe_autoencoder(int(batches[0][0].numel()))
    model.load_state_dict(model_state)
    model.eval()   # the loop must put it in training mode itself
    images = torch.cat(list(batches))
    loader = DataLoader(TensorDataset(images, torch.zeros(images.shape[0], dtype=torch.long)),
                        batch_size=int(batches[0].shape[0]), shuffle=False)
    losses = module.train_autoencoder(model, loader, epochs=epochs, lr=lr, device=device)
    return {"losses": losses, "state": _plain_state(model), "training": bool(model.training),
            "moved": str(torch.device(device)) in model.tkit_moved_to}


@task
def run_train_transformer(module, model_state: dict, batches: list, epochs: int, lr: float, pad_id: int,
                          tables: list, device: str = "cpu"):
    """Call the student's ``module.train_transformer(model, batches, epochs=epochs, lr=lr, pad_id=pad_id,
    device=device)`` on the kit's probe model (:func:`.loop_probes.probe_seq2seq`) loaded with
    ``model_state``, put in evaluation mode first, and ``batches`` (a list of ``(src, tgt)`` pairs of
    token ids), with the module's ``sequence_loss`` and ``teacher_forcing`` replaced for the call by
    stand-ins that look the batches up in the parent's ``tables`` (:func:`.loop_probes.kit_pieces`:
    the loop is judged on the loop alone). Returns what
    :func:`run_train_autoencoder` returns; the parent compares it with its own loop
    (:mod:`autograder.checks.seq2seq_loop`)."""
    import torch

    from . import loop_probes

    model = loop_probes.probe_seq2seq(int(model_state["head.weight"].shape[0]), int(model_state["head.weight"].shape[1]))
    model.load_state_dict(model_state)
    model.eval()   # the loop must put it in training mode itself
    pairs = [(src, tgt) for src, tgt in batches]
    with loop_probes.kit_pieces(module, tables, pad_id):
        losses = module.train_transformer(model, pairs, epochs=epochs, lr=lr, pad_id=pad_id, device=device)
    return {"losses": losses, "state": _plain_state(model), "training": bool(model.training),
            "moved": str(torch.device(device)) in model.tkit_moved_to}


def probe_autoencoder(pixels: int = 784, width: int = 8):
    """The kit's probe model for ``train_autoencoder``'s function test: flatten, ``Linear(pixels,
    width)``, ReLU, ``Linear(width, pixels)``, sigmoid, back to ``[B, 1, 28, 28]``. It notes in
    ``tkit_moved_to`` each device it is moved to (``.to(device)``, ``.cpu()``, ``.cuda()``)."""
    from torch import nn

    from .loop_probes import RecordsMoves

    class ProbeModel(RecordsMoves, nn.Sequential):
        pass

    side = int(round(pixels ** 0.5))
    model = ProbeModel(nn.Flatten(), nn.Linear(pixels, width), nn.ReLU(), nn.Linear(width, pixels),
                       nn.Sigmoid(), nn.Unflatten(1, (1, side, side)))
    model.tkit_moved_to = []
    return model


def _plain_state(model) -> dict:
    """``model.state_dict()`` as detached plain tensors (a copy)."""
    return {str(k): v.detach().clone() for k, v in model.state_dict().items()}


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


# -- reference components (run in the component server, a child whose folder is solutions/) ---------


@task
def component_listing(modules):
    """The public names of the reference modules ``modules`` (:func:`.component_calls.listing`)."""
    from . import component_calls

    return component_calls.listing(modules)


@task
def component(kind: str, call: dict, tensors: list, rng, allowed: dict, needs=(), grads=()):
    """One callback of a composite's child, computed with the reference (:func:`.component_calls.serve`)."""
    from . import component_calls

    return component_calls.serve(kind, call, list(tensors), rng, allowed, needs, grads)
