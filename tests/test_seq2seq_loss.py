"""The seq2seq_training suites' helpers (autograder/checks/seq2seq_loss.py): the student edition's
builders reproduce the catalog's loss and shift mutants, the formula is PyTorch's, the targets keep
their promises, and an all-PAD loss's graph is seen."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import seq2seq_loss
from autograder.mistakes import catalog, diagnosis
from autograder.mistakes.comparison import compare


LOSS = ("seq2seq_pad_averaged_in", "seq2seq_summed_loss", "seq2seq_logits_flattened_time_major",
        "seq2seq_softmax_before_cross_entropy", "seq2seq_smoothing_on_pad")
SHIFT = ("seq2seq_targets_not_shifted", "seq2seq_shift_wrong_side")


def _mutants(ids):
    return [catalog.by_id(mistake_id) for mistake_id in ids]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_loss_builders_reproduce_the_catalog_mutants(seed):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 5, 7, generator=gen) * 2
    pad_id = seed + 1
    targets = seq2seq_loss.padded_targets(gen, 3, 5, 7, pad_id)
    for mutant in _mutants(LOSS):
        got = mutant.impl().seq2seq_training.sequence_loss(logits, targets, pad_id, label_smoothing=0.1)
        known = seq2seq_loss.loss_mistakes(logits, targets, pad_id, 0.1)
        compare(got.detach(), known[mutant.id](), what=mutant.id)
        assert diagnosis.name(got.detach(), known, atol=1e-5, rtol=1e-4).id == mutant.id


def test_the_shift_builders_name_the_catalog_mutants_and_both_unshifted_forms():
    tgt = torch.tensor([[1, 5, 6, 4, 2], [1, 7, 2, 0, 0]])
    known = seq2seq_loss.shift_mistakes(tgt)
    for mutant in _mutants(SHIFT):
        got = mutant.impl().seq2seq_training.teacher_forcing(tgt)
        assert diagnosis.name(got, known, atol=1e-5, rtol=1e-4).id == mutant.id
    unshifted = diagnosis.name((tgt[:, :-1], tgt[:, :-1]), known, atol=1e-5, rtol=1e-4)
    assert unshifted.id == "seq2seq_targets_not_shifted"
    assert diagnosis.name((tgt[:, :-1], tgt[:, 1:] + 1), known, atol=1e-5, rtol=1e-4) is None


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_the_formula_is_cross_entropy_without_pad(smoothing):
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(4, 6, 9, generator=gen, dtype=torch.float64)
    targets = seq2seq_loss.padded_targets(gen, 4, 6, 9, 0)
    want = F.cross_entropy(logits.reshape(-1, 9), targets.reshape(-1), ignore_index=0, label_smoothing=smoothing)
    torch.testing.assert_close(seq2seq_loss.loss_formula(logits, targets, 0, smoothing), want)
    assert float(seq2seq_loss.loss_formula(logits, torch.zeros_like(targets), 0, smoothing)) == 0.0


def test_padded_targets_hold_pad_in_several_rows_and_a_token_in_each():
    for seed in range(50):
        gen = torch.Generator().manual_seed(seed)
        pad_id = seed % 5
        targets = seq2seq_loss.padded_targets(gen, 3, 6, 5, pad_id)
        assert targets.dtype == torch.long and targets.min() >= 0 and targets.max() < 5
        assert bool((targets[:, 0] != pad_id).all())
        assert bool((targets[0] != pad_id).all()) and int((targets == pad_id).any(dim=1).sum()) >= 1


def test_keeps_graph_tells_a_loss_from_logits_from_a_constant():
    logits = torch.randn(2, 3, 4, requires_grad=True)
    assert seq2seq_loss.keeps_graph(logits.sum() * 0.0)
    assert not seq2seq_loss.keeps_graph(torch.tensor(0.0))
    assert not seq2seq_loss.keeps_graph(0.0)
