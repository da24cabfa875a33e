"""Exercise 7: the Transformer encoder (트랜스포머 인코더).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", section 3.1: the encoder is a stack of
identical layers. Each layer has two sub-layers, multi-head self-attention and the position-wise
feed-forward network, each wrapped in a residual connection and layer normalisation. The paper
normalises after the residual addition ("Post-LN"):

    x = norm1(x + dropout1(self_attn(x, x, x)))
    x = norm2(x + dropout2(feed_forward(x)))

Many later models normalise first ("Pre-LN", ``norm_first=True``), which trains more stably:

    x = x + dropout1(self_attn(norm1(x), norm1(x), norm1(x)))
    x = x + dropout2(feed_forward(norm2(x)))

and then need one final ``LayerNorm`` after the whole stack. With the same weights this gives the
same numbers as ``nn.TransformerEncoderLayer(batch_first=True, activation="relu")`` (whose class,
like ``nn.MultiheadAttention``, students may not use). Reuse ``MultiHeadAttention`` and
``PositionwiseFeedForward``. Padding keys are hidden with ``key_padding_mask`` (True = padding).

한국어
------
Vaswani 외 (2017) 3.1절: 인코더는 같은 층을 여러 번 쌓은 것입니다. 각 층은 멀티-헤드
셀프 어텐션과 위치별 피드포워드 두 부분으로 되어 있고, 각각 잔차 연결(residual)과 층
정규화(LayerNorm)로 감쌉니다. 논문은 더한 뒤 정규화합니다(Post-LN, 기본값). ``norm_first=True``
이면 먼저 정규화합니다(Pre-LN). 이 경우 스택 끝에 LayerNorm 을 하나 더 둡니다. 같은 가중치라면
``nn.TransformerEncoderLayer(batch_first=True, activation="relu")`` 와 같은 값을 냅니다(이
클래스는 쓸 수 없습니다). ``MultiHeadAttention`` 과 ``PositionwiseFeedForward`` 를 재사용하세요.
"""

import torch
from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    """One encoder layer: self-attention and feed-forward, each with residual + LayerNorm.

    (인코더 층 하나: 셀프 어텐션과 피드포워드, 각각 잔차 연결 + LayerNorm.)

    Args:
        d_model: model width (모델 차원).
        num_heads: attention heads (헤드 수).
        d_ff: feed-forward hidden width (피드포워드 은닉 차원).
        dropout: dropout probability (attention weights, feed-forward, residual branches).
        norm_first: Pre-LN when True, Post-LN (the paper) when False.

    Attributes:
        self_attn: ``MultiHeadAttention(d_model, num_heads, dropout=dropout)``.
        feed_forward: ``PositionwiseFeedForward(d_model, d_ff, dropout)``.
        norm1, norm2: ``nn.LayerNorm(d_model)``.
        dropout1, dropout2: ``nn.Dropout(dropout)`` on the residual branches.
        norm_first: the flag.

    Raises:
        ValueError: from ``MultiHeadAttention`` (``d_model % num_heads != 0``) or a bad dropout.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sections 3.1 and 5.4.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        """Create the sub-layers (부분층들을 만듭니다)."""
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Run the layer (층을 통과시킵니다).

        Args:
            x: ``Tensor[B, S, d_model]``.
            key_padding_mask: ``BoolTensor[B, S]`` or ``None``; True = padding (가려짐).

        Returns:
            ``Tensor[B, S, d_model]`` in ``x``'s dtype and device.

        Raises:
            ValueError: a mask of the wrong shape (from ``MultiHeadAttention``).
        """
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(
                self.self_attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0]
            )
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            attended = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]
            x = self.norm1(x + self.dropout1(attended))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class Encoder(nn.Module):
    """A stack of ``num_layers`` encoder layers (인코더 층 ``num_layers`` 개를 쌓은 것).

    Args:
        num_layers: number of layers (층 수), ``>= 0``.
        d_model, num_heads, d_ff, dropout, norm_first: as in ``EncoderLayer``.

    Attributes:
        layers: ``nn.ModuleList`` of ``EncoderLayer``.
        norm: a final ``nn.LayerNorm(d_model)`` when ``norm_first`` (Pre-LN needs it), else ``None``.

    Raises:
        ValueError: ``num_layers < 0``, or from ``EncoderLayer``.

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.1.
    """

    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        """Create the layers (층들을 만듭니다)."""
        super().__init__()
        if num_layers < 0:
            raise ValueError(f"num_layers must be >= 0, got num_layers={num_layers}")
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Run every layer in turn, then the final norm if any (모든 층을 차례로 통과).

        Args:
            x: ``Tensor[B, S, d_model]``.
            key_padding_mask: ``BoolTensor[B, S]`` or ``None``; True = padding.

        Returns:
            ``Tensor[B, S, d_model]``.
        """
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)
        if self.norm is not None:
            x = self.norm(x)
        return x
