"""Public tests of exercise 6, ``feed_forward.py``: linear2(dropout(relu(linear1(x))))."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import mistaken, weights
from autograder.checks import Mismatch, compare, expect_equal, expect_property, expect_raises, say

pytestmark = pytest.mark.exercise("feed_forward")

D_MODEL, D_FF = 6, 10
STATE = weights.ffn_state(torch.Generator().manual_seed(11), D_MODEL, D_FF)
X = torch.randn(2, 4, D_MODEL, generator=torch.Generator().manual_seed(12))


def _formula(x):
    hidden = F.relu(F.linear(x, STATE["linear1.weight"], STATE["linear1.bias"]))
    return F.linear(hidden, STATE["linear2.weight"], STATE["linear2.bias"])


@pytest.mark.kind("values")
@pytest.mark.points(1.25)
def test_matches_the_formula(student):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 with the loaded weights

    ko: 불러온 가중치로 FFN(x) = max(0, x W1 + b1) W2 + b2입니다
    """
    def run(impl):
        return weights.loaded(impl.feed_forward.PositionwiseFeedForward(D_MODEL, D_FF), STATE)(X)

    expect_equal(run, student, _formula(X), what="PositionwiseFeedForward(6, 10)(x[2, 4, 6])",
                 known_mistakes=mistaken.feed_forward(STATE, X))


@pytest.mark.kind("names")
@pytest.mark.points(0.5)
def test_layer_shapes(student):
    """linear1 is nn.Linear(d_model, d_ff) and linear2 is nn.Linear(d_ff, d_model)

    ko: linear1은 nn.Linear(d_model, d_ff), linear2는 nn.Linear(d_ff, d_model)입니다
    """
    weights.expect_names(lambda impl: impl.feed_forward.PositionwiseFeedForward(D_MODEL, D_FF), student, STATE,
                         what="PositionwiseFeedForward(6, 10)", unmatched=False)

    def run(impl):
        m = impl.feed_forward.PositionwiseFeedForward(D_MODEL, D_FF)
        return {name: list(t.shape) for name, t in m.state_dict().items()}

    expect_equal(run, student, {name: list(t.shape) for name, t in STATE.items()},
                 what=say("PositionwiseFeedForward(6, 10).state_dict() shapes", "PositionwiseFeedForward(6, 10).state_dict()의 모양"), known_mistakes=mistaken.ffn_shapes(D_MODEL))


@pytest.mark.kind("property")
@pytest.mark.points(1)
def test_dropout_only_in_training(student, seed):
    """dropout=0.5: eval() gives the formula twice; train() gives two different random outputs

    ko: dropout=0.5: eval() 에서는 두 번 모두 공식과 같고, train() 에서는 서로 다른 무작위 출력이 나옵니다
    """
    x = X.abs() + 0.5

    def run(impl):
        m = weights.loaded(impl.feed_forward.PositionwiseFeedForward(D_MODEL, D_FF, dropout=0.5), STATE)
        first, second = m(x), m(x)
        m.train()
        impl.seed(seed)
        return first, second, m(x), m(x)

    def verify(got):
        compare(got, (_formula(x), _formula(x), *got[2:]), what=say("(eval call 1, eval call 2, train call 1, train call 2)",
                                                                "(eval 호출 1, eval 호출 2, train 호출 1, train 호출 2)"))
        if torch.allclose(got[2], got[0]) or torch.allclose(got[2], got[3]):
            raise Mismatch(say("in training mode dropout=0.5 must change the output from call to call",
                               "학습 모드에서 dropout=0.5 이면 호출할 때마다 출력이 달라야 합니다"))

    expect_property(run, student, verify)


@pytest.mark.kind("errors")
@pytest.mark.points(0.25)
def test_bad_dropout_raises_value_error(student):
    """a dropout probability outside [0, 1] raises ValueError naming dropout

    ko: [0, 1] 밖의 드롭아웃 확률은 dropout을 밝힌 ValueError를 냅니다
    """
    expect_raises(lambda: student.feed_forward.PositionwiseFeedForward(4, 8, dropout=1.5),
                  what="PositionwiseFeedForward(4, 8, dropout=1.5)",
                  names=("dropout",), values=(1.5,))
