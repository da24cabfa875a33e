"""Hidden training test of exercise 9, ``transformer.py``: learn to reverse sequences.

The kit's own loop (not the student's) trains the student's ``Transformer`` in the child on
reversal examples the parent generates from a fixed seed; the parent then scores exact-match
accuracy of ``greedy_decode`` on different held-out sequences. Budget, task and thresholds:
:mod:`autograder.suitelib.training` (one run per submission, shared by both tests).
"""

import math

import pytest

from autograder.i18n import _
from autograder.suitelib import training
from autograder.testing import Mismatch

pytestmark = [pytest.mark.exercise("transformer"), pytest.mark.training]

LEAK_LOSS = 0.1  # mean loss of the last 20 steps: reference ~0.14, without the causal mask ~0.05


@pytest.mark.points(1)
def test_kit_training_loss_falls(student):
    """trained by the kit's loop, the teacher-forced loss stays finite and falls

    ko: 키트의 학습 루프로 학습하면 teacher forcing 손실이 유한하고 줄어듭니다
    """
    losses = training.transformer_run(student).losses
    window = 20
    first, last = sum(losses[:window]) / window, sum(losses[-window:]) / window
    assert all(math.isfinite(v) for v in losses), _("the training loss is not finite")
    assert last < 0.5 * first, _(
        "the cross-entropy loss should at least halve during training; it went from {first:.3f} "
        "(first {n} steps) to {last:.3f} (last {n} steps)").format(first=first, last=last, n=window)


@pytest.mark.points(4)
def test_reverses_held_out_sequences(student, partial):
    """after the fixed training budget, greedy_decode reverses held-out sequences exactly

    ko: 정해진 학습 후 greedy_decode 가 처음 보는 시퀀스를 정확히 뒤집습니다
    """
    budget = training.TF
    run = training.transformer_run(student)
    accuracy = run.accuracy
    message = _("greedy_decode reversed {acc:.0%} of {n} held-out sequences exactly after {steps} training "
                "steps; full credit from {full:.0%}, partial credit from {part:.0%}. If the training loss "
                "falls but decoding fails, check the causal mask in decode and greedy_decode's loop").format(
        acc=accuracy, n=budget.n_heldout, steps=budget.steps, full=budget.full_credit_acc,
        part=budget.partial_acc)
    if run.note:
        message += "\n" + run.note
    late_loss = sum(run.losses[-20:]) / max(1, len(run.losses[-20:]))
    if accuracy < budget.partial_acc and late_loss < LEAK_LOSS:
        # a training loss far below the reference's (~0.14) with failed generation: the decoder saw
        # the token it had to predict
        raise Mismatch(message, training.named_mistake("transformer_no_causal_mask"))
    assert accuracy >= budget.partial_acc, message
    fraction = training.linear_credit(accuracy, budget.partial_acc, budget.full_credit_acc)
    if fraction < 1.0:
        partial.award(fraction, message)
