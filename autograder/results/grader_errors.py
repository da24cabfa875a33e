"""Grader errors: details for the instructor, a short note for the student.

When the grader itself fails on a test (an exception in the kit's own test code, not the
submission's fault), its traceback names the hidden suites' files, lines and source, which
must never reach ``results.json`` (Gradescope shows it to students). :func:`record` appends the
details to an instructor-only log (a file, e.g. ``grader-errors.log`` beside the gradebook, or
this process's stderr) under a short reference, and returns the note a student sees.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import os
import traceback
from pathlib import Path

from autograder.i18n import _

LOG = logging.getLogger("autograder.results.grader_errors")
NOT_GRADED_REASON = "grader error"  # extra_data["not_graded"] of such a test (the shared marker)


def record(exc: BaseException, *, nodeid: str, submission: str, log_path: str | Path | None = None) -> str:
    """Log ``exc`` with its traceback for the instructor; returns the student's note, which
    holds only a reference (``E`` and 8 hex digits) to find the entry in the log."""
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    ref = "E" + hashlib.sha256(f"{stamp}:{os.getpid()}:{submission}:{nodeid}".encode()).hexdigest()[:8]
    details = "".join(traceback.format_exception(exc))
    entry = f"[{stamp}] grader error {ref}\nsubmission: {submission}\ntest: {nodeid}\n{details}\n"
    if log_path:
        path = Path(log_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:  # one write per entry: workers appending at once do not interleave
            os.write(fd, entry.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    else:
        LOG.error("%s", entry)
    return _("not graded: the grader itself failed on this test (error {ref}); your instructor has the "
             "details. This is not a mistake in your code.").format(ref=ref)
