"""``train_transformer`` (exercise 12) graded as a function: the kit's probe model, fixed batches,
compared with the kit's own loop, as ``train_autoencoder`` is (:mod:`autograder.checks.training_loop`).

The student's loop runs in its child on the kit's small sequence-to-sequence probe
(:class:`autograder.child.loop_probes.Seq2SeqProbe`) with the module's ``sequence_loss`` and
``teacher_forcing`` replaced for the call by stand-ins (:func:`autograder.child.loop_probes.kit_pieces`):
a mistake in either costs points in their own tests only, once; a loop that computes the loss or
the shift itself is judged on what it computes. Three tests, one per thing the contract asks of the
loop: the parameters after training are Adam's with teacher forcing, the loss without PAD,
``zero_grad``, ``backward``, gradient-norm clipping at 1.0 and ``step`` for every batch
(:func:`parameters_verdict`); the returned losses are each epoch's mean (:func:`losses_verdict`);
a loop that trained leaves the model in training mode on ``device`` (:func:`mode_verdict`). The
loops real code writes instead (:data:`LOOP_MISTAKES`) are built here from the kit's loop
(:func:`kit_loop`'s switches), never from the catalog's code, and named in both editions
(:data:`autograder.mistakes.families.SEQ2SEQ_LOOP`). Probe and batches are drawn per run
(:mod:`autograder.checks.draws`, purpose ``seq2seq_training:loop``); the PAD id is not 0, so a loop
that ignores its ``pad_id`` is seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from autograder.checks import loop_verdicts
from autograder.child import loop_probes
from autograder.i18n import _

FUNCTION = "train_transformer"


@dataclass(frozen=True)
class Seq2SeqLoopProbe:
    """The function test of ``train_transformer``: ``batches`` batches of ``batch_size`` pairs
    (``src[B, src_len]``, ``tgt[B, tgt_len]`` starting with ``bos_id``, the rows but the first
    padded with ``pad_id`` at their ends), a ``vocab``-token probe of ``width``, ``epochs`` epochs at ``lr``."""

    batches: int = 3
    batch_size: int = 4
    src_len: int = 5
    tgt_len: int = 7
    vocab: int = 11
    width: int = 8
    pad_id: int = 3
    bos_id: int = 1
    epochs: int = 2
    lr: float = 1e-2
    timeout_s: float = 60.0     # the first optimizer of a child imports torch._dynamo (~2 s)


LOOP = Seq2SeqLoopProbe()


def loop_probe(seed: int, probe: Seq2SeqLoopProbe = LOOP) -> tuple[dict, list]:
    """This run's probe: ``(initial state_dict, list of (src, tgt) LongTensor pairs)``."""
    g, state = loop_verdicts.drawn_start(seed, "seq2seq_training:loop",
                                         lambda: loop_probes.probe_seq2seq(probe.vocab, probe.width))
    tokens = torch.tensor([t for t in range(probe.vocab) if t not in (probe.pad_id, probe.bos_id)])
    batches = []
    for _batch in range(probe.batches):
        src = tokens[torch.randint(0, len(tokens), (probe.batch_size, probe.src_len), generator=g)]
        tgt = tokens[torch.randint(0, len(tokens), (probe.batch_size, probe.tgt_len), generator=g)]
        tgt[:, 0] = probe.bos_id
        # row 0 full; the others keep BOS and at least one token, the last at least two PAD
        lengths = torch.randint(2, probe.tgt_len + 1, (probe.batch_size,), generator=g)
        lengths[0], lengths[-1] = probe.tgt_len, min(int(lengths[-1]), probe.tgt_len - 2)
        tgt[torch.arange(probe.tgt_len)[None, :] >= lengths[:, None]] = probe.pad_id
        batches.append((src, tgt))
    return state, batches


