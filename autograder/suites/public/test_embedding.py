"""Public tests of exercise 1, ``embedding.py``: the lookup scaled by sqrt(d_model)."""

import math

import pytest
import torch

from autograder.checks import mistaken, weights
from autograder.checks import expect_equal, say

pytestmark = pytest.mark.exercise("embedding")

VOCAB, D_MODEL = 11, 6
WEIGHT = torch.randn(VOCAB, D_MODEL, generator=torch.Generator().manual_seed(1))
IDS = torch.tensor([[3, 0, 10, 7], [1, 1, 5, 2], [9, 4, 6, 8]])


@pytest.mark.kind("values")
@pytest.mark.points(2)
def test_lookup_is_scaled_by_sqrt_d_model(student):
    """the output is embedding.weight[token_ids] * sqrt(d_model)

    ko: 출력이 embedding.weight[token_ids] * sqrt(d_model)과 같습니다
    """
    def run(impl):
        return weights.loaded(impl.embedding.TokenEmbedding(VOCAB, D_MODEL), {"embedding.weight": WEIGHT})(IDS)

    expect_equal(run, student, WEIGHT[IDS] * math.sqrt(D_MODEL), what="TokenEmbedding(11, 6)(token_ids)",
                 known_mistakes=mistaken.embedding(WEIGHT, IDS))


@pytest.mark.kind("property")
@pytest.mark.points(0.75)
def test_padding_row_is_zero(student):
    """InputEmbeddings (the alias) with padding_idx: padding ids give zero vectors

    ko: padding_idx를 준 InputEmbeddings(별칭)에서 패딩 id는 0 벡터가 됩니다
    """
    def run(impl):
        return impl.embedding.InputEmbeddings(VOCAB, D_MODEL, padding_idx=1)(IDS).eq(0).all(dim=-1)

    expect_equal(run, student, IDS == 1, what=say("InputEmbeddings(11, 6, padding_idx=1): which outputs are zero vectors",
                                                  "InputEmbeddings(11, 6, padding_idx=1): 영벡터인 출력의 위치"))


@pytest.mark.kind("names")
@pytest.mark.points(0.25)
def test_attribute_names(student):
    """the module has embedding: nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)

    ko: 모듈에 embedding: nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)이 있습니다
    """
    def build(impl):
        return impl.embedding.TokenEmbedding(VOCAB, D_MODEL, padding_idx=1)

    weights.expect_names(build, student, {"embedding.weight": WEIGHT}, what="TokenEmbedding(11, 6, padding_idx=1)")
    expect_equal(lambda impl: build(impl).embedding.padding_idx, student, 1,
                 what="TokenEmbedding(11, 6, padding_idx=1).embedding.padding_idx")
