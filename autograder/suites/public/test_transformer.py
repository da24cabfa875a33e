"""Public tests of exercise 9 (transformer.py) without training: shapes, the masks that encode,
decode and forward build themselves (causal leakage, padding invariance), eval determinism, and
greedy decoding (BOS first, EOS stops a row, finished rows padded, the max_len bound, ValueError,
train/eval mode untouched). The training test is in the hidden suite. A model whose logits ignore
the source or the earlier tokens passes those properties vacuously, so each property test also
checks that the logits at the last position change with a source token and with an earlier target
token (``_uses_context``).

Small model: vocabularies 13 (source) and 11 (target), d_model=16, 2 heads, one layer each side,
d_ff=24, max_len=12, pad_id=0, BOS=1, EOS=2 (in each test's hidden twin, other sizes through the
``example`` fixture, and other tokens and weights through the twin's seed).
"""

import pytest
import torch

from autograder.checks import inputs, mistaken, oracles, seq2seq, weights
from autograder.checks import (Mismatch, _, compare, expect_differs, expect_equal, expect_property, expect_raises,
                               expect_same, say)

pytestmark = pytest.mark.exercise("transformer")

V_SRC, V_TGT, D, H, FF, MAX_LEN = 13, 11, 16, 2, 24, 12
PAD, BOS, EOS = 0, 1, 2
B, S, T = 4, 7, 5
SRC_LENGTHS = [7, 3, 5, 1]
GREEDY_WEIGHTS = 2  # the weights (seq2seq.redraw_) and source of the greedy consistency test