def kit_loop(state: dict, batches: list, epochs: int, lr: float, pad_id: int, *, zero_grad: bool = True,
             step: bool = True, clip: str | None = "norm", max_norm: float = 1.0, loss_record: str = "mean",
             pad_in: bool = False, probe: Seq2SeqLoopProbe = LOOP) -> tuple[dict, list]:
    """What ``train_transformer`` must do, computed by the kit: ``Adam(model.parameters(), lr)`` on the
    probe loaded with ``state``, in training mode; for each epoch and batch: the kit's
    ``teacher_forcing``, ``logits = model(src, decoder_input)``, the kit's ``sequence_loss`` with
    ``pad_id``, ``zero_grad``, ``backward``, ``clip_grad_norm_(..., 1.0)``, ``step``; the mean batch
    loss per epoch. The keyword switches build the loops real code writes instead (:data:`LOOP_MISTAKES`):
    no ``zero_grad``, no ``step``, no clipping (``clip=None``) or another ``max_norm``, ``clip="value"``
    (``clip_grad_value_``), the epoch's summed or last loss (``loss_record``), ``F.cross_entropy``
    without ``ignore_index`` (``pad_in``). Returns ``(state_dict after, losses)``."""
    model = loop_probes.probe_seq2seq(probe.vocab, probe.width)
    model.load_state_dict(state)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    ignored = -100 if pad_in else pad_id   # F.cross_entropy's default: no label is -100, so nothing is left out

    def batch_loss(m, batch):
        src, tgt = batch
        logits = m(src, tgt[:, :-1])   # teacher forcing: the labels are tgt[:, 1:]
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1), ignore_index=ignored)

    clipper = {"norm": lambda params: torch.nn.utils.clip_grad_norm_(params, max_norm),
               "value": lambda params: torch.nn.utils.clip_grad_value_(params, max_norm), None: None}[clip]
    return loop_verdicts.kit_epochs(model, opt, batches, epochs, batch_loss, zero_grad=zero_grad, step=step,
                                    clip=clipper, loss_record=loss_record)

# The loops real code writes instead, by id (autograder.mistakes.families.SEQ2SEQ_LOOP): the kit_loop
# switches of each setting tried, in order. Not among them: another max_norm. The probe's gradient
# norms (about 4 to 10) exceed 1 on every batch and Adam's step does not change when every gradient
# is scaled by one factor, so a max_norm of 0.5 gives 1.0's parameters here, and one of 5 or 10
# differs on some draws only: the contract's 1.0 is not told apart from its neighbours.
LOOP_MISTAKES = {
    "seq2seq_no_optimizer_step": ({"step": False},),
    "seq2seq_no_zero_grad": ({"zero_grad": False},),
    "seq2seq_no_grad_clipping": ({"clip": None},),
    "seq2seq_clip_grad_value": ({"clip": "value"},),
    "seq2seq_summed_epoch_loss": ({"loss_record": "sum"},),
    "seq2seq_last_batch_loss": ({"loss_record": "last"},),
    "seq2seq_lr_ignored": ({"lr": 1e-3}, {"lr": 1e-4}),
    "seq2seq_loop_pad_averaged_in": ({"pad_in": True},),
    "seq2seq_loop_pad_id_ignored": ({"pad_id": 0},),
}
#: the record mistakes, also tried together with each of the others (one loop, two choices)
RECORDS = ("seq2seq_summed_epoch_loss", "seq2seq_last_batch_loss")


def stand_in_tables(batches: list, pad_id: int) -> list:
    """What the child's stand-ins for ``sequence_loss`` and ``teacher_forcing`` look up
    (:func:`autograder.child.loop_probes.stand_ins`), one dict per batch: ``tgt``, its teacher-forcing
    pair ``decoder_input = tgt[:, :-1]`` and ``labels = tgt[:, 1:]``, and ``weights`` (float64
    ``[B, T-1]``): 1 / (number of non-PAD labels) at each non-PAD label, 0 at PAD, so that the
    weighted sum of the negative log-likelihoods is the contract's mean over non-PAD positions. The
    rules stay here, in the parent; the child gets their results for these batches only."""
    tables = []
    for _src, tgt in batches:
        labels = tgt[:, 1:].long()
        keep = (labels != pad_id).double()
        tables.append({"tgt": tgt.long(), "decoder_input": tgt[:, :-1].long(), "labels": labels,
                       "weights": keep / keep.sum().clamp(min=1.0)})
    return tables


