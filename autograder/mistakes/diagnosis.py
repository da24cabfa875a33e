"""Student-side diagnosis: name a mistake from the public formulas alone.

The mistake catalog (:mod:`autograder.mistakes.catalog`) names mistakes by patching the reference
solutions, so it exists only in the instructor kit. Many mistakes, though, can be written
down from the public formulas and PyTorch's own modules: a sinusoidal table with sin and cos
swapped, attention without ``sqrt(d_k)``, a causal mask that also blocks the diagonal, heads
cut without a transpose, an encoder layer that is Pre-LN when ``norm_first=False`` asks for
Post-LN. A public test that knows them passes them to its check (``known_mistakes=`` of
:func:`autograder.checks.expectations.expect_equal` and the others): :data:`KnownMistakes`,
``{mistake id: callable returning the output that mistake gives on the test's inputs}``
(built by :mod:`autograder.checks.mistaken`). When the student's output fails the test,
:func:`name` returns the :class:`Known` mistake whose output it matches most closely, in both
editions of the kit.

The ids are the catalog's, so a mistake gets the same name in self-check and in grading; every
variant of :mod:`autograder.mistakes.families` is an entry, and :data:`FORBIDDEN` holds the forbidden
functions :mod:`autograder.checks.forbidden` names.
Nothing here reads ``solutions/`` or the catalog: this module ships in the student edition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from autograder.i18n import authored
from autograder.mistakes import families
from autograder.mistakes.comparison import Mismatch, compare, distance


@dataclass(frozen=True)
class Known:
    """A mistake (or a real but different convention) the public formulas reproduce.

    Offers the attributes :class:`autograder.checks.expectations.Mismatch` and the plugin read from a
    catalog mutant: ``id``, ``exercise``, ``convention`` and :meth:`hint`.
    """

    id: str
    exercise: str
    hint_en: str
    hint_ko: str
    convention: bool = False

    def hint(self) -> str:
        """The hint in the current language (:func:`autograder.i18n.authored`)."""
        return authored(self.hint_en, self.hint_ko)


def _k(id: str, exercise: str, en: str, ko: str, convention: bool = False) -> Known:
    return Known(id, exercise, en, ko, convention)


_ENTRIES = (
    # exercise 2: positional encoding
    _k("pe_sin_cos_swapped", "positional_encoding",
       "sin and cos are swapped: yours puts the cosine in the even columns; the rule is sin in the even columns 2i, cos in the odd columns 2i+1",
       "sin 과 cos 가 바뀌었습니다. 제출한 코드는 짝수 열에 cos 를 넣었습니다. 규칙은 짝수 열(2i)에 sin, 홀수 열(2i+1)에 cos 입니다"),
    _k("pe_halves_concatenated", "positional_encoding",
       "you put all sines in the first half and all cosines in the second (a real convention, e.g. "
       "tensor2tensor); this exercise follows the paper: sin and cos interleaved in columns 2i, 2i+1",
       "sin 을 앞 절반, cos 를 뒤 절반에 모았습니다 (tensor2tensor 등에서 쓰는 실제 방식). 이 과제는 논문처럼 "
       "2i 열에 sin, 2i+1 열에 cos 를 번갈아 넣습니다", convention=True),
    _k("pe_exponent_i_over_d", "positional_encoding",
       "the exponent is i/d_model instead of 2i/d_model: the frequencies fall off half as fast",
       "지수를 2i/d_model 이 아니라 i/d_model 로 썼습니다 (주파수가 절반 속도로 줄어듭니다)"),
    _k("pe_exponent_per_column", "positional_encoding",
       "every column j has its own exponent j/d_model, so the cosine of pair i uses (2i+1)/d_model: both "
       "columns 2i and 2i+1 must use the same frequency 1/10000^(2i/d_model)",
       "열 j 마다 지수 j/d_model 을 따로 써서 쌍 i 의 cos 이 (2i+1)/d_model 을 씁니다. 2i 열과 2i+1 열은 같은 "
       "주파수 1/10000^(2i/d_model) 을 써야 합니다"),
    _k("pe_integer_exponent", "positional_encoding",
       "the exponent 2i/d_model is computed in integer arithmetic, so it is 0 for every column and every "
       "frequency is 1: divide as floats",
       "지수 2i/d_model 을 정수 나눗셈으로 계산해 모든 열에서 0 이 되어 주파수가 모두 1 입니다. 실수 나눗셈을 쓰세요"),
    _k("pe_positions_from_one", "positional_encoding",
       "positions are counted from 1; the first row of the table is position 0 (sin 0 = 0, cos 0 = 1)",
       "위치를 1 부터 셌습니다. 표의 첫 행은 위치 0 입니다 (sin 0 = 0, cos 0 = 1)"),
    # exercise 3: masks
    _k("mask_padding_inverted", "masks",
       "the padding mask is inverted: True must mark the padding positions (token == pad_id)",
       "패딩 마스크가 반대입니다. True 는 패딩 위치(token == pad_id)를 표시해야 합니다"),
    _k("mask_causal_inverted", "masks",
       "the causal mask is inverted (True on and below the diagonal): True marks the blocked future "
       "positions j > i, as torch.ones(S, S).triu(1)",
       "인과 마스크가 반대입니다 (대각선과 그 아래가 True). True 는 막힌 미래 위치 j > i 를 표시합니다 "
       "(torch.ones(S, S).triu(1))"),
    _k("mask_causal_diagonal_masked", "masks",
       "the causal mask also blocks the diagonal (triu with diagonal=0): position i may attend to itself, "
       "use diagonal=1",
       "인과 마스크가 대각선까지 막습니다 (diagonal=0 인 triu). 위치 i 는 자기 자신을 볼 수 있으니 diagonal=1 을 쓰세요"),
    _k("mask_causal_transposed", "masks",
       "the causal mask is transposed (True below the diagonal): it must block the future, j > i",
       "인과 마스크가 전치되었습니다 (대각선 아래가 True). 미래 위치 j > i 를 막아야 합니다"),
    _k("mask_causal_float", "masks",
       "make_causal_mask returns a 0/1 number mask (torch.triu(torch.ones(S, S), 1) is float): the positions are "
       "right, but the kit's masks are bool, True = blocked, and a float mask is added to the scores instead of "
       "blocking them; build it with dtype=torch.bool",
       "make_causal_mask 가 0/1 숫자 마스크를 돌려줍니다 (torch.triu(torch.ones(S, S), 1) 은 float 입니다). 위치는 "
       "맞지만 이 키트의 마스크는 bool(True = 가려짐)이고, 실수 마스크는 점수를 막지 않고 점수에 더해집니다. "
       "dtype=torch.bool 로 만드세요"),
    _k("mask_softmax_polarity_inverted", "masks",
       "masked_softmax blocks the False positions: True in the mask means blocked",
       "masked_softmax 가 False 위치를 막았습니다. 마스크의 True 가 '막힘'입니다"),
    _k("mask_softmax_wrong_axis", "masks",
       "the softmax is taken over the wrong axis: each row (the last axis, the keys) must sum to 1",
       "softmax 를 잘못된 축으로 계산했습니다. 각 행(마지막 축, key)의 합이 1 이어야 합니다"),
    _k("mask_zero_fill", "masks",
       "blocked scores are set to 0 before the softmax, which still gives them weight: fill them with -inf "
       "(or the dtype's minimum)",
       "막힌 점수를 softmax 전에 0 으로 채워 여전히 가중치를 받습니다. -inf (또는 dtype 의 최솟값)로 채우세요"),
    _k("mask_padding_not_expanded", "masks",
       "combine_masks combines the key_padding_mask [B, S_k] with attn_mask [S_q, S_k] without giving it the head "
       "and query axes: make it [B, 1, 1, S_k] (key_padding_mask[:, None, None, :]) first",
       "combine_masks 가 key_padding_mask [B, S_k] 에 헤드 축과 query 축을 넣지 않고 attn_mask [S_q, S_k] 와 "
       "합쳤습니다. 먼저 [B, 1, 1, S_k] (key_padding_mask[:, None, None, :]) 로 바꾸세요"),
    # exercise 4: attention
    _k("attention_softmax_over_queries", "attention",
       "the softmax runs over the queries (dim=-2); each query's weights over the keys (dim=-1) must sum to 1",
       "softmax 를 query 축(dim=-2)으로 계산했습니다. 각 query 의 key 에 대한 가중치(dim=-1) 합이 1 이어야 합니다"),
    _k("attention_scaled_after_softmax", "attention",
       "the weights are divided by sqrt(d_k) after the softmax; scale the scores before it",
       "softmax 뒤에 가중치를 sqrt(d_k) 로 나누었습니다. softmax 전에 점수를 나누세요"),
    # exercise 5: multi-head attention
    _k("mha_split_without_transpose", "multi_head_attention",
       "the heads are cut with view/reshape straight to [B, H, S, D/H] without a transpose, which mixes "
       "positions into heads: reshape to [B, S, H, D/H] and swap axes 1 and 2 (and back in merge_heads)",
       "transpose 없이 view/reshape 로 바로 [B, H, S, D/H] 를 만들어 위치와 헤드가 섞였습니다. [B, S, H, D/H] 로 "
       "바꾼 뒤 1, 2 축을 바꾸세요 (merge_heads 에서는 반대로)"),
    _k("mha_split_only_without_transpose", "multi_head_attention",
       "split_heads reshapes straight to [B, H, S, D/H] without a transpose (merge_heads is right), which "
       "mixes positions into heads",
       "split_heads 가 transpose 없이 바로 [B, H, S, D/H] 로 reshape 해 위치와 헤드가 섞였습니다 (merge_heads 는 맞습니다)"),
    _k("mha_merge_without_transpose", "multi_head_attention",
       "merge_heads reshapes [B, H, S, d] to [B, S, H*d] without first swapping H and S back, which mixes "
       "positions",
       "merge_heads 에서 H 와 S 축을 다시 바꾸지 않고 [B, S, H*d] 로 reshape 해 위치가 섞였습니다"),
    _k("mha_scaled_by_sqrt_d_model", "multi_head_attention",
       "the scores are scaled by sqrt(d_model); each head must use its own width: sqrt(head_dim)",
       "점수를 sqrt(d_model) 로 나누었습니다. 각 헤드의 폭 sqrt(head_dim) 으로 나누어야 합니다"),
    _k("mha_no_out_proj", "multi_head_attention",
       "the output projection out_proj is not applied after merging the heads",
       "헤드를 합친 뒤 출력 투영 out_proj 를 적용하지 않았습니다"),
    _k("mha_relu_after_out_proj", "multi_head_attention",
       "a ReLU follows the output projection; Concat(head_1, ..., head_h) W_O is linear, with no activation",
       "출력 투영 뒤에 ReLU 를 적용했습니다. Concat(head_1, ..., head_h) W_O 는 활성화 없는 선형 변환입니다"),
    _k("mha_heads_summed", "multi_head_attention",
       "the returned weights are summed over the heads; average_attn_weights=True asks for their mean",
       "반환한 가중치를 헤드에 대해 더했습니다. average_attn_weights=True 이면 평균이어야 합니다"),
    _k("mha_fused_qkv", "multi_head_attention",
       "you used one fused projection for q, k and v (PyTorch's own in_proj layout, a real convention); this "
       "exercise asks for the named projections q_proj, k_proj, v_proj so weights can be loaded by name",
       "q, k, v 에 하나로 합친 투영을 썼습니다 (PyTorch 의 in_proj 방식, 실제로 쓰이는 방식). 이 과제는 가중치를 이름으로 "
       "불러올 수 있도록 q_proj, k_proj, v_proj 를 따로 두어야 합니다", convention=True),
    _k("mha_padded_queries_masked", "multi_head_attention",
       "in self-attention you also blocked the rows of padded queries (their weights are zero, their output "
       "out_proj.bias): a common choice, but this exercise computes every query row as nn.MultiheadAttention"
       " does and lets the key padding mask alone remove padded positions (what a padded row holds is ignored downstream)",
       "셀프 어텐션에서 패딩된 query 의 행도 가렸습니다 (가중치가 0, 출력이 out_proj.bias). 흔"
       "히 쓰는 선택이지만 이 과제는 nn.MultiheadAttention 처럼 모든 query 행을 계산하고, 패딩 위치는 key 패딩 마스크로만 제외합니다 (패딩된 행의 값은 뒤에서 쓰이지 않습니다)", convention=True),
    # exercise 6: feed-forward
    _k("ffn_relu_after_output", "feed_forward",
       "the ReLU is applied after linear2 instead of between linear1 and linear2",
       "ReLU 를 linear1 과 linear2 사이가 아니라 linear2 뒤에 적용했습니다"),
    _k("ffn_adds_residual", "feed_forward",
       "forward returns x + FFN(x); the residual connection belongs to the encoder/decoder layer",
       "forward 가 x + FFN(x) 를 반환합니다. 잔차 연결은 인코더/디코더 층의 몫입니다"),
    _k("ffn_ignores_d_ff", "feed_forward",
       "d_ff is not used: linear1 must map d_model to d_ff and linear2 d_ff back to d_model",
       "d_ff 를 쓰지 않았습니다. linear1 은 d_model 에서 d_ff 로, linear2 는 d_ff 에서 d_model 로 가야 합니다"),
    # exercise 1: embedding
    _k("embedding_no_scale", "embedding",
       "the embeddings are not multiplied by sqrt(d_model) (section 3.4 of Vaswani et al. 2017)",
       "임베딩에 sqrt(d_model) 을 곱하지 않았습니다 (Vaswani 외 2017, 3.4절)"),
    _k("embedding_inverse_scale", "embedding",
       "the embeddings are divided by sqrt(d_model); they should be multiplied by it",
       "임베딩을 sqrt(d_model) 로 나누었습니다. 곱해야 합니다"),
    _k("embedding_scale_d_model", "embedding",
       "the embeddings are multiplied by d_model instead of sqrt(d_model)",
       "임베딩에 sqrt(d_model) 이 아니라 d_model 을 곱했습니다"),
    # exercises 7 and 8: encoder and decoder layers
    _k("encoder_always_pre_ln", "encoder",
       "your encoder layer normalises before each sub-layer (Pre-LN, a real convention) although "
       "norm_first=False asks for the paper's Post-LN: x = norm(x + sublayer(x))",
       "인코더 층이 부분층 앞에서 정규화합니다 (Pre-LN, 실제로 쓰이는 방식). norm_first=False 이면 논문의 Post-LN "
       "(x = norm(x + sublayer(x)))이어야 합니다", convention=True),
    _k("encoder_always_post_ln", "encoder",
       "your encoder layer normalises after the residual addition (Post-LN, the paper's convention) although "
       "norm_first=True asks for Pre-LN: x = x + sublayer(norm(x))",
       "인코더 층이 잔차를 더한 뒤 정규화합니다 (Post-LN, 논문의 방식). norm_first=True 이면 Pre-LN "
       "(x = x + sublayer(norm(x)))이어야 합니다", convention=True),
    _k("decoder_always_pre_ln", "decoder",
       "your decoder layer normalises before each sub-layer (Pre-LN, a real convention) although "
       "norm_first=False asks for the paper's Post-LN: x = norm(x + sublayer(x))",
       "디코더 층이 부분층 앞에서 정규화합니다 (Pre-LN, 실제로 쓰이는 방식). norm_first=False 이면 논문의 Post-LN "
       "(x = norm(x + sublayer(x)))이어야 합니다", convention=True),
    _k("decoder_always_post_ln", "decoder",
       "your decoder layer normalises after the residual addition (Post-LN, the paper's convention) although "
       "norm_first=True asks for Pre-LN: x = x + sublayer(norm(x))",
       "디코더 층이 잔차를 더한 뒤 정규화합니다 (Post-LN, 논문의 방식). norm_first=True 이면 Pre-LN "
       "(x = x + sublayer(norm(x)))이어야 합니다", convention=True),
    # exercise 11: AutoEncoder
    _k("autoencoder_fixed_latent", "autoencoder",
       "the bottleneck has one fixed width whatever latent_dim is: z must be [B, latent_dim] (fc_enc with "
       "latent_dim outputs, fc_dec with latent_dim inputs)",
       "latent_dim 과 상관없이 병목의 폭이 고정되어 있습니다. z 는 [B, latent_dim] 이어야 합니다 (fc_enc 의 출력과 "
       "fc_dec 의 입력을 latent_dim 으로)"),
    # exercise 10: RoPE
    _k("rope_rotate_half", "rope",
       "you used the 'rotate half' layout (pairs x[i], x[i + head_dim/2], as in GPT-NeoX/LLaMA code), a real "
       "convention; this exercise uses RoFormer's interleaved pairs (x[2i], x[2i+1])",
       "'rotate half' 배치(x[i] 와 x[i + head_dim/2], GPT-NeoX/LLaMA 코드 방식)를 썼습니다. 실제로 쓰이는 방식이지만 "
       "이 과제는 RoFormer 의 교차 쌍 (x[2i], x[2i+1]) 을 씁니다", convention=True),
    _k("rope_clockwise", "rope",
       "you rotated the interleaved pairs clockwise (a sense some ports use); this exercise rotates "
       "counter-clockwise: (a, b) -> (a cos θ - b sin θ, a sin θ + b cos θ)",
       "교차 쌍을 시계 방향으로 회전했습니다 (일부 구현의 방식). 이 과제는 반시계 방향으로 돌립니다: "
       "(a, b) -> (a cos θ - b sin θ, a sin θ + b cos θ)", convention=True),
    _k("rope_rotate_half_clockwise", "rope",
       "you used the 'rotate half' layout and rotated clockwise, a real convention of some ports; this exercise "
       "uses RoFormer's interleaved pairs rotated counter-clockwise",
       "'rotate half' 배치로 시계 방향으로 회전했습니다 (일부 구현의 방식). 이 과제는 RoFormer 의 교차 쌍을 반시계 "
       "방향으로 돌립니다", convention=True),
    _k("rope_angles_sin_cos_swapped", "rope",
       "rope_angles returns (sin, cos); it must return (cos, sin)",
       "rope_angles 가 (sin, cos) 를 반환합니다. (cos, sin) 순서여야 합니다"),
    _k("rope_exponent_i_over_d", "rope",
       "the frequency exponent is i/head_dim instead of 2i/head_dim",
       "주파수 지수를 2i/head_dim 이 아니라 i/head_dim 으로 썼습니다"),
)

def _from_families() -> tuple[Known, ...]:
    """Every variant of :mod:`autograder.mistakes.families` (its id, exercise, hints, convention)."""
    return tuple(Known(v.id, v.exercise, v.en, v.ko, v.convention) for v in families.VARIANTS.values())


KNOWN: dict[str, Known] = {entry.id: entry for entry in _ENTRIES + _from_families()}

#: the forbidden functions, by the id :mod:`autograder.checks.forbidden` names (no exercise of their own)
FORBIDDEN: dict[str, Known] = {v.id: Known(v.id, v.exercise, v.en, v.ko) for v in families.FORBIDDEN}
if len(KNOWN) != len(_ENTRIES) + len(families.VARIANTS):   # a family variant written here twice
    raise ValueError("an id of mistakes.families is also an entry of diagnosis._ENTRIES")


def _holds(pattern: "When", got: Any) -> bool:
    try:
        return bool(pattern.test(got))
    except Exception:  # a student's output of an unexpected form is simply not this mistake
        return False


def lookup(mistake_id: str | None) -> Known | None:
    """The entry of ``mistake_id`` in :data:`KNOWN` or :data:`FORBIDDEN`, else None."""
    return KNOWN.get(mistake_id or "") or FORBIDDEN.get(mistake_id or "")


@dataclass(frozen=True)
class When:
    """A variant given by structure instead of by value: ``test(got)`` is True when the student's
    output shows the mistake (e.g. one ``[3 * d_model, d_model]`` projection, whatever its name).
    :func:`name` treats a True test as an exact match."""

    test: Callable[[Any], bool]


# ``{mistake id: callable giving the output of that mistake on the test's inputs, or a When}``
KnownMistakes = Mapping[str, Callable[[], Any] | When]


def name(got: Any, variants: KnownMistakes, *, atol: float, rtol: float,
         valid=None) -> Known | None:
    """The known mistake whose output (``variants[id]()``) the student's ``got`` matches.

    A variant matches when :func:`autograder.mistakes.comparison.compare` accepts ``got`` against it with
    the test's tolerances (dtype not checked, NaN equal to NaN), or, for a :class:`When`, when
    its test accepts ``got``; of several, the closest by :func:`autograder.mistakes.comparison.distance`
    wins (the first on ties). A variant that raises is skipped. None when nothing matches.

    Raises:
        KeyError: a variant id that :data:`KNOWN` lacks (a suite bug, caught by the kit's tests).
    """
    best, best_dist = None, math.inf
    for mistake_id, make in variants.items():
        known = KNOWN[mistake_id]
        if isinstance(make, When):
            if (best is None or best_dist > 0) and _holds(make, got):
                best, best_dist = known, 0.0
            continue
        try:
            out = make()
        except Exception:  # a variant that cannot be built for these inputs
            continue
        try:
            compare(got, out, what="", atol=atol, rtol=rtol, valid=valid, check_dtype=False, equal_nan=True)
        except Mismatch:
            continue
        dist = distance(got, out, valid)
        if best is None or dist < best_dist:
            best, best_dist = known, dist
    return best
