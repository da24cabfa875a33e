"""The kit's probe models for the student-written training loops, and the kit's own sequence loss
and teacher forcing that ``train_transformer`` is run with (see :func:`.tasks.run_train_transformer`).

Run in the child (imported by :func:`.process_setup.import_trusted`, before any submission is on
``sys.path``) and by the parent's loop checks (:mod:`autograder.checks.training_loop`,
:mod:`autograder.checks.seq2seq_loop`), which train the same probes with the kit's own loops.
Imports torch only: nothing of the kit, no solution.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F
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


def sequence_loss(logits: torch.Tensor, targets: torch.Tensor, pad_id: int,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """The kit's own ``sequence_loss`` (exercises/README.md, exercise 12): the mean cross-entropy of
    ``logits[B, T, V]`` against ``targets[B, T]`` over the positions that are not ``pad_id``, label
    smoothing as ``F.cross_entropy`` defines it; 0 (with a graph) for an all-PAD batch. ValueError
    where ``targets`` is not ``logits``' ``[B, T]``."""
    if logits.dim() != 3 or targets.dim() != 2 or targets.shape != logits.shape[:2]:
        raise ValueError(f"sequence_loss takes logits [B, T, V] and targets [B, T], got {list(logits.shape)} "
                         f"and {list(targets.shape)}")
    if not bool((targets != pad_id).any()):
        return logits.sum() * 0.0
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long(), ignore_index=pad_id,
                           label_smoothing=label_smoothing)


def teacher_forcing(tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The kit's own ``teacher_forcing``: ``(tgt[:, :-1], tgt[:, 1:])``."""
    if tgt.dim() != 2 or tgt.shape[1] < 2:
        raise ValueError(f"teacher_forcing takes tgt [B, T] with T >= 2, got {list(tgt.shape)}")
    return tgt[:, :-1], tgt[:, 1:]


#: what a submission's ``train_transformer`` is run with in place of its own functions
KIT_PIECES = {"sequence_loss": sequence_loss, "teacher_forcing": teacher_forcing}


@contextmanager
def kit_pieces(module):
    """``module``'s ``sequence_loss`` and ``teacher_forcing`` (those it defines) replaced by the
    kit's for the block, then put back: a loop that calls them is judged on the loop alone, so a
    mistake in either costs points once, in their own tests."""
    namespace = getattr(module, "__dict__", {})
    saved = {name: namespace[name] for name in KIT_PIECES if name in namespace}
    try:
        for name in saved:
            setattr(module, name, KIT_PIECES[name])
        yield module
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
