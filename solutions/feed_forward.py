"""Exercise 6: the position-wise feed-forward network (위치별 피드포워드 신경망).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", section 3.3, equation (2): after attention,
every position goes through the same small two-layer network on its own,

    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2

widening ``d_model`` to ``d_ff`` (2048 in the paper) and back. "Position-wise" means the same
weights are applied to each position separately: positions do not mix here (only attention mixes
them). As in ``nn.TransformerEncoderLayer``, dropout sits between the two layers.

한국어
------
Vaswani 외 (2017) 3.3절 식 (2): 어텐션 뒤에 각 위치가 같은 2층 신경망을 따로 통과합니다
(``d_model`` -> ``d_ff`` -> ``d_model``, 사이에 ReLU). '위치별'이란 모든 위치에 같은 가중치를
각각 적용한다는 뜻이며, 위치끼리 섞이지 않습니다. ``nn.TransformerEncoderLayer`` 처럼 두 층
사이에 드롭아웃을 둡니다.
"""

import torch
import torch.nn.functional as F
from torch import nn


class PositionwiseFeedForward(nn.Module):
    """``linear2(dropout(relu(linear1(x))))`` (위치별 2층 신경망).

    Args:
        d_model: model width (모델 차원).
        d_ff: hidden width (은닉 차원).
        dropout: dropout probability between the layers, active only in training mode.

    Attributes:
        linear1: ``nn.Linear(d_model, d_ff)``.
        linear2: ``nn.Linear(d_ff, d_model)``.
        dropout: ``nn.Dropout(dropout)``.

    Raises:
        ValueError: ``dropout`` outside [0, 1] (graded; ``nn.Dropout`` raises it itself).

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.3, equation (2).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        """Create the two linear layers and the dropout (두 선형층과 드롭아웃을 만듭니다)."""
        super().__init__()
        ### BEGIN SOLUTION
        # HINT: build linear1 (d_model -> d_ff), linear2 (d_ff -> d_model) and an nn.Dropout.
        # 힌트: linear1 (d_model -> d_ff), linear2 (d_ff -> d_model), nn.Dropout 을 만드세요.
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the network to every position (모든 위치에 같은 신경망을 적용).

        Args:
            x: ``Tensor[B, S, d_model]`` (any leading dimensions). May be non-contiguous (last axis of stride 1: use ``reshape``, not ``view``).

        Returns:
            ``Tensor[B, S, d_model]`` in ``x``'s dtype and device.
        """
        ### BEGIN SOLUTION
        # HINT: linear1, then ReLU, then dropout, then linear2.
        # 힌트: linear1 -> ReLU -> 드롭아웃 -> linear2 순서입니다.
        return self.linear2(self.dropout(F.relu(self.linear1(x))))
        ### END SOLUTION
