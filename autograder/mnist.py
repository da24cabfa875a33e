"""MNIST for the AutoEncoder grading: find, verify and load the original IDX files.

Where the files are looked for, in order (the first folder holding a split wins):

1. ``data_dir`` (the ``--data-dir`` option of the commands);
2. the ``TKIT_DATA_DIR`` environment variable;
3. ``datasets/mnist`` in the kit: the official test set (t10k) ships there, embedded in every
   checkout, student edition, wheel and Gradescope zip (see ``datasets/mnist/README.md``), and
   ``tkit data mnist --download`` adds the training set in its ``raw/``.

Nothing outside these folders is searched.

In each folder the four files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each plain or ``.gz``) may sit directly,
in ``raw/``, or in ``MNIST/raw/`` (torchvision's own layout). Every file is checked against
``datasets/manifest.json`` before it is read: a ``.gz`` by the official archive's MD5, a plain
file by its MD5 where the manifest knows it and always by its exact size, so a corrupted or
truncated download is reported here, by name, instead of crashing a training run.

Parsing reads the IDX format directly (``gzip``, ``struct``, ``torch.frombuffer``; checked
against the manifest's sizes and the IDX header) and pixels become floats in [0, 1] exactly as
``torchvision.transforms.v2.functional.to_dtype(..., scale=True)`` makes them (``x / 255`` as
``float32 * (1/255)``). The grading path does not import torchvision: that import alone costs
about 1 s of CPU per grading run, where both training checks together aim at 4x ``import torch``;
downloads still go through it.

The grading split (:func:`grading_split`): a seeded sample of training images and a disjoint
held-out sample, both drawn from the whole pool. With the official training set present,
training images come from its 60,000 digits and held-out images from the 10,000 of the test set;
with only the test set (the embedded default), the held-out digits are drawn from all 10,000 and the training
digits from the rest. The training checks pass a per-run secret seed
(:mod:`autograder.checks.draws`), so which digits evaluate cannot be known before the run.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import struct
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from autograder import paths

DOWNLOAD_HINT = "tkit data mnist --download"
SPLITS = ("train", "test")
ENV_VAR = "TKIT_DATA_DIR"
SUBFOLDERS = (".", "raw", "MNIST/raw")


class DatasetError(Exception):
    """MNIST cannot be used: missing, incomplete, corrupted or unreadable."""


class DatasetMissing(DatasetError, FileNotFoundError):
    """No folder searched holds the requested MNIST files."""


class ChecksumError(DatasetError):
    """A file's MD5 or size differs from ``datasets/manifest.json`` (corrupted or truncated)."""


@lru_cache(maxsize=1)
def manifest() -> dict:
    """The ``mnist`` entry of ``datasets/manifest.json``: ``{"files": {name: info}}`` where
    ``info`` has ``split``, ``kind`` (images/labels), ``count``, ``size`` (bytes, uncompressed),
    ``md5_gz`` (official archive) and ``md5`` (uncompressed file, or null when unknown)."""
    path = paths.datasets_dir() / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))["mnist"]
    except (OSError, ValueError, KeyError) as exc:
        raise DatasetError(f"cannot read the MNIST entry of the data manifest {path}: {exc}") from None


def split_files(split: str) -> dict[str, str]:
    """``{"images": name, "labels": name}`` of ``split`` ("train" or "test"); ValueError otherwise."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got split={split!r}")
    return {info["kind"]: name for name, info in manifest()["files"].items() if info["split"] == split}


def search_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The folders searched, in order (see the module docstring); duplicates removed."""
    candidates = []
    if data_dir:
        candidates.append(Path(data_dir))
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates.append(paths.datasets_dir() / "mnist")
    seen, out = set(), []
    for c in candidates:
        key = str(c.expanduser().resolve())
        if key not in seen:
            seen.add(key)
            out.append(c.expanduser())
    return out


def _find_file(folder: Path, name: str) -> Path | None:
    for sub in SUBFOLDERS:
        for candidate in (folder / sub / f"{name}.gz", folder / sub / name):
            if candidate.is_file():
                return candidate
    return None


def locate(split: str, data_dir: str | os.PathLike | None = None) -> dict[str, Path]:
    """``{"images": path, "labels": path}`` of ``split`` from the first folder holding both.

    Raises:
        DatasetMissing: no folder searched holds both files; the message names the folders
            and the download command.
    """
    wanted = split_files(split)
    dirs = search_dirs(data_dir)
    for folder in dirs:
        found = {kind: _find_file(folder, name) for kind, name in wanted.items()}
        if all(found.values()):
            return found
    searched = "\n".join(f"  - {d}" for d in dirs)
    raise DatasetMissing(
        f"MNIST {split} files ({', '.join(sorted(wanted.values()))}, plain or .gz) were not found. "
        f"Folders searched (each directly, in raw/ and in MNIST/raw/):\n{searched}\n"
        f"Run `{DOWNLOAD_HINT}` (needs internet), or point --data-dir / {ENV_VAR} at a folder "
        f"holding the IDX files.")


