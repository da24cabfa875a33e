"""Public tests of exercise 12, ``seq2seq_training.py``: ``train_transformer``, the training loop.

The loop runs on the kit's small sequence-to-sequence probe and fixed batches drawn per run, and is
compared with the kit's own loop (:mod:`autograder.checks.seq2seq_loop`). For the call, the loop's
calls of the module's ``sequence_loss`` and ``teacher_forcing`` are answered with the grader's values
for these batches: a mistake in them costs points in their own tests (``test_seq2seq_training.py``),
not here again.
"""

import pytest

from autograder.checks import Mismatch, seq2seq_loop

pytestmark = pytest.mark.exercise("seq2seq_training")


@pytest.mark.kind("values")
@pytest.mark.optimizer
@pytest.mark.part("train_transformer")
@pytest.mark.points(0.5)
def test_train_transformer_follows_adam_with_clipping(student, seed):
    """train_transformer runs Adam with teacher forcing, the loss without PAD, zero_grad, backward, clip_grad_norm_ at 1.0 and step for every batch: the parameters after training are the kit's loop's

    ko: train_transformer는 배치마다 티처 포싱, PAD를 뺀 손실, zero_grad, backward, 1.0에서의 clip_grad_norm_, step으로 Adam을 실행합니다: 학습 후 매개변수가 채점기 루프의 결과와 같습니다
    """
    out, initial, batches = seq2seq_loop.run_loop(student, seed)
    text, mistake = seq2seq_loop.parameters_verdict(out.get("state"), out.get("losses"), initial, batches)
    if text is not None:
        raise Mismatch(text, mistake)


@pytest.mark.kind("values")
@pytest.mark.optimizer
@pytest.mark.part("train_transformer")
@pytest.mark.points(0.25)
def test_train_transformer_returns_each_epochs_mean_loss(student, seed):
    """train_transformer returns one loss per epoch: the mean of that epoch's batch losses

    ko: train_transformer는 에폭마다 손실 하나, 곧 그 에폭의 배치 손실 평균을 돌려줍니다
    """
    out, initial, batches = seq2seq_loop.run_loop(student, seed)
    text, mistake = seq2seq_loop.losses_verdict(out.get("state"), out.get("losses"), initial, batches)
    if text is not None:
        raise Mismatch(text, mistake)


@pytest.mark.kind("property")
@pytest.mark.optimizer
@pytest.mark.part("train_transformer")
@pytest.mark.points(0.25)
def test_train_transformer_leaves_the_model_training_on_the_device(student, seed):
    """train_transformer trains the model given and leaves it in training mode, moved to device

    ko: train_transformer는 주어진 모델을 학습시키고 device로 옮긴 채 학습 모드로 남겨 둡니다
    """
    out, initial, _batches = seq2seq_loop.run_loop(student, seed)
    problem = seq2seq_loop.mode_verdict(out, initial)
    if problem is not None:
        raise Mismatch(problem)
