"""``train_transformer`` graded as the AutoEncoder's loop is (:mod:`autograder.checks.seq2seq_loop`).

The kit's loop is the reference's on the probe; the loops the contract allows (``zero_grad`` kept
as zeros, after the step or on the model; the loss or the shift written inline; the batches
enumerated) get every point; each loop mutant of the catalog is named by the loop verdicts as
itself; and a wrong ``sequence_loss`` is not charged again in the loop tests (the child task runs
the loop with stand-ins for ``sequence_loss`` and ``teacher_forcing``, whatever name reaches them).
"""

from __future__ import annotations

import pytest
import torch

from autograder import paths
from autograder.checks import loop_verdicts, seq2seq_loop
from autograder.child import loop_probes, tasks
from autograder.mistakes import catalog, implementations

SEED = 7
PROBE = seq2seq_loop.LOOP
LOOP_IDS = [m.id for m in catalog.all_mutants() if "family:seq2seq_loop" in m.tags]


def _source() -> str:
    return (paths.solutions_dir() / "seq2seq_training.py").read_text()


def _impl(label: str, *replace: tuple[str, str]):
    source = _source()
    for old, new in replace:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return implementations.variant((("seq2seq_training", source),), label)


def _report(impl, seed: int = SEED):
    initial, batches = seq2seq_loop.loop_probe(seed)
    out = tasks.run("run_train_transformer", impl.seq2seq_training, initial, batches, PROBE.epochs, PROBE.lr,
                    PROBE.pad_id, seq2seq_loop.stand_in_tables(batches, PROBE.pad_id))
    return out, initial, batches


def _verdicts(out, initial, batches):
    state, losses = out["state"], out["losses"]
    return (seq2seq_loop.parameters_verdict(state, losses, initial, batches),
            seq2seq_loop.losses_verdict(state, losses, initial, batches),
            seq2seq_loop.mode_verdict(out, initial))


def test_the_probe_batches_pad_the_targets_with_a_nonzero_pad_id():
    initial, batches = seq2seq_loop.loop_probe(SEED)
    assert PROBE.pad_id != 0 and len(batches) == PROBE.batches
    for src, tgt in batches:
        assert src.dtype == tgt.dtype == torch.long
        assert list(src.shape) == [PROBE.batch_size, PROBE.src_len] and list(tgt.shape) == [PROBE.batch_size,
                                                                                              PROBE.tgt_len]
        assert bool((tgt[:, 0] == PROBE.bos_id).all()) and bool((tgt[0] != PROBE.pad_id).all())
        assert int((tgt[-1] == PROBE.pad_id).sum()) >= 2
    model = loop_probes.probe_seq2seq(PROBE.vocab, PROBE.width)
    model.load_state_dict(initial)
    logits = model(batches[0][0], batches[0][1][:, :-1])
    assert list(logits.shape) == [PROBE.batch_size, PROBE.tgt_len - 1, PROBE.vocab]
    other = batches[0][0].roll(1, dims=0)   # each logit depends on the source too
    assert not torch.allclose(logits, model(other, batches[0][1][:, :-1]))


def test_the_kit_loop_is_the_reference_loop():
    out, initial, batches = _report(implementations.reference())
    state, losses = seq2seq_loop.kit_loop(initial, batches, PROBE.epochs, PROBE.lr, PROBE.pad_id)
    assert loop_verdicts.same_state(out["state"], state) and loop_verdicts.same_losses(out["losses"], losses)
    assert loop_verdicts.changed(out["state"], initial) and losses[1] < losses[0]
    assert out["training"] is True and out["moved"] is True
    assert _verdicts(out, initial, batches) == ((None, None), (None, None), None)


def test_clipping_at_one_changes_the_result():
    initial, batches = seq2seq_loop.loop_probe(SEED)
    clipped = seq2seq_loop.kit_loop(initial, batches, PROBE.epochs, PROBE.lr, PROBE.pad_id)
    free = seq2seq_loop.kit_loop(initial, batches, PROBE.epochs, PROBE.lr, PROBE.pad_id, clip=None)
    gap = max(float((clipped[0][k] - free[0][k]).abs().max()) for k in initial)
    assert gap > 100 * loop_verdicts.ATOL


