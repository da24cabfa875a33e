"""The feed-forward's activation and the layout and bias of linear layers
(see :mod:`autograder.mistakes.families`)."""

from __future__ import annotations

import math

from autograder.mistakes.families.variant import Variant

# The formulas use tensor methods only: importing this module imports no torch (the reports read the
# hints without it).


def _gelu_tanh(x, *, half=0.5, root=math.sqrt(2 / math.pi), power=3):
    return half * x * (1 + (root * (x + 0.044715 * x ** power)).tanh())


def _gelu(x):
    return 0.5 * x * (1 + (x / math.sqrt(2)).erf())


# -- the feed-forward's activation (code: an expression of the pre-activation "{x}") ----------------
_RELU_EN = "this exercise follows the paper and nn.TransformerEncoderLayer's default: ReLU, max(0, x W1 + b1)"
_RELU_KO = "이 과제는 논문과 nn.TransformerEncoderLayer 기본값대로 ReLU, max(0, x W1 + b1) 을 씁니다"

FFN_ACTIVATION = (
    Variant("ffn_no_relu", "feed_forward",
            "there is no ReLU between the two linear layers (FFN(x) = max(0, x W1 + b1) W2 + b2)",
            "두 선형층 사이에 ReLU 가 없습니다 (FFN(x) = max(0, x W1 + b1) W2 + b2)",
            code="{x}", formula=lambda h: h),
    Variant("ffn_gelu", "feed_forward",
            "the activation is GELU (exact, with erf: BERT's and GPT's choice, a real convention); " + _RELU_EN,
            "활성화 함수로 GELU(erf 를 쓰는 정확한 형태, BERT 와 GPT 의 선택으로 실제로 쓰이는 방식)를 썼습니다. " + _RELU_KO,
            code="F.gelu({x})", formula=_gelu, convention=True),
    Variant("ffn_gelu_tanh", "feed_forward",
            "the activation is GELU in its tanh approximation (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), "
            "GPT-2's, a real convention); " + _RELU_EN,
            "활성화 함수로 tanh 근사 GELU(0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2 의 방식으로 실제로 "
            "쓰이는 방식)를 썼습니다. " + _RELU_KO,
            code='F.gelu({x}, approximate="tanh")', formula=_gelu_tanh, convention=True),
    Variant("ffn_quick_gelu", "feed_forward",
            "the activation is the sigmoid approximation of GELU, x * sigmoid(1.702 x) (CLIP's 'quick GELU', a real "
            "convention); " + _RELU_EN,
            "활성화 함수로 GELU 의 시그모이드 근사 x * sigmoid(1.702 x)(CLIP 의 'quick GELU', 실제로 쓰이는 방식)를 "
            "썼습니다. " + _RELU_KO,
            code="{x} * torch.sigmoid(1.702 * {x})", formula=lambda h: h * (1.702 * h).sigmoid(), convention=True),
    Variant("ffn_silu", "feed_forward",
            "the activation is SiLU/Swish, x * sigmoid(x) (used in LLaMA-style models, a real convention); " + _RELU_EN,
            "활성화 함수로 SiLU/Swish, x * sigmoid(x)(LLaMA 계열에서 쓰는 실제 방식)를 썼습니다. " + _RELU_KO,
            code="F.silu({x})", formula=lambda h: h * h.sigmoid(), convention=True),
    Variant("ffn_leaky_relu", "feed_forward",
            "the activation is LeakyReLU (negative inputs keep 0.01 of their value); the position-wise feed-forward "
            "uses ReLU, max(0, x W1 + b1)",
            "활성화 함수로 LeakyReLU(음수 입력이 값의 0.01 을 유지)를 썼습니다. 위치별 피드포워드는 ReLU, "
            "max(0, x W1 + b1) 을 씁니다",
            code="F.leaky_relu({x})", formula=lambda h: h.where(h >= 0, 0.01 * h)),
    Variant("ffn_tanh", "feed_forward",
            "the activation is tanh; the position-wise feed-forward uses ReLU, max(0, x W1 + b1)",
            "활성화 함수로 tanh 를 썼습니다. 위치별 피드포워드는 ReLU, max(0, x W1 + b1) 을 씁니다",
            code="torch.tanh({x})", formula=lambda h: h.tanh()),
    Variant("ffn_sigmoid", "feed_forward",
            "the activation is a sigmoid; the position-wise feed-forward uses ReLU, max(0, x W1 + b1)",
            "활성화 함수로 시그모이드를 썼습니다. 위치별 피드포워드는 ReLU, max(0, x W1 + b1) 을 씁니다",
            code="torch.sigmoid({x})", formula=lambda h: h.sigmoid()),
    Variant("ffn_gelu_missing_half", "feed_forward",
            "a hand-written GELU without its factor 0.5: x (1 + tanh(...)) is twice GELU(x) (and this exercise uses "
            "ReLU, max(0, x W1 + b1), anyway)",
            "직접 쓴 GELU 에 0.5 배가 빠졌습니다: x (1 + tanh(...)) 는 GELU(x) 의 두 배입니다 (그리고 이 과제는 ReLU, "
            "max(0, x W1 + b1) 을 씁니다)",
            code="{x} * (1 + torch.tanh((2 / torch.pi) ** 0.5 * ({x} + 0.044715 * {x} ** 3)))",
            formula=lambda h: _gelu_tanh(h, half=1.0)),
    Variant("ffn_gelu_erf_without_sqrt2", "feed_forward",
            "a hand-written GELU with erf(x / 2) instead of erf(x / sqrt(2)) (and this exercise uses ReLU, "
            "max(0, x W1 + b1), anyway)",
            "직접 쓴 GELU 가 erf(x / sqrt(2)) 대신 erf(x / 2) 를 씁니다 (그리고 이 과제는 ReLU, max(0, x W1 + b1) 을 "
            "씁니다)",
            code="0.5 * {x} * (1 + torch.erf({x} / 2))", formula=lambda h: 0.5 * h * (1 + (h / 2).erf())),
    Variant("ffn_gelu_inverted_constant", "feed_forward",
            "a hand-written GELU with sqrt(pi / 2) where the tanh approximation has sqrt(2 / pi) (and this exercise "
            "uses ReLU, max(0, x W1 + b1), anyway)",
            "직접 쓴 GELU 가 tanh 근사의 sqrt(2 / pi) 자리에 sqrt(pi / 2) 를 씁니다 (그리고 이 과제는 ReLU, "
            "max(0, x W1 + b1) 을 씁니다)",
            code="0.5 * {x} * (1 + torch.tanh((torch.pi / 2) ** 0.5 * ({x} + 0.044715 * {x} ** 3)))",
            formula=lambda h: _gelu_tanh(h, root=math.sqrt(math.pi / 2))),
    Variant("ffn_gelu_square_term", "feed_forward",
            "a hand-written GELU with 0.044715 x^2 where the tanh approximation has 0.044715 x^3 (and this exercise "
            "uses ReLU, max(0, x W1 + b1), anyway)",
            "직접 쓴 GELU 가 tanh 근사의 0.044715 x^3 자리에 0.044715 x^2 을 씁니다 (그리고 이 과제는 ReLU, "
            "max(0, x W1 + b1) 을 씁니다)",
            code="0.5 * {x} * (1 + torch.tanh((2 / torch.pi) ** 0.5 * ({x} + 0.044715 * {x} ** 2)))",
            formula=lambda h: _gelu_tanh(h, power=2)),
)


