"""RoPE's rotary share, the Transformer's output and decoding length, and the loops of
train_autoencoder and train_transformer (see :mod:`autograder.mistakes.families`)."""

from __future__ import annotations

from autograder.mistakes.families.variant import Variant


# -- the part of each head RoPE rotates (params: (head_dim / rotated width, rotate-half layout)) ------
_ROPE_EN = ("a real convention (GPT-J's rotary_dim, GPT-NeoX's rotary_pct); this exercise rotates every pair of "
            "the head, RoFormer's interleaved pairs (x[2i], x[2i+1])")
_ROPE_KO = ("실제로 쓰이는 방식(GPT-J 의 rotary_dim, GPT-NeoX 의 rotary_pct)이지만 이 과제는 헤드의 모든 쌍, RoFormer 의 "
            "교차 쌍 (x[2i], x[2i+1]) 을 회전합니다")

ROPE_PARTIAL = tuple(
    Variant(f"rope_partial_{part}{'_rotate_half' if halves else ''}", "rope",
            f"you rotated only the first {share} of each head ({'in the rotate-half layout' if halves else 'interleaved pairs'}, "
            f"frequencies over those dimensions) and passed the rest through unchanged, " + _ROPE_EN,
            f"각 헤드의 앞쪽 {share_ko} 만 회전하고({'rotate-half 배치' if halves else '교차 쌍'}, 그 차원들에 대한 주파수) "
            f"나머지는 그대로 두었습니다. " + _ROPE_KO,
            params=(divisor, halves), convention=True)
    for part, share, share_ko, divisor in (("half", "half", "절반", 2), ("quarter", "quarter", "1/4", 4))
    for halves in (False, True))


# -- the Transformer's output and greedy_decode's length ---------------------------------------------
TRANSFORMER_OUTPUT = (
    Variant("transformer_returns_log_softmax", "transformer",
            "forward returns log-probabilities (log_softmax, as the Annotated Transformer's Generator does for its "
            "own loss); this exercise's forward returns the generator's logits (nn.CrossEntropyLoss applies "
            "log_softmax itself)",
            "forward 가 로그 확률(log_softmax, Annotated Transformer 의 Generator 가 자기 손실을 위해 하는 것)을 "
            "반환합니다. 이 과제의 forward 는 generator 의 로짓을 반환합니다 (nn.CrossEntropyLoss 가 log_softmax 를 "
            "직접 합니다)",
            code="torch.log_softmax({logits}, dim=-1)"),
)

GREEDY_LENGTH = (
    Variant("transformer_greedy_max_len_off_by_one", "transformer",
            "greedy_decode's max_len counts the new tokens only (up to max_len tokens after BOS, like Hugging Face's "
            "max_new_tokens, a real convention); in this exercise max_len counts the BOS column too: at most max_len "
            "columns",
            "greedy_decode 의 max_len 이 새 토큰만 셉니다 (BOS 뒤에 최대 max_len 개, Hugging Face 의 max_new_tokens "
            "같은 실제 방식). 이 과제에서 max_len 은 BOS 열까지 셉니다: 열은 최대 max_len 개입니다",
            convention=True),
)


