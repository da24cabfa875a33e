"""Known mistakes of exercise 12, ``seq2seq_training.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate

# -- sequence_loss and teacher_forcing -----------------------------------------------------------
# Named by the suites' values tests (the loop tests run the kit's own sequence_loss and
# teacher_forcing, so these cost points only there); the hints are the families'
# (autograder.mistakes.families.SEQ2SEQ_LOSS, SEQ2SEQ_SHIFT), shown in the student edition too.
_FLAT = "F.cross_entropy(logits.reshape(-1, logits.shape[-1])"
_RETURN = ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long(), "
           "ignore_index=pad_id,\n                           label_smoothing=label_smoothing)")
_SHIFT = "return tgt[:, :-1], tgt[:, 1:]"
_LOSS_PATCHES = {
    # the tutorial's warning (PAD 위치는 Loss 계산에서도 제외해야 한다), ignored
    "seq2seq_pad_averaged_in": (("targets.reshape(-1).long(), ignore_index=pad_id,", "targets.reshape(-1).long(),"),),
    "seq2seq_summed_loss": (("label_smoothing=label_smoothing)", 'label_smoothing=label_smoothing, reduction="sum")'),),
    "seq2seq_logits_flattened_time_major": (
        (_FLAT, "F.cross_entropy(logits.transpose(0, 1).reshape(-1, logits.shape[-1])"),),
    "seq2seq_softmax_before_cross_entropy": (
        (_FLAT, "F.cross_entropy(logits.softmax(-1).reshape(-1, logits.shape[-1])"),),
    "seq2seq_smoothing_on_pad": ((_RETURN, (
        "    flat, labels = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long()\n"
        "    nll = F.cross_entropy(flat, labels, ignore_index=pad_id)\n"
        "    return (1 - label_smoothing) * nll + label_smoothing * -F.log_softmax(flat, dim=-1).mean()")),),
}
_SHIFT_PATCHES = {
    "seq2seq_targets_not_shifted": ((_SHIFT, "return tgt, tgt"),),
    "seq2seq_shift_wrong_side": ((_SHIFT, "return tgt[:, 1:], tgt[:, :-1]"),),
}
MUTANTS = catalog.generated("seq2seq_loss", families.SEQ2SEQ_LOSS, lambda v: _LOSS_PATCHES[v.id])
MUTANTS += catalog.generated("seq2seq_shift", families.SEQ2SEQ_SHIFT, lambda v: _SHIFT_PATCHES[v.id])

# -- train_transformer's loop (named by autograder.checks.seq2seq_loop) --------------------------
# Each named by the loop tests (test_seq2seq_training__loop.py), which run the kit's loop with the
# switches that build it on the same probe; the module's sequence_loss and teacher_forcing are the
# kit's there, so a loop mistake costs points in the loop tests only. The hints are the families'
# (autograder.mistakes.families.SEQ2SEQ_LOOP), shown in the student edition too.
_LOSS = "loss = sequence_loss(model(src, decoder_input), labels, pad_id)"
_CLIP = "            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
_RECORD = "history.append(total / count)"
_LOOP_PATCHES = {
    "seq2seq_no_optimizer_step": (("            optimizer.step()\n", ""),),
    "seq2seq_no_zero_grad": (("            optimizer.zero_grad()\n", ""),),
    "seq2seq_no_grad_clipping": ((_CLIP, ""),),
    "seq2seq_clip_grad_value": ((_CLIP, _CLIP.replace("clip_grad_norm_", "clip_grad_value_")),),
    "seq2seq_summed_epoch_loss": ((_RECORD, "history.append(total)"),),
    "seq2seq_last_batch_loss": ((_RECORD, "history.append(loss.item())"),),
    "seq2seq_lr_ignored": (("optimizer = torch.optim.Adam(model.parameters(), lr=lr)",
                            "optimizer = torch.optim.Adam(model.parameters())"),),
    "seq2seq_loop_pad_averaged_in": ((_LOSS, "logits = model(src, decoder_input)\n"
                                             "            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                                             "labels.reshape(-1))"),),
    "seq2seq_loop_pad_id_ignored": ((_LOSS, _LOSS.replace("labels, pad_id)", "labels, 0)")),),
}
MUTANTS += catalog.generated("seq2seq_loop", families.SEQ2SEQ_LOOP, lambda v: _LOOP_PATCHES[v.id])


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
# teacher_forcing's token ids and train_transformer's list of floats pass unchanged: the loop and
# the shift are degenerate in the hand-written entries below
SIGNATURES = ("sequence_loss", "teacher_forcing")
NO_TEMPLATES = ("one_element", "first_position", "mean_position")   # a loss is one number: no positions to act on

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
_NEVER_STEPS = """
def train_transformer(model, batches, epochs=1, lr=1e-3, pad_id=0, device="cpu"):
    model.to(device)
    model.train()
    return [2.0 for _ in range(epochs)]
"""
DEGENERATES = (
    # a loop that never steps: moved and left in training mode as the contract asks, nothing learned
    Degenerate("seq2seq_constant", "seq2seq_training",
               "a constant loss, teacher_forcing returning (tgt, tgt) and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return logits.sum() * 0.0 + 2.5
def teacher_forcing(tgt):
    return tgt, tgt
{_NEVER_STEPS}"""),
    Degenerate("seq2seq_ignores_targets", "seq2seq_training",
               "a loss that ignores the targets (the mean log-sum-exp) and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return torch.logsumexp(logits, dim=-1).mean()
{_NEVER_STEPS}"""),
    Degenerate("seq2seq_zero_loss_never_steps", "seq2seq_training", "a loss of zeros and a loop that never steps", f"""
def sequence_loss(logits, targets, pad_id, label_smoothing=0.0):
    return logits.sum() * 0.0
{_NEVER_STEPS}"""),
)
