"""``train_autoencoder`` graded as a function: the kit's probe model, fixed batches, compared
with the kit's own Adam loop.

The training checks never use the student's loop to train the graded model
(:mod:`autograder.checks.training`); the loop's own tests are where it earns its share of the
AutoEncoder exercise, one test per thing the contract asks of it (:func:`run_loop` runs it once
per test): the parameters after training are Adam's on the reconstruction loss with ``zero_grad``
for every batch (:func:`parameters_verdict`), the returned losses are each epoch's mean
(:func:`losses_verdict`), and a loop that trained leaves the model in training mode, moved to
``device`` (:func:`mode_verdict`). Their known mistakes (no ``step``, no ``zero_grad``, a summed
epoch loss) are named, in the student edition too (the wrong loops are built here, from the kit's
loop, not from the catalog's code). A loop that is missing or trains nothing fails all three.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from autograder.checks import loop_verdicts
from autograder.checks.loop_verdicts import changed as _changed, same_losses as _same_losses, same_state as _same_state
from autograder.i18n import _


def losses_problem(losses, epochs: int) -> str | None:
    """Why ``losses`` (train_autoencoder's return value) is not one finite float per epoch, as
    the contract asks (None when it is)."""
    return loop_verdicts.losses_problem(losses, epochs, "train_autoencoder")


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

    g, state = loop_verdicts.drawn_start(seed, "autoencoder:loop", tasks.probe_autoencoder)
    batches = [torch.rand(probe.batch_size, 1, 28, 28, generator=g) for _ in range(probe.batches)]
    return state, batches


def adam_loop(state: dict, batches: list, epochs: int, lr: float, loss: str = "mse", *, zero_grad: bool = True,
              step: bool = True, loss_record: str = "mean", optimizer: str = "adam", weight_decay: float = 0.0,
              reduction: str = "mean") -> tuple[dict, list]:
    """What ``train_autoencoder`` must do, computed by the kit: ``Adam(model.parameters(), lr)``
    on the probe model loaded with ``state``, for each epoch and batch: forward, the loss against
    the images (``"mse"``: ``nn.MSELoss()``; ``"bce"``: ``nn.BCELoss()`` on the sigmoid output),
    ``zero_grad``, ``backward``, ``step``; the mean batch loss per epoch. The keyword switches
    build the loops real code writes instead (:data:`LOOP_MISTAKES`): no ``zero_grad``, no ``step``,
    the epoch's summed or last batch loss (``loss_record`` ``"sum"``, ``"last"``), another
    ``optimizer`` (``"adamw"``, ``"sgd"``) or a ``weight_decay``, a loss summed over the pixels
    (``reduction="sum"``). Returns ``(state_dict after, losses)``."""
    from autograder.child import tasks

    model = tasks.probe_autoencoder()
    model.load_state_dict(state)
    make = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[optimizer]
    opt = make(model.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.MSELoss(reduction=reduction) if loss == "mse" else torch.nn.BCELoss(reduction=reduction)
    return loop_verdicts.kit_epochs(model, opt, batches, epochs, lambda m, images: loss_fn(m(images), images),
                                    zero_grad=zero_grad, step=step, loss_record=loss_record)

# The loops real code writes instead, by catalog id (autograder.mistakes.families.LOOP): the adam_loop
# switches of each setting tried, in order (a weight decay is searched over the values code uses).
LOOP_MISTAKES = {
    "autoencoder_no_optimizer_step": ({"step": False},),
    "autoencoder_no_zero_grad": ({"zero_grad": False},),
    "autoencoder_summed_epoch_loss": ({"loss_record": "sum"},),
    "autoencoder_last_batch_loss": ({"loss_record": "last"},),
    "autoencoder_summed_pixel_loss": ({"reduction": "sum"},),
    "autoencoder_adam_weight_decay": tuple({"weight_decay": wd} for wd in (1e-5, 1e-4, 1e-3, 1e-2, 1e-6, 5e-5, 5e-4)),
    "autoencoder_adamw": tuple({"optimizer": "adamw", "weight_decay": wd} for wd in (1e-2, 1e-3, 1e-4, 1e-5)),
    "autoencoder_lr_ignored": ({"lr": 1e-3}, {"lr": 1e-4}),
    "autoencoder_sgd": ({"optimizer": "sgd"},),
}
#: the record mistakes, also tried together with each of the others (one loop, two choices)
RECORDS = ("autoencoder_summed_epoch_loss", "autoencoder_last_batch_loss")


def run_loop(student, seed: int, probe: LoopProbe = LOOP) -> tuple[dict, dict, list]:
    """The student's ``train_autoencoder`` on this run's probe (the child task
    ``run_train_autoencoder``): ``(its report {"losses", "state", "training", "moved"}, the initial
    state, the batches)``. Raises Mismatch when the losses are not one float per epoch."""
    from autograder.checks.expectations import Mismatch

    initial, batches = loop_probe(seed, probe)
    out = student.task("run_train_autoencoder", student.autoencoder, initial, batches, probe.epochs, probe.lr,
                       timeout=probe.timeout_s)
    out = out if isinstance(out, dict) else {}
    problem = losses_problem(out.get("losses"), probe.epochs)
    if problem:
        raise Mismatch(problem)
    return out, initial, batches


def _expected(initial: dict, batches: list, probe: LoopProbe, **switches) -> dict:
    """``{loss: (state, losses)}`` of the kit's loop with MSE and with BCE (either is the contract's),
    with ``switches`` (:func:`adam_loop`'s, ``lr`` included) where a wrong loop is tried."""
    settings = {"lr": probe.lr, **switches}
    return {loss: adam_loop(initial, batches, probe.epochs, loss=loss, **settings) for loss in ("mse", "bce")}


def _verdict(same, state, losses, initial: dict, batches: list, probe: LoopProbe):
    """``(None, None)`` when ``same(state, losses, (kit state, kit losses))`` holds for the kit's
    Adam loop (MSE or BCE), else ``(text, mistake or None)``: the loop of :data:`LOOP_MISTAKES`
    for which it holds (one setting, or a record mistake with another: named ``a+b``), computed
    on the same probe; its settings are added to the text (:func:`loop_verdicts.search`)."""
    return loop_verdicts.search(
        same, state, losses, lambda **switches: _expected(initial, batches, probe, **switches).values(),
        loop_verdicts.trials(LOOP_MISTAKES, RECORDS),
        lambda: _loop_text(state, losses, initial, batches, probe, *adam_loop(initial, batches, probe.epochs,
                                                                              lr=probe.lr)))


def parameters_verdict(state, losses, initial: dict, batches: list, probe: LoopProbe = LOOP):
    """``(None, None)`` when the parameters after the student's loop are the kit's Adam loop's
    (MSE or BCE: Adam on the reconstruction loss, ``zero_grad`` and ``step`` for every batch), else
    ``(student-facing text, catalog mistake or None)``."""
    return _verdict(lambda got, _losses, want: _same_state(got, want[0]), state, losses, initial, batches, probe)


def losses_verdict(state, losses, initial: dict, batches: list, probe: LoopProbe = LOOP):
    """``(None, None)`` when the returned losses are each epoch's mean batch loss of the kit's Adam
    loop (MSE or BCE), else ``(student-facing text, catalog mistake or None)``."""
    return _verdict(lambda _state, got, want: _same_losses(got, want[1]), state, losses, initial, batches, probe)


def loop_verdict(state: dict, losses, initial: dict, batches: list, probe: LoopProbe = LOOP):
    """``(None, None)`` when both the parameters and the losses are the kit's Adam loop's, else the
    first failing verdict of :func:`parameters_verdict` and :func:`losses_verdict`."""
    for verdict in (parameters_verdict, losses_verdict):
        text, mistake = verdict(state, losses, initial, batches, probe)
        if text is not None:
            return text, mistake
    return None, None


def mode_verdict(out: dict, initial: dict) -> str | None:
    """Why the loop does not leave the probe model as the contract says (in training mode, moved
    to ``device``), or None (:func:`loop_verdicts.mode_verdict`): only a loop that trained
    something counts."""
    return loop_verdicts.mode_verdict(out, initial, "train_autoencoder")


def _loop_text(state, losses, initial: dict, batches: list, probe: LoopProbe, want_state: dict,
               want_losses: list) -> str:
    """The loop tests' account, given the kit's loop's result (``want_state``, ``want_losses``: MSE)."""
    changed = _changed(state, initial)
    return _("What was measured: the grader gave train_autoencoder a small model of its own and {b} fixed "
             "batches of {n} images for {e} epochs at lr={lr}, and ran the same loop itself (Adam over "
             "model.parameters(); for every batch: forward, the loss against the images, zero_grad, backward, "
             "step; the mean batch loss per epoch). Your loop's parameters: {params} ({changed}); its losses "
             "{got}, expected {want} (mean squared error).").format(
        b=len(batches), n=probe.batch_size, e=probe.epochs, lr=probe.lr,
        params=_("the same") if _same_state(state, want_state) else _("different"),
        changed=_("they changed") if changed else _("they never changed"),
        got=repr(losses)[:200], want=[round(v, 6) for v in want_losses])
