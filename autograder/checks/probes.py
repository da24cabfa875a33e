"""Public probes: calls on inputs the kit fixes, to show a hidden failure's mistake on public inputs.

When a hidden test fails naming catalog mistake M and no public test of that grading named M,
the feedback shows M on a *probe*: a call of M's exercise on inputs written here, as constants
(fixed seeds, fixed sizes), never drawn from a run's seed and never derived from a hidden test's
inputs. :func:`for_mistake` picks the first probe of M's exercise on which M's mutant and the
reference give different outputs (computed in the grading process on trusted code, once per
process); :mod:`autograder.run.counterexample_run` runs that probe on the submission in a fresh
child (one that never received a hidden input) and compares with the reference's value.

A probe is ``Probe(exercise, what, run)``: ``run(impl)`` calls the implementation (a
:class:`~autograder.sandbox.remote.RemoteImpl` or a :class:`~autograder.mistakes.implementations.LocalImpl`)
and returns tensors; ``what`` names the call as the reports show it. Exercises without a probe
(encoder, decoder, transformer, autoencoder, whose calls need a model's weights and sizes that
the public tests already cover) get no counterexample of this kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import torch

from autograder.checks import weights
from autograder.mistakes.comparison import ATOL, RTOL   # the contract's one tolerance


@dataclass(frozen=True)
class Probe:
    """One call on kit-fixed public inputs (see the module docstring)."""

    exercise: str
    what: str
    run: Callable[[Any], Any]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# -- the inputs: constants of this module -------------------------------------------------------
_PE_X = torch.randn(2, 5, 10, generator=_gen(101))
_IDS = torch.tensor([[4, 7, 2, 0, 0], [3, 0, 5, 1, 0]])
_SCORES = torch.randn(2, 3, 5, generator=_gen(102))
# row 2 blocks every key: a fully masked query row (its weights must be 0, not NaN or uniform)
_SCORE_MASK = torch.tensor([[False, False, True, False, True], [True, False, False, False, True],
                            [True, True, True, True, True]])
_Q = torch.randn(2, 3, 4, generator=_gen(103))
_K = torch.randn(2, 5, 4, generator=_gen(104))
_V = torch.randn(2, 5, 6, generator=_gen(105))
_KEY_MASK = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]]).unsqueeze(1)
_KPM = torch.tensor([[False, False, False, True, True], [False, True, True, True, True]])   # [B, S_k]
# batch row 1's second query sees no key at all (a fully masked row)
_FULL_MASK = torch.tensor([[[False, False, False, True, True]] * 3,
                           [[False, True, False, True, True], [True, True, True, True, True],
                            [False, False, True, False, False]]])
_FFN_X = torch.randn(2, 3, 6, generator=_gen(106))
_FFN_STATE = weights.ffn_state(_gen(107), 6, 10)
_ROPE_X = torch.randn(2, 3, 6, 8, generator=_gen(108))
_MHA_STATE = weights.mha_state(_gen(109), 12)
_MHA_X = torch.randn(2, 5, 12, generator=_gen(110))
_MHA_MEMORY = torch.randn(2, 4, 12, generator=_gen(111))
_MHA_KPM = torch.tensor([[False, False, True, True], [False, False, False, True]])
# batch row 1 pads every memory key: its queries see no key at all (zero weights, output out_proj.bias;
# a -1e9 fill gives uniform weights, a -inf fill NaN)
_MHA_FULL_KPM = torch.tensor([[False, False, True, True], [True, True, True, True]])
_CAUSAL = torch.ones(5, 5, dtype=torch.bool).triu(1)


def _mha(impl):
    return weights.loaded(impl.multi_head_attention.MultiHeadAttention(12, 3), _MHA_STATE)


def _pe_module(impl):
    module = impl.positional_encoding.PositionalEncoding(10, max_len=16)
    module.eval()
    return module(_PE_X)


PROBES: tuple[Probe, ...] = (
    Probe("positional_encoding", "sinusoidal_table(12, 10)", lambda impl: impl.positional_encoding.sinusoidal_table(12, 10)),
    Probe("positional_encoding", "PositionalEncoding(10, max_len=16).eval()(x[2, 5, 10])", _pe_module),
    Probe("masks", "make_padding_mask([[4, 7, 2, 0, 0], [3, 0, 5, 1, 0]])", lambda impl: impl.masks.make_padding_mask(_IDS)),
    Probe("masks", "make_padding_mask([[4, 7, 2, 0, 0], [3, 0, 5, 1, 0]], pad_id=5)",
          lambda impl: impl.masks.make_padding_mask(_IDS, pad_id=5)),
    Probe("masks", "make_causal_mask(5)", lambda impl: impl.masks.make_causal_mask(5)),
    Probe("masks", "masked_softmax(scores[2, 3, 5], mask[3, 5])",
          lambda impl: impl.masks.masked_softmax(_SCORES, _SCORE_MASK)),
    Probe("masks", "combine_masks(causal[5, 5], key_padding_mask[2, 5])",
          lambda impl: impl.masks.combine_masks(_CAUSAL, _KPM)),
    Probe("attention", "scaled_dot_product_attention(q[2, 3, 4], k[2, 5, 4], v[2, 5, 6], mask[2, 1, 5])",
          lambda impl: impl.attention.scaled_dot_product_attention(_Q, _K, _V, mask=_KEY_MASK)),
    Probe("attention", "scaled_dot_product_attention(q[2, 3, 4], k[2, 5, 4], v[2, 5, 6], mask[2, 3, 5] "
          "with a fully masked row)", lambda impl: impl.attention.scaled_dot_product_attention(_Q, _K, _V, mask=_FULL_MASK)),
    Probe("feed_forward", "PositionwiseFeedForward(6, 10)(x[2, 3, 6])",
          lambda impl: weights.loaded(impl.feed_forward.PositionwiseFeedForward(6, 10), _FFN_STATE)(_FFN_X)),
    Probe("rope", "rope_angles(8, 10)", lambda impl: impl.rope.rope_angles(8, 10)),
    Probe("rope", "apply_rope(x[2, 3, 6, 8])", lambda impl: impl.rope.apply_rope(_ROPE_X)),
    Probe("multi_head_attention", "MultiHeadAttention(12, 3)(x[2, 5, 12], memory[2, 4, 12], memory, key_padding_mask)",
          lambda impl: _mha(impl)(_MHA_X, _MHA_MEMORY, _MHA_MEMORY, key_padding_mask=_MHA_KPM)),
    Probe("multi_head_attention", "MultiHeadAttention(12, 3)(x[2, 5, 12], x, x, attn_mask=causal[5, 5])",
          lambda impl: _mha(impl)(_MHA_X, _MHA_X, _MHA_X, attn_mask=_CAUSAL)),
    Probe("multi_head_attention", "MultiHeadAttention(12, 3)(x[2, 5, 12], memory[2, 4, 12], memory, key_padding_mask "
          "with a fully padded row)",
          lambda impl: _mha(impl)(_MHA_X, _MHA_MEMORY, _MHA_MEMORY, key_padding_mask=_MHA_FULL_KPM)),
)


def of_exercise(exercise: str) -> list[Probe]:
    """The probes of ``exercise``, in order."""
    return [p for p in PROBES if p.exercise == exercise]


def first_difference(got: Any, expected: Any, what: str = "probe") -> str | None:
    """The first line of the comparison's message (``what`` names the call; the student's value and
    the expected one at the first difference) where ``got`` differs from ``expected`` at the
    probes' tolerances; None when they agree."""
    from autograder.mistakes.comparison import Mismatch, compare

    try:
        compare(got, expected, what=what, atol=ATOL, rtol=RTOL, show_expected=True)
    except Mismatch as exc:
        text = str(exc.message).strip()
        return text.splitlines()[0] if text else ""
    return None


def differs(got: Any, expected: Any) -> bool:
    """Whether ``got`` differs from ``expected`` as the reports' comparison sees it."""
    return first_difference(got, expected) is not None


@lru_cache(maxsize=None)
def for_mistake(mistake_id: str) -> Probe | None:
    """The first probe of the mistake's exercise on which its mutant's output differs from the
    reference's (both computed here, on trusted code), or None (no catalog entry, no probe of
    its exercise, or none tells them apart). Depends on the mistake alone: never on a run."""
    from autograder.mistakes import catalog, implementations

    try:
        mutant = catalog.by_id(mistake_id)
    except KeyError:   # not a catalog id (a formula-named mistake), or the student edition
        return None
    reference = implementations.reference()
    for probe in of_exercise(mutant.exercise):
        try:
            expected = probe.run(reference)
            wrong = probe.run(mutant.impl())
        except Exception:  # noqa: BLE001 - a mutant that raises on this probe: try the next one
            continue
        if differs(wrong, expected):
            return probe
    return None


def expected(probe: Probe) -> Any:
    """The reference's output on ``probe`` (computed here)."""
    from autograder.mistakes import implementations

    return probe.run(implementations.reference())