class _Dims:
    """A test's model and batch sizes: vocabularies 13 and 11, d_model=16, 2 heads, d_ff=24,
    max_len=12, B=4, S=7, T=5 and the source lengths above in the public tests (``example`` None:
    those too); other sizes in the hidden twins (max_len >= S + 3: the padding test adds 3 columns)."""

    def __init__(self, example=None):
        pick = example.sizes if example is not None else (lambda public, *_, **__: list(public))
        self.V_SRC, self.V_TGT = pick((V_SRC, V_TGT), 9, 20)
        self.H, = pick((H,), 1, 3)
        # d_model even (the positional encoding needs it) and >= 4: a LayerNorm over 2 features gives +-1,
        # and the logits then hardly depend on the source
        head_dim, = pick((D // H,), 4, 8, even=True)
        self.D = self.H * head_dim
        self.FF, = pick((FF,), 8, 32)
        self.B, = pick((B,), 2, 5)
        self.S, self.T = pick((S, T), 4, 9)
        self.MAX_LEN = max(MAX_LEN, self.S + 3)
        self.src_lengths = SRC_LENGTHS if example is None else example.pick(
            SRC_LENGTHS, lambda rng: inputs.lengths(rng, self.B, self.S, low=1).tolist())

    def model(self, impl, dropout=0.0):
        return impl.transformer.Transformer(self.V_SRC, self.V_TGT, d_model=self.D, num_heads=self.H,
                                            num_encoder_layers=1, num_decoder_layers=1, d_ff=self.FF,
                                            dropout=dropout, max_len=self.MAX_LEN, pad_id=PAD)

    def data(self, seed):
        gen = torch.Generator().manual_seed(seed)
        src = inputs.padded_token_ids(gen, self.src_lengths, self.S, self.V_SRC, PAD)
        tgt = inputs.padded_token_ids(gen, [self.T] * self.B, self.T, self.V_TGT, PAD)
        tgt[:, 0] = BOS
        return gen, src, tgt


def _uses_source(student, seed, dims):
    """The logits at the last target position change when a valid source token changes (every
    row's first source token is valid)."""
    _, src, tgt = dims.data(seed)
    changed = src.clone()
    changed[:, 0] = src[:, 0] % (dims.V_SRC - 1) + 1

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return m(src, tgt)[:, -1], m(changed, tgt)[:, -1]

    expect_differs(run, student, what=say("logits at the last target position after changing the first source token",
                                      "첫 소스 토큰을 바꾼 뒤 마지막 타깃 위치의 logits"))


def _uses_earlier_tokens(student, seed, dims):
    """The logits at the last target position change when an earlier target token (position 1)
    changes."""
    _, src, tgt = dims.data(seed)
    changed = tgt.clone()
    changed[:, 1] = tgt[:, 1] % (dims.V_TGT - 1) + 1

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return m(src, tgt)[:, -1], m(src, changed)[:, -1]

    expect_differs(run, student, what=say("logits at the last target position after changing the target token at position 1",
                                      "위치 1의 타깃 토큰을 바꾼 뒤 마지막 타깃 위치의 logits"))


def _uses_context(student, seed, dims):
    """The premise of every property test below: the logits depend on the source and on the
    earlier target tokens (a model that ignores either is causal, padding-invariant and greedy-
    consistent vacuously, or at best a language model of the target alone)."""
    _uses_source(student, seed, dims)
    _uses_earlier_tokens(student, seed, dims)


@pytest.mark.kind("names")
@pytest.mark.points(0.25)
def test_attribute_names(student, example):
    """the model has src_embed, tgt_embed, pos_encoding, encoder, decoder and generator as in exercises/README.md
    ko: 모델에 exercises/README.md와 같은 src_embed, tgt_embed, pos_encoding, encoder, decoder, generator가 있습니다"""
    dims = _Dims(example)
    weights.expect_names(dims.model, student, weights.transformer_state(dims.V_SRC, dims.V_TGT, dims.D, dims.H, 1, 1,
                                                                        dims.FF, dims.MAX_LEN),
                         what=f"Transformer({dims.V_SRC}, {dims.V_TGT}, d_model={dims.D}, ...)")


@pytest.mark.kind("shapes")
@pytest.mark.points(0.25)
def test_shapes(student, seed, example):
    """encode, decode and forward return [B, S, d_model], [B, T, d_model] and [B, T, tgt_vocab_size]
    ko: encode, decode, forward가 [B, S, d_model], [B, T, d_model], [B, T, tgt_vocab_size]를 돌려줍니다"""
    dims = _Dims(example)
    _, src, tgt = dims.data(seed)

    def run(impl):
        m = dims.model(impl)
        m.eval()
        memory = m.encode(src)
        return tuple(memory.shape), tuple(m.decode(tgt, memory, src).shape), tuple(m(src, tgt).shape)

    B, S, T, D = dims.B, dims.S, dims.T, dims.D
    expect_equal(run, student, ((B, S, D), (B, T, D), (B, T, dims.V_TGT)), what=say("(encode, decode, forward) shapes", "(encode, decode, forward)의 모양"))


@pytest.mark.integration
@pytest.mark.kind("values")
@pytest.mark.part("integration")
@pytest.mark.points(1)
def test_with_your_own_components(student, seed, example):
    """integration: with your own components (embedding.py, positional_encoding.py, masks.py, encoder.py, decoder.py and what they import), forward gives the logits PyTorch's layers give
    ko: 통합: 여러분의 구성 요소(embedding.py, positional_encoding.py, masks.py, encoder.py, decoder.py와 그들이 가져오는 모듈)로 forward가 PyTorch 층들과 같은 로짓을 냅니다"""
    dims = _Dims(example)
    gen, src, tgt = dims.data(seed)
    tgt[-1, 3:] = PAD   # a padded target row too: forward builds both padding masks
    oracle = oracles.transformer_case(src, tgt, src_vocab=dims.V_SRC, tgt_vocab=dims.V_TGT, d_model=dims.D,
                                      num_heads=dims.H, d_ff=dims.FF, num_layers=1, max_len=dims.MAX_LEN, pad_id=PAD,
                                      rng=gen)

    def run(impl):
        return weights.loaded(dims.model(impl), oracle.state, "Transformer")(src, tgt)

    expect_equal(run, student, oracle.expected, what=f"Transformer({dims.V_SRC}, {dims.V_TGT}, d_model={dims.D}, ...)(src, tgt)",
                 valid=inputs.valid_positions(tgt == PAD))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_causal_leakage(student, seed, example):
    """forward builds the causal mask: changing target tokens after t leaves the logits up to t unchanged
    ko: forward가 인과 마스크를 만듭니다: t 이후의 타깃 토큰을 바꿔도 t 까지의 로짓은 그대로입니다"""
    dims = _Dims(example)
    gen, src, tgt = dims.data(seed)
    t = 1
    tgt2 = tgt.clone()
    tgt2[:, t + 1:] = torch.randint(3, dims.V_TGT, (dims.B, dims.T - t - 1), generator=gen)

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return m(src, tgt)[:, :t + 1], m(src, tgt2)[:, :t + 1]

    expect_same(run, student, what=say(f"logits at positions 0..{t} after changing later target tokens",
                                       f"뒤쪽 타깃 토큰을 바꾼 뒤 위치 0..{t}의 로짓"))
    _uses_context(student, seed, dims)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_source_padding_invariance(student, seed, example):
    """encode and forward build the source padding mask: extra padding on the source changes nothing
    ko: encode와 forward가 소스 패딩 마스크를 만듭니다: 소스에 패딩을 더 붙여도 결과가 같습니다"""
    dims = _Dims(example)
    _, src, tgt = dims.data(seed)
    longer = torch.cat([src, torch.full((dims.B, 3), PAD)], dim=1)
    valid = inputs.valid_positions(src == PAD)

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return (m.encode(src), m(src, tgt)), (m.encode(longer)[:, :dims.S], m(longer, tgt))

    expect_same(run, student, what=say("(memory, logits) with 3 more padding columns on the source",
                                       "소스에 패딩 열 3개를 더 붙인 (memory, logits)"),
                valid=(valid, None))
    _uses_context(student, seed, dims)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_swapping_two_examples_swaps_their_outputs(student, seed, example):
    """Swapping two examples of the batch swaps their logits and changes nothing else (batch-first layout)
    ko: 배치의 두 예제를 바꾸면 두 로짓만 서로 바뀌고 나머지는 그대로입니다 (배치 우선 배치)"""
    dims = _Dims(example)
    _, src, tgt = dims.data(seed)
    order = inputs.swap_first_two(dims.B)

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return m(src[order], tgt[order]), m(src, tgt)[order]

    expect_same(run, student, what=say("logits on the batch with examples 0 and 1 swapped, against the "
                                       "swapped logits", "예제 0과 1을 바꾼 배치의 로짓(바뀐 로짓과 비교)"))
    _uses_context(student, seed, dims)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_eval_is_deterministic(student, seed, example):
    """With dropout=0.3, forward in eval() mode gives the same logits twice
    ko: dropout=0.3 이라도 eval() 모드의 forward는 두 번 같은 로짓을 냅니다"""
    dims = _Dims(example)
    _, src, tgt = dims.data(seed)

    def run(impl):
        m = dims.model(impl, dropout=0.3)
        m.eval()
        return m(src, tgt), m(src, tgt)

    expect_same(run, student, what=say("Transformer(dropout=0.3).eval() logits, second call",
                                       "Transformer(dropout=0.3).eval()의 두 번째 호출 로짓"))
    _uses_context(student, seed, dims)


@pytest.mark.kind("property")
@pytest.mark.points(1)
def test_greedy_starts_at_bos_and_stops_at_max_len(student, seed, example):
    """greedy_decode of a model that always predicts token 5 gives [BOS, 5, 5, ...] of length max_len
    ko: 항상 토큰 5를 예측하는 모델의 greedy_decode는 길이 max_len의 [BOS, 5, 5, ...]입니다"""
    dims = _Dims(example)
    _, src, _ = dims.data(seed)

    def run(impl):
        m = dims.model(impl)
        seq2seq.rig_generator(m, seq2seq.one_hot_bias(dims.V_TGT, 5))
        m.eval()
        return m.greedy_decode(src, BOS, EOS, 6)

    expected = torch.full((dims.B, 6), 5, dtype=torch.long)
    expected[:, 0] = BOS
    expect_equal(run, student, expected, what="greedy_decode(src, bos_id=1, eos_id=2, max_len=6)",
                 known_mistakes=mistaken.greedy_length(expected))
    _uses_context(student, seed, dims)


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_greedy_stops_when_all_rows_end(student, seed, example):
    """greedy_decode stops as soon as every row has produced EOS: [BOS, EOS] for a model that predicts EOS
    ko: 모든 행이 EOS를 내면 greedy_decode가 바로 멈춥니다: EOS만 예측하는 모델은 [BOS, EOS]"""
    dims = _Dims(example)
    _, src, _ = dims.data(seed)

    def run(impl):
        m = dims.model(impl)
        seq2seq.rig_generator(m, seq2seq.one_hot_bias(dims.V_TGT, EOS))
        m.eval()
        return m.greedy_decode(src, BOS, EOS, 8)

    expect_equal(run, student, torch.tensor([[BOS, EOS]] * dims.B), what="greedy_decode(src, bos_id=1, eos_id=2, max_len=8)")
    _uses_context(student, seed, dims)


PUBLIC = _Dims()   # the greedy consistency test's sizes, whatever the run


def _verify_greedy(got):
    free, logits, eos, ended = got
    compare(tuple(free.shape), (PUBLIC.B, 8), what=_("shape of greedy_decode(..., max_len=8) when no row ends"))
    compare(free[:, 0], torch.full((PUBLIC.B,), BOS), what=_("column 0 of greedy_decode"))
    agrees = seq2seq.argmax_agrees(logits, free[:, 1:])
    if not bool(agrees.all()):
        row, step = (~agrees).nonzero()[0].tolist()
        raise Mismatch(_("greedy_decode chose token {token} at row {row}, step {step}, but the argmax of "
                         "forward(src, tgt[:, :step]) there is another token").format(
            token=int(free[row, step + 1]), row=row, step=step + 1))
    compare(ended, seq2seq.finish_at_eos(free, eos, PAD),
            what=_("greedy_decode with eos_id={eos} (rows that ended must hold pad_id afterwards)").format(eos=eos))


@pytest.mark.kind("property")
@pytest.mark.no_twin("fixed weights and source, chosen for the test's power (tests/test_checks_draws_power.py)")
@pytest.mark.points(1)
def test_greedy_matches_forward_and_pads_finished_rows(student, seed):
    """greedy_decode picks forward's argmax at every step; rows that produced EOS are padded afterwards
    ko: greedy_decode는 매 단계 forward의 argmax를 고르고, EOS를 낸 행은 그 뒤를 패딩으로 채웁니다"""
    dims = PUBLIC
    # Fixed weights and source, whatever the seed: a model whose greedy tokens change from step 1 to
    # step 2 in every row (tests/test_checks_draws_power.py), so code that reads the wrong position's
    # logits always fails. With the seed's own initialisation, some draws decoded one token per row.
    _, src, _ = dims.data(GREEDY_WEIGHTS)
    never = dims.V_TGT - 1

    def run(impl):
        m = dims.model(impl)
        seq2seq.redraw_(m, GREEDY_WEIGHTS)
        seq2seq.rig_generator(m, never=never)
        m.eval()
        free = m.greedy_decode(src, BOS, never, 8)
        logits = m(src, free[:, :-1]) if free.dim() == 2 and free.shape[1] > 1 else free
        eos = seq2seq.choose_eos(free, exclude=(PAD, BOS, never)) if free.dim() == 2 else EOS
        return free, logits, eos, m.greedy_decode(src, BOS, eos, 8)

    expect_property(run, student, _verify_greedy)
    _uses_context(student, seed, dims)


@pytest.mark.kind("edge")
@pytest.mark.points(0.5)
def test_greedy_max_len_edges(student, seed, example):
    """greedy_decode with max_len=1 returns the BOS column; max_len=0 raises ValueError
    ko: max_len=1이면 BOS 열만 돌려주고, max_len=0이면 ValueError를 냅니다"""
    dims = _Dims(example)
    _, src, _ = dims.data(seed)

    def run(impl):
        m = dims.model(impl)
        m.eval()
        return m.greedy_decode(src, BOS, EOS, 1)

    expect_equal(run, student, torch.full((dims.B, 1), BOS), what="greedy_decode(src, bos_id=1, eos_id=2, max_len=1)")
    model = dims.model(student)
    expect_raises(lambda: model.greedy_decode(src, BOS, EOS, 0), "ValueError",
                  what="greedy_decode(..., max_len=0)", names=("max_len",), values=(0,))


@pytest.mark.kind("property")
@pytest.mark.points(0.5)
def test_greedy_leaves_mode_alone(student, seed, example):
    """greedy_decode leaves the model in training mode after model.train() and in eval mode after model.eval()
    ko: greedy_decode는 train()/eval() 모드를 바꾸지 않습니다"""
    dims = _Dims(example)
    _, src, _ = dims.data(seed)

    def run(impl):
        m = dims.model(impl)
        m.train()
        m.greedy_decode(src, BOS, EOS, 3)
        after_train = m.training
        m.eval()
        m.greedy_decode(src, BOS, EOS, 3)
        return after_train, m.training

    expect_equal(run, student, (True, False), what=say("(model.training after greedy_decode in train mode, in eval mode)",
                                                "(train 모드에서 greedy_decode 뒤의 model.training, eval 모드에서)"))
