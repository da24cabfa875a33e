"""Public tests of exercise 12, ``seq2seq_training.py``: ``sequence_loss`` (mean cross-entropy over the
non-PAD positions, label smoothing, an all-PAD batch, bad arguments) and ``teacher_forcing``.

``teacher_forcing`` is graded apart from the loss (``part``): its tests compare token ids alone.
``train_transformer``'s tests are in ``test_seq2seq_training__loop.py``. Each test's hidden twin
draws other sizes, pad ids, logits and targets through the ``example`` fixture."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import inputs, mistaken, seq2seq_loss
from autograder.checks import Mismatch, expect_equal, expect_raises, say

pytestmark = pytest.mark.exercise("seq2seq_training")

TGT = torch.tensor([[1, 5, 6, 4, 2, 0], [1, 7, 2, 0, 0, 0], [1, 3, 3, 8, 9, 2]])


def _case(example, public_seed: int):
    """(logits ``[B, T, V]``, V): B=3, T=5, V=7 in the public tests; in the twins B, T (different) from
    [2, 9] and V from [5, 12]."""
    batch, length = example.sizes((3, 5), 2, 9)
    vocab, = example.sizes((7,), 5, 12)
    return torch.randn(batch, length, vocab, generator=example.rng(public_seed)) * 2, vocab


def _cross_entropy(logits, targets, pad_id, smoothing=0.0):
    """PyTorch's own: the mean over the targets that are not ``pad_id``."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad_id,
                           label_smoothing=smoothing)


@pytest.mark.kind("values")
@pytest.mark.points(0.6)
def test_sequence_loss_leaves_out_pad(student, example):
    """sequence_loss is the mean cross-entropy over the non-PAD targets (pad_id 0, then pad_id 3), and depends on the targets

    ko: sequence_loss는 PAD 가 아닌 타깃에 대한 교차 엔트로피의 평균입니다 (pad_id 0, 그다음 3). 손실은 타깃에 따라 달라집니다
    """
    logits, vocab = _case(example, 21)
    other_pad, = example.sizes((3,), 1, vocab - 1)
    first = example.pick(torch.tensor([[4, 1, 6, 2, 0], [3, 5, 0, 0, 0], [2, 2, 5, 1, 0]]),
                         lambda rng: seq2seq_loss.padded_targets(rng, logits.shape[0], logits.shape[1], vocab, 0))

    def other_targets(rng):   # the premise: a second loss other than the first (the first draw, nearly always)
        for _ in range(100):
            drawn = seq2seq_loss.padded_targets(rng, logits.shape[0], logits.shape[1], vocab, other_pad)
            if abs(float(_cross_entropy(logits, drawn, other_pad) - _cross_entropy(logits, first, 0))) > 1e-2:
                break
        return drawn

    second = example.pick(torch.tensor([[5, 0, 1, 3, 3], [6, 2, 4, 3, 3], [1, 4, 3, 3, 3]]), other_targets)
    expected = (_cross_entropy(logits, first, 0), _cross_entropy(logits, second, other_pad))

    def run(impl):
        loss = impl.seq2seq_training.sequence_loss
        return loss(logits, first, 0), loss(logits, second, other_pad)

    what = f"sequence_loss(logits[{', '.join(map(str, logits.shape))}], targets, pad_id) for pad_id 0 and {other_pad}"
    expect_equal(run, student, expected, what=what,
                 known_mistakes=mistaken.joined(seq2seq_loss.loss_mistakes(logits, first, 0),
                                                seq2seq_loss.loss_mistakes(logits, second, other_pad)))


@pytest.mark.kind("values")
@pytest.mark.points(0.3)
def test_label_smoothing_as_cross_entropy_defines_it(student, example):
    """label_smoothing=0.1 is F.cross_entropy's, with the PAD positions left out of both terms

    ko: label_smoothing=0.1은 F.cross_entropy의 정의를 따르고, PAD 위치는 두 항 모두에서 빠집니다
    """
    logits, vocab = _case(example, 22)
    pad_id, = example.sizes((0,), 0, vocab - 1)
    smoothing = example.pick(0.1, lambda rng: round(0.05 + 0.25 * float(torch.rand((), generator=rng)), 3))
    targets = example.pick(torch.tensor([[4, 1, 6, 2, 0], [3, 0, 0, 0, 0], [2, 5, 5, 0, 0]]),
                           lambda rng: seq2seq_loss.padded_targets(rng, logits.shape[0], logits.shape[1], vocab, pad_id))

    def run(impl):
        return impl.seq2seq_training.sequence_loss(logits, targets, pad_id, label_smoothing=smoothing)

    expect_equal(run, student, _cross_entropy(logits, targets, pad_id, smoothing),
                 what=f"sequence_loss(logits, targets, pad_id={pad_id}, label_smoothing={smoothing})",
                 known_mistakes=seq2seq_loss.loss_mistakes(logits, targets, pad_id, smoothing))