def run_loop(student, seed: int, probe: Seq2SeqLoopProbe = LOOP) -> tuple[dict, dict, list]:
    """The student's ``train_transformer`` on this run's probe (the child task
    ``run_train_transformer``): ``(its report {"losses", "state", "training", "moved"}, the initial
    state, the batches)``. Raises Mismatch when the losses are not one float per epoch."""
    from autograder.checks.expectations import Mismatch

    initial, batches = loop_probe(seed, probe)
    out = student.task("run_train_transformer", student.seq2seq_training, initial, batches, probe.epochs,
                       probe.lr, probe.pad_id, stand_in_tables(batches, probe.pad_id), timeout=probe.timeout_s)
    out = out if isinstance(out, dict) else {}
    problem = loop_verdicts.losses_problem(out.get("losses"), probe.epochs, FUNCTION)
    if problem:
        raise Mismatch(problem)
    return out, initial, batches


def _verdict(same, state, losses, initial: dict, batches: list, probe: Seq2SeqLoopProbe):
    """:func:`loop_verdicts.search` with the kit's loop on this probe."""
    def expected(**switches):
        settings = {"lr": probe.lr, "pad_id": probe.pad_id, **switches}
        return [kit_loop(initial, batches, probe.epochs, probe=probe, **settings)]

    return loop_verdicts.search(same, state, losses, expected, loop_verdicts.trials(LOOP_MISTAKES, RECORDS),
                                lambda: _loop_text(state, losses, initial, batches, probe, *expected()[0]))


def parameters_verdict(state, losses, initial: dict, batches: list, probe: Seq2SeqLoopProbe = LOOP):
    """``(None, None)`` when the parameters after the student's loop are the kit loop's, else
    ``(student-facing text, mistake or None)``."""
    return _verdict(lambda got, _losses, want: loop_verdicts.same_state(got, want[0]), state, losses, initial,
                    batches, probe)


def losses_verdict(state, losses, initial: dict, batches: list, probe: Seq2SeqLoopProbe = LOOP):
    """``(None, None)`` when the returned losses are each epoch's mean batch loss of the kit's loop,
    else ``(student-facing text, mistake or None)``."""
    return _verdict(lambda _state, got, want: loop_verdicts.same_losses(got, want[1]), state, losses, initial,
                    batches, probe)


def mode_verdict(out: dict, initial: dict) -> str | None:
    """Why the loop does not leave the probe in training mode on ``device`` after training it, or None."""
    return loop_verdicts.mode_verdict(out, initial, FUNCTION)


def _loop_text(state, losses, initial: dict, batches: list, probe: Seq2SeqLoopProbe, want_state: dict,
               want_losses: list) -> str:
    """The loop tests' account, given the kit's loop's result."""
    return _("What was measured: the grader gave train_transformer a small sequence-to-sequence model of its "
             "own and {b} fixed batches of {n} (src, tgt) pairs (targets padded with pad_id={pad}) for {e} epochs "
             "at lr={lr}, and ran the same loop itself (Adam over model.parameters(); for every batch: "
             "teacher_forcing, model(src, decoder_input), the mean cross-entropy over the non-PAD labels, "
             "zero_grad, backward, clip_grad_norm_ at 1.0, step; the mean batch loss per epoch). Your loop's "
             "parameters: {params} ({changed}); its losses {got}, expected {want}.").format(
        b=len(batches), n=probe.batch_size, pad=probe.pad_id, e=probe.epochs, lr=probe.lr,
        params=_("the same") if loop_verdicts.same_state(state, want_state) else _("different"),
        changed=_("they changed") if loop_verdicts.changed(state, initial) else _("they never changed"),
        got=repr(losses)[:200], want=[round(v, 6) for v in want_losses])