def available_splits(data_dir: str | os.PathLike | None = None) -> list[str]:
    """The splits ("train", "test") that :func:`locate` finds."""
    out = []
    for split in SPLITS:
        try:
            locate(split, data_dir)
        except DatasetMissing:
            continue
        out.append(split)
    return out


def _md5(path: Path) -> str:
    """Hex MD5 of a file (hashlib; importing torchvision for it costs ~1 s of CPU per grading run)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "md5").hexdigest()


def _base_name(path: Path) -> str:
    return path.name[:-3] if path.name.endswith(".gz") else path.name


@lru_cache(maxsize=32)
def _verified(path_str: str, mtime_ns: int, size: int) -> None:
    path = Path(path_str)
    info = manifest()["files"][_base_name(path)]
    if path.name.endswith(".gz"):
        expected, kind = info["md5_gz"], "archive"
    else:
        expected, kind = info.get("md5"), "file"
        if size != info["size"]:
            raise ChecksumError(
                f"{path} has {size} bytes, expected {info['size']}: the file is truncated or corrupted; "
                f"delete it and run `{DOWNLOAD_HINT}`")
    if expected:
        got = _md5(path)
        if got != expected:
            raise ChecksumError(
                f"{path}: MD5 {got} differs from the official {kind}'s {expected} "
                f"(corrupted or truncated download); delete it and run `{DOWNLOAD_HINT}`")


def verify_file(path: Path) -> None:
    """Check one MNIST file against the manifest (MD5 of a ``.gz``; size, and MD5 where
    known, of a plain file). Results are cached per (path, mtime, size).

    Raises:
        ChecksumError: the MD5 or the size differs.
        DatasetError: the file name is not one of the four MNIST files.
    """
    path = Path(path)
    if _base_name(path) not in manifest()["files"]:
        raise DatasetError(f"{path.name} is not one of the MNIST files of the manifest")
    st = path.stat()
    _verified(str(path.resolve()), st.st_mtime_ns, st.st_size)


def _read_idx(path: Path, kind: str) -> torch.Tensor:
    """An MNIST IDX file (gzipped or plain) as uint8 images ``[N, 28, 28]`` or int64 labels ``[N]``.

    The IDX format (http://yann.lecun.com/exdb/mnist/): a big-endian header (magic ``0x0800 + ndim``
    for unsigned bytes, then ``ndim`` sizes) and the bytes. Read with gzip and struct rather than
    torchvision's reader, whose import costs ~1 s of CPU per grading run.

    Raises:
        ChecksumError: the file cannot be decompressed, or its size or header is not MNIST's.
    """
    expected_size = manifest()["files"][_base_name(path)]["size"]
    try:
        data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ChecksumError(f"{path} cannot be decompressed ({exc}); delete it and run "
                            f"`{DOWNLOAD_HINT}`") from None
    ndim = 3 if kind == "images" else 1
    if len(data) != expected_size or len(data) < 4 + 4 * ndim or \
            struct.unpack(">I", data[:4])[0] != 0x0800 + ndim:
        raise ChecksumError(f"{path} holds {len(data)} bytes of data, expected an MNIST {kind} file of "
                            f"{expected_size}; delete it and run `{DOWNLOAD_HINT}`")
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    values = torch.frombuffer(bytearray(data), dtype=torch.uint8, offset=4 + 4 * ndim).view(*shape)
    return values if kind == "images" else values.long()


@lru_cache(maxsize=2)
def _load(images_path: str, labels_path: str) -> tuple[torch.Tensor, torch.Tensor]:
    images = _read_idx(Path(images_path), "images")
    labels = _read_idx(Path(labels_path), "labels")
    if images.shape[0] != labels.shape[0] or tuple(images.shape[1:]) != (28, 28):
        raise DatasetError(f"{images_path} and {labels_path} do not form an MNIST split "
                           f"(images {tuple(images.shape)}, labels {tuple(labels.shape)})")
    return images, labels


def load_split(split: str, data_dir: str | os.PathLike | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One official split, verified: ``(images uint8[N, 28, 28], labels int64[N])``.

    N is 60,000 for "train" and 10,000 for "test". The tensors are cached and shared between
    calls: do not modify them in place.

    Raises:
        DatasetMissing: the split's files are not found (the message names the folders searched
            and ``tkit data mnist --download``).
        ChecksumError: a file is corrupted or truncated.
    """
    found = locate(split, data_dir)
    for path in found.values():
        verify_file(path)
    return _load(str(found["images"].resolve()), str(found["labels"].resolve()))