# -- train_autoencoder's optimizer and loss record (see autograder.checks.training_loop) --------------
LOOP = (
    Variant("autoencoder_adam_weight_decay", "autoencoder",
            "train_autoencoder's Adam has weight decay (weight_decay > 0 adds an L2 pull on every parameter); the "
            "contract's loop is plain Adam(model.parameters(), lr=lr)",
            "train_autoencoder 의 Adam 에 weight decay 가 있습니다 (weight_decay > 0 이면 모든 파라미터에 L2 항이 "
            "더해집니다). 계약의 루프는 그냥 Adam(model.parameters(), lr=lr) 입니다"),
    Variant("autoencoder_adamw", "autoencoder",
            "train_autoencoder uses AdamW (decoupled weight decay, 0.01 by default); the contract's loop is plain "
            "Adam(model.parameters(), lr=lr), without weight decay",
            "train_autoencoder 가 AdamW(분리된 weight decay, 기본 0.01)를 씁니다. 계약의 루프는 weight decay 없는 "
            "Adam(model.parameters(), lr=lr) 입니다"),
    Variant("autoencoder_lr_ignored", "autoencoder",
            "train_autoencoder ignores its lr argument (the optimizer is built with a fixed learning rate, such as "
            "Adam's default 1e-3): use Adam(model.parameters(), lr=lr)",
            "train_autoencoder 가 lr 인자를 무시합니다 (Adam 기본값 1e-3 같은 고정 학습률로 옵티마이저를 만들었습니다). "
            "Adam(model.parameters(), lr=lr) 을 쓰세요"),
    Variant("autoencoder_sgd", "autoencoder",
            "train_autoencoder uses SGD; the contract's loop is Adam(model.parameters(), lr=lr)",
            "train_autoencoder 가 SGD 를 씁니다. 계약의 루프는 Adam(model.parameters(), lr=lr) 입니다"),
    Variant("autoencoder_summed_pixel_loss", "autoencoder",
            "train_autoencoder's loss is summed over the pixels (reduction='sum'); each batch loss is the mean, "
            "PyTorch's default reduction='mean'",
            "train_autoencoder 의 손실을 픽셀에 대해 더했습니다 (reduction='sum'). 배치 손실은 PyTorch 기본값 "
            "reduction='mean' 인 평균이어야 합니다"),
    Variant("autoencoder_last_batch_loss", "autoencoder",
            "train_autoencoder records the last batch's loss of each epoch, not the mean of the epoch's batch losses",
            "train_autoencoder 가 에폭의 배치 손실 평균이 아니라 마지막 배치의 손실을 기록합니다"),
)


# -- train_transformer's loop (see autograder.checks.seq2seq_loop) ------------------------------------
SEQ2SEQ_LOOP = (
    Variant("seq2seq_no_optimizer_step", "seq2seq_training",
            "train_transformer never calls optimizer.step(), so the weights never change",
            "train_transformer 가 optimizer.step() 을 호출하지 않아 가중치가 바뀌지 않습니다"),
    Variant("seq2seq_no_zero_grad", "seq2seq_training",
            "train_transformer never calls optimizer.zero_grad() (or model.zero_grad()), so every step adds the "
            "gradients of all earlier batches: zero the gradients before each backward",
            "train_transformer 가 optimizer.zero_grad() (또는 model.zero_grad()) 를 호출하지 않아 매 단계에 이전 "
            "배치들의 기울기가 모두 더해집니다. backward 전마다 기울기를 0 으로 만드세요"),
    Variant("seq2seq_no_grad_clipping", "seq2seq_training",
            "train_transformer does not clip the gradients: call torch.nn.utils.clip_grad_norm_(model.parameters(), "
            "1.0) between backward and step",
            "train_transformer 가 기울기를 클리핑하지 않습니다. backward 와 step 사이에 "
            "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) 을 호출하세요"),
    Variant("seq2seq_clip_grad_value", "seq2seq_training",
            "train_transformer clips each gradient entry to [-1, 1] (clip_grad_value_); the contract clips the "
            "gradients' total norm at 1.0 (clip_grad_norm_), which keeps their direction",
            "train_transformer 가 기울기의 각 원소를 [-1, 1] 로 자릅니다 (clip_grad_value_). 계약은 방향을 유지하는 "
            "전체 노름 클리핑 clip_grad_norm_(..., 1.0) 입니다"),
    Variant("seq2seq_summed_epoch_loss", "seq2seq_training",
            "train_transformer records the sum of an epoch's batch losses, not their mean",
            "train_transformer 가 에폭의 배치 손실 평균이 아니라 합을 기록합니다"),
    Variant("seq2seq_last_batch_loss", "seq2seq_training",
            "train_transformer records the last batch's loss of each epoch, not the mean of the epoch's batch losses",
            "train_transformer 가 에폭의 배치 손실 평균이 아니라 마지막 배치의 손실을 기록합니다"),
    Variant("seq2seq_lr_ignored", "seq2seq_training",
            "train_transformer ignores its lr argument (the optimizer is built with a fixed learning rate, such as "
            "Adam's default 1e-3): use Adam(model.parameters(), lr=lr)",
            "train_transformer 가 lr 인자를 무시합니다 (Adam 기본값 1e-3 같은 고정 학습률로 옵티마이저를 만들었습니다). "
            "Adam(model.parameters(), lr=lr) 을 쓰세요"),
    Variant("seq2seq_loop_pad_averaged_in", "seq2seq_training",
            "train_transformer's own loss (F.cross_entropy without ignore_index) averages the PAD positions in: "
            "call sequence_loss(logits, labels, pad_id), or pass ignore_index=pad_id",
            "train_transformer 가 직접 계산한 손실(ignore_index 없는 F.cross_entropy)이 PAD 위치까지 평균에 넣습니다. "
            "sequence_loss(logits, labels, pad_id) 를 호출하거나 ignore_index=pad_id 를 넘기세요"),
    Variant("seq2seq_loop_pad_id_ignored", "seq2seq_training",
            "train_transformer leaves out the positions of token 0 instead of its pad_id argument's: pass pad_id "
            "on to the loss",
            "train_transformer 가 pad_id 인자가 아니라 토큰 0 의 위치를 손실에서 뺍니다. pad_id 를 손실에 그대로 "
            "넘기세요"),
)


