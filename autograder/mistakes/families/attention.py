"""The attention scores' scale, where and how masks are applied, and the forbidden fused attention
(see :mod:`autograder.mistakes.families`)."""

from __future__ import annotations

import math

from autograder.mistakes.families.variant import Variant


# -- the scale of the attention scores (formula: (d_k, S_q, S_k, heads) -> the factor on Q K^T) -----
# ``code`` for attention: the expression that replaces ``/ math.sqrt(d_k)`` (names: d_k, query, key)
ATTENTION_SCALE = (
    Variant("attention_no_scaling", "attention",
            "the scores are not divided by sqrt(d_k) (equation 1 of Vaswani et al. 2017)",
            "점수를 sqrt(d_k) 로 나누지 않았습니다 (Vaswani 외 2017 식 1)",
            code="", formula=lambda d_k, s_q, s_k, h: 1.0),
    Variant("attention_scaled_by_d_k", "attention",
            "the scores are divided by d_k instead of sqrt(d_k)",
            "점수를 sqrt(d_k) 가 아니라 d_k 로 나누었습니다",
            code=" / d_k", formula=lambda d_k, s_q, s_k, h: 1 / d_k),
    Variant("attention_scale_multiplied", "attention",
            "the scores are multiplied by sqrt(d_k); they should be divided by it",
            "점수에 sqrt(d_k) 를 곱했습니다. 나누어야 합니다",
            code=" * math.sqrt(d_k)", formula=lambda d_k, s_q, s_k, h: math.sqrt(d_k)),
    # Source: cneuralnetwork/solving-ml-papers#1 (the square root of the wrong dimension).
    Variant("attention_scaled_by_key_length", "attention",
            "the scores are divided by the square root of the number of keys S_k; divide by sqrt(d_k), the width of "
            "the queries and keys",
            "점수를 key 개수 S_k 의 제곱근으로 나누었습니다. query/key 의 폭 d_k 의 제곱근으로 나누어야 합니다",
            code=" / math.sqrt(key.shape[-2])", formula=lambda d_k, s_q, s_k, h: 1 / math.sqrt(s_k)),
    Variant("attention_scaled_by_query_length", "attention",
            "the scores are divided by the square root of the number of tokens (the query length S_q, "
            "x.size(1) of a [B, S, d] input); divide by sqrt(d_k), the width of the queries and keys",
            "점수를 토큰 개수(query 길이 S_q, [B, S, d] 입력의 x.size(1))의 제곱근으로 나누었습니다. query/key 의 폭 "
            "d_k 의 제곱근으로 나누어야 합니다",
            code=" / math.sqrt(query.shape[-2])", formula=lambda d_k, s_q, s_k, h: 1 / math.sqrt(s_q)),
)

# ``code`` for multi-head attention: the factor written after the scores of its own inline attention
# (names: self.head_dim, self.num_heads, self.d_model, q, k)
MHA_SCALE = (
    Variant("mha_no_scaling", "multi_head_attention",
            "the scores of each head are not divided by sqrt(head_dim) (equation 1 of Vaswani et al. 2017)",
            "각 헤드의 점수를 sqrt(head_dim) 으로 나누지 않았습니다 (Vaswani 외 2017 식 1)",
            code="", formula=lambda hd, d, h, s_q, s_k: 1.0),
    Variant("mha_scaled_by_head_dim", "multi_head_attention",
            "the scores are divided by head_dim instead of sqrt(head_dim)",
            "점수를 sqrt(head_dim) 이 아니라 head_dim 으로 나누었습니다",
            code=" / self.head_dim", formula=lambda hd, d, h, s_q, s_k: 1 / hd),
    Variant("mha_scale_multiplied", "multi_head_attention",
            "the scores are multiplied by sqrt(head_dim); they should be divided by it",
            "점수에 sqrt(head_dim) 을 곱했습니다. 나누어야 합니다",
            code=" * self.head_dim ** 0.5", formula=lambda hd, d, h, s_q, s_k: math.sqrt(hd)),
    Variant("mha_scaled_by_sequence_length", "multi_head_attention",
            "the scores are divided by the square root of the number of tokens (the sequence length, e.g. "
            "keys.shape[1] of a [B, T, d] tensor) instead of sqrt(head_dim), the width of each head",
            "점수를 토큰 개수(시퀀스 길이, 예: [B, T, d] 텐서의 keys.shape[1])의 제곱근으로 나누었습니다. 각 헤드의 폭 "
            "sqrt(head_dim) 으로 나누어야 합니다",
            code=" / k.shape[-2] ** 0.5", formula=lambda hd, d, h, s_q, s_k: 1 / math.sqrt(s_k)),
    Variant("mha_scaled_by_num_heads", "multi_head_attention",
            "the scores are divided by sqrt(num_heads) (k.size(1) after the heads were split) instead of "
            "sqrt(head_dim), the width of each head",
            "점수를 sqrt(head_dim) 대신 sqrt(num_heads)(헤드를 나눈 뒤의 k.size(1))로 나누었습니다. 각 헤드의 폭 "
            "sqrt(head_dim) 으로 나누어야 합니다",
            code=" / self.num_heads ** 0.5", formula=lambda hd, d, h, s_q, s_k: 1 / math.sqrt(h)),
)


# -- where a mask is applied, and with which polarity (attention: code replaces its weights line) ----
_KEEP_EN = ("(True = keep, the convention of the Annotated Transformer's and many tutorials' masks, and of "
            "F.scaled_dot_product_attention); in this kit True = blocked")
_KEEP_KO = ("(True = 남김, Annotated Transformer 와 여러 튜토리얼의 마스크, 그리고 F.scaled_dot_product_attention 의 "
            "규칙). 이 키트에서 True = 가려짐입니다")


def _softmax_filled(scores, mask, fill):
    return scores.masked_fill(mask, fill).softmax(dim=-1)


ATTENTION_MASK = (
    Variant("attention_mask_inverted_finite_fill", "attention",
            "the mask is applied inverted with a finite fill, scores.masked_fill(mask == 0, -1e9) " + _KEEP_EN +
            ": fill the True positions (masks.masked_softmax does)",
            "마스크를 반대로, 유한한 값으로 채웠습니다 (scores.masked_fill(mask == 0, -1e9)) " + _KEEP_KO +
            ". True 위치를 채우세요 (masks.masked_softmax 가 그렇게 합니다)",
            code="weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, -1e9), dim=-1)",
            formula=lambda scores, mask: _softmax_filled(scores, ~mask, -1e9)),
    Variant("attention_mask_inverted_neg_inf", "attention",
            "the mask is applied inverted with -inf, scores.masked_fill(mask == 0, float('-inf')) " + _KEEP_EN +
            ": rows with no blocked key become NaN",
            "마스크를 반대로, -inf 로 채웠습니다 (scores.masked_fill(mask == 0, float('-inf'))) " + _KEEP_KO +
            ". 가려진 key 가 없는 행이 NaN 이 됩니다",
            code='weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)',
            formula=lambda scores, mask: _softmax_filled(scores, ~mask, float("-inf"))),
    Variant("attention_mask_inverted", "attention",
            "the mask is applied inverted: your attention blocks the keys where mask is False " + _KEEP_EN,
            "마스크를 반대로 적용했습니다. mask 가 False 인 key 를 막습니다 " + _KEEP_KO,
            code="weights = masked_softmax(scores, None if mask is None else ~mask, dim=-1)",
            formula=lambda scores, mask: _masked(scores, ~mask)),
    Variant("attention_mask_added_as_float", "attention",
            "the bool mask is added to the scores as a 0/1 number (scores + mask.float()), which gives blocked keys a "
            "bonus of 1 instead of blocking them: fill them with the dtype's minimum (masks.masked_softmax)",
            "bool 마스크를 0/1 숫자로 점수에 더했습니다 (scores + mask.float()). 가려진 key 가 막히지 않고 1 을 더 "
            "받습니다. dtype 의 최솟값으로 채우세요 (masks.masked_softmax)",
            code="weights = torch.softmax(scores if mask is None else scores + mask.to(scores.dtype), dim=-1)",
            formula=lambda scores, mask: (scores + mask.to(scores.dtype)).softmax(dim=-1)),
    Variant("attention_mask_after_softmax", "attention",
            "the mask is applied after the softmax (blocked weights set to 0) without renormalising, so the weights "
            "of a row no longer sum to 1: block the scores before the softmax",
            "softmax 뒤에 마스크를 적용해(가려진 가중치를 0 으로) 다시 정규화하지 않아 각 행의 가중치 합이 1 이 아닙니다. "
            "softmax 전에 점수를 막으세요",
            code="weights = torch.softmax(scores, dim=-1)\n"
                 "    weights = weights if mask is None else weights.masked_fill(mask, 0.0)",
            formula=lambda scores, mask: scores.softmax(dim=-1).masked_fill(mask, 0.0)),
    Variant("attention_mask_zero_fill", "attention",
            "blocked scores are set to 0 before the softmax (masked_fill(mask, 0)), which still gives them weight: "
            "fill them with the dtype's minimum (masks.masked_softmax)",
            "막힌 점수를 softmax 전에 0 으로 채워(masked_fill(mask, 0)) 여전히 가중치를 받습니다. dtype 의 최솟값으로 "
            "채우세요 (masks.masked_softmax)",
            code="weights = torch.softmax(scores if mask is None else scores.masked_fill(mask, 0.0), dim=-1)",
            formula=lambda scores, mask: _softmax_filled(scores, mask, 0.0)),
)


def _masked(scores, mask):
    """The contract's masked softmax: blocked positions filled with the dtype's minimum, fully blocked
    rows all zero (exercises/README.md 3)."""
    import torch   # here: importing this module imports no torch (the reports read the hints without it)

    mask = torch.broadcast_to(mask, scores.shape)
    weights = torch.softmax(scores.masked_fill(mask, torch.finfo(scores.dtype).min), dim=-1)
    return weights.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)


