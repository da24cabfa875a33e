"""Seeding the parent's torch for one trusted computation (a reference, a mutant, a hybrid's
expected value).

:func:`cpu_seeded` is what ``with torch.random.fork_rng(): torch.manual_seed(seed)`` does for
code that runs on the CPU, without its side costs: ``torch.manual_seed`` also queues a lazy
seeding of the cuda, xpu and mtia generators (each records a stack trace) and ``fork_rng``
counts CUDA devices (loading the driver library), about 2 ms a call together. A failing test
tries up to :data:`autograder.checks.expectations.MAX_CANDIDATES` mutants under it, so it was a large part
of the mistake search (see ``benchmarks/bench_batch.py --profile --kind buggy``).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch


@contextlib.contextmanager
def cpu_seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's default CPU generator seeded with ``seed`` (the state
    ``torch.manual_seed(seed)`` gives it) and put the generator's previous state back after
    it, also when the block raises. Other devices' generators are left alone: the parent's
    trusted code computes on the CPU."""
    state = torch.get_rng_state()
    torch.default_generator.manual_seed(int(seed))
    try:
        yield
    finally:
        torch.set_rng_state(state)
