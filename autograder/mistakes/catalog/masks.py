"""Known mistakes of exercise 3, ``masks.py`` (see :mod:`autograder.mistakes.catalog`).

The fill value of blocked scores (``-inf``, ``-1e9``, ``finfo.min``) is free; what a
fully blocked row becomes (NaN, uniform weights) is a mistake of its own.
"""

from autograder.mistakes.catalog import Degenerate, Mutant

_FILL = "filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)"
_SOFTMAX = "return torch.softmax(filled, dim=dim).masked_fill(blocked, 0.0)"
_TRIU = "torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)"

MUTANTS = [
    Mutant(
        id="mask_padding_inverted",
        exercise="masks",
        hint_en="the padding mask is inverted: it must be True at padding tokens (True = blocked, "
                "nn.MultiheadAttention's convention)",
        hint_ko="패딩 마스크가 반대입니다. 패딩 토큰에서 True 여야 합니다 (True = 가려짐)",
        replace=(("return token_ids == pad_id", "return token_ids != pad_id"),),
    ),
    Mutant(
        id="mask_causal_inverted",
        exercise="masks",
        hint_en="the causal mask is inverted: True must mark the future positions j > i that are blocked, "
                "not the ones that may be seen (F.scaled_dot_product_attention's convention is the opposite one)",
        hint_ko="인과 마스크가 반대입니다. True 는 볼 수 없는 미래 위치(j > i)여야 합니다 "
                "(F.scaled_dot_product_attention 은 반대 규칙을 씁니다)",
        replace=((_TRIU, "torch.tril(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=0)"),),
    ),
    Mutant(
        id="mask_causal_transposed",
        exercise="masks",
        hint_en="the causal mask is transposed: it blocks the past (True below the diagonal, torch.tril with "
                "diagonal=-1) instead of the future; True must be strictly above the diagonal (torch.triu, diagonal=1)",
        hint_ko="인과 마스크가 전치되었습니다. 미래가 아니라 과거(대각선 아래, torch.tril diagonal=-1)를 가립니다. "
                "True 는 대각선 바로 위쪽이어야 합니다 (torch.triu, diagonal=1)",
        replace=((_TRIU, "torch.tril(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=-1)"),),
    ),
    Mutant(
        id="mask_causal_diagonal_masked",
        exercise="masks",
        hint_en="the causal mask also blocks the diagonal: position i must be able to see itself (torch.triu with "
                "diagonal=1)",
        hint_ko="인과 마스크가 대각선까지 가립니다. 위치 i 는 자기 자신을 볼 수 있어야 합니다 (torch.triu, diagonal=1)",
        replace=((_TRIU, "torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=0)"),),
    ),
    Mutant(
        id="mask_softmax_polarity_inverted",
        exercise="masks",
        hint_en="masked_softmax keeps the True positions and blocks the False ones; in this kit True = blocked "
                "(the opposite of F.scaled_dot_product_attention's boolean masks)",
        hint_ko="masked_softmax 가 True 위치를 남기고 False 를 가립니다. 이 키트에서 True = 가려짐입니다",
        replace=(("blocked = mask\n", "blocked = ~mask\n"),),
    ),
    Mutant(
        id="mask_zero_fill",
        exercise="masks",
        hint_en="blocked scores are set to 0 instead of -inf (or a very negative number), so blocked keys still "
                "get weight exp(0)",
        hint_ko="가려진 점수를 -inf(또는 매우 작은 수) 대신 0 으로 채워 가려진 key 도 가중치를 받습니다",
        replace=((_FILL, "filled = scores.masked_fill(blocked, 0.0)"),
                 (_SOFTMAX, "return torch.softmax(filled, dim=dim)")),
    ),
    Mutant(
        id="mask_fully_masked_nan",
        exercise="masks",
        convention=True,
        hint_en="a row whose keys are all blocked gives NaN (softmax over only -inf, what PyTorch itself gives, a "
                "real convention); the kit's rule is all-zero weights there: zero the blocked positions after the "
                "softmax",
        hint_ko="모든 key 가 가려진 행에서 NaN 이 나옵니다 (-inf 만 있는 softmax, PyTorch 자체가 내는 값, 실제로 쓰이는 "
                "방식). 이 키트의 규칙은 그런 행의 가중치가 모두 0 인 것입니다: softmax 뒤에 가려진 위치를 0 으로 만드세요",
        replace=((_FILL, 'filled = scores.masked_fill(blocked, float("-inf"))'),
                 (_SOFTMAX, "return torch.softmax(filled, dim=dim)")),
    ),
    Mutant(
        id="mask_fully_masked_uniform",
        exercise="masks",
        convention=True,
        hint_en="a row whose keys are all blocked gets uniform weights 1/S_k (a finite fill such as -1e9 without "
                "zeroing afterwards, the Annotated Transformer's convention); the kit's rule is all-zero weights there",
        hint_ko="모든 key 가 가려진 행이 균등 가중치 1/S_k 를 받습니다 (-1e9 같은 유한한 값으로 채우고 0 으로 "
                "만들지 않음, Annotated Transformer 의 방식). 이 키트의 규칙은 그런 행의 가중치가 모두 0 인 것입니다",
        replace=((_SOFTMAX, "return torch.softmax(filled, dim=dim)"),),
    ),
    Mutant(
        id="mask_softmax_wrong_axis",
        exercise="masks",
        hint_en="the softmax runs over the wrong axis: normalise over dim (the keys, the last axis by default)",
        hint_ko="softmax 를 잘못된 축으로 계산했습니다. dim 축(기본값은 마지막 축, key 축)으로 정규화하세요",
        replace=((_SOFTMAX, "return torch.softmax(filled, dim=-2).masked_fill(blocked, 0.0)"),),
    ),
    Mutant(
        id="mask_queries_masked",
        exercise="masks",
        hint_en="the key-padding mask is laid along the query axis ([B, 1, S, 1]); it blocks keys, so it must be "
                "[B, 1, 1, S_k]",
        hint_ko="키 패딩 마스크를 query 축([B, 1, S, 1])에 놓았습니다. key 를 가리므로 [B, 1, 1, S_k] 여야 합니다",
        replace=(("return key_padding_mask[:, None, None, :]", "return key_padding_mask[:, None, :, None]"),
                 ("k = key_padding_mask[:, None, None, :].to(a.device)",
                  "k = key_padding_mask[:, None, :, None].to(a.device)")),
    ),
    Mutant(
        id="mask_combined_with_and",
        exercise="masks",
        hint_en="the two masks are combined with AND; a key is blocked when either mask blocks it (OR)",
        hint_ko="두 마스크를 AND 로 합쳤습니다. 둘 중 하나라도 가리면 가려져야 합니다 (OR)",
        replace=(("return a | k", "return a & k"),),
    ),
    # Source: a real student submission; Tensor.masked_fill is out of place and returns a new
    # tensor (https://pytorch.org/docs/stable/generated/torch.Tensor.masked_fill.html), the
    # in-place one is masked_fill_. Calling it without using the result leaves the mask unapplied.
    Mutant(
        id="mask_fill_result_discarded",
        exercise="masks",
        hint_en="the result of masked_fill is thrown away: Tensor.masked_fill returns a new tensor (masked_fill_ "
                "works in place), so the mask is never applied and blocked keys still get weight",
        hint_ko="masked_fill 의 결과를 버렸습니다. Tensor.masked_fill 은 새 텐서를 돌려주므로 (제자리 연산은 "
                "masked_fill_) 마스크가 적용되지 않고 가려진 key 도 가중치를 받습니다",
        replace=((_FILL, "scores.masked_fill(blocked, torch.finfo(scores.dtype).min)\n    filled = scores"),
                 (_SOFTMAX, "return torch.softmax(filled, dim=dim)")),
    ),
]

