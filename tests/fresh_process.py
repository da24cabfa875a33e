"""Run a check of a test module in a fresh interpreter (for the kit's own tests).

A whole-state restore (:mod:`autograder.child.snapshot`) in the test process itself would also undo
what the tests before it left there; the checks that exercise it in-process run in their own
interpreter instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def run_check(module: str, check: str, timeout: float = 300) -> None:
    """``module.check()`` in a fresh ``python``; AssertionError with its stderr when it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)])}
    run = subprocess.run([sys.executable, "-c", f"import {module}; {module}.{check}()"], cwd=TESTS, env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
