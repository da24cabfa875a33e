"""What a sandboxed child may see and use: its limits, its environment, the host paths hidden
from it, the launcher that starts it and the submission files copied for it.

The policy half of :mod:`autograder.sandbox` (no process is started here); see the package's
docstring for the launchers and the limits.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from autograder import paths
from autograder.intake.limits import MODULE_MAX_BYTES
from autograder.intake.submission import submission_files

CHILD_PACKAGE = Path(__file__).resolve().parent.parent / "child"  # copied into the sandbox as _tkit_child
LAUNCHERS = ("zygote", "spawn")


@dataclass
class Limits:
    """Resource limits of one child. Times in seconds, sizes in bytes."""

    call_timeout: float = 5.0         # wall time of one request (a forward, a function call): a hang fails fast
    startup_timeout: float = 60.0     # wall time to start the child and answer hello
    memory_bytes: int = 6 * 1024**3   # RLIMIT_DATA (heap; torch itself needs ~1 GB), and RLIMIT_AS's room above torch
    cpu_seconds: int = 900            # RLIMIT_CPU for the child's whole life
    file_bytes: int = 64 * 1024**2    # RLIMIT_FSIZE: largest file the child may write
    open_files: int = 256             # RLIMIT_NOFILE
    nproc: int = 64                   # RLIMIT_NPROC: processes and threads (a private uid's, when root)
    work_bytes: int = 256 * 1024**2   # size of the writable tmpfs (zygote launcher with namespaces)
    preload_training: bool = False    # a training child: the zygote imports what optimizers need first (tasks.preload)
    syscall_filter: bool = True       # the child's seccomp filter (child/syscalls.py); False only in the kit's own tests

    def child_view(self) -> dict:
        """The limits the child applies to itself."""
        data = asdict(self)
        return {k: data[k] for k in ("memory_bytes", "cpu_seconds", "file_bytes", "open_files", "nproc",
                                     "syscall_filter")}


def launcher() -> str:
    """``TKIT_SANDBOX`` (``zygote`` or ``spawn``), else ``zygote`` on Linux, ``spawn`` elsewhere.
    Raises ValueError for another value."""
    choice = os.environ.get("TKIT_SANDBOX", "").strip().lower()
    if choice and choice not in LAUNCHERS:
        raise ValueError(f"TKIT_SANDBOX must be one of {', '.join(LAUNCHERS)}, got {choice!r}")
    if choice:
        return choice
    return "zygote" if sys.platform.startswith("linux") and hasattr(os, "pidfd_open") else "spawn"


def hidden_paths() -> list[str]:
    """Host paths a child must never see: the kit package (suites, hidden tests), the reference
    solutions, the kit's own tests and its git history."""
    root = paths.kit_root()
    candidates = [paths.PACKAGE_DIR, paths.solutions_dir(), root / ".git", root / "tests"]
    found = {Path(p).resolve() for p in candidates if p is not None and Path(p).exists()}
    return sorted(str(p) for p in found if not any(q in p.parents for q in found))  # nested: hidden with its parent


def clean_env(scratch: Path) -> dict:
    """The child's whole environment: nothing of the parent's but PATH and the locale."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": os.environ.get("TKIT_CHILD_CUDA", ""),
    }
    return env


MAX_MODULE_BYTES = MODULE_MAX_BYTES  # a student's module is code (a few KB), not data (e.g. MNIST in base85)


def copy_submission(src: Path, dest: Path, max_bytes: int = MAX_MODULE_BYTES) -> None:
    """Copy the submission's modules (see :func:`submission_files`) into ``dest``. A module
    larger than ``max_bytes`` is replaced by one whose import fails with a message saying so."""
    dest.mkdir(parents=True)
    for entry in submission_files(src):
        size = entry.stat().st_size
        if size <= max_bytes:
            shutil.copyfile(entry, dest / entry.name)
        else:
            message = (f"{entry.name} is {size // 1024} KB; the grader accepts modules of at most "
                       f"{max_bytes // 1024} KB ({entry.name} 파일이 너무 큽니다: 최대 {max_bytes // 1024} KB)")
            (dest / entry.name).write_text(f"raise ImportError({message!r})\n", encoding="utf-8")