# Mistakes reported in public code; each entry names its source.
MUTANTS += [
    # Source: graykode/nlp-tutorial#22 ("Padding Should be Zero": code that assumes the pad id is 0).
    Mutant(
        id="mask_padding_assumes_zero",
        exercise="masks",
        hint_en="the padding mask compares with 0 instead of the pad_id argument",
        hint_ko="패딩 마스크가 pad_id 인자가 아니라 0 과 비교합니다",
        replace=(("return token_ids == pad_id", "return token_ids == 0"),),
    ),
]
MUTANTS += [
    # Source: a real submission: combine_masks ORs the [B, S_k] padding mask straight into the
    # [S_q, S_k] attention mask, which raises a broadcasting RuntimeError whenever B != S_q (named from
    # that exception, autograder.sandbox.call_errors) and blocks the wrong rows when B == S_q.
    Mutant(
        id="mask_padding_not_expanded",
        exercise="masks",
        hint_en="combine_masks combines the key_padding_mask [B, S_k] with attn_mask [S_q, S_k] without giving it "
                "the head and query axes, so B lines up with S_q: make it [B, 1, 1, S_k] "
                "(key_padding_mask[:, None, None, :]) first",
        hint_ko="combine_masks 가 key_padding_mask [B, S_k] 에 헤드 축과 query 축을 넣지 않고 attn_mask [S_q, S_k] "
                "와 합쳐 B 가 S_q 축에 맞춰졌습니다. 먼저 [B, 1, 1, S_k] (key_padding_mask[:, None, None, :]) 로 "
                "바꾸세요",
        replace=(("k = key_padding_mask[:, None, None, :].to(a.device)", "k = key_padding_mask.to(a.device)"),),
    ),
]
MUTANTS += [
    # Source: a real submission (a float causal mask, torch.triu(torch.ones(T, T), 1), was named only as a dtype).
    Mutant(
        id="mask_causal_float",
        exercise="masks",
        hint_en="make_causal_mask returns a 0/1 number mask (torch.triu(torch.ones(S, S), 1) is float): the positions "
                "are right, but the kit's masks are bool, True = blocked, and a float mask is added to the scores "
                "instead of blocking them; build it with dtype=torch.bool",
        hint_ko="make_causal_mask 가 0/1 숫자 마스크를 돌려줍니다 (torch.triu(torch.ones(S, S), 1) 은 float 입니다). "
                "위치는 맞지만 이 키트의 마스크는 bool(True = 가려짐)이고, 실수 마스크는 점수를 막지 않고 점수에 "
                "더해집니다. dtype=torch.bool 로 만드세요",
        replace=((_TRIU, "torch.triu(torch.ones(size, size, device=device), diagonal=1)"),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("make_padding_mask", "make_causal_mask", "masked_softmax", "combine_masks")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("masks_block_nothing", "masks", "masks that block nothing, softmax without a mask", """
def make_padding_mask(token_ids, pad_id=0):
    return torch.zeros(token_ids.shape, dtype=torch.bool, device=token_ids.device)
def make_causal_mask(size, device=None):
    return torch.zeros(size, size, dtype=torch.bool, device=device)
def masked_softmax(scores, mask, dim=-1):
    return torch.softmax(scores, dim=dim)
"""),
)
