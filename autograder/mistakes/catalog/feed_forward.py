"""Known mistakes of exercise 6, ``feed_forward.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_FORWARD = "return self.linear2(self.dropout(F.relu(self.linear1(x))))"


def _activation(variant):
    """The feed-forward with ``variant``'s activation between the two linear layers."""
    return ((_FORWARD, "hidden = self.linear1(x)\n        return self.linear2(self.dropout("
                       + variant.code.format(x="hidden") + "))"),)


_TRANSPOSED = '''class _Linear(nn.Module):
    """A linear layer stored [d_in, d_out] and applied as x @ W + b (the einsum layout)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_in, d_out) / d_in ** 0.5)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        return x @ self.weight + self.bias


'''

MUTANTS = catalog.generated("activation", families.FFN_ACTIVATION, _activation)
MUTANTS += catalog.generated("layout", [families.VARIANTS["ffn_weights_transposed"]], lambda v: (
    ("class PositionwiseFeedForward(nn.Module):", _TRANSPOSED + "class PositionwiseFeedForward(nn.Module):"),
    ("self.linear1 = nn.Linear(d_model, d_ff)", "self.linear1 = _Linear(d_model, d_ff)"),
    ("self.linear2 = nn.Linear(d_ff, d_model)", "self.linear2 = _Linear(d_ff, d_model)")))
MUTANTS += [
    Mutant(
        id="ffn_relu_after_output",
        exercise="feed_forward",
        hint_en="the ReLU is applied after linear2; it belongs between linear1 and linear2",
        hint_ko="ReLU 를 linear2 뒤에 적용했습니다. linear1 과 linear2 사이에 있어야 합니다",
        replace=((_FORWARD, "return F.relu(self.linear2(self.dropout(self.linear1(x))))"),),
    ),
    Mutant(
        id="ffn_dropout_in_eval",
        exercise="feed_forward",
        hint_en="dropout is active in eval mode (F.dropout with training=True); use self.dropout (an nn.Dropout), "
                "which follows model.train()/model.eval()",
        hint_ko="eval 모드에서도 드롭아웃이 적용됩니다 (training=True 인 F.dropout). model.train()/eval() 을 따르는 "
                "self.dropout(nn.Dropout) 을 쓰세요",
        replace=((_FORWARD, "return self.linear2(F.dropout(F.relu(self.linear1(x)), p=self.dropout.p, training=True))"),),
    ),
    Mutant(
        id="ffn_dropout_missing",
        exercise="feed_forward",
        hint_en="dropout is never applied, not even in training mode: put self.dropout between ReLU and linear2",
        hint_ko="학습 모드에서도 드롭아웃이 적용되지 않습니다. ReLU 와 linear2 사이에 self.dropout 을 넣으세요",
        replace=((_FORWARD, "return self.linear2(F.relu(self.linear1(x)))"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
MUTANTS += [
    # Source: nlpyang/hiersumm#28 (the feed-forward module adds its own residual, x + FFN(x), and the
    # layer adds another one).
    Mutant(
        id="ffn_adds_residual",
        exercise="feed_forward",
        hint_en="forward returns x + FFN(x); the residual connection belongs to the encoder/decoder layer, the "
                "feed-forward block returns linear2(ReLU(linear1(x))) only",
        hint_ko="forward 가 x + FFN(x) 를 반환합니다. 잔차 연결은 인코더/디코더 층의 몫이고, 피드포워드 블록은 "
                "linear2(ReLU(linear1(x))) 만 반환합니다",
        replace=((_FORWARD, "return x + self.linear2(self.dropout(F.relu(self.linear1(x))))"),),
    ),
    # Source: brightmart/text_classification#86 (the position-wise feed-forward layer never uses d_ff:
    # both layers map d_model to d_model).
    Mutant(
        id="ffn_ignores_d_ff",
        exercise="feed_forward",
        hint_en="d_ff is not used: linear1 must map d_model to d_ff and linear2 d_ff back to d_model "
                "(the inner layer is wider, 2048 for d_model=512 in the paper)",
        hint_ko="d_ff 를 쓰지 않았습니다. linear1 은 d_model 에서 d_ff 로, linear2 는 d_ff 에서 d_model 로 가야 합니다 "
                "(논문에서 d_model=512 일 때 안쪽 층은 2048)",
        replace=(("self.linear1 = nn.Linear(d_model, d_ff)", "self.linear1 = nn.Linear(d_model, d_model)"),
                 ("self.linear2 = nn.Linear(d_ff, d_model)", "self.linear2 = nn.Linear(d_model, d_model)")),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("PositionwiseFeedForward.forward",)

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
_ZEROS_LIKE_X = "return torch.zeros_like(x)"
DEGENERATES = (
    Degenerate("feed_forward_identity", "feed_forward", "the identity", """
def _forward(self, x):
    return x.clone()
PositionwiseFeedForward.forward = _forward
"""),
    Degenerate("feed_forward_zeros", "feed_forward", "zeros of the right shape", f"""
def _forward(self, x):
    {_ZEROS_LIKE_X}
PositionwiseFeedForward.forward = _forward
"""),
)
