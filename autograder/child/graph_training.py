"""The kit's training and measuring of captured graphs (:mod:`.graphs`), in a child that imports
no student file.

Called by the training checks through :mod:`.tasks` in the child that
:func:`autograder.checks.training.trusted_process` starts: its submission folder is empty, so
every line that runs there is the kit's. It receives the graphs the student's child recorded
(plain data), re-draws the parameters (:func:`.graphs.initial_values`), trains with the kit's
optimizer, budget and data, and returns outputs on the grader's held-out inputs; the parent
computes the figures that earn points from those outputs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import component_calls, graphs

# What a recorded graph can make the kit's loop raise: the student's computation cannot be
# trained as recorded (reported as the exercise's failure, never as the grader's).
UNTRAINABLE = (graphs.GraphError, ValueError, RuntimeError, TypeError, IndexError, KeyError, AttributeError)


def prepare(captured: dict, names: tuple[str, ...], max_constants: int, components=()) -> tuple[dict, dict]:
    """Check ``captured`` (``{"specs": ..., name: graph, ...}``) and return ``(the graphs of
    ``names``, pruned, by name; the specs)``; GraphError names what the kit refuses, including
    constants above ``max_constants`` numbers. ``components``: the reference modules whose
    components a graph may call (``tkit.component`` nodes; this process has them on its path)."""
    specs = captured.get("specs")
    if not isinstance(specs, dict) or not isinstance(specs.get("params"), list) or not specs["params"]:
        raise graphs.GraphError("the model has no parameters to train")
    recorded = [captured.get(name) for name in names]
    calls = any(isinstance(node, dict) and node.get("op") == component_calls.COMPONENT_OP
                for graph in recorded if isinstance(graph, dict) and isinstance(graph.get("nodes"), list)
                for node in graph["nodes"])
    allowed = component_calls.listing(components) if components and calls else {}   # imported only if called
    found = {}
    for name in names:
        graph = captured.get(name)
        if not isinstance(graph, dict):
            raise graphs.GraphError(f"no graph was recorded for {name}")
        graph = {k: v for k, v in graph.items() if not str(k).startswith("_")}   # the kit's own keys are the kit's
        graph["_components"] = allowed
        graphs.check(graph, specs)
        found[name] = graphs.prune(graph)
    numbers = graphs.constant_numbers(list(found.values()), specs)
    if numbers > max_constants:
        raise graphs.GraphError(
            f"the model carries {numbers} numbers of its own (buffers that are not normalisation "
            f"statistics, and tensors made outside its methods); the training check allows at most "
            f"{max_constants}")
    return found, specs


def fresh(specs: dict, seed: int) -> dict[str, torch.Tensor]:
    """Parameters drawn by :func:`.graphs.initial_values` (requiring grad) and the buffers."""
    values = graphs.initial_values(specs, seed)
    for p in specs["params"]:
        values[p["name"]].requires_grad_(True)
    return values


def _checked(out, shape: tuple, what: str) -> torch.Tensor:
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(shape) or not out.is_floating_point():
        got = list(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise graphs.GraphError(f"{what} gave {got}, expected a float tensor of shape {list(shape)}")
    return out


def quantised(z: torch.Tensor) -> torch.Tensor:
    """``z`` rounded to bfloat16 (8 significant bits): the latent code carries ``latent_dim``
    numbers of bounded precision, not the bits of a float32."""
    return z.detach().float().to(torch.bfloat16).float()


@torch.no_grad()
def perturbed(z: torch.Tensor, noise: float, seed: int) -> torch.Tensor:
    """``z`` plus Gaussian noise of ``noise`` times each dimension's spread over the batch, then
    :func:`quantised`: a code dimension resolves a few dozen levels, so ``latent_dim`` numbers
    cannot smuggle a picture packed into their low digits (the six reference architectures lose at
    most 0.0015 of held-out error at ``noise=0.15``; ``benchmarks/bench_training.py``)."""
    z = z.detach().float()
    if noise > 0:
        spread = z.std(dim=0, keepdim=True) if z.shape[0] > 1 else z.abs()
        z = z + noise * spread * torch.randn(z.shape, generator=torch.Generator().manual_seed(seed))
    return quantised(z)


@torch.no_grad()
def reconstruct(found: dict, values: dict, images: torch.Tensor, latent_dim: int, noise: float = 0.0,
                seed: int = 0) -> torch.Tensor:
    """``decode(perturbed(encode(images)))`` through the eval-mode graphs."""
    z = _checked(graphs.run(found["encode"], values, [images]), (images.shape[0], latent_dim), "encode(x)")
    recon = graphs.run(found["decode"], values, [perturbed(z, noise, seed)])
    return _checked(recon, tuple(images.shape), "decode(z)").detach().float()


def train_autoencoder(captured: dict, images: torch.Tensor, heldout: torch.Tensor, latent_dim: int,
                      epochs: int, lr: float, batch_size: int, seed: int, max_constants: int,
                      noise: float = 0.0) -> dict:
    """Train the captured AutoEncoder: Adam(lr) on the mean squared error of the train-mode graph
    ``decode(encode(x))``, ``epochs`` passes over ``images`` (float32 ``[N, 1, 28, 28]``) in
    shuffled batches of ``batch_size`` (the last partial batch dropped: the graph's shapes are
    fixed), parameters re-drawn from ``seed``; the codes are perturbed by ``noise``
    (:func:`perturbed`) between encode and decode. Returns ``{"before": [M, 1, 28, 28], "after": ...,
    "losses": [per epoch]}``: reconstructions of ``heldout`` (``[M, 1, 28, 28]``) by the eval-mode
    graphs with the fresh and with the trained parameters. Raises GraphError (the model's graph
    cannot be trained) or ValueError (the loss stopped being finite)."""
    found, specs = prepare(captured, ("train", "encode", "decode"), max_constants)
    torch.manual_seed(seed)
    values = fresh(specs, seed)
    before = reconstruct(found, values, heldout, latent_dim, noise, seed + 1)
    params = [values[p["name"]] for p in specs["params"]]
    optimizer = torch.optim.Adam(params, lr=lr)
    order = torch.Generator().manual_seed(seed)
    losses = []
    steps = images.shape[0] // batch_size
    for epoch in range(epochs):
        perm = torch.randperm(images.shape[0], generator=order)
        total = 0.0
        for k in range(steps):
            x = images[perm[k * batch_size:(k + 1) * batch_size]]
            out = _checked(graphs.run(found["train"], values, [x]), tuple(x.shape), "decode(encode(x))")
            loss = F.mse_loss(out, x)
            if not torch.isfinite(loss):
                raise ValueError(f"the training loss became {float(loss)} in epoch {epoch + 1}")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
        losses.append(total / max(1, steps))
    after = reconstruct(found, values, heldout, latent_dim, noise, seed + 1)
    return {"before": before, "after": after, "losses": losses}


def scheduled_lr(step: int, steps: int, lr: float, warmup: int) -> float:
    """The learning rate of step ``step`` (0-based) of ``steps``.

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


