"""Inputs a test hands the implementations: sizes, tensors, token ids and masks drawn from the
test's ``rng`` (a ``torch.Generator``), masks made from lengths, batch reorderings, and calls that
give the student non-contiguous tensors.

Every drawing function takes the generator first, so a grade is reproducible from the run's seed
(recorded in results.json). Shapes are kept small: grading time matters more than size, and the
bugs the suites look for show at any size. Masks follow the kit's convention: True = blocked
(padding, or a future position).
"""

from __future__ import annotations

from typing import Any

import torch

# ----------------------------------------------------------------------------- sizes


def integer(rng: torch.Generator, low: int, high: int) -> int:
    """One integer drawn uniformly from ``[low, high]`` (both included).

    Raises:
        ValueError: ``high < low``.
    """
    if high < low:
        raise ValueError(f"integer(): empty range low={low} > high={high}")
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def distinct(rng: torch.Generator, count: int, low: int, high: int, *, exclude=(), even: bool = False) -> list[int]:
    """``count`` pairwise different integers from ``[low, high]``, none in ``exclude``.

    With ``even=True`` only even numbers are drawn. Distinct sizes make transposed or swapped axes
    show up as shape errors or wrong values instead of passing by coincidence.

    Raises:
        ValueError: the range holds too few candidates.
    """
    pool = [n for n in range(low, high + 1) if n not in set(exclude) and (not even or n % 2 == 0)]
    if len(pool) < count:
        raise ValueError(f"distinct(): only {len(pool)} candidates in [{low}, {high}] for {count} values")
    order = torch.randperm(len(pool), generator=rng)[:count]
    return [pool[int(i)] for i in order]


def distinct_dims(rng: torch.Generator, ranges: dict[str, tuple[int, int]],
                  even: tuple[str, ...] = ()) -> dict[str, int]:
    """:func:`distinct` by name: one int per name from its inclusive range, all different from each
    other; names in ``even`` get even values. The narrowest ranges are drawn first, so that a wide
    range cannot take the only values a narrow one has.

    Raises:
        ValueError: a range has no value left.
    """
    used: set[int] = set()
    out: dict[str, int] = {}
    for name, (low, high) in sorted(ranges.items(), key=lambda item: item[1][1] - item[1][0]):
        choices = [v for v in range(low, high + 1) if v not in used and (name not in even or v % 2 == 0)]
        if not choices:
            raise ValueError(f"no value left for {name} in [{low}, {high}] besides {sorted(used)}")
        value = choices[int(torch.randint(len(choices), (1,), generator=rng))]
        used.add(value)
        out[name] = value
    return {name: out[name] for name in ranges}


def layer_dims(rng: torch.Generator) -> dict[str, int]:
    """Random distinct sizes for a hidden layer test: ``B`` (batch), ``S`` (source length),
    ``T`` (target length), ``H`` (heads), ``hd`` (head_dim, so ``d_model = H * hd``), ``ff`` (d_ff)."""
    return distinct_dims(rng, {"B": (2, 4), "S": (5, 9), "T": (3, 8), "H": (2, 4), "hd": (2, 6), "ff": (10, 20)})

# ----------------------------------------------------------------------------- tensors and token ids


