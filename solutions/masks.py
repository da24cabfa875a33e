"""Exercise 3: attention masks and the masked softmax (어텐션 마스크와 마스크 소프트맥스).

English
-------
A mask tells attention which keys a query may not look at. This kit uses the convention of
PyTorch's ``nn.MultiheadAttention``: a boolean mask is **True where attention is blocked**.
Beware: ``F.scaled_dot_product_attention`` uses the *opposite* boolean convention (True = may
attend), and students may not use ``nn.MultiheadAttention``, ``F.multi_head_attention_forward``,
``F.scaled_dot_product_attention`` or any ``nn.Transformer*`` class in these exercises.

Two masks appear in the Transformer (Vaswani et al. 2017, "Attention Is All You Need"):
- the *padding mask* hides padding tokens of each sequence (``[B, S]``, True at padding);
- the *causal mask* hides future positions in the decoder (``[S, S]``, True above the diagonal),
  so position ``i`` only sees positions ``j <= i`` (section 3.2.3).

The masked softmax blocks positions by giving them probability zero. A row whose keys are all
blocked has nothing to attend to: the kit's rule is that its weights are all zero (never NaN, also
in the gradients), where a plain ``softmax`` over ``-inf`` would give NaN.

한국어
------
마스크는 query 가 볼 수 없는 key 를 알려 줍니다. 이 키트는 PyTorch ``nn.MultiheadAttention`` 의
규칙을 따릅니다: 불리언 마스크에서 **True 는 '가려짐(볼 수 없음)'** 입니다. 주의:
``F.scaled_dot_product_attention`` 은 *반대* 규칙(True = 볼 수 있음)을 씁니다. 또한 이 과제에서는
``nn.MultiheadAttention``, ``F.multi_head_attention_forward``, ``F.scaled_dot_product_attention``,
``nn.Transformer*`` 클래스를 쓸 수 없습니다.

- 패딩 마스크: 각 시퀀스의 패딩 토큰을 가립니다 (``[B, S]``, 패딩에서 True).
- 인과(causal) 마스크: 디코더가 미래 위치를 보지 못하게 합니다 (``[S, S]``, 대각선 위가 True).

마스크 소프트맥스는 가려진 위치의 확률을 0 으로 만듭니다. 모든 key 가 가려진 행은 가중치가
모두 0 이어야 하며(기울기 포함) NaN 이 나오면 안 됩니다.
"""

import torch