def train_transformer(captured: dict, src: torch.Tensor, tgt: torch.Tensor, held_src: torch.Tensor,
                      vocab: int, steps: int, batch_size: int, lr: float, warmup: int, seed: int,
                      pad_id: int, bos_id: int, eos_id: int, max_constants: int, components=()) -> dict:
    """Train the captured Transformer (teacher forcing: the train-mode graph of ``forward(src,
    tgt[:, :-1])``, cross-entropy against ``tgt[:, 1:]`` with padding ignored, Adam with
    :func:`scheduled_lr`), parameters re-drawn from ``seed``; then decode ``held_src`` greedily
    with the eval-mode graph (:func:`greedy`). Returns ``{"trained": {name: Tensor}, "generated":
    Long[M, T], "losses": [...]}``; ``trained`` uses the contract's parameter names (no ``p:``)."""
    found, specs = prepare(captured, ("train", "eval"), max_constants, components)
    torch.manual_seed(seed)
    values = fresh(specs, seed)
    params = [values[p["name"]] for p in specs["params"]]
    optimizer = torch.optim.Adam(params, lr=lr)
    losses = []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = scheduled_lr(step, steps, lr, warmup)
        rows = slice(step * batch_size, (step + 1) * batch_size)
        tgt_in, tgt_out = tgt[rows, :-1], tgt[rows, 1:]
        logits = _checked(graphs.run(found["train"], values, [src[rows], tgt_in]),
                          (batch_size, tgt_in.shape[1], vocab), "forward(src, tgt)")
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1), ignore_index=pad_id)
        if not torch.isfinite(loss):
            raise ValueError(f"the training loss became {float(loss)} at step {step}")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    generated = greedy(found["eval"], values, held_src, tgt.shape[1] - 1, vocab, pad_id, bos_id, eos_id)
    trained = {p["name"][2:]: values[p["name"]].detach().clone() for p in specs["params"]}
    trained.update({b["name"][2:]: values[b["name"]].detach().clone() for b in specs["buffers"]})
    return {"trained": trained, "generated": generated, "losses": losses}


@torch.no_grad()
def greedy(graph: dict, values: dict, src: torch.Tensor, width: int, vocab: int, pad_id: int,
           bos_id: int, eos_id: int) -> torch.Tensor:
    """The kit's greedy decoding through a graph recorded for ``forward(src [M, S], tgt [M,
    width])``: the target row starts as BOS then padding; step ``t`` puts the argmax of position
    ``t - 1`` at column ``t`` (a causal decoder's output there depends only on columns ``< t``,
    so the padding after it changes nothing); a row that has produced EOS gets padding after it.
    Returns Long ``[M, width + 1]`` (BOS first; the last column is the prediction after the whole
    row)."""
    n = src.shape[0]
    out = torch.full((n, width + 1), pad_id, dtype=torch.long)
    out[:, 0] = bos_id
    done = torch.zeros(n, dtype=torch.bool)
    for t in range(1, width + 1):
        logits = _checked(graphs.run(graph, values, [src, out[:, :width]]), (n, width, vocab), "forward(src, tgt)")
        token = logits[:, t - 1].argmax(dim=-1)
        out[:, t] = torch.where(done, torch.full_like(token, pad_id), token)
        done |= token == eos_id
        if bool(done.all()):
            break
    return out
