"""Hidden training test of exercise 9, ``transformer.py``: learn a secret symbol code on top of reversal.

The student's ``Transformer.forward`` is recorded as a graph; the kit trains it where no student
code runs, on pairs the grader draws per run (a secret permutation of the symbols on top of the
reversal), from parameters it draws, and decodes held-out sequences itself (through the recorded
graph with its own greedy loop, and with the reference carrying the trained parameters). Budget,
task and thresholds:
:mod:`autograder.checks.transformer_training` (one run per submission, shared by both tests).
"""

import math

import pytest

from autograder.checks import transformer_training as training
from autograder.checks import Mismatch, _

pytestmark = [pytest.mark.exercise("transformer"), pytest.mark.training]


@pytest.mark.kind("values")
@pytest.mark.points(0.5)
def test_training_lowers_heldout_loss(student):
    """trained by the grader's own loop, the recorded model's parameters lower the grader's held-out loss at least by half

    ko: 채점기 자신의 루프로 학습한 매개변수가 채점기가 직접 잰 처음 보는 시퀀스의 손실을 절반 이하로 줄입니다
    """
    budget = training.TF
    run = training.transformer_run(student)
    if not run.learned(budget):
        raise Mismatch(_(
            "What was measured: the grader recorded your Transformer's forward, drew its parameters afresh and "
            "trained it with its own loop ({steps} steps) where none of your code runs, loaded the trained "
            "parameters into the reference model and computed the teacher-forced "
            "cross-entropy on {n} held-out sequences itself: {before:.3f} untrained, {after:.3f} trained. "
            "Required: at most {ratio:.0%} of the untrained loss. The reference solution's weights reach "
            "about a tenth of it.\nLikely causes: parameters that do not match the contract's names and "
            "shapes, a forward pass that does not use the source or the target tokens, or a decoder that "
            "saw the token it had to predict (the causal mask).").format(
            steps=budget.steps, n=budget.n_heldout, before=run.loss_before, after=run.loss,
            ratio=budget.learned_ratio) + (f"\n{run.note}" if run.note else ""))


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_reverses_held_out_sequences(student, partial, attach):
    """after the grader's training budget, greedy decoding of the recorded model produces the held-out targets exactly

    ko: 채점기의 학습 후 기록된 모델의 탐욕적 디코딩이 처음 보는 시퀀스의 정답을 정확히 만들어 냅니다
    """
    budget = training.TF
    run = training.transformer_run(student)
    if math.isfinite(run.accuracy):   # Gradescope's leaderboard, when the export asks for it
        attach("leaderboard", title="Transformer: held-out exact match", value=run.accuracy, order="desc")
    message = _(
        "What was measured: after {steps} training steps, the grader decoded {n} held-out sequences greedily "
        "itself (through your recorded model, and with the reference model carrying the trained parameters; "
        "the lower figure counts): {acc:.0%} came out exactly right. Full credit from {full:.0%}, partial "
        "credit from {part:.0%}; the reference solution reaches about {ref:.0%}.\nLikely causes: when the "
        "training loss falls but decoding fails, check the causal mask in decode (the grader's loop feeds the "
        "whole target row, padded after the position it predicts); when the reference carrying the trained "
        "parameters fails but your model's own decoding works, your model computes the answer without "
        "learning it, or its parameters differ from the contract's.").format(
        acc=run.accuracy, n=budget.n_heldout, steps=budget.steps, full=budget.full_credit_acc,
        part=budget.partial_acc, ref=budget.reference_acc)
    if run.note:
        message += "\n" + run.note
    if not run.accuracy >= budget.partial_acc:
        raise Mismatch(message)
    fraction = training.linear_credit(run.accuracy, budget.partial_acc, budget.full_credit_acc)
    if fraction < 1.0:
        partial.award(fraction, message)