_ZERO = "            optimizer.zero_grad()\n"
_STEP = "            optimizer.step()\n"
_LOSS = "            loss = sequence_loss(model(src, decoder_input), labels, pad_id)\n"
LEGITIMATE = {
    "zero_grad_as_zeros": ((_ZERO, "            optimizer.zero_grad(set_to_none=False)\n"),),
    "zero_grad_after_step": ((_ZERO, ""), (_STEP, _STEP + _ZERO)),
    "model_zero_grad": ((_ZERO, "            model.zero_grad()\n"),),
    "inline_loss": ((_LOSS, "            logits = model(src, decoder_input)\n"
                            "            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), "
                            "ignore_index=pad_id)\n"),),
    "inline_shift": (("decoder_input, labels = teacher_forcing(tgt)", "decoder_input, labels = tgt[:, :-1], tgt[:, 1:]"),),
    "enumerated_batches_keyword_clip": (
        ("for src, tgt in batches:", "for _index, batch in enumerate(iter(batches)):\n            src, tgt = batch"),
        ("clip_grad_norm_(model.parameters(), 1.0)", "clip_grad_norm_(list(model.parameters()), max_norm=1.0)")),
    "losses_listed": (("total += loss.item()", "total += float(loss.detach())"),),
}


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_every_legitimate_loop_gets_every_point(name):
    out, initial, batches = _report(_impl(f"legit-{name}", *LEGITIMATE[name]))
    assert _verdicts(out, initial, batches) == ((None, None), (None, None), None), name


@pytest.mark.parametrize("mutant_id", LOOP_IDS)
def test_every_loop_mistake_is_named_as_itself(mutant_id):
    mutant = catalog.by_id(mutant_id)
    impl = implementations.variant(((mutant.target, mutant.source()),), mutant_id)
    out, initial, batches = _report(impl)
    params, losses, _mode = _verdicts(out, initial, batches)
    failing = [v for v in (params, losses) if v[0] is not None]
    assert failing, mutant_id
    assert all(getattr(v[1], "id", None) == mutant_id for v in failing), [getattr(v[1], "id", None) for v in failing]
    if mutant_id in seq2seq_loop.RECORDS:   # a record mistake costs the losses test only
        assert params == (None, None)


def test_the_loop_mistakes_are_told_apart_on_several_draws():
    for seed in (1, 2, 3):
        initial, batches = seq2seq_loop.loop_probe(seed)
        results = {"right": seq2seq_loop.kit_loop(initial, batches, PROBE.epochs, PROBE.lr, PROBE.pad_id)}
        for mistake, settings in seq2seq_loop.LOOP_MISTAKES.items():
            switches = {"lr": PROBE.lr, "pad_id": PROBE.pad_id, **settings[0]}
            results[mistake] = seq2seq_loop.kit_loop(initial, batches, PROBE.epochs, **switches)
        names = sorted(results)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                same = (loop_verdicts.same_state(results[a][0], results[b][0])
                        and loop_verdicts.same_losses(results[a][1], results[b][1]))
                assert not same, (seed, a, b)


def test_a_wrong_sequence_loss_is_not_charged_again_in_the_loop_tests():
    mutant = catalog.by_id("seq2seq_pad_averaged_in")
    impl = implementations.variant(((mutant.target, mutant.source()),), "pad-averaged-loss")
    wrong = impl.seq2seq_training.sequence_loss
    out, initial, batches = _report(impl)
    assert _verdicts(out, initial, batches) == ((None, None), (None, None), None)
    assert impl.seq2seq_training.sequence_loss is wrong   # put back after the call
    logits = torch.randn(2, 3, 5)
    targets = torch.tensor([[1, 2, 3], [4, 3, 3]])
    assert not torch.allclose(wrong(logits, targets, 3), implementations.reference().seq2seq_training.sequence_loss(
        logits, targets, 3))


_PAD_IN = ("targets.reshape(-1).long(), ignore_index=pad_id,", "targets.reshape(-1).long(),")
_CALL = "loss = sequence_loss(model(src, decoder_input), labels, pad_id)"
_DEF = "def train_transformer(model, batches, epochs: int = 1, lr: float = 1e-3, pad_id: int = 0,\n"