def to_float_images(images: torch.Tensor) -> torch.Tensor:
    """uint8 ``[N, 28, 28]`` pixels to float32 ``[N, 1, 28, 28]`` in [0, 1] (torchvision's
    ``to_dtype`` with ``scale=True``, i.e. divided by 255)."""
    return images.unsqueeze(1).to(torch.float32).mul_(1.0 / 255)  # exactly torchvision's to_dtype


@dataclass(frozen=True)
class GradingSplit:
    """A fixed sample of MNIST for grading.

    Attributes:
        train_images: float32 ``[n_train, 1, 28, 28]`` in [0, 1]; train_labels: int64 ``[n_train]``.
        heldout_images: float32 ``[n_heldout, 1, 28, 28]``; heldout_labels: int64 ``[n_heldout]``.
        source: "train+test" (official training set for training, test set held out) or
            "test" (only the test set was available; two disjoint pools of it).
    """

    train_images: torch.Tensor
    train_labels: torch.Tensor
    heldout_images: torch.Tensor
    heldout_labels: torch.Tensor
    source: str


def _sample(pool: torch.Tensor, n: int, generator: torch.Generator, what: str) -> torch.Tensor:
    if n > pool.numel():
        raise ValueError(f"{what}={n} exceeds the {pool.numel()} images available for it")
    return pool[torch.randperm(pool.numel(), generator=generator)[:n]]


def grading_split(n_train: int, n_heldout: int, seed: int = 0,
                  data_dir: str | os.PathLike | None = None) -> GradingSplit:
    """A training sample and a disjoint held-out sample drawn with ``seed`` (module docstring).

    Args:
        n_train: number of training images (at most ``10,000 - n_heldout`` when only the test
            set is present, 60,000 with the training set).
        n_heldout: number of held-out images (at most 10,000).
        seed: which sample (any integer below 2**63); the same arguments and data give the same
            tensors on every call.
        data_dir: an extra folder searched first.

    Raises:
        ValueError: ``n_train``/``n_heldout`` below 1 or larger than the pools.
        DatasetMissing, ChecksumError: see :func:`load_split`.
    """
    if n_train < 1 or n_heldout < 1:
        raise ValueError(f"n_train and n_heldout must be >= 1, got n_train={n_train}, n_heldout={n_heldout}")
    test_images, test_labels = load_split("test", data_dir)
    gen = torch.Generator().manual_seed(seed)
    if n_heldout > test_images.shape[0]:
        raise ValueError(f"n_heldout={n_heldout} exceeds the {test_images.shape[0]} test images")
    held_order = torch.randperm(test_images.shape[0], generator=gen)
    ho = held_order[:n_heldout]
    if "train" in available_splits(data_dir):
        train_images, train_labels = load_split("train", data_dir)
        train_pool = torch.arange(train_images.shape[0])
        source = "train+test"
    else:
        train_images, train_labels = test_images, test_labels
        train_pool = held_order[n_heldout:]
        source = "test"
    tr = _sample(train_pool, n_train, gen, "n_train")
    return GradingSplit(to_float_images(train_images[tr]), train_labels[tr].clone(),
                        to_float_images(test_images[ho]), test_labels[ho].clone(), source)


def download(data_dir: str | os.PathLike | None = None) -> Path:
    """Fetch the four MNIST archives through ``torchvision.datasets.MNIST(download=True)``
    (which checks their MD5s) into ``<data_dir or datasets/mnist>/raw/``; returns that folder.

    Raises:
        DatasetError: the download failed (no internet, mirror down); the message says so.
    """
    from torchvision.datasets import MNIST

    target = Path(data_dir) if data_dir else paths.datasets_dir() / "mnist"
    raw = target / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=target) as tmp:
        try:
            for train in (True, False):
                MNIST(root=tmp, train=train, download=True)
        except Exception as exc:  # urllib, HTTP and torchvision's own errors
            raise DatasetError(f"downloading MNIST failed ({type(exc).__name__}: {exc}); check the "
                               f"internet connection, or copy the IDX files into {raw}") from None
        for gz in sorted((Path(tmp) / "MNIST" / "raw").glob("*.gz")):
            os.replace(gz, raw / gz.name)
    return raw