def make_padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Padding mask: True where ``token_ids == pad_id`` (패딩 위치에서 True).

    Args:
        token_ids: ``LongTensor[B, S]``.
        pad_id: id of the padding token (패딩 토큰 id).

    Returns:
        ``BoolTensor[B, S]`` on ``token_ids``'s device; True = this key is blocked.
    """
    ### BEGIN SOLUTION
    # HINT: compare the ids with pad_id; the result is already a bool tensor.
    # 힌트: id 를 pad_id 와 비교하면 bool 텐서가 됩니다.
    return token_ids == pad_id
    ### END SOLUTION


def make_causal_mask(size: int, device=None) -> torch.Tensor:
    """Causal (look-ahead) mask: True strictly above the diagonal (대각선 위쪽이 True).

    Position ``i`` may attend to ``j <= i`` only (Vaswani et al. 2017, section 3.2.3).

    Args:
        size: sequence length (시퀀스 길이), ``>= 0``.
        device: device of the result (결과가 놓일 장치), default CPU.

    Returns:
        ``BoolTensor[size, size]`` on ``device``; ``mask[i, j]`` is True when ``j > i``.

    Raises:
        ValueError: ``size < 0`` (not graded: PyTorch's own error is as good).
    """
    ### BEGIN SOLUTION
    # HINT: the upper triangle above the main diagonal (torch.triu with diagonal=1) of a bool all-ones matrix.
    # 힌트: 모두 True 인 행렬에서 주대각선 위쪽(torch.triu, diagonal=1)만 남기세요.
    if size < 0:
        raise ValueError(f"size must be >= 0, got size={size}")
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)
    ### END SOLUTION


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """Softmax over ``dim`` with the True positions of ``mask`` blocked (가려진 위치를 뺀 소프트맥스).

    Example from the source tutorial (튜토리얼 예시): scores ``[[2.0, 1.0, 0.5, 3.0]]`` with the
    last key blocked (mask ``[[False, False, False, True]]``) give ``[[0.6285, 0.2312, 0.1402, 0.0000]]``.

    A row whose positions are all blocked gives all zeros, never NaN, and its gradient is zero too
    (모두 가려진 행은 0, NaN 금지, 기울기도 유한). Hint: fill blocked scores with a very negative
    *finite* number (``torch.finfo(scores.dtype).min``) instead of ``-inf``, take the softmax, and
    set the blocked positions to zero afterwards.

    Args:
        scores: floating ``Tensor[..., S_k]``. May be non-contiguous (last axis of stride 1: use ``reshape``, not ``view``).
        mask: ``None`` (plain softmax) or a ``BoolTensor`` broadcastable to ``scores``
            (True = blocked). Optional extra (선택 사항): the reference also accepts a floating
            (additive) mask, added to the scores, where positions that end up at ``-inf`` count
            as blocked; the tests pass boolean masks only.
        dim: the axis to normalise over (정규화 축), default ``-1``.

    Returns:
        ``Tensor`` with ``scores``'s shape, dtype and device; each row sums to 1, or to 0 when
        fully blocked.

    Raises:
        ValueError: ``mask`` cannot be broadcast to ``scores``'s shape (graded: the message
            names the argument and the shapes), or is neither bool nor floating (not graded).

    Note: ``F.scaled_dot_product_attention`` uses the opposite boolean convention (True = may
    attend) and may not be used in the exercises.
    """
    ### BEGIN SOLUTION
    # HINT: fill blocked scores with a very negative *finite* value, torch.finfo(scores.dtype).min (not -inf, which makes fully blocked rows and their gradient NaN), take torch.softmax, then set the blocked positions to 0 so fully blocked rows give zeros.
    # 힌트: 가려진 점수를 아주 작은 *유한한* 값 torch.finfo(scores.dtype).min 으로 채우고(-inf 는 모두 가려진 행과 그 기울기를 NaN 으로 만듭니다) torch.softmax 후 가려진 위치를 0 으로 만들어, 모두 가려진 행이 0 이 되게 하세요.
    if mask is None:
        return torch.softmax(scores, dim=dim)
    fits = mask.dim() <= scores.dim() and all(
        m in (1, s) for m, s in zip(reversed(mask.shape), reversed(scores.shape))
    )
    if not fits:
        raise ValueError(
            f"mask must be broadcastable to scores, got mask.shape={tuple(mask.shape)}, "
            f"scores.shape={tuple(scores.shape)}"
        )
    mask = mask.to(scores.device)
    if mask.dtype == torch.bool:
        blocked = mask
    elif mask.is_floating_point():
        scores = scores + mask.to(scores.dtype)
        blocked = torch.isneginf(scores)
    else:
        raise ValueError(f"mask must be a bool (or floating) tensor, got mask.dtype={mask.dtype}")
    filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=dim).masked_fill(blocked, 0.0)
    ### END SOLUTION


def combine_masks(
    attn_mask: torch.Tensor | None, key_padding_mask: torch.Tensor | None
) -> torch.Tensor | None:
    """Merge an attention mask and a key-padding mask into one (두 마스크를 하나로 합침).

    The result is broadcastable to the attention scores ``[B, H, S_q, S_k]`` and is True where
    either input blocks (둘 중 하나라도 가리면 True):

    - both given: ``[B, 1, S_q, S_k]``;
    - only ``attn_mask``: ``[1, 1, S_q, S_k]``;
    - only ``key_padding_mask``: ``[B, 1, 1, S_k]``;
    - neither: ``None``.

    Args:
        attn_mask: ``BoolTensor[S_q, S_k]`` or ``None`` (e.g. the causal mask).
        key_padding_mask: ``BoolTensor[B, S_k]`` or ``None`` (e.g. the padding mask).
            Optional extra (선택 사항): the reference also accepts floating (additive) masks; if
            either mask is floating, the result is the floating sum, with True of a bool mask
            turned into ``-inf``. The tests pass boolean masks only.

    Returns:
        ``BoolTensor`` of the shape above, or ``None``.

    Raises:
        ValueError: ``attn_mask`` is not 2-D, ``key_padding_mask`` is not 2-D, or their ``S_k``
            differ (모양이 맞지 않으면 ValueError). Graded: different ``S_k``, with a message
            naming the argument and the values.

    Note: True = blocked, the ``nn.MultiheadAttention`` convention (the opposite of
    ``F.scaled_dot_product_attention``'s boolean masks).
    """
    ### BEGIN SOLUTION
    # HINT: reshape attn_mask to [1, 1, S_q, S_k] and key_padding_mask to [B, 1, 1, S_k], then combine them with logical OR.
    # 힌트: attn_mask 는 [1, 1, S_q, S_k], key_padding_mask 는 [B, 1, 1, S_k] 로 바꾼 뒤 논리합(OR)으로 합치세요.
    if attn_mask is not None and attn_mask.dim() != 2:
        raise ValueError(
            f"attn_mask must have shape [S_q, S_k], got attn_mask.shape={tuple(attn_mask.shape)}"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != 2:
        raise ValueError(
            f"key_padding_mask must have shape [B, S_k], "
            f"got key_padding_mask.shape={tuple(key_padding_mask.shape)}"
        )
    if attn_mask is None and key_padding_mask is None:
        return None
    if attn_mask is None:
        return key_padding_mask[:, None, None, :]
    if key_padding_mask is None:
        return attn_mask[None, None, :, :]
    if attn_mask.shape[-1] != key_padding_mask.shape[-1]:
        raise ValueError(
            f"attn_mask and key_padding_mask must have the same S_k, "
            f"got attn_mask.shape={tuple(attn_mask.shape)}, "
            f"key_padding_mask.shape={tuple(key_padding_mask.shape)}"
        )
    a = attn_mask[None, None, :, :]
    k = key_padding_mask[:, None, None, :].to(a.device)
    if a.dtype == torch.bool and k.dtype == torch.bool:
        return a | k
    float_dtype = a.dtype if a.is_floating_point() else k.dtype
    if a.dtype == torch.bool:
        a = torch.zeros(a.shape, dtype=float_dtype, device=a.device).masked_fill(a, float("-inf"))
    if k.dtype == torch.bool:
        k = torch.zeros(k.shape, dtype=float_dtype, device=k.device).masked_fill(k, float("-inf"))
    return a.to(float_dtype) + k.to(float_dtype)
    ### END SOLUTION