# -- a projection's layout and bias (named from the structure, see :mod:`autograder.checks.structure`) ---
STRUCTURE = (
    Variant("mha_weights_transposed", "multi_head_attention",
            "your projections store their weights as [d_in, d_out] and compute x @ W (the einsum and JAX/Flax "
            "layout, a real convention); this exercise uses nn.Linear's layout, weight [d_out, d_in] applied as "
            "x @ W.T + b, so weights loaded by name act transposed in yours",
            "투영의 가중치를 [d_in, d_out] 으로 두고 x @ W 로 계산했습니다 (einsum 과 JAX/Flax 의 배치, 실제로 쓰이는 "
            "방식). 이 과제는 nn.Linear 의 배치(weight [d_out, d_in], x @ W.T + b)를 쓰므로, 이름으로 불러온 가중치가 "
            "여러분의 코드에서는 전치되어 작용합니다", convention=True),
    Variant("mha_projections_without_bias", "multi_head_attention",
            "q_proj, k_proj and v_proj are built without a bias (qkv_bias=False, as in GPT-style code) although "
            "bias=True asks for nn.Linear(d_model, d_model, bias=bias): pass bias=bias",
            "bias=True 이면 nn.Linear(d_model, d_model, bias=bias) 여야 하는데 q_proj, k_proj, v_proj 를 bias 없이 "
            "만들었습니다 (GPT 계열 코드의 qkv_bias=False). bias=bias 를 넘기세요"),
    Variant("ffn_weights_transposed", "feed_forward",
            "your linear layers store their weights as [d_in, d_out] and compute x @ W (the einsum and JAX/Flax "
            "layout, a real convention); this exercise uses nn.Linear(d_model, d_ff) and nn.Linear(d_ff, d_model), "
            "weight [d_out, d_in] applied as x @ W.T + b",
            "선형층의 가중치를 [d_in, d_out] 으로 두고 x @ W 로 계산했습니다 (einsum 과 JAX/Flax 의 배치, 실제로 쓰이는 "
            "방식). 이 과제는 nn.Linear(d_model, d_ff) 와 nn.Linear(d_ff, d_model), 즉 weight [d_out, d_in] 을 "
            "x @ W.T + b 로 씁니다", convention=True),
)
