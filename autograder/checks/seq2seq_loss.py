"""Helpers for the ``seq2seq_training`` suites (exercise 12): the known mistakes of ``sequence_loss``
and ``teacher_forcing``, and whether a returned loss still carries its graph.

The mistakes are written from the contract's formula (cross-entropy over the non-PAD positions,
label smoothing as ``F.cross_entropy`` defines it), never from the reference solution; their ids
are the catalog's (:mod:`autograder.mistakes.catalog.seq2seq_training`), their hints the families'
(:data:`autograder.mistakes.families.SEQ2SEQ_LOSS`, :data:`~autograder.mistakes.families.SEQ2SEQ_SHIFT`).
"""

from __future__ import annotations

import torch

from autograder.checks import inputs
from autograder.child import wire
from autograder.mistakes.diagnosis import KnownMistakes, When


def padded_targets(rng: torch.Generator, batch: int, length: int, vocab: int, pad_id: int) -> torch.Tensor:
    """``Long[batch, length]`` targets: ids drawn uniformly from ``[0, vocab)`` less ``pad_id`` (so id 0
    is a real token where ``pad_id`` is not 0), then ``pad_id`` from each row's length on (row 0 full,
    another row shorter when ``batch >= 2`` and ``length >= 2``: PAD in several rows, a real token in
    each; :func:`autograder.checks.inputs.lengths`)."""
    ids = torch.randint(0, vocab - 1, (batch, length), generator=rng)
    ids = ids + (ids >= pad_id).long()
    lengths = inputs.lengths(rng, batch, length, low=1)
    return ids.masked_fill(inputs.padding_mask(lengths, length), pad_id)


def loss_formula(logits: torch.Tensor, targets: torch.Tensor, pad_id: int, smoothing: float = 0.0, *,
                 pad_in: bool = False, summed: bool = False, time_major: bool = False,
                 softmax_first: bool = False, smoothing_on_pad: bool = False) -> torch.Tensor:
    """The sequence loss of ``logits [B, T, V]`` against ``targets [B, T]`` in float64, cast to
    ``logits``' dtype, with one step changed: PAD positions averaged in (``pad_in``), the sum
    instead of the mean (``summed``), logits flattened ``[T, B]`` against targets flattened ``[B, T]``
    (``time_major``), a softmax before the cross-entropy (``softmax_first``), the smoothing term
    averaged over every position, PAD included (``smoothing_on_pad``). An all-PAD batch gives 0."""
    scores = logits.detach().double()
    if softmax_first:
        scores = scores.softmax(-1)
    flat = (scores.transpose(0, 1) if time_major else scores).reshape(-1, scores.shape[-1])
    labels = targets.reshape(-1).long()
    keep = torch.ones_like(labels, dtype=torch.bool) if pad_in else labels != pad_id
    if not bool(keep.any()):
        return torch.zeros((), dtype=logits.dtype)
    log_p = flat.log_softmax(-1)
    nll = -log_p.gather(1, labels[:, None])[:, 0]
    uniform = -log_p.mean(-1)   # F.cross_entropy's smoothing term: the mass spread over all V classes
    if smoothing_on_pad:
        value = (1 - smoothing) * nll[keep].mean() + smoothing * uniform.mean()
    else:
        per_position = ((1 - smoothing) * nll + smoothing * uniform)[keep]
        value = per_position.sum() if summed else per_position.mean()
    return value.to(logits.dtype)


def loss_mistakes(logits: torch.Tensor, targets: torch.Tensor, pad_id: int, smoothing: float = 0.0) -> KnownMistakes:
    """Mistakes of ``sequence_loss(logits, targets, pad_id, label_smoothing=smoothing)`` (a 0-dim
    tensor); the smoothing one only where ``smoothing > 0`` (without it that code is right)."""
    def variant(**change):
        return lambda: loss_formula(logits, targets, pad_id, smoothing, **change)

    known: KnownMistakes = {
        "seq2seq_pad_averaged_in": variant(pad_in=True),
        "seq2seq_summed_loss": variant(summed=True),
        "seq2seq_logits_flattened_time_major": variant(time_major=True),
        "seq2seq_softmax_before_cross_entropy": variant(softmax_first=True),
    }
    if smoothing > 0:
        known["seq2seq_smoothing_on_pad"] = variant(smoothing_on_pad=True)
    return known


def _unshifted(got) -> bool:
    """``(decoder_input, labels)`` with the labels equal to the decoder's input: the model is asked
    for the token it is given (``(tgt, tgt)``, or ``tgt[:, :-1]`` twice)."""
    return (isinstance(got, (tuple, list)) and len(got) == 2
            and all(isinstance(part, torch.Tensor) for part in got)
            and got[0].shape == got[1].shape and torch.equal(got[0], got[1]))


def shift_mistakes(tgt: torch.Tensor) -> KnownMistakes:
    """Mistakes of ``teacher_forcing(tgt)`` (``(decoder_input, labels)``, both ``[B, T-1]``)."""
    return {
        "seq2seq_targets_not_shifted": When(_unshifted),
        "seq2seq_shift_wrong_side": lambda: (tgt[:, 1:], tgt[:, :-1]),
    }


def keeps_graph(loss) -> bool:
    """Whether ``loss`` (a student's output) requires grad: computed from ``logits`` that do, so that
    ``backward()`` reaches them (a plain ``torch.tensor(0.0)`` does not). Read from the tensor itself,
    or from what the sandboxed child said about the tensor it sent (:func:`autograder.child.wire.tensor_info`)."""
    return isinstance(loss, torch.Tensor) and bool(loss.requires_grad or wire.tensor_info(loss).get("rg"))