@pytest.mark.parametrize("form", ["alias", "partial", "default", "dict"])
def test_a_wrong_sequence_loss_reached_through_another_name_is_not_charged_again(form):
    """The loop reaches the module's own (wrong) sequence_loss through an alias made at import, a
    functools.partial, a default argument or a table: the stand-in answers all of them."""
    patches = {
        "alias": ((_DEF, "_loss = sequence_loss\n\n\n" + _DEF), (_CALL, _CALL.replace("sequence_loss(", "_loss("))),
        "partial": ((_DEF, "import functools\n_loss = functools.partial(sequence_loss, label_smoothing=0.0)\n\n\n"
                     + _DEF), (_CALL, _CALL.replace("sequence_loss(", "_loss("))),
        "default": (("                      device=\"cpu\") -> list[float]:", "                      device=\"cpu\", "
                     "loss_fn=sequence_loss) -> list[float]:"), (_CALL, _CALL.replace("sequence_loss(", "loss_fn("))),
        "dict": ((_DEF, "_LOSSES = {\"ce\": sequence_loss}\n\n\n" + _DEF),
                 (_CALL, _CALL.replace("sequence_loss(", "_LOSSES[\"ce\"]("))),
    }[form]
    impl = _impl(f"pad-in-{form}", _PAD_IN, *patches)
    module = impl.seq2seq_training
    code = module.sequence_loss.__code__
    out, initial, batches = _report(impl)
    assert _verdicts(out, initial, batches) == ((None, None), (None, None), None)
    assert module.sequence_loss.__code__ is code and "_tkit_stand_in_sequence_loss" not in vars(module)


def test_the_child_holds_no_implementation_of_the_exercise():
    """The child's stand-ins look the parent's tables up: loop_probes defines neither function, and a
    stand-in called on anything but a probe batch answers with the submission's own function."""
    assert not hasattr(loop_probes, "sequence_loss") and not hasattr(loop_probes, "teacher_forcing")
    initial, batches = seq2seq_loop.loop_probe(SEED)
    tables = seq2seq_loop.stand_in_tables(batches, PROBE.pad_id)
    own = {"sequence_loss": lambda *a, **k: "own loss", "teacher_forcing": lambda *a, **k: "own shift"}
    pieces = loop_probes.stand_ins(tables, PROBE.pad_id, own)
    tgt = batches[0][1]
    logits = torch.randn(*tgt[:, 1:].shape, PROBE.vocab, dtype=torch.float64)
    labels = tgt[:, 1:]
    want = torch.nn.functional.cross_entropy(logits.reshape(-1, PROBE.vocab), labels.reshape(-1),
                                             ignore_index=PROBE.pad_id)
    assert torch.allclose(pieces["sequence_loss"](logits, labels, PROBE.pad_id), want)
    assert torch.equal(pieces["teacher_forcing"](tgt)[1], labels)
    other = labels.roll(1, dims=0) if not torch.equal(labels.roll(1, dims=0), labels) else labels + 1
    assert pieces["sequence_loss"](logits, other, PROBE.pad_id) == "own loss"
    assert pieces["sequence_loss"](logits, labels, 0) == "own loss"
    assert pieces["sequence_loss"](logits, labels, PROBE.pad_id, 0.1) == "own loss"
    assert pieces["teacher_forcing"](tgt + 1) == "own shift"


def test_the_kit_pieces_are_put_back_when_the_loop_raises():
    impl = _impl("raises", ("    model.to(device)\n    model.train()\n", "    raise RuntimeError('boom')\n"))
    module = impl.seq2seq_training
    own = (module.sequence_loss, module.teacher_forcing)
    with pytest.raises(RuntimeError, match="boom"):
        _report(impl)
    assert (module.sequence_loss, module.teacher_forcing) == own


def test_a_loop_that_leaves_the_model_in_eval_mode_or_trains_nothing_fails_the_mode_test():
    out, initial, _batches = _report(implementations.reference())
    assert "evaluation mode" in seq2seq_loop.mode_verdict({**out, "training": False}, initial)
    assert "never moved" in seq2seq_loop.mode_verdict({**out, "moved": False}, initial)
    assert "trained nothing" in seq2seq_loop.mode_verdict({**out, "state": dict(initial)}, initial)


def test_losses_of_the_wrong_shape_are_refused_with_the_functions_name():
    assert "train_transformer should return a list of 2 floats" in loop_verdicts.losses_problem(
        [1.0], 2, "train_transformer")
    assert loop_verdicts.losses_problem([1.0, 0.5], 2, "train_transformer") is None
