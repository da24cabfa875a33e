"""Public tests of exercise 1, ``embedding.py``: the lookup scaled by sqrt(d_model)."""

import math

import pytest
import torch

from autograder.checks import inputs, mistaken, weights
from autograder.checks import expect_equal, say

pytestmark = pytest.mark.exercise("embedding")

IDS = torch.tensor([[3, 0, 10, 7], [1, 1, 5, 2], [9, 4, 6, 8]])


def _case(example):
    """(vocab_size, d_model, weight, token_ids): 11, 6 and the ids above in the public test; in its
    hidden twin other sizes, weights and ids (every id drawn, 1 among them: the padding tests' id)."""
    vocab, d_model = example.sizes((11, 6), 4, 40)
    weight = torch.randn(vocab, d_model, generator=example.rng(1))

    def draw(rng):
        ids = torch.randint(0, vocab, (inputs.integer(rng, 2, 5), inputs.integer(rng, 3, 9)), generator=rng)
        ids[0, 0], ids[-1, -1] = 1, vocab - 1
        return ids

    return vocab, d_model, weight, example.pick(IDS, draw)


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_lookup_is_scaled_by_sqrt_d_model(student, example):
    """the output is embedding.weight[token_ids] * sqrt(d_model)

    ko: 출력이 embedding.weight[token_ids] * sqrt(d_model)과 같습니다
    """
    vocab, d_model, weight, ids = _case(example)

    def run(impl):
        return weights.loaded(impl.embedding.TokenEmbedding(vocab, d_model), {"embedding.weight": weight})(ids)

    expect_equal(run, student, weight[ids] * math.sqrt(d_model), what=f"TokenEmbedding({vocab}, {d_model})(token_ids)",
                 known_mistakes=mistaken.embedding(weight, ids))


@pytest.mark.kind("property")
@pytest.mark.points(0.75)
def test_padding_row_is_zero(student, example):
    """InputEmbeddings (the alias) with padding_idx: padding ids give zero vectors

    ko: padding_idx를 준 InputEmbeddings(별칭)에서 패딩 id는 0 벡터가 됩니다
    """
    vocab, d_model, _, ids = _case(example)

    def run(impl):
        return impl.embedding.InputEmbeddings(vocab, d_model, padding_idx=1)(ids).eq(0).all(dim=-1)

    expect_equal(run, student, ids == 1, what=say(f"InputEmbeddings({vocab}, {d_model}, padding_idx=1): which outputs are zero vectors",
                                                  f"InputEmbeddings({vocab}, {d_model}, padding_idx=1): 영벡터인 출력의 위치"))


@pytest.mark.kind("names")
@pytest.mark.points(0.25)
def test_attribute_names(student, example):
    """the module has embedding: nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)

    ko: 모듈에 embedding: nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)이 있습니다
    """
    vocab, d_model, weight, _ = _case(example)

    def build(impl):
        return impl.embedding.TokenEmbedding(vocab, d_model, padding_idx=1)

    weights.expect_names(build, student, {"embedding.weight": weight}, what=f"TokenEmbedding({vocab}, {d_model}, padding_idx=1)")
    expect_equal(lambda impl: build(impl).embedding.padding_idx, student, 1,
                 what=f"TokenEmbedding({vocab}, {d_model}, padding_idx=1).embedding.padding_idx")
