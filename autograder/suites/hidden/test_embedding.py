"""Hidden tests of exercise 1, ``embedding.py``: random sizes and edge cases against the reference."""

import pytest
import torch

from autograder.checks import inputs, say, weights
from autograder.checks import expect_raises, expect_reference

pytestmark = pytest.mark.exercise("embedding")


@pytest.mark.kind("values")
@pytest.mark.points(1)
def test_random_sizes_float32_and_float64(student, rng):
    """random vocabulary, width and batch match the reference, in float32 and float64

    ko: 임의의 어휘 크기, 차원, 배치에서 float32와 float64 모두 정답과 같습니다
    """
    vocab, d_model, batch, length = inputs.distinct(rng, 4, 2, 40)
    weight = inputs.randn(rng, vocab, d_model)
    ids = inputs.token_ids(rng, vocab, batch, length)
    ids[0, 0], ids[-1, -1] = 0, vocab - 1

    def run(impl):
        m = weights.loaded(impl.embedding.TokenEmbedding(vocab, d_model), {"embedding.weight": weight})
        out32 = m(ids)
        return out32, m.double()(ids)

    expect_reference(run, student, what=say(f"TokenEmbedding({vocab}, {d_model})(token_ids[{batch}, {length}]) in float32, "
                                        f"then after .double()",
                                            f"TokenEmbedding({vocab}, {d_model})(token_ids[{batch}, {length}]) (float32, 그다음 .double() 뒤)"))


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_one_token_and_negative_padding_idx(student, rng):
    """batch 1, length 1, and padding_idx=-1 (the last id) as in nn.Embedding

    ko: 배치 1, 길이 1, 그리고 nn.Embedding처럼 padding_idx=-1 (마지막 id)
    """
    vocab, d_model = inputs.distinct(rng, 2, 3, 30)
    weight = inputs.randn(rng, vocab, d_model)
    weight[-1] = 0.0
    one = inputs.token_ids(rng, vocab - 1, 1, 1)
    last = torch.full((1, 1), vocab - 1)

    def run(impl):
        m = weights.loaded(impl.embedding.TokenEmbedding(vocab, d_model, padding_idx=-1), {"embedding.weight": weight})
        return m(one), m(last)

    expect_reference(run, student, what=say(f"TokenEmbedding({vocab}, {d_model}, padding_idx=-1) on one token",
                                            f"토큰 하나에 대한 TokenEmbedding({vocab}, {d_model}, padding_idx=-1)"))


@pytest.mark.kind("errors")
@pytest.mark.points(0.5)
def test_bad_ids_raise_an_error(student, rng):
    """ids outside [0, vocab_size) and a padding_idx outside the vocabulary raise an error, never a silent lookup

    ko: [0, vocab_size) 밖의 id와 어휘 밖의 padding_idx는 조용히 넘어가지 않고 오류를 냅니다
    """
    # exercises/README.md lists these as "any error": nn.Embedding's own (IndexError, RuntimeError,
    # AssertionError) count as much as the reference's ValueError
    errors = ("ValueError", "IndexError", "RuntimeError", "AssertionError", "TypeError")
    vocab, d_model = inputs.distinct(rng, 2, 3, 20)
    emb = student.embedding
    m = emb.TokenEmbedding(vocab, d_model)
    expect_raises(lambda: m(torch.tensor([[0, vocab]])), errors, what=say(f"TokenEmbedding({vocab}, ...)(ids with {vocab})",
                                                                          f"TokenEmbedding({vocab}, ...)({vocab}을(를) 담은 ids)"))
    expect_raises(lambda: emb.TokenEmbedding(vocab, d_model, padding_idx=vocab), errors,
                  what=f"TokenEmbedding({vocab}, {d_model}, padding_idx={vocab})")
