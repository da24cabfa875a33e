"""Per-run secret draws of the training checks: the run's seed mixed with an instructor-only secret.

What a training check draws for one grading run (which MNIST digits train and which evaluate,
the secret transform of the digits, the Transformer's symbol permutation) comes from
:func:`generator`, a ``torch.Generator`` seeded with ``SHA-256(secret : run seed : purpose)``.
The run's seed is printed in reports; the secret is not, so knowing the seed and the public code
does not predict the draws, while the same seed and secret always give the same draws (and so
the same grades).

The secret (:func:`grading_secret`), in order:

1. the ``TKIT_GRADING_SECRET`` environment variable (any non-empty text);
2. the file ``solutions/.grading-secret`` of the instructor's kit, created on first use with 32
   random bytes (hex) and mode 0600. ``solutions/`` is instructor-only: the student edition never
   holds it (``tkit release`` copies no file of it and its leak scan rejects that path), and the
   sandbox hides it from the children (``sandbox.hidden_paths``); ``.gitignore`` keeps it out of
   the repository;
3. in a kit without ``solutions/`` (the student edition, self-checking only): a fixed public text.
   Nothing there is graded by the instructor, so nothing needs hiding.

The secret is never written into results, reports or messages; only values derived from it
through SHA-256 are used.

The transform family (:data:`TRANSFORMS`): the 8 symmetries of the square (rotations by
0/90/180/270 degrees, each with or without a left-right flip), each with or without intensity
inversion (``1 - x``): 16 members, of which the 15 other than the identity are drawn
(:func:`draw_transform`). Each is a permutation of the pixels (and an affine map of the
values), so a model trained on transformed digits learns them as easily as plain MNIST (measured
in ``benchmarks/bench_training.py``; see :mod:`autograder.checks.training`).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

import torch

ENV_VAR = "TKIT_GRADING_SECRET"
SECRET_FILE = ".grading-secret"
PUBLIC_SECRET = "student-edition: self-check only"
N_TRANSFORMS = 16


def grading_secret() -> str:
    """The instructor-only secret (see the module docstring); created on first use.

    Raises:
        OSError: ``solutions/`` exists but the secret file can be neither read nor created.
    """
    from autograder import paths

    env = os.environ.get(ENV_VAR, "")
    if env:
        return env
    solutions = paths.solutions_dir()
    if solutions is None:
        return PUBLIC_SECRET
    path = Path(solutions) / SECRET_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
        if text:
            return text
    except FileNotFoundError:
        pass
    text = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text + "\n")
    return text


def draw_seed(run_seed: int, purpose: str) -> int:
    """A 63-bit seed for ``purpose`` (e.g. ``"autoencoder:digits"``) in the run ``run_seed``:
    ``SHA-256(secret:run_seed:purpose)``. Same inputs and secret, same seed."""
    digest = hashlib.sha256(f"{grading_secret()}:{int(run_seed)}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF


def generator(run_seed: int, purpose: str) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with :func:`draw_seed`."""
    return torch.Generator().manual_seed(draw_seed(run_seed, purpose))


def draw_transform(run_seed: int) -> int:
    """The index (1..15) of this run's member of :data:`TRANSFORMS`: never 0, the identity, so
    weights or tables prepared for plain MNIST never meet plain digits."""
    return 1 + int(torch.randint(N_TRANSFORMS - 1, (), generator=generator(run_seed, "autoencoder:transform")))


def transform_images(images: torch.Tensor, index: int) -> torch.Tensor:
    """Member ``index`` (0..15) of the family applied to float images ``[N, 1, 28, 28]`` in [0, 1]:
    ``index % 4`` quarter turns (``torch.rot90`` on the last two axes), a left-right flip when
    ``index // 4 % 2``, then ``1 - x`` when ``index // 8``. Returns a new contiguous float tensor of
    the same shape and range. Raises ValueError for an index outside 0..15."""
    if not 0 <= index < N_TRANSFORMS:
        raise ValueError(f"transform index must be in 0..{N_TRANSFORMS - 1}, got index={index}")
    out = torch.rot90(images, index % 4, dims=(-2, -1))
    if index // 4 % 2:
        out = torch.flip(out, dims=(-1,))
    if index // 8:
        out = 1.0 - out
    return out.contiguous()


def describe_transform(index: int) -> str:
    """Instructor-facing name of a member, e.g. ``"rot90+flip+invert"`` (never shown to students)."""
    parts = [f"rot{90 * (index % 4)}"]
    if index // 4 % 2:
        parts.append("flip")
    if index // 8:
        parts.append("invert")
    return "+".join(parts)


TRANSFORMS = tuple(describe_transform(i) for i in range(N_TRANSFORMS))


def symbol_permutation(run_seed: int, first: int, vocab: int) -> torch.Tensor:
    """This run's secret permutation of the symbol ids ``first..vocab-1``, as a Long map
    ``[vocab]`` (ids below ``first``, the special tokens, map to themselves)."""
    perm = torch.randperm(vocab - first, generator=generator(run_seed, "transformer:symbols")) + first
    return torch.cat([torch.arange(first), perm])
