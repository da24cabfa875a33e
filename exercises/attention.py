# Generated from solutions/attention.py by tkit; edit the TODOs below (tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).
"""Exercise 4: scaled dot-product attention (스케일드 닷-프로덕트 어텐션).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1, equation (1):

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Each query is compared with every key by a dot product; dividing by ``sqrt(d_k)`` keeps the
scores from growing with the width (which would saturate the softmax). The softmax turns a row
of scores into weights that sum to 1, and the output is the weighted mean of the values. Masked
keys (True = blocked, the ``nn.MultiheadAttention`` convention) get weight zero; use
``masked_softmax`` from ``masks``. Note that ``F.scaled_dot_product_attention`` uses the
opposite boolean convention (True = may attend); students may not use it, nor
``nn.MultiheadAttention``, ``F.multi_head_attention_forward`` or ``nn.Transformer*`` classes.

한국어
------
Vaswani 외 (2017) 3.2.1절 식 (1): ``softmax(Q K^T / sqrt(d_k)) V``. 각 query 를 모든 key 와
내적으로 비교하고, ``sqrt(d_k)`` 로 나누어 차원이 커져도 점수가 너무 커지지 않게 합니다
(소프트맥스 포화 방지). 소프트맥스가 점수를 합이 1 인 가중치로 바꾸고, 출력은 value 의
가중 평균입니다. 가려진 key (True = 가려짐) 의 가중치는 0 입니다(``masks.masked_softmax`` 사용).
``F.scaled_dot_product_attention`` 은 반대 규칙(True = 볼 수 있음)을 쓰며, 이 과제에서는
그 함수와 ``nn.MultiheadAttention``, ``F.multi_head_attention_forward``, ``nn.Transformer*`` 를
쓸 수 없습니다.
"""

import math

import torch
import torch.nn.functional as F

from masks import masked_softmax


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(Q K^T / sqrt(d_k)) V`` with blocked keys removed (가려진 key 를 뺀 어텐션).

    Works for 3-D ``[B, S, d]`` and 4-D ``[B, H, S, d]`` inputs (any leading dimensions).

    Args:
        query: ``Tensor[..., S_q, d_k]``. ``query``, ``key`` and ``value`` may be non-contiguous
            (last axis of stride 1: use ``reshape``, not ``view``).
        key: ``Tensor[..., S_k, d_k]``.
        value: ``Tensor[..., S_k, d_v]``.
        mask: ``None`` or a ``BoolTensor`` broadcastable to ``[..., S_q, S_k]``, True = blocked
            (``F.scaled_dot_product_attention`` uses the opposite convention).
        dropout_p: dropout probability on the attention weights, applied whenever
            ``dropout_p > 0`` (a plain function has no training mode: callers pass 0 in eval).
            (가중치 드롭아웃 확률. eval 에서는 호출하는 쪽이 0 을 넘깁니다.)

    Returns:
        ``(output, weights)``: ``output`` is ``Tensor[..., S_q, d_v]``, ``weights`` is
        ``Tensor[..., S_q, S_k]`` (after dropout), both in the query's dtype and device.
        A query whose keys are all blocked gets zero weights and a zero output (never NaN).

    Raises:
        ValueError: inputs with fewer than 2 dimensions, ``query`` and ``key`` with different
            ``d_k``, ``key`` and ``value`` with different ``S_k``, a mask that does not broadcast,
            or ``dropout_p`` outside [0, 1]. Graded: only ``dropout_p`` outside [0, 1], any
            message (``F.dropout`` raises it itself); the shape errors may be PyTorch's own.

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.2.1, equation (1).
    """
    # TODO: scores = query @ key.transpose(-2, -1) / sqrt(d_k); weights = masked_softmax(scores, mask); dropout on weights if dropout_p > 0; return (weights @ value, weights).
    # 할 일: scores = query @ key.transpose(-2, -1) / sqrt(d_k); weights = masked_softmax(scores, mask); dropout_p > 0 이면 드롭아웃; (weights @ value, weights) 를 반환하세요.
    raise NotImplementedError("attention: scaled_dot_product_attention is not implemented yet (아직 구현되지 않았습니다)")
