"""Hidden tests of exercise 9 (transformer.py) without training: random distinct dimensions, the
source as long as max_len, padding on both sides, and greedy decoding with rows that end at
different steps, compared with the reference solution (weights drawn from the test's seed and
loaded into both). The training test is test_transformer__training.py."""

import pytest
import torch

from autograder.checks import inputs, oracles, seq2seq, weights
from autograder.checks import Mismatch, compare, expect_differs, expect_property, expect_reference, once, say

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


@pytest.mark.kind("values")
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
    expect_reference(run, student, what=f"Transformer({hyper}) (encode, decode, forward)",
                     valid=(src_valid, tgt_valid, tgt_valid))


GREEDY_TRIES = 25  # generator weights tried until the reference's decoding has the test's power


@once
def _greedy_case(reference, hyper, state, src, never, steps, rng):
    """The state and end token of the greedy test, chosen so that, for every seed, the test catches
    greedy decoding mistakes: with the end token ``never`` (its logit lowered) no row ends, so the
    free run is ``max_len`` long; some row's token at step 2 differs from step 1 (code that reads
    the first position's logits repeats step 1's); the chosen end token occurs in every row, at
    different steps, before the last column in some row. The generator's weights are redrawn until
    the reference's decoding has these properties (random weights often decode one token per row)."""
    for _attempt in range(GREEDY_TRIES):
        model = _loaded(reference, hyper, state)
        free = model.greedy_decode(src, BOS, never, steps)
        eos = seq2seq.choose_eos(free, exclude=(PAD, BOS, never))
        hits = free[:, 1:] == eos
        first = hits.float().argmax(1)
        if (bool((free[:, 2] != free[:, 1]).any()) and bool(hits.any(1).all())
                and len(set(first.tolist())) >= 2 and int(first.min()) < steps - 2):
            return state, eos
        state = dict(state)
        weight = state["generator.weight"]
        state["generator.weight"] = inputs.randn(rng, *weight.shape) / weight.shape[-1] ** 0.5
        bias = inputs.randn(rng, weight.shape[0]) * 0.1
        bias[never] += seq2seq.NEVER
        bias[PAD] += seq2seq.NEVER
        state["generator.bias"] = bias
    raise RuntimeError(f"no greedy test case with its power in {GREEDY_TRIES} draws")  # a grader error


def _verify_greedy(steps, eos):
    def verify(got):
        free, logits, ended, one = got
        compare(tuple(free.shape), (free.shape[0], steps),
                what=say(f"shape of greedy_decode(..., max_len={steps}) when no row ends",
                         f"어떤 행도 끝나지 않을 때 greedy_decode(..., max_len={steps})의 모양"))
        compare(free[:, 0], torch.full((free.shape[0],), BOS), what=say("column 0 of greedy_decode", "greedy_decode의 0번 열"))
        agrees = seq2seq.argmax_agrees(logits, free[:, 1:])
        if not bool(agrees.all()):
            row, step = (~agrees).nonzero()[0].tolist()
            raise Mismatch(say(f"greedy_decode chose token {int(free[row, step + 1])} at row {row}, step {step + 1}, "
                               "but the argmax of forward(src, tokens[:, :step])[:, -1] is another token",
                               f"greedy_decode가 행 {row}, 단계 {step + 1}에서 토큰 {int(free[row, step + 1])}을(를) "
                               "골랐지만 forward(src, tokens[:, :step])[:, -1]의 argmax는 다른 토큰입니다"))
        expected = seq2seq.finish_at_eos(free, eos, PAD)
        what = say(f"greedy_decode with eos_id={eos} (rows that ended must hold pad_id afterwards)",
                   f"eos_id={eos}인 greedy_decode (끝난 행은 그 뒤를 pad_id로 채워야 합니다)")
        compare(ended, expected, what=what)
        compare(one, seq2seq.finish_at_eos(free[:1], eos, PAD), what=say(f"{what} on a batch of one", f"배치 1에서 {what}"))
    return verify


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_greedy_decode(student, reference, rng):
    """greedy_decode on random sizes picks forward's argmax at every step up to max_len, pads rows after EOS, and on a batch of one
    ko: 무작위 크기에서 greedy_decode가 max_len까지 매 단계 forward의 argmax를 고르고, EOS 뒤를 패딩하며, 배치 1에서도 같습니다"""
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
    state, eos = _greedy_case(reference, hyper, state, src, never, steps, rng)

    def run(impl):  # greedy against the model's own forward on each prefix: a mistake in forward (even a
        m = _loaded(impl, hyper, state)  # missing causal mask) is other tests' to find
        free = m.greedy_decode(src, BOS, never, steps)
        if free.dim() == 2 and free.shape[1] > 1:
            logits = torch.stack([m(src, free[:, :t])[:, -1] for t in range(1, free.shape[1])], dim=1)
        else:
            logits = free
        return free, logits, m.greedy_decode(src, BOS, eos, steps), m.greedy_decode(src[:1], BOS, eos, steps)

    expect_property(run, student, _verify_greedy(steps, eos))
    changed = src.clone()
    changed[:, 0] = src[:, 0] % (dims["W"] - 1) + 1  # every row's first source token is valid

    def uses_source(impl):  # the premise: random weights may decode the same tokens from any source
        m = _loaded(impl, hyper, state)
        start = torch.full((b, 1), BOS, dtype=torch.long)
        return m(src, start)[:, -1], m(changed, start)[:, -1]

    expect_differs(uses_source, student, what=say("logits of the first step after changing the first source token",
                                                      "첫 소스 토큰을 바꾼 뒤 첫 단계의 logits"))
