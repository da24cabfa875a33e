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
    assert points == {"3"}   # the three formula tests; the dropout test checks dropout only
