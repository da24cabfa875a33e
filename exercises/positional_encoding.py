# Generated from solutions/positional_encoding.py by tkit; edit the TODOs below (tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).
"""Exercise 2: sinusoidal positional encoding (사인파 위치 인코딩).

English
-------
Attention itself ignores word order: permuting the tokens permutes the outputs. Vaswani et al.
(2017), "Attention Is All You Need", section 3.5, add a fixed table to the embeddings so each
position gets its own pattern of sines and cosines of geometrically spaced frequencies:

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

Even columns hold sines and odd columns cosines of the same frequency, so ``d_model`` must be
even. The table is not learned: ``PositionalEncoding`` stores it as a persistent buffer (it is in
``state_dict()`` and follows ``.to()``), not as a parameter.

한국어
------
어텐션 자체는 단어 순서를 모릅니다. 토큰 순서를 바꾸면 출력 순서만 바뀔 뿐입니다. Vaswani 외
(2017) 3.5절은 임베딩에 고정된 표를 더해, 위치마다 서로 다른 주파수의 sin/cos 패턴을 줍니다
(위 식). 짝수 열은 sin, 홀수 열은 같은 주파수의 cos 이므로 ``d_model`` 은 짝수여야 합니다.
이 표는 학습되지 않으므로 parameter 가 아니라 persistent buffer 로 등록합니다
(``state_dict()`` 에 들어가고 ``.to()`` 를 따라갑니다).
"""

import torch
from torch import nn


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """The ``[max_len, d_model]`` sinusoidal table (사인파 위치 인코딩 표).

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))``, ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``.

    Args:
        max_len: number of positions (위치 개수), ``>= 1``.
        d_model: model width (모델 차원), a positive even number (양의 짝수).

    Returns:
        float32 ``Tensor[max_len, d_model]`` on the CPU. The reference computes the angles in
        float64 and rounds the result to float32; computing in float32 directly (as the source
        tutorial does) differs by float32 rounding only (about 5e-4 near position 5000).
        (float32, CPU. 각도를 float32 로 계산해도 반올림 오차 범위에서 같습니다.)

    Raises:
        ValueError: ``d_model`` is odd or not positive, or ``max_len < 1``.

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.5.
    """
    # TODO: angle[pos, i] = pos / 10000^(2i/d_model); put sin(angle) in the even columns and cos(angle) in the odd ones.
    # 할 일: angle[pos, i] = pos / 10000^(2i/d_model) 을 구해 짝수 열에는 sin, 홀수 열에는 cos 를 넣으세요.
    raise NotImplementedError("positional_encoding: sinusoidal_table is not implemented yet (아직 구현되지 않았습니다)")


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to a batch of embeddings (임베딩에 위치 인코딩을 더함).

    Args:
        d_model: model width, even (모델 차원, 짝수).
        max_len: longest sequence supported (지원하는 최대 길이), default 5000.
        dropout: dropout probability applied after the addition (덧셈 뒤 드롭아웃 확률).

    Attributes:
        pe: persistent float32 buffer ``[1, max_len, d_model]`` (학습되지 않는 buffer).
        dropout: the ``nn.Dropout`` applied after the addition (active only in training mode).

    Raises:
        ValueError: odd ``d_model``, ``max_len < 1`` or a dropout probability outside [0, 1].

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.5.
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        """Build the table once and register it as the buffer ``pe`` (표를 만들어 buffer 로 등록)."""
        super().__init__()
        # TODO: register sinusoidal_table(max_len, d_model) with a leading batch axis as the persistent buffer "pe"; keep an nn.Dropout.
        # 할 일: sinusoidal_table(max_len, d_model) 에 배치 축을 더해 persistent buffer "pe" 로 등록하고 nn.Dropout 을 만드세요.
        raise NotImplementedError("positional_encoding: PositionalEncoding.__init__ is not implemented yet (아직 구현되지 않았습니다)")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``dropout(x + pe[:, :S])`` (``x`` 에 앞쪽 ``S`` 개 위치의 인코딩을 더함).

        Args:
            x: floating ``Tensor[B, S, d_model]``. May be non-contiguous (last axis of stride 1: use ``reshape``, not ``view``).

        Returns:
            ``Tensor[B, S, d_model]`` with ``x``'s dtype and device (the buffer is cast to them).
            (출력의 dtype/device 는 ``x`` 를 따릅니다.)

        Raises:
            ValueError: ``x`` is not a floating 3-D tensor with last dimension ``d_model``, or
                ``S > max_len`` (시퀀스가 ``max_len`` 보다 길면 ValueError).
        """
        # TODO: check S <= max_len, then add self.pe[:, :S] cast to x's dtype and device, and apply dropout.
        # 할 일: S <= max_len 을 확인하고 x 의 dtype/device 로 바꾼 self.pe[:, :S] 를 더한 뒤 드롭아웃을 적용하세요.
        raise NotImplementedError("positional_encoding: PositionalEncoding.forward is not implemented yet (아직 구현되지 않았습니다)")
