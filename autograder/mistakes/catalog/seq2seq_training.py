"""Known mistakes of exercise 12, ``seq2seq_training.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, diagnosis, families  # noqa: F401
from autograder.mistakes.catalog import Mutant  # noqa: F401

# -- sequence_loss and teacher_forcing -----------------------------------------------------------
# Named by the suites' values tests (the loop tests run the kit's own sequence_loss and
# teacher_forcing, so these cost points only there); the hints are the student edition's
# (autograder.mistakes.diagnosis), written once.
_FLAT = "F.cross_entropy(logits.reshape(-1, logits.shape[-1])"
_RETURN = ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long(), "
           "ignore_index=pad_id,\n                           label_smoothing=label_smoothing)")
_SHIFT = "return tgt[:, :-1], tgt[:, 1:]"


def _mutant(mistake_id: str, *replace: tuple[str, str]) -> Mutant:
    known = diagnosis.KNOWN[mistake_id]
    return Mutant(id=mistake_id, exercise="seq2seq_training", hint_en=known.hint_en, hint_ko=known.hint_ko,
                  replace=replace)


MUTANTS: list = [
    # the tutorial's warning (PAD 위치는 Loss 계산에서도 제외해야 한다), ignored
    _mutant("seq2seq_pad_averaged_in", ("targets.reshape(-1).long(), ignore_index=pad_id,", "targets.reshape(-1).long(),")),
    _mutant("seq2seq_summed_loss", ("label_smoothing=label_smoothing)", 'label_smoothing=label_smoothing, reduction="sum")')),
    _mutant("seq2seq_logits_flattened_time_major",
            (_FLAT, "F.cross_entropy(logits.transpose(0, 1).reshape(-1, logits.shape[-1])")),
    _mutant("seq2seq_softmax_before_cross_entropy", (_FLAT, "F.cross_entropy(logits.softmax(-1).reshape(-1, logits.shape[-1])")),
    _mutant("seq2seq_smoothing_on_pad", (_RETURN, (
        "    flat, labels = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long()\n"
        "    nll = F.cross_entropy(flat, labels, ignore_index=pad_id)\n"
        "    return (1 - label_smoothing) * nll + label_smoothing * -F.log_softmax(flat, dim=-1).mean()"))),
    _mutant("seq2seq_targets_not_shifted", (_SHIFT, "return tgt, tgt")),
    _mutant("seq2seq_shift_wrong_side", (_SHIFT, "return tgt[:, 1:], tgt[:, :-1]")),
]

# -- train_transformer's loop (named by autograder.checks.seq2seq_loop) --------------------------
