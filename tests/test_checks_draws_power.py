"""The drawing helpers of ``autograder.checks.inputs`` keep, for every seed, the properties that let
a test catch its mistakes: two open keys in every compared row (so no row's attention weights are
all equal, where a missing scale would make no difference) and the padded axis as long as its
longest row. The attention mutant without scaling loses the same points under several seeds."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.checks import inputs

SEEDS = range(50)
ROOT = Path(__file__).resolve().parents[1]


def _sizes(seed):
    rng = torch.Generator().manual_seed(seed)
    return rng, inputs.distinct(rng, 4, 2, 10)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_padding_mask_keeps_two_open_keys_in_every_row(seed):
    rng, (batch, k_len, *_) = _sizes(seed)
    mask = inputs.random_padding_mask(rng, batch, k_len, fully_masked=(batch - 1,))
    open_keys = (~mask).sum(-1)
    assert int(open_keys[batch - 1]) == 0
    assert int(open_keys[:batch - 1].min()) >= 2
    assert bool(mask[:batch - 1].any()) or k_len <= 2  # a compared row is padded too


@pytest.mark.parametrize("seed", SEEDS)
def test_attention_mask_keeps_two_open_keys_in_every_query_row(seed):
    rng, (batch, q_len, k_len, _) = _sizes(seed)
    mask = inputs.attention_mask(rng, batch, q_len, k_len, fully_masked=(batch - 1,), p=0.5)
    assert mask.shape == (batch, 1, q_len, k_len) and mask.dtype == torch.bool
    open_keys = (~mask).sum(-1)  # [batch, 1, q_len]
    assert bool(mask[batch - 1].all())
    assert int(open_keys[:batch - 1].min()) >= 2
    assert bool(mask[:batch - 1].any()) or k_len <= 2  # something is still blocked


def test_attention_mask_reopens_keys_when_everything_is_drawn_blocked():
    rng = torch.Generator().manual_seed(0)
    mask = inputs.attention_mask(rng, 3, 4, 5, p=1.0)
    assert int((~mask).sum(-1).min()) == 2


@pytest.mark.parametrize("seed", SEEDS)
def test_lengths_are_two_or_more_and_the_longest_fills_the_axis(seed):
    rng, (batch, size, *_) = _sizes(seed)
    for longest in (0, batch - 1):
        got = inputs.lengths(rng, batch, size, longest=longest)
        assert got.dtype == torch.long and got.shape == (batch,)
        assert int(got[longest]) == size
        assert int(got.min()) >= 2 and int(got.max()) == size
        assert int((~inputs.padding_mask(got, size)).sum(-1).min()) >= 2


@pytest.mark.slow
def test_unscaled_attention_loses_the_same_points_under_several_seeds():
    points = set()
    for seed in (1, 2, 3):
        out = subprocess.run([sys.executable, "cli.py", "validate", "--exercise", "attention", "--no-training",
                              "--seed", str(seed)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "COLUMNS": "250"})  # no truncated names in the table
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        row = re.search(r"attention_no_scaling\s*│\s*attention\s*│\s*([\d.]+)/10", out.stdout)
        assert row, out.stdout[-2000:]
        points.add(row.group(1))
    # every value is wrong, so its permutation, dropout, one-query and dropout_p-error tests are paid
    # 0 % too (points follow values); 2.5 before that, 3 before the shape-error test left the suite
    assert points == {"0"}


# -- the public greedy consistency test: fixed weights and source, whatever the seed

class _PublicTransformerSuite:
    """The public Transformer suite's constants (read from its source: importing a suite outside a
    grading run trips pytest's strict markers) and its ``_model`` and ``_data``, rebuilt from them."""

    def __init__(self):
        import ast

        tree = ast.parse((ROOT / "autograder" / "suites" / "public" / "test_transformer.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                target = node.targets[0]
                if isinstance(target, ast.Tuple):
                    for name, item in zip(target.elts, value):
                        setattr(self, name.id, item)
                else:
                    setattr(self, target.id, value)

    def _model(self, impl):
        return impl.transformer.Transformer(self.V_SRC, self.V_TGT, d_model=self.D, num_heads=self.H,
                                            num_encoder_layers=1, num_decoder_layers=1, d_ff=self.FF, dropout=0.0,
                                            max_len=self.MAX_LEN, pad_id=self.PAD)

    def _data(self, seed):
        gen = torch.Generator().manual_seed(seed)
        src = inputs.padded_token_ids(gen, self.SRC_LENGTHS, self.S, self.V_SRC, self.PAD)
        return gen, src, None


def _public_transformer_suite():
    return _PublicTransformerSuite()


def test_redraw_depends_on_the_names_and_seed_only():
    from autograder.checks import seq2seq
    from autograder.mistakes import implementations

    suite = _public_transformer_suite()
    states = []
    for torch_seed in (0, 1):
        torch.manual_seed(torch_seed)  # the child's seeding before a test: initialisations differ
        model = suite._model(implementations.reference())
        seq2seq.redraw_(model, suite.GREEDY_WEIGHTS)
        states.append(model.state_dict())
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    other = suite._model(implementations.reference())
    seq2seq.redraw_(other, suite.GREEDY_WEIGHTS + 1)
    assert not torch.equal(other.state_dict()["generator.weight"], states[0]["generator.weight"])


def test_the_greedy_weights_decode_tokens_that_change_in_every_row():
    """What makes the test catch greedy decoding that reads the first position's logits: with the
    fixed weights the free decoding's token at step 2 differs from step 1 in every row (code reading
    position 0 repeats step 1's token), and the end token chosen ends rows at different steps."""
    from autograder.checks import seq2seq
    from autograder.mistakes import implementations

    suite = _public_transformer_suite()
    never = suite.V_TGT - 1
    _, src, _ = suite._data(suite.GREEDY_WEIGHTS)
    model = suite._model(implementations.reference())
    seq2seq.redraw_(model, suite.GREEDY_WEIGHTS)
    seq2seq.rig_generator(model, never=never)
    model.eval()
    free = model.greedy_decode(src, suite.BOS, never, 8)
    assert bool((free[:, 2] != free[:, 1]).all()), free
    eos = seq2seq.choose_eos(free, exclude=(suite.PAD, suite.BOS, never))
    hits = free[:, 1:] == eos
    assert bool(hits.any(1).all())
    assert len(set(hits.float().argmax(1).tolist())) >= 2, (eos, free)


@pytest.mark.slow
@pytest.mark.parametrize("ident, seeds, points", [
    # 8/9 under seed 1 and 7/9 under 2 (public test, seed's initialisation); 8 under 6 (hidden test)
    ("transformer_greedy_first_position_logits", (1, 2, 6), 7.0),
    ("transformer_greedy_max_len_off_by_one", (1, 3), 5.5),       # 6.5 under 3: every row ended early
    ("transformer_no_source_padding_mask", (1, 4), 0.0),          # every values test pads its sources
    ("transformer_mixed_layout", (1, 6), 0.0),               # PE by example, not position: no value right
    ("transformer_no_causal_mask", (1, 20), 0.0),               # every values test has a causal mask
])
def test_transformer_mutants_lose_the_same_points_under_several_seeds(ident, seeds, points):
    from autograder import validate
    from autograder.mistakes import catalog

    mutant = catalog.by_id(ident)
    results = [validate.check_mutant(mutant, training=False, seed=seed) for seed in seeds]
    assert all(r.ok for r in results), [r.detail for r in results]
    assert {r.score for r in results} == {points}, [(seed, r.score) for seed, r in zip(seeds, results)]


@pytest.mark.slow
@pytest.mark.parametrize("kind, ident, seeds", [
    ("mutant", "mask_zero_fill", (1, 4, 14)),          # seed 4's random mask blocked nothing (dim=0 test)
    ("mutant", "mask_fill_result_discarded", (1, 4)),
    ("mutant", "mask_fully_masked_nan", (1, 5)),       # seed 5's fully blocked a column (dim=0 test)
    ("mutant", "mask_combined_with_and", (1, 8)),      # seed 8 drew S_k = 1 (combine_masks test)
    ("mutant", "mask_queries_masked", (1, 8)),
    ("degenerate", "masks_block_nothing", (1, 4, 14, 16)),  # 22 % under 4 (dim=0), 14 and 16 (S_k = 2)
    ("mutant", "attention_mask_ignored", (1, 4, 6, 10)),   # +0.5 where the non-contiguous test drew S_k = 2
])
def test_masks_draws_keep_their_power(kind, ident, seeds):
    """``validate --seeds 20`` found these moving with the seed; the hidden masks
    tests now build the property into the draw."""
    from autograder import validate
    from autograder.mistakes import catalog, degenerate

    if kind == "mutant":
        results = [validate.check_mutant(catalog.by_id(ident), training=False, seed=s) for s in seeds]
    else:
        results = [validate.check_degenerate(degenerate.by_id(ident), training=False, seed=s) for s in seeds]
    assert all(r.ok for r in results), [r.detail for r in results]
    assert len({r.score for r in results}) == 1, [(s, r.score) for s, r in zip(seeds, results)]


def test_a_padding_mask_that_could_pad_nothing_is_refused():
    """With length <= min_valid every row must stay open, so nothing is padded and code that ignores
    the mask passes (attention_mask_ignored moved with the seed: a non-contiguous test drew S_k = 2)."""
    rng = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="pads nothing"):
        inputs.random_padding_mask(rng, 3, 2)
    assert bool(inputs.random_padding_mask(rng, 3, 2, fully_masked=(2,))[2].all())
    for seed in SEEDS:
        mask = inputs.random_padding_mask(torch.Generator().manual_seed(seed), 4, 3)
        assert bool(mask.any()) and int((~mask).sum(-1).min()) >= 2


@pytest.mark.parametrize("seed", SEEDS)
def test_lengths_pad_another_row(seed):
    """Besides the full row, another row is shorter than the axis (every row full let an encoder
    that ignores its padding mask pass: 5.25 to 6.5 of 10 over 20 seeds)."""
    rng = torch.Generator().manual_seed(seed)
    for batch, size, longest in ((2, 5, 0), (3, 3, 2), (4, 9, 1)):
        got = inputs.lengths(rng, batch, size, longest=longest)
        assert int(got[longest]) == size and int((got < size).sum()) >= 1


@pytest.mark.slow
def test_encoder_padding_mask_ignored_loses_the_same_points_under_several_seeds():
    from autograder import validate
    from autograder.mistakes import catalog

    mutant = catalog.by_id("encoder_padding_mask_ignored")
    results = [validate.check_mutant(mutant, training=False, seed=s) for s in (1, 4, 7)]
    assert all(r.ok for r in results) and len({r.score for r in results}) == 1, [r.score for r in results]
