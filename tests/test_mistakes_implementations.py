"""The implementation sets the checks run (:mod:`autograder.mistakes.implementations`): each set
imports its own modules, apart from ``sys.modules``."""

import sys

from autograder.mistakes import implementations


def test_variants_are_isolated_from_sys_modules():
    before = {k: sys.modules.get(k) for k in ("masks", "attention", "positional_encoding")}
    ref = implementations.reference()
    assert {k: sys.modules.get(k) for k in before} == before
    mask = ref.masks.make_causal_mask(3)
    assert mask.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    # the attention module uses the masks module of its own set
    assert ref.attention.masked_softmax is ref.masks.masked_softmax
