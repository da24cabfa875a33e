"""Exercise 8: the Transformer decoder (트랜스포머 디코더).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", section 3.1: each decoder layer has three
sub-layers, each wrapped in a residual connection and layer normalisation:

1. masked multi-head self-attention over the target so far (the causal ``tgt_mask`` keeps
   position ``i`` from seeing later positions, section 3.2.3);
2. cross-attention ("encoder-decoder attention"): queries come from the decoder, keys and values
   from the encoder output ``memory``;
3. the position-wise feed-forward network.

Post-LN (the paper, default): ``x = norm_k(x + dropout_k(sublayer_k(x)))``; Pre-LN
(``norm_first=True``): ``x = x + dropout_k(sublayer_k(norm_k(x)))``. No mask is applied that the
caller does not pass: ``tgt_mask=None`` means no causal mask, as in PyTorch (the ``Transformer``
builds it). With the same weights this gives the same numbers as
``nn.TransformerDecoderLayer(batch_first=True)`` (which students may not use). Masks: True = blocked.

한국어
------
Vaswani 외 (2017) 3.1절: 디코더 층에는 세 부분층이 있고, 각각 잔차 연결과 LayerNorm 으로
감쌉니다. (1) 지금까지의 타깃에 대한 마스크 셀프 어텐션(인과 마스크 ``tgt_mask`` 로 미래를
가림), (2) 크로스 어텐션: query 는 디코더에서, key/value 는 인코더 출력 ``memory`` 에서 옵니다,
(3) 위치별 피드포워드. 호출하는 쪽이 주지 않은 마스크는 적용하지 않습니다(``tgt_mask=None`` 이면
인과 마스크 없음, PyTorch 와 같음). 같은 가중치라면 ``nn.TransformerDecoderLayer(batch_first=True)``
와 같은 값을 냅니다(이 클래스는 쓸 수 없습니다). 마스크는 True = 가려짐입니다.
"""

import torch
from torch import nn

from feed_forward import PositionwiseFeedForward
from multi_head_attention import MultiHeadAttention


class DecoderLayer(nn.Module):
    """One decoder layer: masked self-attention, cross-attention, feed-forward.

    (디코더 층 하나: 마스크 셀프 어텐션, 크로스 어텐션, 피드포워드.)

    Args:
        d_model: model width (모델 차원).
        num_heads: attention heads (헤드 수).
        d_ff: feed-forward hidden width (피드포워드 은닉 차원).
        dropout: dropout probability.
        norm_first: Pre-LN when True, Post-LN (the paper) when False.

    Attributes:
        self_attn, cross_attn: ``MultiHeadAttention(d_model, num_heads, dropout=dropout)``.
        feed_forward: ``PositionwiseFeedForward(d_model, d_ff, dropout)``.
        norm1, norm2, norm3: ``nn.LayerNorm(d_model)``.
        dropout1, dropout2, dropout3: ``nn.Dropout(dropout)`` on the residual branches.
        norm_first: the flag.

    Raises:
        ValueError: from ``MultiHeadAttention`` (``d_model % num_heads != 0``) or a bad dropout.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sections 3.1 and 3.2.3.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        """Create the sub-layers (부분층들을 만듭니다)."""
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run the layer (층을 통과시킵니다).

        Args:
            x: decoder input ``Tensor[B, T, d_model]`` (디코더 입력).
            memory: encoder output ``Tensor[B, S, d_model]`` (인코더 출력).
            tgt_mask: ``BoolTensor[T, T]`` or ``None`` (usually the causal mask; True = blocked).
            tgt_key_padding_mask: ``BoolTensor[B, T]`` or ``None``; True = target padding.
            memory_key_padding_mask: ``BoolTensor[B, S]`` or ``None``; True = source padding.

        Returns:
            ``Tensor[B, T, d_model]`` in ``x``'s dtype and device.

        Raises:
            ValueError: a mask of the wrong shape (from ``MultiHeadAttention``).
        """
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(
                self.self_attn(
                    h, h, h, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask, need_weights=False
                )[0]
            )
            h = self.norm2(x)
            x = x + self.dropout2(
                self.cross_attn(
                    h, memory, memory, key_padding_mask=memory_key_padding_mask, need_weights=False
                )[0]
            )
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            attended = self.self_attn(
                x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask, need_weights=False
            )[0]
            x = self.norm1(x + self.dropout1(attended))
            attended = self.cross_attn(
                x, memory, memory, key_padding_mask=memory_key_padding_mask, need_weights=False
            )[0]
            x = self.norm2(x + self.dropout2(attended))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x


class Decoder(nn.Module):
    """A stack of ``num_layers`` decoder layers (디코더 층 ``num_layers`` 개를 쌓은 것).

    Args:
        num_layers: number of layers (층 수), ``>= 0``.
        d_model, num_heads, d_ff, dropout, norm_first: as in ``DecoderLayer``.

    Attributes:
        layers: ``nn.ModuleList`` of ``DecoderLayer``.
        norm: a final ``nn.LayerNorm(d_model)`` when ``norm_first``, else ``None``.

    Raises:
        ValueError: ``num_layers < 0``, or from ``DecoderLayer``.

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.1.
    """

    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        """Create the layers (층들을 만듭니다)."""
        super().__init__()
        if num_layers < 0:
            raise ValueError(f"num_layers must be >= 0, got num_layers={num_layers}")
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run every layer in turn with the same masks, then the final norm if any.

        (같은 마스크로 모든 층을 차례로 통과시키고, 있으면 마지막 LayerNorm 을 적용.)

        Args:
            x: ``Tensor[B, T, d_model]``; memory: ``Tensor[B, S, d_model]``; masks as in
                ``DecoderLayer.forward``.

        Returns:
            ``Tensor[B, T, d_model]``.
        """
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
            )
        if self.norm is not None:
            x = self.norm(x)
        return x
