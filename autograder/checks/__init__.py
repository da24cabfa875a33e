"""The suite-author API: what a grading suite (``autograder/suites/public|hidden/test_<name>.py``)
imports besides pytest and torch, all of it from this one package. The guide is docs/SUITES.md;
the details are in each function's docstring::

    from autograder.checks import _, expect_equal, expect_raises, expect_reference, once, say
    from autograder.checks import inputs, mistaken, oracles, weights

Suite files are imported by path and must not import each other; what several suites need lives
here, one module per concern. All of it is trusted parent-side code: it never imports a
submission (the ``student`` fixture runs the student's code in a sandboxed child).

**Checks** (:mod:`.expectations`): write the computation once as ``run(impl)``; a check runs it on
the student, compares, and on a mismatch names the mistake (the catalog mutant whose ``run``
reproduces the student's output, else one of the ``known_mistakes=`` built by :mod:`.mistaken`).
Each returns the student's output.

- ``expect_reference(run, student, *, what, atol, rtol, valid, known_mistakes)``: equal to
  ``run(reference)`` (hidden tests only: the student edition has no reference);
- ``expect_equal(run, student, expected, *, what, ...)``: equal to the value ``expected``;
- ``expect_consistent(run, student, rule, *, what, ...)``: a property of the output, which must
  equal ``rule(output)`` (``lambda got: (got[0], got[0][:, perm])``);
- ``expect_same(run, student, *, what)``: ``run`` returns ``(before, after)``, which must agree;
- ``expect_property(run, student, verify)``: ``verify(output)`` raises ``Mismatch`` itself;
- ``expect_differs(run, student, *, what)``: ``run`` returns ``(before, after)``, which must differ:
  the premise of a property test (the code uses the input the property is about), so that code
  which ignores its context does not pass causality or padding invariance vacuously;
- ``expect_raises(call, "ValueError", *, what, names, values)``: a contract error;
- ``compare(got, expected, *, what)`` and ``Mismatch``: a plain comparison, naming nothing;
  ``naming_mistakes(run, got)``: the block's ``Mismatch`` names the mistake (a check of one's own).

**Text and set-up**: ``say(en, ko)``, text written in both languages; ``_("...")``, text with a
Korean entry in ``autograder/locale``; ``@once``, a set-up helper computed once per process for
the same arguments and generator state (:func:`autograder.memo.once`).

**Inputs** (:mod:`.inputs`, everything drawn from the test's ``rng``): sizes
(``integer``, ``distinct``, ``distinct_dims``, ``layer_dims``), tensors and ids (``randn``,
``token_ids``, ``padded_token_ids``, ``replace_where``), masks, True = blocked (``padding_mask``
from ``lengths``, ``random_padding_mask``, ``attention_mask``, ``random_mask``, ``causal_mask``,
``valid_positions`` for ``valid=``; the drawn ones keep two open keys in every compared row), batch order (``swap_first_two``, ``batch_permuted``), and ``noncontiguous(impl, fn,
*args)``, a call whose tensors reach the student as non-contiguous views.

**Public examples** (:mod:`.examples`): a public test takes the ``example`` fixture and draws its
inputs through it (``example.sizes((12, 3), 2, 8)``, ``example.rng(7)``, ``example.pick(value,
draw)``): the public values in the test itself, fresh draws of the same kind in its hidden twin.

**Weights** (:mod:`.weights`, state dicts under the kit's names): drawn (``linear_state``,
``mha_state``, ``ffn_state``), read from a PyTorch oracle (``kit_state(module)``: an
``nn.MultiheadAttention``, a Transformer layer or stack), loaded (``loaded(module, state, what)``:
the module with the state loaded, in eval mode, under the module's own names when it has the
contract's structure under others, :mod:`.renaming`; a structure that takes no weights explained once,
:mod:`.structure`; ``loaded_or_own``: a property test's module, on its own weights where the state does
not fit; ``expect_names``: the one names test of an exercise). A check fails a test whose exercise's
own code reached a function the contract forbids (:mod:`.forbidden`).

**Oracles**: :mod:`.oracles`, PyTorch modules (``torch_mha(state, ...)``, ``mha_forward``,
``torch_layer``, ``torch_stack``, ``randomize_``) run through the slow path by ``run(module,
...)``; :mod:`.formulas`, the contract's equations in plain torch (sinusoidal table, masked
softmax, attention, RoPE): the oracles of public tests, which may not use the reference solutions.

**Naming mistakes in the student edition** (:mod:`.mistaken`): ``{mistake id: callable}``
builders from the public formulas, passed as ``expect_equal(..., known_mistakes=...)``.

**Exercise-specific**: :mod:`.seq2seq` (greedy decoding: rigged generators, ``finish_at_eos``),
:mod:`.seq2seq_loss` (``sequence_loss``'s and ``teacher_forcing``'s known mistakes, ``keeps_graph``),
:mod:`.training` and :mod:`.transformer_training` (the training checks), :mod:`.training_loop`
(``train_autoencoder`` against the kit's own loop) and :mod:`.seq2seq_loop` (``train_transformer``'s),
with what both share in :mod:`.loop_verdicts`, :mod:`.draws` (their secret-keyed per-run draws,
not the test's ``rng``). :mod:`.contract_errors` (``expect_raises`` and its one rule for messages),
:mod:`.tolerance` (the contract's one tolerance), :mod:`.probes` (kit-fixed public calls, a hidden
failure's evidence) and :mod:`.examples` (the ``example`` fixture: public values, or a twin's draws).

Importing this package is cheap (no torch): the checks and ``once`` are imported on first use.
The student edition ships the modules public suites import (``autograder/exports/release.py``
follows the imports, those under ``TYPE_CHECKING`` below included), so a public suite imports
neither the catalog nor the reference solutions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from autograder.i18n import _
from autograder.i18n import authored as say

__all__ = ["Mismatch", "_", "compare", "expect_consistent", "expect_differs", "expect_equal", "expect_property",
           "expect_raises",
           "expect_reference", "expect_same", "naming_mistakes", "once", "say"]

# The names imported on first use (their modules import torch), and where each comes from.
_EXPECTATIONS, _COMPARISON = "autograder.checks.expectations", "autograder.mistakes.comparison"
_LAZY = {"expect_reference": _EXPECTATIONS, "expect_equal": _EXPECTATIONS, "expect_consistent": _EXPECTATIONS,
         "expect_same": _EXPECTATIONS, "expect_differs": _EXPECTATIONS, "expect_property": _EXPECTATIONS, "expect_raises": _EXPECTATIONS,
         "naming_mistakes": _EXPECTATIONS, "Mismatch": _COMPARISON, "compare": _COMPARISON,
         "once": "autograder.memo"}

if TYPE_CHECKING:  # what __getattr__ imports, for readers of imports (type checkers, release.py)
    from autograder.checks.expectations import (expect_consistent, expect_differs, expect_equal, expect_property,
                                                expect_raises, expect_reference, expect_same,
                                                naming_mistakes)
    from autograder.memo import once
    from autograder.mistakes.comparison import Mismatch, compare


def __getattr__(name: str):
    """``expect_reference``, ``once``...: imported from their module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
