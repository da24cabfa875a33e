"""The kit's probe models for the student-written training loops, and the stand-ins that
``train_transformer`` is run with in place of the module's ``sequence_loss`` and ``teacher_forcing``
(see :func:`.tasks.run_train_transformer`). No rule of the contract is written here: the stand-ins
look the probe's batches up in tables the parent made (an implementation of the exercise in a
child that runs student code would be a reference solution within its reach).

Run in the child (imported by :func:`.process_setup.import_trusted`, before any submission is on
``sys.path``) and by the parent's loop checks (:mod:`autograder.checks.training_loop`,
:mod:`autograder.checks.seq2seq_loop`), which train the same probes with the kit's own loops.
Imports torch only: nothing of the kit, no solution.
"""

from __future__ import annotations

import inspect
import types
from contextlib import contextmanager

import torch
from torch import nn


class RecordsMoves:
    """Mixin for an ``nn.Module``: notes in ``tkit_moved_to`` each device it is moved to
    (``.to(device)``, ``.to(device=...)``, ``.cpu()``, ``.cuda()``; a dtype alone is no move)."""

    tkit_moved_to: list

    def to(self, *args, **kwargs):
        for value in (*args, kwargs.get("device")):
            if isinstance(value, (str, torch.device)):
                try:
                    self.tkit_moved_to.append(str(torch.device(value)))
                except (RuntimeError, TypeError):
                    pass
        return super().to(*args, **kwargs)

    def cpu(self):
        self.tkit_moved_to.append("cpu")
        return super().cpu()

    def cuda(self, device=None):
        self.tkit_moved_to.append(str(torch.device("cuda" if device is None else device)))
        return super().cuda(device)