# multi-head attention written with its own attention (code: the line that applies ``mask`` to
# ``scores``; formula: (scores, mask) -> weights, mask broadcast to the scores)
MHA_MASK = (
    Variant("mha_masks_inverted_finite_fill", "multi_head_attention",
            "the masks are applied inverted with a finite fill (scores.masked_fill(mask == 0, -1e9)) " + _KEEP_EN +
            ": fill the positions where the mask is True",
            "마스크를 반대로, 유한한 값으로 채웠습니다 (scores.masked_fill(mask == 0, -1e9)) " + _KEEP_KO +
            ". 마스크가 True 인 위치를 채우세요",
            code="scores = scores.masked_fill(~mask, -1e9)",
            formula=lambda scores, mask: _softmax_filled(scores, ~mask, -1e9)),
    Variant("mha_masks_inverted_neg_inf", "multi_head_attention",
            "the masks are applied inverted with -inf (scores.masked_fill(mask == 0, float('-inf'))) " + _KEEP_EN +
            ": rows with no blocked key become NaN",
            "마스크를 반대로, -inf 로 채웠습니다 (scores.masked_fill(mask == 0, float('-inf'))) " + _KEEP_KO +
            ". 가려진 key 가 없는 행이 NaN 이 됩니다",
            code='scores = scores.masked_fill(~mask, float("-inf"))',
            formula=lambda scores, mask: _softmax_filled(scores, ~mask, float("-inf"))),
    Variant("mha_mask_not_applied", "multi_head_attention",
            "the mask is not applied: blocked keys still get attention weight (a mask built and never applied, as "
            "when scores.masked_fill(...) returns a new tensor that is dropped: assign it, scores = "
            "scores.masked_fill(mask, ...), or use masked_fill_)",
            "마스크가 적용되지 않아 가려진 key 도 가중치를 받습니다 (만들기만 하고 적용하지 않은 마스크, 예를 들어 "
            "scores.masked_fill(...) 이 돌려준 새 텐서를 버린 경우: scores = scores.masked_fill(mask, ...) 로 대입하거나 "
            "masked_fill_ 을 쓰세요)",
            code='scores.masked_fill(mask, float("-inf"))',
            formula=lambda scores, mask: scores.softmax(dim=-1)),
)


# -- the functions the contract forbids (autograder.checks.forbidden), named by what the code called ------
_CONTRACT_EN = ("exercises/README.md forbids it: \"Students may not use nn.MultiheadAttention, "
                "F.multi_head_attention_forward, F.scaled_dot_product_attention or any nn.Transformer* class in any "
                "exercise\"")
_CONTRACT_KO = ("exercises/README.md 가 금지합니다: \"nn.MultiheadAttention, F.multi_head_attention_forward, "
                "F.scaled_dot_product_attention, nn.Transformer* 클래스는 어떤 과제에서도 쓸 수 없습니다\"")

FORBIDDEN_MASK = (
    Variant("mha_sdpa_mask_inverted", "multi_head_attention",
            "you called F.scaled_dot_product_attention (" + _CONTRACT_EN + ") and passed it the kit's boolean mask "
            "(True = blocked) unchanged: SDPA reads True as 'may attend', so every mask acts inverted",
            "F.scaled_dot_product_attention 를 호출했고(" + _CONTRACT_KO + ") 이 키트의 bool 마스크(True = 가려짐)를 "
            "그대로 넘겼습니다. SDPA 는 True 를 '볼 수 있음'으로 읽으므로 모든 마스크가 반대로 작용합니다"),
)

#: a forbidden function used (named by the call the child saw; no catalog mutant: see autograder.checks.forbidden)
FORBIDDEN = (
    Variant("forbidden_sdpa", "",
            "your code calls F.scaled_dot_product_attention; " + _CONTRACT_EN + ". Compute softmax(Q K^T / "
            "sqrt(d_k)) V yourself (the attention exercise), with the kit's masks (True = blocked)",
            "코드가 F.scaled_dot_product_attention 를 호출합니다. " + _CONTRACT_KO + ". softmax(Q K^T / sqrt(d_k)) V "
            "를 직접 계산하세요 (attention 과제, 이 키트의 마스크 True = 가려짐)"),
    Variant("forbidden_nn_multihead_attention", "",
            "your code uses nn.MultiheadAttention (or F.multi_head_attention_forward); " + _CONTRACT_EN +
            ". Build q_proj, k_proj, v_proj and out_proj and the heads yourself (the multi-head attention exercise)",
            "코드가 nn.MultiheadAttention(또는 F.multi_head_attention_forward)을 씁니다. " + _CONTRACT_KO +
            ". q_proj, k_proj, v_proj, out_proj 와 헤드를 직접 만드세요 (multi-head attention 과제)"),
    Variant("forbidden_nn_transformer", "",
            "your code uses an nn.Transformer* class; " + _CONTRACT_EN + ". Build the layers from your own "
            "MultiHeadAttention, PositionwiseFeedForward and nn.LayerNorm",
            "코드가 nn.Transformer* 클래스를 씁니다. " + _CONTRACT_KO + ". 직접 만든 MultiHeadAttention, "
            "PositionwiseFeedForward, nn.LayerNorm 으로 층을 만드세요"),
)
