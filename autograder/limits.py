"""The kit's size limits on student material, in one place.

Every part of the kit that reads a submission (grading, the training checks, the similarity
report) uses these figures, so a submission is refused for the same reason everywhere.

- ``SUBMISSION_CODE_MAX_BYTES``: all the code of one submission that the grader uses, together
  (the top-level ``.py`` modules, or the code cells of its notebooks once converted). The
  reference solutions of all eleven exercises are about 70 KB; 512 KiB leaves room for verbose
  students and stays well below what a table of MNIST digits needs (the official test set alone
  is 1.6 MB compressed), so a submission cannot carry the evaluation data.
- ``MODULE_MAX_BYTES``: one module.
- ``SUBMISSION_INTAKE_MAX_BYTES``: the raw files the trusted parent reads at all (a ``.zip``, a
  notebook with its outputs), before anything is extracted or converted; it bounds the work the
  parent does on student material.
"""

from __future__ import annotations

SUBMISSION_CODE_MAX_BYTES = 512 * 1024
MODULE_MAX_BYTES = 256 * 1024
SUBMISSION_INTAKE_MAX_BYTES = 64 * 1024 * 1024