def randn(rng: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    """A standard-normal tensor of ``shape`` (times ``scale``), drawn in float64 and cast to ``dtype``."""
    return (torch.randn(*shape, generator=rng, dtype=torch.float64) * scale).to(dtype)


def token_ids(rng: torch.Generator, vocab_size: int, *shape: int, low: int = 0) -> torch.Tensor:
    """A ``LongTensor`` of ``shape`` with ids in ``[low, vocab_size)``."""
    return torch.randint(low, vocab_size, shape, generator=rng)


def padded_token_ids(rng: torch.Generator, lengths, size: int, vocab: int, pad_id: int = 0) -> torch.Tensor:
    """``Long[B, size]`` of random ids in ``[1, vocab)`` (never ``pad_id``), ``pad_id`` from
    ``lengths[b]`` on."""
    ids = torch.randint(1, vocab, (len(lengths), size), generator=rng)
    ids = torch.where(ids == pad_id, torch.full_like(ids, vocab - 1 if pad_id != vocab - 1 else 1), ids)
    return ids.masked_fill(padding_mask(lengths, size), pad_id)


def replace_where(x: torch.Tensor, where: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
    """``x`` with the positions where ``where`` (``Bool[B, S]``) is True redrawn from ``rng``."""
    noise = 3.0 * torch.randn(x.shape, generator=rng, dtype=x.dtype)
    return torch.where(where[:, :, None], noise, x)

# ----------------------------------------------------------------------------- masks


def padding_mask(lengths, size: int) -> torch.Tensor:
    """``Bool[B, size]``, True at positions ``>= lengths[b]`` (padding), PyTorch's convention."""
    lengths = torch.as_tensor(lengths)
    return torch.arange(size)[None, :] >= lengths[:, None]


def random_padding_mask(rng: torch.Generator, batch: int, length: int, *, fully_masked: tuple[int, ...] = (),
                        min_valid: int = 2) -> torch.Tensor:
    """A drawn key-padding mask ``Bool[batch, length]``: True at padding.

    Row ``b`` keeps a random number (at least ``min(min_valid, length)``, at most ``length``) of
    leading positions and pads the rest, as right-padded batches do; at least one row is padded
    when ``length > min_valid``, one not in ``fully_masked`` where there is one. Rows listed in
    ``fully_masked`` are padding only. The default ``min_valid=2`` guarantees, for every seed, two
    open keys in every other row, so that no row's attention weights are all 1 (where scaling or a
    temperature would make no difference).

    Raises:
        ValueError: ``length <= min_valid`` and no row in ``fully_masked``: nothing could be padded,
            and a mask that blocks nothing lets code that ignores it pass (draw ``length >= min_valid + 1``).
    """
    if length <= min_valid and not fully_masked:
        raise ValueError(f"random_padding_mask(): length={length} <= min_valid={min_valid} pads nothing; "
                         f"draw a length of at least {min_valid + 1}")
    valid = torch.randint(min(min_valid, length), length + 1, (batch,), generator=rng)
    rows = [b for b in range(batch) if b not in set(fully_masked)] or list(range(batch))
    if rows and length > min_valid and bool((valid[rows] == length).all()):
        valid[rows[0]] = length - 1
    mask = torch.arange(length)[None, :] >= valid[:, None]
    for b in fully_masked:
        mask[b] = True
    return mask


def lengths(rng: torch.Generator, batch: int, size: int, *, longest: int = 0, low: int = 2) -> torch.Tensor:
    """``Long[batch]`` of sequence lengths in ``[min(low, size), size]``, row ``longest`` exactly
    ``size`` (so the padded axis is as long as its longest row) and, when ``batch >= 2`` and
    ``size > low``, another row shorter than ``size`` (a draw where every row was full made code
    that ignores the padding mask pass: encoder_padding_mask_ignored moved with the seed). With the
    default ``low=2`` every row keeps two open keys for every seed, so no row's attention weights
    are all equal."""
    out = torch.randint(min(low, size), size + 1, (batch,), generator=rng)
    if batch:
        longest %= batch
        out[longest] = size
        others = [b for b in range(batch) if b != longest]
        if others and size > low and bool((out[others] == size).all()):
            out[others[0]] = size - 1
    return out


def attention_mask(rng: torch.Generator, batch: int, q_len: int, k_len: int, *,
                   fully_masked: tuple[int, ...] = (), p: float = 0.2, min_open: int = 2) -> torch.Tensor:
    """``Bool[batch, 1, q_len, k_len]``: a drawn key-padding mask (:func:`random_padding_mask`)
    combined with a random ``[q_len, k_len]`` block (each entry blocked with probability ``p``).

    Guaranteed for every seed: rows in ``fully_masked`` are blocked everywhere, and every query
    row of every other batch row keeps at least ``min(min_open, k_len)`` open keys (entries of the
    random block are reopened where needed), so no compared row makes every weight equal.
    """
    padding = random_padding_mask(rng, batch, k_len, fully_masked=fully_masked, min_valid=min_open)
    blocked = random_mask(rng, q_len, k_len, p=p)
    open_rows = [b for b in range(batch) if b not in set(fully_masked)]
    if open_rows:
        shared = int((~padding[open_rows]).sum(-1).min())  # keys [0, shared) are open in every such row
        need = min(min_open, shared)
        for i in range(q_len):
            if int((~blocked[i, :shared]).sum()) < need:
                blocked[i, torch.randperm(shared, generator=rng)[:need]] = False
    return padding[:, None, None, :] | blocked


def random_mask(rng: torch.Generator, *shape: int, p: float = 0.3) -> torch.Tensor:
    """A ``BoolTensor`` of ``shape`` with each entry True (blocked) with probability ``p``."""
    return torch.rand(*shape, generator=rng) < p


def causal_mask(size: int) -> torch.Tensor:
    """``Bool[size, size]``, True strictly above the diagonal (position i may not see j > i)."""
    return torch.ones(size, size, dtype=torch.bool).triu(1)


def valid_positions(padding: torch.Tensor) -> torch.Tensor:
    """``Bool[B, S, 1]``: True at unpadded positions, for a check's ``valid=``
    (:func:`autograder.checks.expectations.expect_reference`)."""
    return ~padding[:, :, None]

# ----------------------------------------------------------------------------- batch order and memory layout


def swap_first_two(batch: int) -> torch.Tensor:
    """``Long[batch]``: the permutation of a batch that swaps examples 0 and 1 and keeps the rest."""
    order = torch.arange(batch)
    order[:2] = torch.tensor([1, 0])
    return order


def batch_permuted(value: Any, order: torch.Tensor) -> Any:
    """``value`` (a tensor whose first axis is the batch, or a tuple/list of them, or None) reordered
    by ``order`` along the batch axis."""
    if isinstance(value, (tuple, list)):
        return tuple(batch_permuted(v, order) for v in value)
    return None if value is None else value[order]


def noncontiguous(impl, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run by ``impl`` with every floating tensor argument of two or more
    elements replaced, inside the child, by a non-contiguous view holding the same values
    (the wire always delivers contiguous tensors). The view's last axis has stride 1, as the
    contract promises (exercises/README.md, "Contiguity"): a transpose of the two axes before the
    last (3-D and up), else a slice of a wider tensor. ``fn`` is a handle (a student's function or
    module) or, for local implementations, the object itself."""
    return impl.task("call_noncontiguous", fn, *args, **kwargs)
