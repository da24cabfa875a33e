"""``train_autoencoder`` graded as a function: the kit's probe model, fixed batches, compared
with the kit's own Adam loop (``test_train_autoencoder_follows_adam``).

The training checks never use the student's loop to train the graded model
(:mod:`autograder.checks.training`); this test is where the loop earns its points and where its
known mistakes (no ``step``, no ``zero_grad``, a summed epoch loss) are named, in the student
edition too (the wrong loops are built here, from the kit's loop, not from the catalog's code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from autograder.checks import draws
from autograder.checks.training import named_mistake
from autograder.i18n import _
from autograder.mistakes.comparison import ATOL, RTOL   # the contract's one tolerance


def losses_problem(losses, epochs: int) -> str | None:
    """Why ``losses`` (train_autoencoder's return value) is not one finite float per epoch, as
    the contract asks (None when it is)."""
    if not isinstance(losses, list) or len(losses) != epochs or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in losses):
        return _("train_autoencoder should return a list of {n} floats (one mean loss per epoch), "
                 "got {got}").format(n=epochs, got=repr(losses)[:200])
    if not all(math.isfinite(v) for v in losses):
        return _("train_autoencoder returned non-finite losses: {losses}").format(losses=losses)
    return None


@dataclass(frozen=True)
class LoopProbe:
    """The function test of ``train_autoencoder``: the kit's probe model
    (:func:`autograder.child.tasks.probe_autoencoder`), ``batches`` batches of ``batch_size`` noise
    images, ``epochs`` epochs at ``lr``; seeds drawn per run."""

    batches: int = 3
    batch_size: int = 4
    epochs: int = 2
    lr: float = 1e-2
    timeout_s: float = 60.0     # the first optimizer of a child imports torch._dynamo (~2 s)


LOOP = LoopProbe()


def loop_probe(seed: int, probe: LoopProbe = LOOP) -> tuple[dict, list]:
    """This run's probe: ``(initial state_dict, list of image batches)``."""
    from autograder.child import tasks

    g = torch.Generator().manual_seed(draws.draw_seed(seed, "autoencoder:loop") & 0x7FFF_FFFF)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (), generator=g)))
        state = {k: v.detach().clone() for k, v in tasks.probe_autoencoder().state_dict().items()}
    batches = [torch.rand(probe.batch_size, 1, 28, 28, generator=g) for _ in range(probe.batches)]
    return state, batches


def adam_loop(state: dict, batches: list, epochs: int, lr: float, loss: str = "mse", *, zero_grad: bool = True,
              step: bool = True, loss_record: str = "mean") -> tuple[dict, list]:
    """What ``train_autoencoder`` must do, computed by the kit: ``Adam(model.parameters(), lr)``
    on the probe model loaded with ``state``, for each epoch and batch: forward, the loss against
    the images (``"mse"``: ``nn.MSELoss()``; ``"bce"``: ``nn.BCELoss()`` on the sigmoid output),
    ``zero_grad``, ``backward``, ``step``; the mean batch loss per epoch. The keyword switches
    build the known wrong loops (no ``zero_grad``, no ``step``, the epoch's summed loss).
    Returns ``(state_dict after, losses)``."""
    from autograder.child import tasks

    model = tasks.probe_autoencoder()
    model.load_state_dict(state)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.MSELoss() if loss == "mse" else torch.nn.BCELoss()
    history = []
    for _epoch in range(epochs):
        total = 0.0
        for images in batches:
            value = loss_fn(model(images), images)
            if zero_grad:
                optimizer.zero_grad()
            value.backward()
            if step:
                optimizer.step()
            total += float(value.detach())
        history.append(total / len(batches) if loss_record == "mean" else total)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, history


# the wrong loops worth naming: catalog id -> adam_loop switches
LOOP_MISTAKES = {
    "autoencoder_no_optimizer_step": {"step": False},
    "autoencoder_no_zero_grad": {"zero_grad": False},
    "autoencoder_summed_epoch_loss": {"loss_record": "sum"},
}


def _same_state(got, want: dict) -> bool:
    return isinstance(got, dict) and set(got) == set(want) and all(
        isinstance(got[k], torch.Tensor) and got[k].shape == want[k].shape
        and torch.allclose(got[k].double(), want[k].double(), atol=ATOL, rtol=RTOL) for k in want)


def _same_losses(got, want: list) -> bool:
    return isinstance(got, list) and len(got) == len(want) and all(
        isinstance(g, (int, float)) and not isinstance(g, bool) and math.isclose(g, w, rel_tol=RTOL, abs_tol=ATOL)
        for g, w in zip(got, want))


def loop_verdict(state: dict, losses, initial: dict, batches: list, probe: LoopProbe = LOOP):
    """``(None, None)`` when ``(state, losses)`` is what the kit's Adam loop gives from
    ``initial`` and ``batches`` (with MSE or BCE), else ``(student-facing text, catalog mistake
    or None)``."""
    expected = {loss: adam_loop(initial, batches, probe.epochs, probe.lr, loss) for loss in ("mse", "bce")}
    if any(_same_state(state, want_state) and _same_losses(losses, want_losses)
           for want_state, want_losses in expected.values()):
        return None, None
    text = _loop_text(state, losses, initial, batches, probe, *expected["mse"])
    for mutant_id, switches in LOOP_MISTAKES.items():
        for loss in ("mse", "bce"):
            want_state, want_losses = adam_loop(initial, batches, probe.epochs, probe.lr, loss, **switches)
            if _same_state(state, want_state) and _same_losses(losses, want_losses):
                return text, named_mistake(mutant_id)
    return text, None


def _loop_text(state, losses, initial: dict, batches: list, probe: LoopProbe, want_state: dict,
               want_losses: list) -> str:
    """The loop test's account, given the kit's loop's result (``want_state``, ``want_losses``: MSE)."""
    changed = isinstance(state, dict) and any(
        isinstance(state.get(k), torch.Tensor) and state[k].shape == v.shape and not torch.equal(state[k], v)
        for k, v in initial.items())
    return _("What was measured: the grader gave train_autoencoder a small model of its own and {b} fixed "
             "batches of {n} images for {e} epochs at lr={lr}, and ran the same loop itself (Adam over "
             "model.parameters(); for every batch: forward, the loss against the images, zero_grad, backward, "
             "step; the mean batch loss per epoch). Your loop's parameters: {params} ({changed}); its losses "
             "{got}, expected {want} (mean squared error).").format(
        b=len(batches), n=probe.batch_size, e=probe.epochs, lr=probe.lr,
        params=_("the same") if _same_state(state, want_state) else _("different"),
        changed=_("they changed") if changed else _("they never changed"),
        got=repr(losses)[:200], want=[round(v, 6) for v in want_losses])
