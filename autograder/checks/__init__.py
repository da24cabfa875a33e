"""The suite-author API: what a grading suite (``autograder/suites/public|hidden/test_<name>.py``)
uses besides its fixtures. One page; the details are in each function's docstring.

Suite files are imported by path and must not import each other; what several suites need lives
here, one module per concern. All of it is trusted parent-side code: it never imports a
submission (the ``student`` fixture runs the student's code in a sandboxed child).

**Checks** (:mod:`autograder.checks.expectations`): write the computation once as ``run(impl)``; a check runs
it on the student, compares, and on a mismatch names the mistake (the catalog mutant whose ``run``
reproduces the student's output, else one of the ``variants=`` built by :mod:`.mistaken`; the one
place that does this is :func:`autograder.checks.expectations.naming_mistakes`).

- ``check(run, student, expected=None, *, what, atol, rtol, valid, variants)``: the output equals
  ``expected``: a value, ``None`` (``run(reference)``, hidden tests only), or a function of the
  student's output (``lambda got: (got[0], got[0])``: a property of its own output);
- ``expect_same(run, student, *, what)``: ``run`` returns ``(before, after)`` that must agree;
- ``expect_property(run, student, verify)``: ``verify(output)`` raises ``Mismatch`` itself;
- ``expect_raises(call, "ValueError", *, what, names, values)``: a contract error;
- ``compare(got, expected, *, what)`` and ``Mismatch``: a plain comparison, naming nothing.

**Inputs** (:mod:`.inputs`, everything drawn from the test's ``rng``): sizes
(``integer``, ``distinct``, ``distinct_dims``, ``layer_dims``), tensors and ids (``randn``,
``token_ids``, ``padded_token_ids``, ``replace_where``), masks, True = blocked (``padding_mask``
from lengths, ``random_padding_mask``, ``random_mask``, ``causal_mask``, ``valid_positions`` for
``valid=``), batch order (``swap_first_two``, ``batch_permuted``), and ``noncontiguous(impl, fn,
*args)``, a call whose tensors reach the student as non-contiguous views.

**Weights** (:mod:`.weights`, state dicts under the kit's names): drawn (``linear_state``,
``mha_state``, ``ffn_state``), read from a PyTorch oracle (``kit_state(module)``: an
``nn.MultiheadAttention``, a Transformer layer or stack), loaded (``load(module, state, what)``,
which fails clearly on misnamed attributes).

**Oracles**: :mod:`.oracles`, PyTorch modules (``torch_mha(state, ...)``, ``mha_forward``,
``torch_layer``, ``torch_stack``, ``randomize_``) run through the slow path by ``run(module,
...)``; :mod:`.formulas`, the contract's equations in plain torch (sinusoidal table, masked
softmax, attention, RoPE): the oracles of public tests, which may not use the reference solutions.

**Naming mistakes in the student edition** (:mod:`.mistaken`): ``{mistake id: callable}``
builders from the public formulas, passed as ``check(..., variants=...)``.

**Exercise-specific**: :mod:`.seq2seq` (greedy decoding: rigged generators, ``finish_at_eos``),
:mod:`.training` and :mod:`.transformer_training` (the training checks), :mod:`.draws` (their
secret-keyed per-run draws, not the test's ``rng``).

Messages written here are bilingual through ``say(en, ko)`` (:func:`autograder.i18n.authored`) or
``autograder.i18n._()``.
The student edition ships the modules public suites import (``autograder/exports/release.py`` follows the
imports), so a public suite imports neither the catalog nor the reference solutions.
"""

from __future__ import annotations

from autograder.i18n import authored as say  # noqa: F401  (suites write ``say(en, ko)``)