class Seq2SeqProbe(RecordsMoves, nn.Module):
    """``train_transformer``'s probe: ``logits[B, T, V] = scale * head(tanh(tgt_embed(decoder_input)
    + mean_s src_embed(src)))``, so every logit depends on the source and on the decoder's input.
    ``scale`` (8) makes the gradients' norm exceed 1, so that clipping at 1.0 changes the result."""

    def __init__(self, vocab: int = 11, width: int = 8, scale: float = 8.0):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, width)
        self.tgt_embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)
        self.scale = float(scale)
        self.tkit_moved_to = []

    def forward(self, src: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        context = self.src_embed(src).mean(dim=1, keepdim=True)
        return self.scale * self.head(torch.tanh(self.tgt_embed(decoder_input) + context))


def probe_seq2seq(vocab: int = 11, width: int = 8) -> Seq2SeqProbe:
    """A new :class:`Seq2SeqProbe` (initialised from torch's global generator)."""
    return Seq2SeqProbe(vocab, width)


#: ``sequence_loss``'s contract signature, to read a call's arguments by name
_LOSS_SIGNATURE = inspect.Signature([
    inspect.Parameter("logits", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("targets", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("pad_id", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("label_smoothing", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0.0)])


def stand_ins(tables: list, pad_id: int, originals: dict) -> dict:
    """The stand-ins a submission's ``train_transformer`` calls in place of its own ``sequence_loss``
    and ``teacher_forcing`` (:func:`kit_pieces`). They hold no rule of the contract: ``tables`` (one
    dict per probe batch, made by the parent, :func:`autograder.checks.seq2seq_loop.stand_in_tables`)
    gives each batch's ``tgt``, its ``decoder_input`` and ``labels``, and each label position's
    ``weight`` in the loss (the parent's PAD rule); here only a table lookup and a weighted sum of
    negative log-likelihoods. A call on anything else (another tensor, another ``pad_id``, label
    smoothing, another signature) goes to the submission's own function in ``originals``."""

    def entry_of(tensor, key):
        if not isinstance(tensor, torch.Tensor) or tensor.is_floating_point() or tensor.is_complex():
            return None
        got = tensor.detach().cpu().long()
        return next((e for e in tables if e[key].shape == got.shape and torch.equal(e[key], got)), None)

    def teacher_forcing(*args, **kwargs):
        tgt = args[0] if len(args) == 1 and not kwargs else kwargs.get("tgt") if not args and len(kwargs) == 1 else None
        entry = entry_of(tgt, "tgt")
        if entry is None:
            return originals["teacher_forcing"](*args, **kwargs)
        return entry["decoder_input"].to(tgt.device), entry["labels"].to(tgt.device)

    def sequence_loss(*args, **kwargs):
        try:
            bound = _LOSS_SIGNATURE.bind(*args, **kwargs)
        except TypeError:
            bound = None
        if bound is not None:
            bound.apply_defaults()
            logits, targets, pad, smoothing = (bound.arguments[k] for k in _LOSS_SIGNATURE.parameters)
            entry = entry_of(targets, "labels")
            if entry is not None and isinstance(logits, torch.Tensor) and logits.is_floating_point() \
                    and logits.dim() == 3 and tuple(logits.shape[:2]) == tuple(targets.shape) \
                    and _is(pad, pad_id) and _is(smoothing, 0):
                log_p = torch.log_softmax(logits, dim=-1)
                nll = -log_p.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
                return (nll * entry["weights"].to(device=logits.device, dtype=logits.dtype)).sum()
        return originals["sequence_loss"](*args, **kwargs)

    return {"sequence_loss": sequence_loss, "teacher_forcing": teacher_forcing}


def _is(value, number) -> bool:
    """Whether ``value`` (a Python number or a one-element tensor) equals ``number``."""
    try:
        return (value.numel() == 1 and float(value) == number) if isinstance(value, torch.Tensor) \
            else (not isinstance(value, bool) and float(value) == number)
    except (TypeError, ValueError):
        return False


def _sequence_loss_trampoline(*args, **kwargs):
    return _tkit_stand_in_sequence_loss(*args, **kwargs)  # noqa: F821  (set in the function's globals by kit_pieces)


def _teacher_forcing_trampoline(*args, **kwargs):
    return _tkit_stand_in_teacher_forcing(*args, **kwargs)  # noqa: F821  (set in the function's globals by kit_pieces)


_TRAMPOLINES = {"sequence_loss": _sequence_loss_trampoline.__code__,
                "teacher_forcing": _teacher_forcing_trampoline.__code__}


@contextmanager
def kit_pieces(module, tables: list, pad_id: int):
    """For the block, every way ``module``'s ``train_transformer`` can reach the module's own
    ``sequence_loss`` and ``teacher_forcing`` (those it defines) calls the :func:`stand_ins` instead:
    a plain function has its code replaced by a trampoline to the stand-in, so its name, an alias
    (``_loss = sequence_loss``), a ``functools.partial`` and a default argument all reach it; any
    other callable is replaced by name. Everything is put back afterwards. So a loop is judged on
    the loop alone, and a mistake in either function costs points once, in its own tests."""
    namespace = getattr(module, "__dict__", None)
    namespace = namespace if isinstance(namespace, dict) else {}
    found = {name: namespace[name] for name in _TRAMPOLINES if callable(namespace.get(name))}
    originals = {name: (_copy(fn) if _plain(fn) else fn) for name, fn in found.items()}
    pieces = stand_ins(tables, pad_id, originals)
    swapped, injected = [], []
    try:
        for name, fn in found.items():
            if _plain(fn):
                injected.append((fn.__globals__, f"_tkit_stand_in_{name}", fn.__globals__.get(f"_tkit_stand_in_{name}")))
                fn.__globals__[f"_tkit_stand_in_{name}"] = pieces[name]
                swapped.append((fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__))
                fn.__code__, fn.__defaults__, fn.__kwdefaults__ = _TRAMPOLINES[name], None, None
            else:
                setattr(module, name, pieces[name])
        yield module
    finally:
        for fn, code, defaults, kwdefaults in swapped:
            fn.__code__, fn.__defaults__, fn.__kwdefaults__ = code, defaults, kwdefaults
        for globals_, key, before in injected:
            if before is None:
                globals_.pop(key, None)
            else:
                globals_[key] = before
        for name, fn in found.items():
            if not _plain(fn):
                setattr(module, name, fn)


def _plain(fn) -> bool:
    """A Python function without closure cells (its code can be swapped for a trampoline's)."""
    return isinstance(fn, types.FunctionType) and fn.__closure__ is None


def _copy(fn):
    """A new function object with ``fn``'s code, globals, defaults and keyword defaults."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy
