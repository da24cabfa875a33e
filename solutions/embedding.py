"""Exercise 1: token embeddings (토큰 임베딩).

English
-------
A Transformer cannot work on integer token ids directly: each id is looked up in a learned
table (``nn.Embedding``) and becomes a ``d_model``-wide vector. Vaswani et al. (2017),
"Attention Is All You Need", section 3.4, multiply the looked-up vectors by ``sqrt(d_model)``
so that they have a scale comparable to the positional encodings that are added next.
``InputEmbeddings`` is another name for ``TokenEmbedding`` (the name one of the source tutorials
uses); both names refer to the same class.

한국어
------
Transformer 는 정수 토큰 id 를 그대로 다룰 수 없습니다. 각 id 를 학습되는 표
(``nn.Embedding``)에서 찾아 ``d_model`` 차원의 벡터로 바꿉니다. Vaswani 외 (2017)
"Attention Is All You Need" 3.4절은 찾아온 벡터에 ``sqrt(d_model)`` 을 곱해, 뒤에서 더해지는
위치 인코딩과 비슷한 크기가 되도록 합니다. ``InputEmbeddings`` 는 ``TokenEmbedding`` 의 다른
이름(소스 튜토리얼이 쓰는 이름)이며 같은 클래스입니다.
"""

import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    """Token-id lookup scaled by ``sqrt(d_model)`` (토큰 id 조회 후 ``sqrt(d_model)`` 배).

    Args:
        vocab_size: number of distinct token ids (어휘 크기), ``>= 1``.
        d_model: width of each vector (벡터 차원), ``>= 1``.
        padding_idx: optional id of the padding token, passed to ``nn.Embedding``: its row starts
            at zero and receives no gradient (패딩 토큰 id; 그 행은 0 으로 시작하고 학습되지
            않습니다). May be negative as in ``nn.Embedding`` (``-1`` is the last id).

    Attributes:
        embedding: the ``nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)`` table.
        d_model: the model width.

    Raises:
        ValueError: ``vocab_size < 1``, ``d_model < 1`` or ``padding_idx`` outside
            ``[-vocab_size, vocab_size)`` (값이 잘못되면 ValueError). Graded: only the
            ``padding_idx`` outside the vocabulary, and any error counts (``nn.Embedding``'s own
            does; 채점: 어휘 밖의 ``padding_idx`` 만, 어떤 오류든 인정).

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.4.
    """

    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None):
        """Build the lookup table (임베딩 표를 만듭니다)."""
        super().__init__()
        ### BEGIN SOLUTION
        # HINT: validate the arguments, then build nn.Embedding with padding_idx and remember d_model.
        # 힌트: 인자를 검사한 뒤 padding_idx 를 넘겨 nn.Embedding 을 만들고 d_model 을 저장하세요.
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be >= 1, got vocab_size={vocab_size}")
        if d_model < 1:
            raise ValueError(f"d_model must be >= 1, got d_model={d_model}")
        if padding_idx is not None and not -vocab_size <= padding_idx < vocab_size:
            raise ValueError(
                f"padding_idx must be in [-vocab_size, vocab_size), "
                f"got padding_idx={padding_idx}, vocab_size={vocab_size}"
            )
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)
        self.d_model = d_model
        ### END SOLUTION

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Look the ids up and scale by ``sqrt(d_model)`` (조회한 벡터에 ``sqrt(d_model)`` 을 곱함).

        Args:
            token_ids: ``LongTensor[B, S]`` of ids in ``[0, vocab_size)`` (any integer shape works).

        Returns:
            ``Tensor[B, S, d_model]`` in the embedding weight's dtype and device
            (임베딩 가중치의 dtype 을 따릅니다).

        Raises:
            ValueError: ``token_ids`` is not an integer tensor, or holds an id outside
                ``[0, vocab_size)`` (정수가 아니거나 범위를 벗어난 id). Graded: only an id outside
                ``[0, vocab_size)``, and any error counts (``nn.Embedding``'s ``IndexError`` does;
                채점: 범위 밖의 id 만, 어떤 오류든 인정).
        """
        ### BEGIN SOLUTION
        # HINT: look the ids up in self.embedding and multiply by math.sqrt(self.d_model).
        # 힌트: self.embedding 으로 조회한 뒤 math.sqrt(self.d_model) 을 곱하세요.
        if token_ids.is_floating_point() or token_ids.is_complex() or token_ids.dtype == torch.bool:
            raise ValueError(
                f"token_ids must be an integer tensor, got token_ids.dtype={token_ids.dtype}"
            )
        vocab_size = self.embedding.num_embeddings
        if token_ids.numel() > 0:
            low, high = int(token_ids.min()), int(token_ids.max())
            if low < 0 or high >= vocab_size:
                raise ValueError(
                    f"token_ids must lie in [0, vocab_size), got min={low}, max={high}, "
                    f"vocab_size={vocab_size}"
                )
        return self.embedding(token_ids) * math.sqrt(self.d_model)
        ### END SOLUTION


InputEmbeddings = TokenEmbedding
