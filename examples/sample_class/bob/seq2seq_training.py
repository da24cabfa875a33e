# Generated from solutions/seq2seq_training.py by tkit; edit the TODOs below (tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).
"""Exercise 12: training the Transformer: teacher forcing and a loss without PAD (트랜스포머 학습).

English
-------
The padding mask (``key_padding_mask``) keeps PAD keys out of attention, but the decoder still
produces an output at every PAD *query* position. Those outputs are meaningless, so the loss must
leave PAD positions out too: the mean cross-entropy is taken over the non-PAD target tokens only.
Training a sequence-to-sequence model uses *teacher forcing*: the decoder is fed the target
shifted right (BOS, y1, ..., y_{T-1}) and learns to predict the target shifted left
(y1, ..., y_T), so that position t sees only tokens before t+1 (the causal mask does the rest).
The loop is Adam (Kingma & Ba 2015), ``zero_grad`` before every ``backward``, gradient-norm
clipping at 1.0 (Pascanu et al. 2013) and one step per batch. Label smoothing (Szegedy et al.
2016, used by Vaswani et al. 2017, section 5.4) is ``F.cross_entropy``'s ``label_smoothing``.

한국어
------
패딩 마스크(``key_padding_mask``)는 PAD 키를 어텐션에서 빼지만, 디코더는 PAD *쿼리* 위치에서도
출력을 냅니다. 그 출력은 의미가 없으므로 손실에서도 PAD 위치를 빼야 합니다 (PAD 위치는 Loss
계산에서도 제외해야 한다): PAD 가 아닌 타깃 토큰에 대해서만 교차 엔트로피의 평균을 냅니다.
시퀀스-투-시퀀스 학습은 *티처 포싱*을 씁니다: 디코더에는 오른쪽으로 민 타깃 (BOS, y1, ...,
y_{T-1})을 넣고, 왼쪽으로 민 타깃 (y1, ..., y_T)을 맞히도록 학습합니다. 학습 루프는 Adam,
매 backward 전 ``zero_grad``, 그래디언트 노름 1.0 클리핑, 배치마다 한 번의 step 입니다.
"""

import torch
import torch.nn.functional as F


def sequence_loss(logits: torch.Tensor, targets: torch.Tensor, pad_id: int,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy over the non-PAD target positions (PAD 를 뺀 평균 교차 엔트로피).

    Args:
        logits: floating-point ``Tensor[B, T, V]`` (unnormalised scores; no softmax before).
        targets: integer ``Tensor[B, T]`` of token ids in ``[0, V)``; positions equal to
            ``pad_id`` are left out (PAD 위치는 제외).
        pad_id: the padding token id.
        label_smoothing: in ``[0, 1]``, as ``F.cross_entropy`` defines it (the smoothed mass is
            spread over all ``V`` classes; PAD *positions* stay out of the loss).

    Returns:
        A 0-dim tensor in ``logits``' dtype and device: the mean over non-PAD positions; an
        all-PAD batch gives 0 (never NaN).

    Raises:
        ValueError: ``logits`` not a floating-point 3-D tensor, ``targets`` not an integer 2-D
            tensor, or ``targets``' shape not ``logits``' first two dimensions (the message names
            the argument and its shape or dtype).

    Source: the tutorial's padding-mask section (PAD 위치는 Loss 계산에서도 제외해야 한다);
    ``F.cross_entropy(..., ignore_index=pad_id)``.
    """
    # TODO: check the shapes and dtypes; flatten logits to [B*T, V] and targets to [B*T]; cross_entropy with ignore_index=pad_id; an all-PAD batch returns 0.
    # 할 일: 모양과 dtype 을 확인하고, logits 를 [B*T, V], targets 를 [B*T] 로 펴서 ignore_index=pad_id 로 cross_entropy 를 구하세요. 전부 PAD 이면 0 을 반환합니다.
    raise NotImplementedError("seq2seq_training: sequence_loss is not implemented yet (아직 구현되지 않았습니다)")


def teacher_forcing(tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoder's input and the labels of a target batch (티처 포싱의 입력과 정답).

    Args:
        tgt: integer ``Tensor[B, T]``, each row starting with BOS (``T >= 2``).

    Returns:
        ``(decoder_input, labels)``, both ``Tensor[B, T-1]``: ``tgt[:, :-1]`` (BOS, y1, ...,
        y_{T-1}) and ``tgt[:, 1:]`` (y1, ..., y_T): the label at position t is the token after
        the decoder's input at t.

    Raises:
        ValueError: ``tgt`` not a 2-D tensor, or shorter than 2 positions.

    Source: Williams & Zipser 1989 (teacher forcing); Vaswani et al. 2017, section 3.2.3.
    """
    # TODO: the decoder reads every token but the last; the labels are every token but the first.
    # 할 일: 디코더 입력은 마지막 토큰을 뺀 것, 정답은 첫 토큰을 뺀 것입니다.
    raise NotImplementedError("seq2seq_training: teacher_forcing is not implemented yet (아직 구현되지 않았습니다)")


def train_transformer(model, batches, epochs: int = 1, lr: float = 1e-3, pad_id: int = 0,
                      device="cpu") -> list[float]:
    """Train a sequence-to-sequence ``model`` with teacher forcing (티처 포싱으로 학습).

    ``torch.optim.Adam(model.parameters(), lr=lr)``; for every batch: :func:`teacher_forcing`,
    ``logits = model(src, decoder_input)``, :func:`sequence_loss` against the labels (PAD left
    out, no label smoothing), ``zero_grad``, ``backward``, gradient-norm clipping at 1.0
    (``torch.nn.utils.clip_grad_norm_``), ``step``. The model is moved to ``device`` and put in
    training mode (and left there).

    Args:
        model: maps ``(src[B, S], decoder_input[B, T-1])`` to logits ``[B, T-1, V]`` (e.g. the
            ``Transformer`` of exercise 9).
        batches: a re-iterable (list, ``DataLoader``) of ``(src[B, S], tgt[B, T])`` pairs of
            token ids, each ``tgt`` row starting with BOS; iterated once per epoch.
        epochs: number of passes (에폭 수), ``>= 0``.
        lr: Adam's learning rate, ``> 0``.
        pad_id: the padding token id of the targets.
        device: where to train (학습 장치).

    Returns:
        A list of ``epochs`` floats: the mean of each epoch's batch losses (에폭별 평균 손실).

    Raises:
        ValueError: ``epochs < 0``, ``lr <= 0``, or ``batches`` yields no batch.

    Source: Kingma & Ba 2015 (Adam); Pascanu et al. 2013 (gradient clipping); the tutorial's
    padding-mask section.
    """
    # TODO: Adam; for each epoch and batch: teacher_forcing, model(src, decoder_input), sequence_loss, zero_grad, backward, clip_grad_norm_(..., 1.0), step; record the mean batch loss per epoch.
    # 할 일: Adam. 에폭마다 배치마다 teacher_forcing, model(src, decoder_input), sequence_loss, zero_grad, backward, clip_grad_norm_(..., 1.0), step 을 하고 에폭별 평균 배치 손실을 기록하세요.
    raise NotImplementedError("seq2seq_training: train_transformer is not implemented yet (아직 구현되지 않았습니다)")
