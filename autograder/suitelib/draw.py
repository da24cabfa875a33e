"""Random shapes and inputs for hidden tests, drawn from the test's ``rng``.

Every function takes a ``torch.Generator`` first, so a grade is reproducible from the
run's seed (recorded in results.json). Shapes are kept small: grading time matters
more than size, and the bugs the suites look for show at any size.
"""

from __future__ import annotations

import torch


def integer(rng: torch.Generator, low: int, high: int) -> int:
    """One integer drawn uniformly from ``[low, high]`` (both included)."""
    if high < low:
        raise ValueError(f"integer(): empty range low={low} > high={high}")
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def distinct(rng: torch.Generator, count: int, low: int, high: int, *, exclude=(), even: bool = False) -> list[int]:
    """``count`` pairwise different integers from ``[low, high]``, none in ``exclude``.

    With ``even=True`` only even numbers are drawn. Raises ValueError when the range
    holds too few candidates. Distinct sizes make transposed or swapped axes show up as
    shape errors or wrong values instead of passing by coincidence.
    """
    pool = [n for n in range(low, high + 1) if n not in set(exclude) and (not even or n % 2 == 0)]
    if len(pool) < count:
        raise ValueError(f"distinct(): only {len(pool)} candidates in [{low}, {high}] for {count} values")
    order = torch.randperm(len(pool), generator=rng)[:count]
    return [pool[int(i)] for i in order]


def randn(rng: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    """A standard-normal tensor of ``shape`` (times ``scale``), drawn in float64 and cast to ``dtype``."""
    return (torch.randn(*shape, generator=rng, dtype=torch.float64) * scale).to(dtype)


def token_ids(rng: torch.Generator, vocab_size: int, *shape: int, low: int = 0) -> torch.Tensor:
    """A ``LongTensor`` of ``shape`` with ids in ``[low, vocab_size)``."""
    return torch.randint(low, vocab_size, shape, generator=rng)


def padding_mask(rng: torch.Generator, batch: int, length: int, *, fully_masked: tuple[int, ...] = (),
                 min_valid: int = 1) -> torch.Tensor:
    """A key-padding mask ``BoolTensor[batch, length]``: True at padding (the kit's convention).

    Row ``b`` keeps a random number (at least ``min_valid``, at most ``length``) of leading
    positions and pads the rest, as right-padded batches do; at least one row is padded
    when ``length > min_valid``. Rows listed in ``fully_masked`` are padding only.
    """
    valid = torch.randint(min(min_valid, length), length + 1, (batch,), generator=rng)
    if batch and length > min_valid and bool((valid == length).all()):
        valid[0] = length - 1
    mask = torch.arange(length)[None, :] >= valid[:, None]
    for b in fully_masked:
        mask[b] = True
    return mask


def random_mask(rng: torch.Generator, *shape: int, p: float = 0.3) -> torch.Tensor:
    """A ``BoolTensor`` of ``shape`` with each entry True (blocked) with probability ``p``."""
    return torch.rand(*shape, generator=rng) < p
