"""The child process's own set-up, before any student code: seeding, rlimits, the memory cap and
the trusted imports every child shares (:func:`import_trusted`, run once by the zygote).
Re-exported by :mod:`.runner`. Imports only the standard library, torch and this package."""

from __future__ import annotations

import random
import resource
import signal
import sys

from . import forbidden


def seed_everything(seed: int) -> None:
    """Seed ``random``, numpy (if imported) and torch's CPU generator with ``seed`` (the state
    ``torch.manual_seed(seed)`` gives them), and CUDA's generators when CUDA is initialised.

    Not ``torch.manual_seed`` itself: for every device not yet initialised it queues a lazy
    seeding that records a stack trace (reading source lines through ``linecache``), 0.3-0.8 ms a
    call, and the child is seeded before every test: it was a sixth of a correct submission's
    time in the child. Student code that only later starts CUDA gets an unseeded
    CUDA generator; the kit grades on the CPU, where the draws are exactly as before."""
    import torch

    random.seed(seed)
    torch.default_generator.manual_seed(int(seed))
    cuda = sys.modules.get("torch.cuda")  # not torch.cuda: in the child that attribute imports it again
    if cuda is not None and cuda.is_initialized():
        cuda.manual_seed_all(int(seed))
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % (2**32))


RLIMITS = {
    "memory_bytes": resource.RLIMIT_DATA,
    "cpu_seconds": resource.RLIMIT_CPU,
    "file_bytes": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "open_files": resource.RLIMIT_NOFILE,
}


def apply_limits(limits: dict) -> None:
    """Apply the rlimits of ``limits`` (:data:`RLIMITS`) to this process (inherited by anything it starts)."""
    for key, which in RLIMITS.items():
        value = limits.get(key)
        if value:
            try:
                resource.setrlimit(which, (int(value), int(value)))
            except (ValueError, OSError):
                pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # A write past the file-size cap raises an error in the writer instead of killing us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def cap_memory(memory_bytes: int) -> dict:
    """Cap this process's real memory: ``RLIMIT_AS`` = the address space mapped now (torch's
    libraries, ~3.3 GB for a CUDA build, already loaded) + ``memory_bytes``. Unlike
    ``RLIMIT_DATA`` it counts shared anonymous memory (``mmap(MAP_SHARED | MAP_ANONYMOUS)``,
    which is RAM all the same); an allocation past it fails (``MemoryError``, ``ENOMEM``).
    Returns what is in force for ``hello``: ``{"memory_cap": "RLIMIT_AS" or "RLIMIT_DATA only",
    "memory_cap_bytes": n, "mapped_at_start": n}``."""
    mapped = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    mapped = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if not memory_bytes or not mapped:
        return {"memory_cap": "RLIMIT_DATA only", "memory_cap_bytes": int(memory_bytes or 0), "mapped_at_start": mapped}
    limit = mapped + int(memory_bytes)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        return {"memory_cap": "RLIMIT_DATA only", "memory_cap_bytes": int(memory_bytes), "mapped_at_start": mapped}
    return {"memory_cap": "RLIMIT_AS", "memory_cap_bytes": limit, "mapped_at_start": mapped}


def import_trusted() -> None:
    """Import what every child uses, before any submission is on ``sys.path`` (so that no
    student file can shadow it): torch (on one thread), safetensors, the kit's graph recorder and
    trainer (:mod:`.graphs`, :mod:`.graph_training`), the loop tests' probes (:mod:`.loop_probes`)
    and, where torch brought numpy in, ``numpy.random``, which :func:`seed_everything` seeds before every test (a lazy
    submodule of numpy 2: imported by each child's first test otherwise, ~8 ms per child); and
    the seccomp binding (:func:`.syscalls.prepare`)."""
    import torch

    torch.set_num_threads(1)
    import safetensors.torch  # noqa: F401

    if "numpy" in sys.modules:
        import numpy.random  # noqa: F401
    from . import graph_training, graphs  # noqa: F401  (the training checks' tasks; nothing is importable later)
    from . import loop_probes  # noqa: F401  (the loop tests' probe models and the kit's sequence loss)
    from . import component_calls, components, proxies  # noqa: F401  (the served components' operator, before the snapshot)
    forbidden.wrap()   # the forbidden APIs' wrappers, before the snapshot
    from . import syscalls

    syscalls.prepare()
