"""Public tests of exercise 6, ``feed_forward.py``: linear2(dropout(relu(linear1(x)))).

Each test's hidden twin draws other sizes, weights and inputs through the ``example`` fixture."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import mistaken, weights
from autograder.checks import Mismatch, compare, expect_consistent, expect_equal, expect_property, expect_raises, say

pytestmark = pytest.mark.exercise("feed_forward")



def _case(example):
    """(d_model, d_ff, state, x): 6, 10, drawn weights and x ``[2, 4, 6]`` in the public tests."""
    d_model, d_ff = example.sizes((6, 10), 3, 24)
    batch, length = example.sizes((2, 4), 2, 9)
    state = weights.ffn_state(example.rng(11), d_model, d_ff)
    return d_model, d_ff, state, torch.randn(batch, length, d_model, generator=example.rng(12))


def _formula(state, x):
    hidden = F.relu(F.linear(x, state["linear1.weight"], state["linear1.bias"]))
    return F.linear(hidden, state["linear2.weight"], state["linear2.bias"])


@pytest.mark.kind("values")
@pytest.mark.points(1.25)
def test_matches_the_formula(student, example):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 with the loaded weights

    ko: 불러온 가중치로 FFN(x) = max(0, x W1 + b1) W2 + b2입니다
    """
    d_model, d_ff, state, x = _case(example)

    def run(impl):
        return weights.loaded(impl.feed_forward.PositionwiseFeedForward(d_model, d_ff), state)(x)

    expect_equal(run, student, _formula(state, x), what=f"PositionwiseFeedForward({d_model}, {d_ff})(x{list(x.shape)})",
                 known_mistakes=mistaken.feed_forward(state, x))


@pytest.mark.kind("names")
@pytest.mark.points(0.5)
def test_layer_shapes(student, example):
    """linear1 is nn.Linear(d_model, d_ff) and linear2 is nn.Linear(d_ff, d_model)

    ko: linear1은 nn.Linear(d_model, d_ff), linear2는 nn.Linear(d_ff, d_model)입니다
    """
    d_model, d_ff, state, _ = _case(example)
    module = f"PositionwiseFeedForward({d_model}, {d_ff})"
    weights.expect_names(lambda impl: impl.feed_forward.PositionwiseFeedForward(d_model, d_ff), student, state,
                         what=module, unmatched=False)

    def run(impl):
        return weights.shapes(impl.feed_forward.PositionwiseFeedForward(d_model, d_ff))

    contract = {name: list(t.shape) for name, t in state.items()}
    expect_consistent(run, student, lambda got: weights.with_contract(got, contract),
                      what=say(f"{module}.state_dict() shapes", f"{module}.state_dict()의 모양"),
                      known_mistakes=mistaken.ffn_shapes(d_model))


@pytest.mark.kind("property")
@pytest.mark.points(1)
def test_dropout_only_in_training(student, seed, example):
    """dropout=0.5: eval() gives the formula twice; train() gives two different random outputs

    ko: dropout=0.5: eval() 에서는 두 번 모두 공식과 같고, train() 에서는 서로 다른 무작위 출력이 나옵니다
    """
    d_model, d_ff, state, x = _case(example)
    x = x.abs() + 0.5

    def run(impl):
        m = weights.loaded(impl.feed_forward.PositionwiseFeedForward(d_model, d_ff, dropout=0.5), state)
        first, second = m(x), m(x)
        m.train()
        impl.seed(seed)
        return first, second, m(x), m(x)

    def verify(got):
        compare(got, (_formula(state, x), _formula(state, x), *got[2:]), what=say("(eval call 1, eval call 2, train call 1, train call 2)",
                                                                "(eval 호출 1, eval 호출 2, train 호출 1, train 호출 2)"))
        if torch.allclose(got[2], got[0]) or torch.allclose(got[2], got[3]):
            raise Mismatch(say("in training mode dropout=0.5 must change the output from call to call",
                               "학습 모드에서 dropout=0.5 이면 호출할 때마다 출력이 달라야 합니다"))

    expect_property(run, student, verify)


@pytest.mark.kind("errors")
@pytest.mark.points(0.25)
def test_bad_dropout_raises_value_error(student, example):
    """a dropout probability outside [0, 1] raises ValueError naming dropout

    ko: [0, 1] 밖의 드롭아웃 확률은 dropout을 밝힌 ValueError를 냅니다
    """
    d_model, d_ff = example.sizes((4, 8), 2, 16)
    dropout = example.pick(1.5, lambda rng: float(torch.tensor([-0.5, 1.25, 2.0])[int(torch.randint(0, 3, (1,), generator=rng))]))
    expect_raises(lambda: student.feed_forward.PositionwiseFeedForward(d_model, d_ff, dropout=dropout),
                  what=f"PositionwiseFeedForward({d_model}, {d_ff}, dropout={dropout})",
                  names=("dropout",), values=(dropout,))
