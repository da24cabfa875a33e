"""Families of mistakes real code makes: one table per place where code written elsewhere chooses
differently from the contract, each variant with one id, one hint and one verdict (a mistake, or a
real convention the contract does not use) in both editions of the kit.

A family is a site of the computation and the choices public code makes there: the feed-forward's
activation (ReLU here; GELU, its tanh approximation, SiLU elsewhere; GELUs with a wrong constant),
the attention scores' scale (``sqrt(d_k)``; ``d_k``, the number of tokens, the number of heads,
none), where and with which polarity a mask is applied (``True = keep`` with a finite fill, added as
numbers, applied after the softmax, built and never applied), the part of a head RoPE rotates (all of
it; a half or a quarter, interleaved or rotate-half), the layout and bias of a projection, what the
Transformer returns (logits; probabilities, log-probabilities) and how ``greedy_decode`` counts
``max_len``. Each variant carries:

* ``code``: the variant written as the family's site of the reference solution, from which
  :func:`autograder.mistakes.catalog.generated` makes the catalog's mutant (instructor kit), so a
  failing test names it when it reproduces the student's values on the test's own inputs;
* ``formula``: where the public formulas compute it, what it computes, for
  :mod:`autograder.checks.mistaken` (the student edition names it without the reference);
* ``en``/``ko``/``convention``: the hint, and whether it is a real convention worded as such
  (:mod:`autograder.mistakes.diagnosis` lists every variant, so both editions agree).

Nothing here reads ``solutions/`` or the catalog: this module ships in the student edition.
"""

from __future__ import annotations

from autograder.mistakes.families.attention import (ATTENTION_MASK, ATTENTION_SCALE, FORBIDDEN, FORBIDDEN_MASK,
                                                    MHA_MASK, MHA_SCALE)
from autograder.mistakes.families.layers import FFN_ACTIVATION, STRUCTURE
from autograder.mistakes.families.models import (GREEDY_LENGTH, LOOP, ROPE_PARTIAL, SEQ2SEQ_LOOP, SEQ2SEQ_LOSS,
                                                 SEQ2SEQ_SHIFT, TRANSFORMER_OUTPUT)
from autograder.mistakes.families.variant import Variant

__all__ = ["ATTENTION_MASK", "ATTENTION_SCALE", "FAMILIES", "FFN_ACTIVATION", "FORBIDDEN", "FORBIDDEN_MASK",
           "GREEDY_LENGTH", "LOOP", "MHA_MASK", "MHA_SCALE", "ROPE_PARTIAL", "SEQ2SEQ_LOOP", "SEQ2SEQ_LOSS", "SEQ2SEQ_SHIFT", "STRUCTURE",
           "TRANSFORMER_OUTPUT", "VARIANTS", "Variant"]

#: every family whose variants are mistakes of an exercise (FORBIDDEN, the forbidden functions themselves, is not)
FAMILIES = (FORBIDDEN_MASK, FFN_ACTIVATION, ATTENTION_SCALE, MHA_SCALE, ATTENTION_MASK, MHA_MASK, ROPE_PARTIAL,
            TRANSFORMER_OUTPUT, GREEDY_LENGTH, STRUCTURE, LOOP, SEQ2SEQ_LOOP, SEQ2SEQ_LOSS, SEQ2SEQ_SHIFT)

#: every variant by id
VARIANTS: dict[str, Variant] = {v.id: v for family in FAMILIES for v in family}
