"""Shared helpers for the grading suites (instructor side: runs in the trusted parent).

Suite files are imported by path and must not import each other; what several suites
need lives here, one module per concern:

- :mod:`autograder.suitelib.draw`: random shapes (all dimensions distinct), tensors,
  token ids and padding masks drawn from a test's ``rng`` (a ``torch.Generator``);
- :mod:`autograder.suitelib.weights`: state dicts made by the test (so every
  implementation gets the same weights) and PyTorch oracles built from them
  (``nn.MultiheadAttention`` with copied weights);
- :mod:`autograder.suitelib.formulas`: the formulas of exercises/README.md written out in
  plain torch (sinusoidal table, masked softmax, attention, RoPE), used as oracles by
  public tests, which may not use the reference solutions;
- :mod:`autograder.suitelib.props`: property checks that name the mistake
  (:func:`~autograder.suitelib.props.fail`) and calls that hand the student
  non-contiguous inputs (:func:`~autograder.suitelib.props.noncontiguous`).

Messages written here are bilingual through :func:`say`.
"""

from __future__ import annotations

from autograder.i18n import language


def say(en: str, ko: str) -> str:
    """``en`` or ``ko``, whichever is the report's current language (see :mod:`autograder.i18n`)."""
    return ko if language() == "ko" else en
