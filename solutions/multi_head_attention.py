"""Exercise 5: multi-head attention (멀티-헤드 어텐션).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", section 3.2.2: instead of one attention over
``d_model``-wide vectors, project queries, keys and values with learned linear maps, cut each
projection into ``num_heads`` heads of width ``head_dim = d_model / num_heads``, run scaled
dot-product attention in every head in parallel, glue the heads back together and apply an output
projection:

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

Head ``h`` uses output rows ``h*head_dim:(h+1)*head_dim`` of each projection, the layout of
``nn.MultiheadAttention.in_proj_weight`` split in three, so with the same weights this module gives
the same numbers as ``nn.MultiheadAttention(batch_first=True)``. Masks use that module's
convention: True = blocked (``F.scaled_dot_product_attention`` uses the opposite one). Students may
not use ``nn.MultiheadAttention``, ``F.multi_head_attention_forward``,
``F.scaled_dot_product_attention`` or ``nn.Transformer*`` classes; reuse ``attention`` and
``masks`` instead.

한국어
------
Vaswani 외 (2017) 3.2.2절: query, key, value 를 학습되는 선형 변환으로 투영한 뒤 각각을
``num_heads`` 개의 헤드(폭 ``head_dim = d_model / num_heads``)로 나누어 헤드마다 어텐션을 병렬로
계산하고, 헤드들을 다시 이어 붙여 출력 투영을 적용합니다. 헤드 ``h`` 는 각 투영 출력의
``h*head_dim:(h+1)*head_dim`` 행을 씁니다 (``nn.MultiheadAttention.in_proj_weight`` 를 셋으로 나눈
배치와 같음). 마스크는 True = 가려짐 규칙입니다. ``nn.MultiheadAttention``,
``F.multi_head_attention_forward``, ``F.scaled_dot_product_attention``, ``nn.Transformer*`` 는
쓸 수 없으며, ``attention`` 과 ``masks`` 모듈을 재사용하세요.
"""

import torch
from torch import nn