@pytest.mark.kind("edge")
@pytest.mark.points(0.2)
def test_all_pad_batch_gives_zero(student, example):
    """a batch whose targets are all PAD gives a loss of 0 (never NaN) that backward() can still go through

    ko: 타깃이 모두 PAD 인 배치의 손실은 NaN 이 아닌 0 이고, backward() 를 그대로 할 수 있습니다
    """
    logits, vocab = _case(example, 23)
    logits = logits.double().requires_grad_(True)
    pad_id, = example.sizes((0,), 0, vocab - 1)
    targets = torch.full(logits.shape[:2], pad_id)

    def run(impl):
        return impl.seq2seq_training.sequence_loss(logits, targets, pad_id)

    got = expect_equal(run, student, torch.zeros((), dtype=torch.float64),
                       what=f"sequence_loss(float64 logits, targets all {pad_id}, pad_id={pad_id})")
    if not seq2seq_loss.keeps_graph(got):
        raise Mismatch(say("the all-PAD loss is 0 but does not come from logits (it does not require grad): a training "
                           "step's backward() would fail; return e.g. logits.sum() * 0.0",
                           "전부 PAD 인 손실이 0 이지만 logits 에서 계산되지 않았습니다 (requires_grad 가 없음). 학습 단계의 "
                           "backward() 가 실패합니다. 예: logits.sum() * 0.0 을 반환하세요"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.2)
def test_bad_arguments_raise_value_error(student, example):
    """2-D logits, float targets and targets of another length raise ValueError naming logits or targets

    ko: 2차원 logits, 실수 targets, 길이가 다른 targets는 logits 또는 targets를 밝힌 ValueError를 냅니다
    """
    loss = student.seq2seq_training.sequence_loss
    batch, length = example.sizes((2, 4), 2, 9)
    vocab, = example.sizes((7,), 2, 12, exclude=(batch, length, length + 1))   # the length asked for is no other size
    logits = torch.zeros(batch, length, vocab)
    targets = torch.ones(batch, length, dtype=torch.long)
    expect_raises(lambda: loss(torch.zeros(batch, length), targets, 0),
                  what=f"sequence_loss(logits[{batch}, {length}], targets[{batch}, {length}], 0)", names=("logits",))
    expect_raises(lambda: loss(logits, targets.float(), 0),
                  what=f"sequence_loss(logits[{batch}, {length}, {vocab}], float32 targets, 0)", names=("targets",))
    expect_raises(lambda: loss(logits, torch.ones(batch, length + 1, dtype=torch.long), 0),
                  what=f"sequence_loss(logits[{batch}, {length}, {vocab}], targets[{batch}, {length + 1}], 0)",
                  names=("targets", "logits"), values=(length + 1,))


@pytest.mark.kind("values")
@pytest.mark.part("teacher_forcing")
@pytest.mark.points(0.3)
def test_teacher_forcing_shifts_by_one(student, example):
    """teacher_forcing(tgt) gives (tgt[:, :-1], tgt[:, 1:]): the decoder reads BOS, y1, ...; the labels are the next tokens

    ko: teacher_forcing(tgt)는 (tgt[:, :-1], tgt[:, 1:])입니다: 디코더는 BOS, y1, ...을 읽고 정답은 다음 토큰입니다
    """
    def draw(rng):
        batch, length = inputs.integer(rng, 2, 6), inputs.integer(rng, 3, 10)
        tgt = seq2seq_loss.padded_targets(rng, batch, length, 12, 0)
        tgt[:, 0] = 1
        return tgt

    tgt = example.pick(TGT, draw)

    def run(impl):
        return impl.seq2seq_training.teacher_forcing(tgt)

    what = f"teacher_forcing({tgt.tolist()})" if not example.twin else f"teacher_forcing(tgt[{', '.join(map(str, tgt.shape))}])"
    expect_equal(run, student, (tgt[:, :-1], tgt[:, 1:]), what=what, known_mistakes=seq2seq_loss.shift_mistakes(tgt))
