"""What the student-written training loops' tests share: ``train_autoencoder``'s
(:mod:`autograder.checks.training_loop`) and ``train_transformer``'s (:mod:`autograder.checks.seq2seq_loop`).

Each loop runs once per test on the kit's probe model in the student's child and is compared with
the kit's own loop on the same probe: the parameters after training and the returned losses within
the contract's tolerance (:func:`same_state`, :func:`same_losses`), a loop's known mistakes found by
running the kit's loop with the switches that build them (:func:`search`, :func:`trials`, named as
the catalog or the public families name them, :func:`named`), and the model left in training mode
on ``device`` by a loop that trained it (:func:`mode_verdict`).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Iterator

import torch

from autograder.checks.training import named_mistake
from autograder.i18n import _
from autograder.mistakes.comparison import ATOL, RTOL   # the contract's one tolerance


def drawn_start(seed: int, purpose: str, make_model: Callable) -> tuple[torch.Generator, dict]:
    """A loop test's start for the run ``seed``: ``(generator, initial state_dict)``, the generator
    keyed on ``purpose`` (:func:`autograder.checks.draws.draw_seed`) and the state that of
    ``make_model()`` initialised from a seed drawn from it (torch's global generator left as it was);
    the caller draws its batches from the generator next."""
    from autograder.checks import draws

    g = torch.Generator().manual_seed(draws.draw_seed(seed, purpose) & 0x7FFF_FFFF)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (), generator=g)))
        state = {k: v.detach().clone() for k, v in make_model().state_dict().items()}
    return g, state


def kit_epochs(model, opt, batches: list, epochs: int, batch_loss: Callable, *, zero_grad: bool = True,
               step: bool = True, clip: Callable | None = None, loss_record: str = "mean") -> tuple[dict, list]:
    """The kit's own training loop, shared by the loop checks: ``model`` in training mode, for each
    epoch and batch ``value = batch_loss(model, batch)``, ``opt.zero_grad()`` (unless not
    ``zero_grad``), ``backward``, ``clip(model.parameters())`` where given, ``opt.step()`` (unless not
    ``step``); each epoch's mean batch loss (``loss_record`` ``"sum"`` or ``"last"``: the epoch's
    summed or last one). Returns ``(state_dict after, losses)``."""
    model.train()
    history = []
    for _epoch in range(epochs):
        values = []
        for batch in batches:
            value = batch_loss(model, batch)
            if zero_grad:
                opt.zero_grad()
            value.backward()
            if clip is not None:
                clip(model.parameters())
            if step:
                opt.step()
            values.append(float(value.detach()))
        history.append({"mean": sum(values) / len(values), "sum": sum(values), "last": values[-1]}[loss_record])
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, history


def losses_problem(losses, epochs: int, function: str) -> str | None:
    """Why ``losses`` (what ``function`` returned) is not one finite float per epoch, as the
    contract asks (None when it is)."""
    if not isinstance(losses, list) or len(losses) != epochs or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in losses):
        return _("{function} should return a list of {n} floats (one mean loss per epoch), got {got}").format(
            function=function, n=epochs, got=repr(losses)[:200])
    if not all(math.isfinite(v) for v in losses):
        return _("{function} returned non-finite losses: {losses}").format(function=function, losses=losses)
    return None


def same_state(got, want: dict) -> bool:
    """Whether ``got`` (a state_dict) has ``want``'s names and shapes and its values within tolerance."""
    return isinstance(got, dict) and set(got) == set(want) and all(
        isinstance(got[k], torch.Tensor) and got[k].shape == want[k].shape
        and torch.allclose(got[k].double(), want[k].double(), atol=ATOL, rtol=RTOL) for k in want)


def same_losses(got, want: list) -> bool:
    """Whether ``got`` is a list of numbers equal to ``want``'s within tolerance."""
    return isinstance(got, list) and len(got) == len(want) and all(
        isinstance(g, (int, float)) and not isinstance(g, bool) and math.isclose(g, w, rel_tol=RTOL, abs_tol=ATOL)
        for g, w in zip(got, want))


def changed(state, initial: dict) -> bool:
    """Whether some parameter of ``state`` differs from ``initial`` (same name and shape)."""
    return isinstance(state, dict) and any(
        isinstance(state.get(k), torch.Tensor) and state[k].shape == v.shape and not torch.equal(state[k], v)
        for k, v in initial.items())


def trials(mistakes: dict, records: tuple) -> Iterator[tuple[tuple, dict]]:
    """``(mistake ids, switches of the kit's loop)`` in the order tried: each setting of
    ``mistakes`` (``{id: (switches, ...)}``), then each record mistake of ``records`` (the epoch's
    loss kept wrongly) with each other setting (one loop, two choices)."""
    for mutant_id, settings in mistakes.items():
        for switches in settings:
            yield (mutant_id,), switches
    for record in records:
        for mutant_id, settings in mistakes.items():
            if mutant_id in records:
                continue
            for switches in settings:
                yield (record, mutant_id), {**mistakes[record][0], **switches}


def search(same: Callable, state, losses, expected: Callable[..., Iterable[tuple[dict, list]]],
           tried: Iterable[tuple[tuple, dict]], text: Callable[[], str]):
    """``(None, None)`` when ``same(state, losses, want)`` holds for one ``want`` of ``expected()``
    (the kit's loop: ``(state, losses)`` per legitimate form), else ``(text(), mistake or None)``:
    the first of ``tried`` whose ``expected(**switches)`` it matches, its settings added to the text."""
    if any(same(state, losses, want) for want in expected()):
        return None, None
    account = text()
    for ids, switches in tried:
        if any(same(state, losses, want) for want in expected(**switches)):
            shown = ", ".join(f"{k}={v!r}" for k, v in switches.items())
            account += "\n" + _("The grader's loop gives exactly your parameters and losses with {settings}.").format(
                settings=shown)
            return account, named(ids)
    return account, None


def named(ids):
    """The mistake of ``ids`` (one, or two named together as ``a+b``), or None where unknown."""
    parts = [named_mistake(i) for i in ids]
    if any(part is None for part in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    try:   # instructor-only: the student edition ships no catalog, and names the first of the two
        from autograder.mistakes.catalog import Combined
    except ImportError:
        return parts[0]
    return Combined(tuple(parts))


def mode_verdict(out: dict, initial: dict, function: str) -> str | None:
    """Why ``function`` does not leave the probe model as the contract says (in training mode,
    moved to ``device``), or None. Only a loop that trained something counts (its parameters
    changed): one that does nothing leaves the model as it was and earns nothing here."""
    if not changed(out.get("state"), initial):
        return _("{function} did not change the model's parameters, so it trained nothing; a loop "
                 "earns this test by training the model and leaving it in training mode on the device").format(
            function=function)
    problems = []
    if out.get("training") is not True:
        problems.append(_("the model is left in evaluation mode: call model.train() before the loop "
                          "(and do not switch it to eval afterwards)"))
    if out.get("moved") is not True:
        problems.append(_("the model is never moved to the device: call model.to(device) before the loop"))
    return "; ".join(problems) or None
