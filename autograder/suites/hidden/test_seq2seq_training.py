"""Hidden tests of exercise 12, ``seq2seq_training.py``: ``sequence_loss`` on random sizes, pad ids,
label smoothing and float64, and ``teacher_forcing`` on random sizes (``T = 2`` included), against the
reference."""

import pytest
import torch

from autograder.checks import inputs, say, seq2seq_loss
from autograder.checks import expect_reference

pytestmark = pytest.mark.exercise("seq2seq_training")


@pytest.mark.kind("values")
@pytest.mark.points(0.2)
def test_sequence_loss_random_sizes_pad_and_float64(student, rng):
    """random B, T, V and pad_id, PAD in several rows, with and without label smoothing, float32 and float64

    ko: 임의의 B, T, V와 pad_id, 여러 행의 PAD, 레이블 스무딩 유무, float32와 float64
    """
    batch, length = inputs.distinct(rng, 2, 2, 11)
    vocab = inputs.integer(rng, 5, 16)
    pad_id = inputs.integer(rng, 0, vocab - 1)
    smoothing = round(0.05 + 0.3 * float(torch.rand((), generator=rng)), 3)
    logits = inputs.randn(rng, batch, length, vocab, scale=2.0)
    targets = seq2seq_loss.padded_targets(rng, batch, length, vocab, pad_id)
    logits64 = logits.double()

    def run(impl):
        loss = impl.seq2seq_training.sequence_loss
        return (loss(logits, targets, pad_id), loss(logits64, targets, pad_id, label_smoothing=smoothing),
                loss(logits, targets, pad_id, smoothing))

    expect_reference(run, student, what=say(
        f"sequence_loss(logits[{batch}, {length}, {vocab}], targets, pad_id={pad_id}) without and with label "
        f"smoothing, float32 and float64",
        f"sequence_loss(logits[{batch}, {length}, {vocab}], targets, pad_id={pad_id}) (레이블 스무딩 없이/있게, "
        f"float32와 float64)"))


@pytest.mark.kind("values")
@pytest.mark.part("teacher_forcing")
@pytest.mark.points(0.2)
def test_teacher_forcing_random_sizes(student, rng):
    """teacher_forcing on random B and T, and on T = 2 (one position left)

    ko: 임의의 B, T와 T = 2(위치 하나가 남음)에서의 teacher_forcing
    """
    batch, length = inputs.distinct(rng, 2, 3, 12)
    tgt = inputs.token_ids(rng, 20, batch, length)
    short = inputs.token_ids(rng, 20, batch, 2)

    def run(impl):
        shift = impl.seq2seq_training.teacher_forcing
        return shift(tgt), shift(short)

    expect_reference(run, student, what=f"teacher_forcing(tgt[{batch}, {length}]) and teacher_forcing(tgt[{batch}, 2])")