from attention import scaled_dot_product_attention
from masks import combine_masks


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``[B, S, D] -> [B, H, S, D/H]``: cut the last axis into heads (마지막 축을 헤드로 나눔).

    Head ``h`` gets features ``h*D/H:(h+1)*D/H``. Inverse of ``merge_heads``.

    Args:
        x: ``Tensor[B, S, D]``.
        num_heads: number of heads ``H`` (헤드 수); ``D`` must be divisible by it.

    Returns:
        ``Tensor[B, H, S, D/H]`` (same dtype and device).

    Raises:
        ValueError: ``x`` is not 3-D, ``num_heads < 1`` or ``D % num_heads != 0``.
    """
    ### BEGIN SOLUTION
    # HINT: view as [B, S, H, D/H], then swap the S and H axes.
    # 힌트: [B, S, H, D/H] 로 view 한 뒤 S 축과 H 축을 바꾸세요.
    if x.dim() != 3:
        raise ValueError(f"x must have shape [B, S, D], got x.shape={tuple(x.shape)}")
    if num_heads < 1:
        raise ValueError(f"num_heads must be >= 1, got num_heads={num_heads}")
    batch, seq_len, width = x.shape
    if width % num_heads != 0:
        raise ValueError(
            f"D must be divisible by num_heads, got D={width}, num_heads={num_heads}"
        )
    return x.reshape(batch, seq_len, num_heads, width // num_heads).transpose(1, 2)
    ### END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``[B, H, S, d_head] -> [B, S, H*d_head]``: glue the heads back (헤드를 다시 이어 붙임).

    Inverse of ``split_heads``.

    Args:
        x: ``Tensor[B, H, S, d_head]``.

    Returns:
        ``Tensor[B, S, H*d_head]`` (same dtype and device).

    Raises:
        ValueError: ``x`` is not 4-D.
    """
    ### BEGIN SOLUTION
    # HINT: swap the H and S axes back, then reshape to [B, S, H*d_head].
    # 힌트: H 축과 S 축을 다시 바꾼 뒤 [B, S, H*d_head] 로 reshape 하세요.
    if x.dim() != 4:
        raise ValueError(f"x must have shape [B, H, S, d_head], got x.shape={tuple(x.shape)}")
    batch, num_heads, seq_len, head_dim = x.shape
    return x.transpose(1, 2).reshape(batch, seq_len, num_heads * head_dim)
    ### END SOLUTION


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``nn.MultiheadAttention``'s numbers (멀티-헤드 어텐션).

    Args:
        d_model: model width ``D`` (모델 차원).
        num_heads: number of heads ``H``; ``d_model`` must be divisible by it.
        dropout: dropout probability on the attention weights, used only in training mode
            (학습 모드에서만 쓰는 어텐션 가중치 드롭아웃 확률).
        bias: whether the four projections have a bias (투영에 bias 를 쓸지).

    Attributes:
        q_proj, k_proj, v_proj, out_proj: ``nn.Linear(d_model, d_model, bias=bias)``.
        num_heads: ``H``.
        head_dim: ``d_model // num_heads``.
        dropout: the attention dropout probability (a float, as in ``nn.MultiheadAttention``).

    Raises:
        ValueError: ``d_model % num_heads != 0``, ``num_heads < 1`` or ``dropout`` outside [0, 1].

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.2.2.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        """Create the four projections (네 개의 투영을 만듭니다)."""
        super().__init__()
        ### BEGIN SOLUTION
        # HINT: check d_model % num_heads == 0, store num_heads, head_dim and dropout, and build q_proj, k_proj, v_proj, out_proj.
        # 힌트: d_model % num_heads == 0 을 확인하고 num_heads, head_dim, dropout 을 저장한 뒤 q_proj, k_proj, v_proj, out_proj 를 만드세요.
        if num_heads < 1:
            raise ValueError(f"num_heads must be >= 1, got num_heads={num_heads}")
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={d_model}, num_heads={num_heads}"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be in [0, 1], got dropout={dropout}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        ### END SOLUTION

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        average_attn_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value`` (query 가 key/value 를 참조).

        Args:
            query: ``Tensor[B, S_q, D]``. ``query``, ``key`` and ``value`` may be non-contiguous
                (last axis of stride 1: use ``reshape``, not ``view``).
            key: ``Tensor[B, S_k, D]``.
            value: ``Tensor[B, S_k, D]``.
            key_padding_mask: ``BoolTensor[B, S_k]`` or ``None``; True = that key is padding.
            attn_mask: ``BoolTensor[S_q, S_k]`` or ``None``; True = blocked. The reference, like
                PyTorch, also accepts a 3-D ``[B*num_heads, S_q, S_k]`` mask (one per batch element
                and head) and float (additive) masks; that is optional, the tests pass 2-D boolean
                masks only (선택 사항).
            need_weights: return the attention weights (가중치 반환 여부).
            average_attn_weights: average the weights over heads (헤드 평균 여부).

        Returns:
            ``(output, weights)``: ``output`` is ``Tensor[B, S_q, D]``; ``weights`` is
            ``[B, S_q, S_k]`` averaged over heads, ``[B, H, S_q, S_k]`` when
            ``average_attn_weights=False``, or ``None`` when ``need_weights=False``. The weights
            are the ones after dropout (as in PyTorch). Dropout is applied only in training mode.
            A query whose keys are all blocked gets zero weights, so its output is
            ``out_proj.bias`` (PyTorch gives NaN there). Rows of padded queries are computed like
            any other row, as in PyTorch (masking them too costs one 0.5-point convention test).

        Raises:
            ValueError: inputs that are not ``[B, S, d_model]`` or disagree on ``B``/``S_k``,
                ``key_padding_mask`` not ``[B, S_k]``, ``attn_mask`` not ``[S_q, S_k]`` (or
                ``[B*num_heads, S_q, S_k]``) (모양이 틀리면 ValueError). Graded: the two mask
                shapes, with a message naming the mask and the sizes.
        """
        ### BEGIN SOLUTION
        # HINT: project and split_heads q, k, v; mask = combine_masks(attn_mask, key_padding_mask); run scaled_dot_product_attention (dropout only if self.training); merge_heads and out_proj.
        # 힌트: q, k, v 를 투영해 split_heads 하고 combine_masks 로 마스크를 합친 뒤 scaled_dot_product_attention(학습 모드에서만 드롭아웃), merge_heads, out_proj 순서로 계산하세요.
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            if tensor.dim() != 3 or tensor.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must have shape [B, S, d_model] with d_model={self.d_model}, "
                    f"got {name}.shape={tuple(tensor.shape)}"
                )
        batch, q_len, _ = query.shape
        k_len = key.shape[1]
        if key.shape[0] != batch or value.shape[0] != batch:
            raise ValueError(
                f"query, key and value must have the same batch size B, got query.shape="
                f"{tuple(query.shape)}, key.shape={tuple(key.shape)}, value.shape={tuple(value.shape)}"
            )
        if value.shape[1] != k_len:
            raise ValueError(
                f"key and value must have the same length S_k, "
                f"got key.shape={tuple(key.shape)}, value.shape={tuple(value.shape)}"
            )
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (batch, k_len):
            raise ValueError(
                f"key_padding_mask must have shape [B, S_k] = [{batch}, {k_len}], "
                f"got key_padding_mask.shape={tuple(key_padding_mask.shape)}"
            )
        heads_mask = None
        if attn_mask is not None:
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) == (batch * self.num_heads, q_len, k_len):
                heads_mask = attn_mask.reshape(batch, self.num_heads, q_len, k_len)
            elif tuple(attn_mask.shape) != (q_len, k_len):
                raise ValueError(
                    f"attn_mask must have shape [S_q, S_k] = [{q_len}, {k_len}] "
                    f"(or [B*num_heads, S_q, S_k] = [{batch * self.num_heads}, {q_len}, {k_len}]), "
                    f"got attn_mask.shape={tuple(attn_mask.shape)}"
                )
        if heads_mask is None:
            mask = combine_masks(attn_mask, key_padding_mask)
        else:
            padding = combine_masks(None, key_padding_mask)
            if padding is None:
                mask = heads_mask
            elif heads_mask.dtype == torch.bool and padding.dtype == torch.bool:
                mask = heads_mask | padding.to(heads_mask.device)
            else:
                float_dtype = heads_mask.dtype if heads_mask.is_floating_point() else padding.dtype
                additive = []
                for part in (heads_mask, padding.to(heads_mask.device)):
                    if part.dtype == torch.bool:
                        part = torch.zeros(part.shape, dtype=float_dtype, device=part.device).masked_fill(
                            part, float("-inf")
                        )
                    additive.append(part.to(float_dtype))
                mask = additive[0] + additive[1]
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=dropout_p)
        output = self.out_proj(merge_heads(heads))
        if not need_weights:
            return output, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return output, weights
        ### END SOLUTION
