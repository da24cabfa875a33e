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


class SubmissionTooLarge(ValueError):
    """A submission's material is over one of the limits above. The message names the limit,
    the size found and the file(s), in the current language; it costs that submission only."""


def check_code_size(sizes: dict[str, int], limit: int = SUBMISSION_CODE_MAX_BYTES) -> None:
    """Refuse a submission whose graded code is over ``limit`` bytes in all.

    ``sizes`` maps each file's name (as the student named it: data, shown escaped by the
    caller) to its size in bytes. Raises :class:`SubmissionTooLarge` naming the total, the limit
    and the largest files.
    """
    total = sum(sizes.values())
    if total <= limit:
        return
    largest = ", ".join(f"{name} ({size // 1024} KB)"
                        for name, size in sorted(sizes.items(), key=lambda kv: -kv[1])[:3])
    from autograder.i18n import _

    raise SubmissionTooLarge(_(
        "the submission's code is {total} KB in all; the grader accepts at most {limit} KB (largest: {largest})"
    ).format(total=total // 1024, limit=limit // 1024, largest=largest))
