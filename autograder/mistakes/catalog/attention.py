"""Known mistakes of exercise 4, ``attention.py`` (see :mod:`autograder.mistakes.catalog`).

The fully-blocked-row mutants here are for a softmax written inline instead of
``masks.masked_softmax``; on ties the exercise's own mutant is named.
"""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_SCORES = "scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)"
_WEIGHTS = "weights = masked_softmax(scores, mask, dim=-1)"

MUTANTS = catalog.generated("scale", families.ATTENTION_SCALE, lambda v: (
    (_SCORES, "scores = torch.matmul(query, key.transpose(-2, -1))" + v.code),))
MUTANTS += catalog.generated("mask", families.ATTENTION_MASK, lambda v: ((_WEIGHTS, v.code),))
MUTANTS += [
    Mutant(
        id="attention_softmax_over_queries",
        exercise="attention",
        hint_en="the softmax runs over the query axis (-2); each query's weights over the keys (last axis) must "
                "sum to 1",
        hint_ko="softmax 를 query 축(-2)으로 계산했습니다. 각 query 의 key 에 대한 가중치(마지막 축)의 합이 1 이어야 합니다",
        replace=((_WEIGHTS, "weights = masked_softmax(scores, mask, dim=-2)"),),
    ),
    Mutant(
        id="attention_mask_ignored",
        exercise="attention",
        hint_en="the mask is not applied: blocked keys still get attention weight",
        hint_ko="마스크를 적용하지 않아 가려진 key 도 가중치를 받습니다",
        replace=((_WEIGHTS, "weights = masked_softmax(scores, None, dim=-1)"),),
    ),
    Mutant(
        id="attention_fully_masked_nan",
        exercise="attention",
        convention=True,
        hint_en="a query whose keys are all blocked gives NaN (softmax over only -inf, what PyTorch itself gives, a "
                "real convention); the kit's rule is zero weights and a zero output there (masks.masked_softmax does "
                "this)",
        hint_ko="모든 key 가 가려진 query 에서 NaN 이 나옵니다 (PyTorch 자체가 내는 값, 실제로 쓰이는 방식). 이 키트의 "
                "규칙은 그런 행의 가중치와 출력이 0 인 것입니다 (masks.masked_softmax 를 쓰세요)",
        replace=((_WEIGHTS, 'weights = torch.softmax(scores if mask is None else scores.masked_fill(mask, '
                            'float("-inf")), dim=-1)'),),
    ),
    Mutant(
        id="attention_fully_masked_uniform",
        exercise="attention",
        convention=True,
        hint_en="a query whose keys are all blocked averages all values (uniform weights from a finite fill such "
                "as -1e9, the Annotated Transformer's convention); the kit's rule is zero weights and a zero output "
                "there",
        hint_ko="모든 key 가 가려진 query 가 모든 value 의 평균을 냅니다 (-1e9 같은 유한한 값으로 채운 균등 가중치, "
                "Annotated Transformer 의 방식). 이 키트의 규칙은 그런 행의 가중치와 출력이 0 인 것입니다",
        replace=((_WEIGHTS, "weights = torch.softmax(scores if mask is None else scores.masked_fill(mask, -1e9), "
                            "dim=-1)"),),
    ),
    Mutant(
        id="attention_dropout_ignored",
        exercise="attention",
        hint_en="dropout_p is ignored: with dropout_p > 0 some weights must be zeroed and the others scaled by "
                "1/(1 - dropout_p)",
        hint_ko="dropout_p 를 무시했습니다. dropout_p > 0 이면 일부 가중치는 0 이 되고 나머지는 1/(1 - dropout_p) "
                "배가 되어야 합니다",
        replace=(("    if dropout_p > 0.0:\n        weights = F.dropout(weights, p=dropout_p, training=True)\n", ""),),
    ),
    Mutant(
        id="attention_weights_before_dropout",
        exercise="attention",
        hint_en="the returned weights are the ones before dropout; return the weights actually used for the "
                "output (after dropout, as PyTorch does)",
        hint_ko="드롭아웃 전 가중치를 반환했습니다. 출력에 실제로 쓴 (드롭아웃 후) 가중치를 반환하세요",
        replace=(("weights = F.dropout(weights, p=dropout_p, training=True)\n    return torch.matmul(weights, value), weights",
                  "dropped = F.dropout(weights, p=dropout_p, training=True)\n"
                  "        return torch.matmul(dropped, value), weights\n"
                  "    return torch.matmul(weights, value), weights"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
MUTANTS += [
    # Source: FrancescoSaverioZuppichini/ViT#2 and #6 (softmax(energy) * scaling instead of
    # softmax(energy * scaling)).
    Mutant(
        id="attention_scaled_after_softmax",
        exercise="attention",
        hint_en="the weights are divided by sqrt(d_k) after the softmax; scale the scores before it: "
                "softmax(Q K^T / sqrt(d_k))",
        hint_ko="softmax 뒤에 가중치를 sqrt(d_k) 로 나누었습니다. softmax 전에 점수를 나누세요: softmax(Q K^T / sqrt(d_k))",
        replace=((_SCORES, "scores = torch.matmul(query, key.transpose(-2, -1))"),
                 (_WEIGHTS, "weights = masked_softmax(scores, mask, dim=-1) / math.sqrt(d_k)")),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("scaled_dot_product_attention",)

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("attention_uniform", "attention", "uniform weights over every key (scores and mask ignored)", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.full((*query.shape[:-1], key.shape[-2]), 1.0 / key.shape[-2], dtype=query.dtype)
    return torch.matmul(weights, value), weights
"""),
    Degenerate("attention_returns_query", "attention", "the identity: the query comes back, weights one-hot", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.zeros(*query.shape[:-1], key.shape[-2], dtype=query.dtype)
    weights[..., 0] = 1.0
    return query.clone(), weights
"""),
    Degenerate("attention_uniform_visible", "attention", "uniform weights over the visible keys (scores never used)", """
_reference_softmax = masked_softmax
def masked_softmax(scores, mask, dim=-1):
    return _reference_softmax(torch.zeros_like(scores), mask, dim)
"""),
)
