"""MNIST loading (:mod:`autograder.mnist`): the shipped test set, every folder layout, checksums,
the fixed grading split and ``tkit data mnist``.

Data: the official MNIST test set shipped in ``datasets/mnist`` (or ``TKIT_DATA_DIR``).
"""

import gzip
import os
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from autograder import mnist

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TKIT_DATA_DIR") or REPO / "datasets" / "mnist")


TEST_FILES = ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def copy_test_set(dest: Path, *, compressed: bool = True) -> dict[str, Path]:
    """Copy (or decompress) the shipped test-set files into ``dest``; returns name -> path."""
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in TEST_FILES:
        src = mnist.locate("test", DATA)["images" if "images" in name else "labels"]
        if compressed:
            out[name] = dest / f"{name}.gz"
            shutil.copyfile(src, out[name])
        else:
            out[name] = dest / name
            out[name].write_bytes(gzip.decompress(src.read_bytes()))
    return out


def test_test_set_loads_with_known_labels():
    images, labels = mnist.load_split("test", DATA)
    assert images.dtype == torch.uint8 and tuple(images.shape) == (10000, 28, 28)
    assert labels.dtype == torch.int64 and tuple(labels.shape) == (10000,)
    # the first ten test labels of the official set
    assert labels[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]
    assert torch.bincount(labels, minlength=10).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@pytest.mark.parametrize("layout", [".", "raw", "MNIST/raw"])
@pytest.mark.parametrize("compressed", [True, False])
def test_every_layout_gives_the_same_digits(tmp_path, layout, compressed):
    copy_test_set(tmp_path / layout, compressed=compressed)
    found = mnist.locate("test", tmp_path)
    assert found["images"].parent.resolve() == (tmp_path / layout).resolve()
    images, labels = mnist.load_split("test", tmp_path)
    ref_images, ref_labels = mnist.load_split("test", DATA)
    assert torch.equal(images, ref_images) and torch.equal(labels, ref_labels)


def test_missing_data_names_the_command_and_the_folders(isolated_kit, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(mnist.DatasetMissing) as info:
        mnist.load_split("test", empty)
    text = str(info.value)
    assert "tkit data mnist --download" in text
    assert str(empty) in text and str(isolated_kit / "datasets" / "mnist") in text
    assert mnist.available_splits(empty) == []


def test_corrupted_archive_is_detected_by_checksum(tmp_path):
    files = copy_test_set(tmp_path / "raw")
    data = bytearray(files["t10k-images-idx3-ubyte"].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files["t10k-images-idx3-ubyte"].write_bytes(bytes(data))
    with pytest.raises(mnist.ChecksumError, match="t10k-images-idx3-ubyte.gz: MD5"):
        mnist.load_split("test", tmp_path)


def test_truncated_or_altered_plain_file_is_detected(tmp_path):
    files = copy_test_set(tmp_path, compressed=False)
    labels = files["t10k-labels-idx1-ubyte"]
    labels.write_bytes(labels.read_bytes()[:5000])
    with pytest.raises(mnist.ChecksumError, match="5000 bytes, expected 10008"):
        mnist.load_split("test", tmp_path)
    images = files["t10k-images-idx3-ubyte"]
    data = bytearray(images.read_bytes())
    data[1000] ^= 0x01                      # same size, one bit flipped
    images.write_bytes(bytes(data))
    with pytest.raises(mnist.ChecksumError, match="MD5"):
        mnist.verify_file(images)


def test_grading_split_is_fixed_and_disjoint():
    a = mnist.grading_split(300, 100, seed=3, data_dir=DATA)
    b = mnist.grading_split(300, 100, seed=3, data_dir=DATA)
    assert torch.equal(a.train_images, b.train_images) and torch.equal(a.heldout_images, b.heldout_images)
    assert a.source == "test"
    assert a.train_images.dtype == torch.float32 and tuple(a.train_images.shape) == (300, 1, 28, 28)
    assert float(a.train_images.min()) == 0.0 and float(a.train_images.max()) == 1.0
    train_rows = {bytes((a.train_images[i] * 255).round().to(torch.uint8).flatten().tolist())
                  for i in range(300)}
    held_rows = {bytes((a.heldout_images[i] * 255).round().to(torch.uint8).flatten().tolist())
                 for i in range(100)}
    assert not train_rows & held_rows
    other = mnist.grading_split(300, 100, seed=4, data_dir=DATA)
    assert not torch.equal(other.train_images, a.train_images)
    with pytest.raises(ValueError, match="n_heldout"):
        mnist.grading_split(10, 10001, data_dir=DATA)
    with pytest.raises(ValueError, match="n_train"):
        mnist.grading_split(9001, 1000, data_dir=DATA)


def test_heldout_digits_come_from_the_whole_pool():
    """Over a few draws the held-out digits reach far beyond any fixed 2,000-digit pool."""
    seen = set()
    for seed in range(6):
        split = mnist.grading_split(10, 1000, seed=seed, data_dir=DATA)
        seen.update(bytes((split.heldout_images[i] * 255).round().to(torch.uint8).flatten().tolist())
                    for i in range(0, 1000, 10))
    assert len(seen) > 550  # 600 sampled digits, nearly all distinct: drawn from 10,000


def test_tkit_data_mnist_command(isolated_kit, tmp_path):
    from autograder.cli import main

    ok = CliRunner().invoke(main, ["data", "mnist", "--data-dir", str(DATA), "--verify"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.count("OK") == 2 and "training set is not present" in ok.output
    missing = CliRunner().invoke(main, ["data", "mnist", "--data-dir", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "tkit data mnist --download" in missing.output