# -- sequence_loss's reduction and what it averages over (one site: the loss's return) ------------------
SEQ2SEQ_LOSS = (
    Variant("seq2seq_pad_averaged_in", "seq2seq_training",
            "PAD positions are averaged into the loss: leave them out (F.cross_entropy(..., ignore_index=pad_id)), so the "
            "mean is over the non-PAD target tokens only",
            "PAD 위치가 손실 평균에 들어갔습니다. PAD 는 빼야 합니다 (F.cross_entropy(..., ignore_index=pad_id)): 평균은 "
            "PAD 가 아닌 타깃 토큰에 대해서만 냅니다"),
    Variant("seq2seq_summed_loss", "seq2seq_training",
            "the loss is the sum over the non-PAD positions; it must be their mean (reduction='mean')",
            "손실이 PAD 가 아닌 위치의 합입니다. 평균이어야 합니다 (reduction='mean')"),
    Variant("seq2seq_logits_flattened_time_major", "seq2seq_training",
            "the logits are flattened in [T, B] order (a transpose before reshape) while the targets are flattened in "
            "[B, T] order, so each score meets another position's target: flatten both batch first",
            "logits 를 [T, B] 순서로 (reshape 전에 transpose) 펴고 targets 는 [B, T] 순서로 펴서 점수와 정답의 위치가 "
            "어긋납니다. 둘 다 배치 우선으로 펴세요"),
    Variant("seq2seq_softmax_before_cross_entropy", "seq2seq_training",
            "a softmax is applied before cross_entropy, which applies log_softmax itself: pass the raw logits",
            "cross_entropy 앞에 softmax 를 적용했습니다. cross_entropy 가 log_softmax 를 스스로 하므로 logits 를 그대로 "
            "넘기세요"),
    Variant("seq2seq_smoothing_on_pad", "seq2seq_training",
            "the label-smoothing term is averaged over every position, PAD included; like the rest of the loss it "
            "must leave PAD positions out (F.cross_entropy(..., ignore_index=pad_id, label_smoothing=...))",
            "레이블 스무딩 항을 PAD 를 포함한 모든 위치에서 평균 냈습니다. 손실의 나머지처럼 PAD 위치는 빼야 합니다 "
            "(F.cross_entropy(..., ignore_index=pad_id, label_smoothing=...))"),
)

# -- teacher_forcing's shift (one site: its return) ---------------------------------------------------
SEQ2SEQ_SHIFT = (
    Variant("seq2seq_targets_not_shifted", "seq2seq_training",
            "the labels are not shifted: the model is asked for the token it is given; the decoder reads tgt[:, :-1] "
            "and the labels are the next tokens, tgt[:, 1:]",
            "정답을 밀지 않았습니다. 모델이 입력으로 받은 토큰을 그대로 맞히게 됩니다. 디코더 입력은 tgt[:, :-1], "
            "정답은 다음 토큰인 tgt[:, 1:] 입니다"),
    Variant("seq2seq_shift_wrong_side", "seq2seq_training",
            "the shift is on the wrong side: decoder_input is tgt[:, 1:] and labels tgt[:, :-1], so the model predicts "
            "the previous token; the decoder reads tgt[:, :-1] (starting with BOS) and the labels are tgt[:, 1:]",
            "시프트 방향이 반대입니다. decoder_input 이 tgt[:, 1:], labels 가 tgt[:, :-1] 이라 이전 토큰을 맞히게 "
            "됩니다. 디코더 입력은 BOS 로 시작하는 tgt[:, :-1], 정답은 tgt[:, 1:] 입니다"),
)
