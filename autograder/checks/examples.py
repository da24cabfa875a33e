"""A public test's inputs: the public examples, or fresh draws of the same kind in its hidden twin.

A public test shows its inputs and the expected values, so code could be right on exactly those
inputs and nowhere else. In a grading run every public test therefore runs again among the
hidden tests as its *twin* (:mod:`autograder.run.twins`), and its points are paid as far as the
twin passes (:mod:`autograder.run.payment`). The test body is the same; only what it draws
through the ``example`` fixture (an :class:`Example`) changes:

* in the public test: the public sizes and values, the same at every run (``example.rng(5)`` is
  ``torch.Generator().manual_seed(5)``, ``example.sizes((12, 3), ...)`` is ``[12, 3]``);
* in the twin: other sizes from the same range and other values from the twin's seed (the run's
  seed mixed with the twin's id), never shown to the student.

A test that draws from its ``seed`` or ``rng`` fixture needs nothing more: the twin's seed is
its own. The public draws keep their constraints in the twin because each call says the range
(``low``, ``high``, ``even``, ``exclude``) the sizes of its kind come from.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Sequence

import torch

from autograder.checks import inputs


class Example:
    """The inputs of the running public test (the ``example`` fixture); ``twin``: whether this
    is the test's hidden twin, ``seed`` the running test's seed (the twin's own)."""

    def __init__(self, twin: bool, seed: int):
        self.twin = bool(twin)
        self._seed = int(seed)
        self._draws = torch.Generator().manual_seed(self._mixed("sizes"))

    def _mixed(self, purpose) -> int:
        digest = hashlib.sha256(f"{self._seed}:{purpose}".encode()).digest()
        return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF

    def rng(self, public_seed: int) -> torch.Generator:
        """A generator for the test's tensors: ``torch.Generator().manual_seed(public_seed)`` in the
        public test; in the twin, one seeded from the twin's seed and ``public_seed`` (each public
        seed its own stream)."""
        seed = self._mixed(f"rng:{public_seed}") if self.twin else int(public_seed)
        return torch.Generator().manual_seed(seed)

    def sizes(self, public: Sequence[int], low: int, high: int, *, even: bool = False,
              exclude: Sequence[int] = ()) -> list[int]:
        """``list(public)`` in the public test; in the twin as many pairwise different integers of
        ``[low, high]`` (even ones with ``even``, none of ``exclude``) (:func:`.inputs.distinct`).

        Raises:
            ValueError: the range holds too few candidates (the twin's draw).
        """
        if not self.twin:
            return [int(n) for n in public]
        return inputs.distinct(self._draws, len(public), low, high, exclude=tuple(exclude), even=even)

    def pick(self, public: Any, draw: Callable[[torch.Generator], Any]) -> Any:
        """``public`` in the public test; ``draw(generator)`` in the twin (a value of the same kind:
        a tensor of the same role, a mask with the same properties)."""
        return draw(self._draws) if self.twin else public
