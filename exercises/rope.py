# Generated from solutions/rope.py by tkit; edit the TODOs below (tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).
"""Exercise 10 (bonus): rotary position embedding, RoPE (회전 위치 임베딩).

English
-------
Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary Position Embedding": instead of
adding a position vector, rotate the queries and keys. The features of a head are taken in
interleaved pairs ``(x[2i], x[2i+1])``; the pair at position ``pos`` is rotated counter-clockwise
by the angle ``θ = pos * base^(-2i/head_dim)``:

    (a, b) -> (a cos θ - b sin θ,  a sin θ + b cos θ)

Seen as complex numbers, this multiplies ``a + ib`` by ``e^{iθ}``. A rotation keeps the length
of every vector, and the dot product of a query rotated for position ``m`` with a key rotated for
position ``n`` depends only on ``m - n``: attention sees relative positions. This is the RoFormer
(interleaved) layout, not the "rotate half" layout some libraries use.

한국어
------
Su 외 (2021) RoFormer: 위치 벡터를 더하는 대신 query 와 key 를 회전시킵니다. 헤드의 특징을
``(x[2i], x[2i+1])`` 쌍으로 묶고, 위치 ``pos`` 의 쌍을 각도 ``θ = pos * base^(-2i/head_dim)``
만큼 반시계 방향으로 돌립니다 (위 식; 복소수로 보면 ``e^{iθ}`` 를 곱하는 것). 회전은 벡터의
길이를 바꾸지 않고, 위치 ``m`` 의 query 와 위치 ``n`` 의 key 의 내적은 ``m - n`` 에만 의존합니다.
"rotate half" 방식이 아니라 RoFormer 의 교차(interleaved) 배치를 씁니다.
"""

import torch


def rope_angles(head_dim: int, max_len: int, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) of ``θ[pos, i] = pos * base^(-2i/head_dim)`` (회전 각도의 cos, sin 표).

    Args:
        head_dim: width of one head (헤드 차원), a positive even number.
        max_len: number of positions ``0..max_len-1`` (위치 개수), ``>= 0``.
        base: the frequency base, 10000 in RoFormer.

    Returns:
        ``(cos, sin)``, each a float32 ``Tensor[max_len, head_dim / 2]`` on the CPU (the angles are
        computed in float64 and the results rounded to float32).

    Raises:
        ValueError: ``head_dim`` odd or not positive, or ``max_len < 0``.

    Source: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", eq. (15).
    """
    # TODO: inverse frequencies base^(-2i/head_dim) for i = 0..head_dim/2-1, outer product with the positions 0..max_len-1, then cos and sin.
    # 할 일: i = 0..head_dim/2-1 에 대해 base^(-2i/head_dim) 를 구하고 위치 0..max_len-1 과 외적한 뒤 cos, sin 을 취하세요.
    raise NotImplementedError("rope: rope_angles is not implemented yet (아직 구현되지 않았습니다)")


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotate each interleaved feature pair by its position's angle (특징 쌍을 위치 각도만큼 회전).

    ``(x[..., 2i], x[..., 2i+1]) -> (a cos θ - b sin θ, a sin θ + b cos θ)`` with
    ``θ = pos * base^(-2i/head_dim)``.

    Args:
        x: floating ``Tensor[B, H, S, head_dim]`` (any leading dimensions; ``S`` is ``x.shape[-2]``).
            May be non-contiguous with a last axis of stride 1 (``split_heads``' output), so
            ``view_as_complex`` on a ``reshape`` works; ``view`` may not.
        positions: ``LongTensor[S]`` with the position of each row, default ``0..S-1``
            (각 행의 위치, 기본값 ``0..S-1``).
        base: the frequency base.

    Returns:
        ``Tensor`` with ``x``'s shape, dtype and device (a float64 ``x`` may be rotated in
        float32 and cast back: values are compared within ``1e-5 + 1e-4 * |expected|``). Norms of every ``head_dim`` vector are
        unchanged, and ``apply_rope(q)[m] · apply_rope(k)[n]`` depends only on ``m - n``.

    Raises:
        ValueError: ``x`` has fewer than 2 dimensions, ``head_dim`` is odd, or ``positions`` is
            not of shape ``[S]``. Graded: odd ``head_dim``, the message naming it and the value.

    Source: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", eq. (34).
    """
    # TODO: take a = x[..., 0::2], b = x[..., 1::2], compute the angles for the positions, and interleave (a cos - b sin, a sin + b cos) back.
    # 할 일: a = x[..., 0::2], b = x[..., 1::2] 로 나누고 위치별 각도를 구해 (a cos - b sin, a sin + b cos) 를 다시 교차로 끼워 넣으세요.
    raise NotImplementedError("rope: apply_rope is not implemented yet (아직 구현되지 않았습니다)")
