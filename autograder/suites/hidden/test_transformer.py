"""Hidden tests of exercise 9 (transformer.py) without training: random distinct dimensions, the
source as long as max_len, padding on both sides, and greedy decoding with rows that end at
different steps, compared with the reference solution (weights drawn from the test's seed and
loaded into both). The training test is test_transformer__training.py."""

import pytest
import torch

from autograder.checks import inputs, oracles, seq2seq, weights
from autograder.checks import expect_differs, expect_reference, once, say

pytestmark = pytest.mark.exercise("transformer")

PAD, BOS = 0, 1


@once  # the same draws for every student of a run: built once per process
def _setup(reference, rng):
    dims = inputs.distinct_dims(rng, {"B": (2, 4), "S": (5, 9), "T": (3, 8), "H": (2, 3), "hd": (2, 6),
                                      "ff": (10, 20), "V": (11, 17), "W": (18, 23)})
    d = dims["H"] * dims["hd"]
    if d % 2:  # the positional encoding needs an even d_model
        dims["hd"] += 1
        d = dims["H"] * dims["hd"]
    hyper = dict(src_vocab_size=dims["W"], tgt_vocab_size=dims["V"], d_model=d, num_heads=dims["H"],
                 num_encoder_layers=2, num_decoder_layers=1, d_ff=dims["ff"], dropout=0.1,
                 max_len=max(dims["S"], dims["T"]), pad_id=PAD)
    model = oracles.randomize_(reference.transformer.Transformer(**hyper), rng)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return dims, hyper, state


def _loaded(impl, hyper, state):
    return weights.loaded(impl.transformer.Transformer(**hyper), state, "Transformer")


@pytest.mark.points(1)
def test_random_dimensions(student, reference, rng):
    """encode, decode and forward match the reference on random sizes, the longer side as long as max_len
    ko: 무작위 크기와 max_len 길이의 시퀀스에서 encode, decode, forward가 참조 구현과 같습니다"""
    dims, hyper, state = _setup(reference, rng)
    b, s, t = dims["B"], dims["S"], dims["T"]
    src_lengths = inputs.lengths(rng, b, s, longest=0)
    tgt_lengths = inputs.lengths(rng, b, t, longest=b - 1)
    src = inputs.padded_token_ids(rng, src_lengths, s, dims["W"], PAD)
    tgt = inputs.padded_token_ids(rng, tgt_lengths, t, dims["V"], PAD)
    tgt[:, 0] = BOS

    def run(impl):
        m = _loaded(impl, hyper, state)
        memory = m.encode(src)
        return memory, m.decode(tgt, memory, src), m(src, tgt)

    src_valid, tgt_valid = inputs.valid_positions(src == PAD), inputs.valid_positions(tgt == PAD)
    expect_reference(run, student, what=f"Transformer({hyper}) (encode, decode, forward)", atol=2e-5,
                     valid=(src_valid, tgt_valid, tgt_valid))


@once
def _eos_for(reference, hyper, state, src, never, steps):
    """An end token the reference's greedy decoding reaches at different steps in different rows."""
    free = _loaded(reference, hyper, state).greedy_decode(src, BOS, never, steps)
    return seq2seq.choose_eos(free, exclude=(PAD, BOS, never))


@pytest.mark.points(1)
def test_greedy_decode(student, reference, rng):
    """greedy_decode matches the reference when rows end at different steps, and on a batch of one
    ko: 행마다 다른 단계에서 끝날 때와 배치 1에서 greedy_decode가 참조 구현과 같습니다"""
    dims, hyper, state = _setup(reference, rng)
    never = dims["V"] - 1
    state["generator.bias"][never] += seq2seq.NEVER
    # no row predicts pad_id before it ends: a pad token in the target is a padded key (and, for an MHA
    # that also masks padded query rows, a padded query: a convention only the MHA test compares)
    state["generator.bias"][PAD] += seq2seq.NEVER
    b, s = dims["B"] + 2, dims["S"]
    src_lengths = inputs.lengths(rng, b, s, longest=0)
    src = inputs.padded_token_ids(rng, src_lengths, s, dims["W"], PAD)
    steps = hyper["max_len"]  # decoding may run up to the positional encoding's limit
    eos = _eos_for(reference, hyper, state, src, never, steps)

    def run(impl):
        m = _loaded(impl, hyper, state)
        return m.greedy_decode(src, BOS, eos, steps), m.greedy_decode(src[:1], BOS, eos, steps)

    expect_reference(run, student, what=f"greedy_decode(src[{b}, {s}], bos_id={BOS}, eos_id={eos}, max_len={steps})")
    changed = src.clone()
    changed[:, 0] = src[:, 0] % (dims["W"] - 1) + 1  # every row's first source token is valid

    def uses_source(impl):  # the premise: random weights may decode the same tokens from any source
        m = _loaded(impl, hyper, state)
        start = torch.full((b, 1), BOS, dtype=torch.long)
        return m(src, start)[:, -1], m(changed, start)[:, -1]

    expect_differs(uses_source, student, what=say("logits of the first step after changing the first source token",
                                                      "첫 소스 토큰을 바꾼 뒤 첫 단계의 logits"))
