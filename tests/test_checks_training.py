"""Kit tests of issues 5 and 13: MNIST loading, the secret draws and the training thresholds.

Data: the official MNIST test set shipped in ``datasets/mnist`` (or ``TKIT_DATA_DIR``). The threshold tests train the reference and the catalog mutants with the
grading budgets of :mod:`autograder.checks.training` and
:mod:`autograder.checks.transformer_training` (in this process, one torch thread, as in the
child) and check that the reference passes with margin while an untrained model, an identity
AutoEncoder, a skip path, a training loop that never steps and a Transformer without the causal
mask fail; two tests grade cheating submissions in real children (more attacks:
``test_checks_training_attacks.py``).
"""

import gzip
import os
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from autograder import mnist
from autograder.checks import draws, training
from autograder.checks import transformer_training as tt
from autograder.mistakes import catalog, implementations
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl
from grading_runs import run_suites

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


# -- data ------------------------------------------------------------------------------------------


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


# -- the reversal task -------------------------------------------------------------------------------


def test_reversal_data_and_exact_match():
    src, tgt = tt.reversal_data(50, seed=1)
    for s, t in zip(src.tolist(), tgt.tolist()):
        symbols = [v for v in s if v != tt.PAD]
        assert t[: len(symbols) + 2] == [tt.BOS, *symbols[::-1], tt.EOS]
        assert all(v == tt.PAD for v in t[len(symbols) + 2:])
    assert tt.exact_match(tgt, tgt).all()
    wrong = tgt.clone()
    wrong[0, 1] = 3 if wrong[0, 1] != 3 else 4
    truncated = tgt[:, :3]
    assert tt.exact_match(wrong, tgt).tolist() == [False] + [True] * 49
    assert not tt.exact_match(truncated, tgt)[(tgt != tt.PAD).sum(1) > 3].any()


def test_the_transformer_schedule_warms_up_then_decays():
    from autograder.child.tasks import scheduled_lr

    rates = [scheduled_lr(step, 10, 0.01, 3) for step in range(10)]
    assert rates[:3] == pytest.approx([0.01 / 3, 0.02 / 3, 0.01])  # linear warm-up to the peak
    assert all(a > b > 0 for a, b in zip(rates[2:], rates[3:]))  # then a strictly falling cosine
    assert rates[6] == pytest.approx(0.005)  # half-way through the decay: half the peak
    assert [scheduled_lr(step, 10, 0.01, 0) for step in (0, 9)] == [0.01, 0.01]  # no warm-up: constant


def test_a_training_child_starts_with_what_the_optimizers_import(tmp_path):
    """``torch.optim`` imports ``torch._dynamo`` on first use (~1.3 s); before forking a child whose
    limits say it trains (``Limits.preload_training``), the zygote imports it once
    (``tasks.preload``), so a training child finds it loaded and makes an optimizer at once."""
    (tmp_path / "probe_mod.py").write_text(
        "import sys\n"
        "def loaded():\n"
        "    return 'torch._dynamo' in sys.modules\n"
        "def adam_steps():\n"
        "    import torch\n"
        "    w = torch.zeros(3, requires_grad=True)\n"
        "    opt = torch.optim.Adam([w], lr=0.1)\n"
        "    w.sum().backward()\n"
        "    opt.step()\n"
        "    return w.detach().tolist()\n", encoding="utf-8")
    impl = RemoteImpl(tmp_path, Limits(preload_training=True))
    try:
        assert impl.probe_mod.loaded() is True and impl.info["launcher"] == "zygote"
        assert impl.probe_mod.adam_steps() == pytest.approx([-0.1, -0.1, -0.1])
    finally:
        impl.close()


def test_the_secret_symbol_code_maps_the_reversed_symbols():
    code = torch.tensor([0, 1, 2, 9, 8, 7, 6, 5, 4, 3])
    src, tgt = tt.reversal_data(20, seed=1, symbols=code)
    plain_src, plain_tgt = tt.reversal_data(20, seed=1)
    assert torch.equal(src, plain_src) and torch.equal(tgt, code[plain_tgt])


# -- secret draws ------------------------------------------------------------------------------------


def test_draws_mix_the_run_seed_with_the_secret(monkeypatch):
    monkeypatch.setenv(draws.ENV_VAR, "secret-a")
    a = [draws.draw_seed(3, "p"), draws.draw_seed(3, "p"), draws.draw_seed(4, "p"), draws.draw_seed(3, "q")]
    perm_a = draws.symbol_permutation(3, 3, 10)
    monkeypatch.setenv(draws.ENV_VAR, "secret-b")
    b = draws.draw_seed(3, "p")
    assert a[0] == a[1] and len({a[0], a[2], a[3], b}) == 4
    assert sorted(perm_a.tolist()) == list(range(10)) and perm_a[:3].tolist() == [0, 1, 2]
    transforms = {draws.draw_transform(seed) for seed in range(60)}
    assert transforms <= set(range(1, 16)) and len(transforms) >= 12  # never the identity


def test_the_secret_file_is_made_once_and_kept_private(tmp_path, monkeypatch):
    kit = tmp_path / "kit"
    (kit / "solutions").mkdir(parents=True)
    monkeypatch.setenv("TKIT_ROOT", str(kit))
    monkeypatch.delenv(draws.ENV_VAR, raising=False)
    first = draws.grading_secret()
    path = kit / "solutions" / draws.SECRET_FILE
    assert len(first) == 64 and path.stat().st_mode & 0o077 == 0
    assert draws.grading_secret() == first
    monkeypatch.setenv("TKIT_ROOT", str(tmp_path / "student-edition"))
    assert draws.grading_secret() == draws.PUBLIC_SECRET


def test_the_transform_family_is_sixteen_distinct_pixel_maps():
    image = torch.rand(1, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    outs = [draws.transform_images(image, i) for i in range(draws.N_TRANSFORMS)]
    assert len({o.flatten().tolist().__repr__() for o in outs}) == 16
    assert torch.equal(outs[0], image) and len(set(draws.TRANSFORMS)) == 16
    for out in outs:  # a pixel permutation, possibly inverted: the same statistics
        values = out.flatten().sort().values
        assert torch.allclose(values, image.flatten().sort().values) or \
            torch.allclose(values, (1 - image).flatten().sort().values)
    with pytest.raises(ValueError, match="0..15"):
        draws.transform_images(image, 16)


def test_linear_credit():
    assert training.linear_credit(0.02, 0.055, 0.030) == 1.0
    assert training.linear_credit(0.0425, 0.055, 0.030) == pytest.approx(0.5)
    assert training.linear_credit(0.4, 0.2, 0.6) == pytest.approx(0.5)
    assert training.linear_credit(float("nan"), 0.2, 0.6) == 0.0


# -- thresholds ----------------------------------------------------------------------------------------


def test_reference_autoencoder_passes_with_margin_and_is_deterministic(one_thread):
    runs = [training.autoencoder_run(implementations.reference(), data_dir=DATA, cache=False, seed=11) for _ in range(2)]
    first = runs[0]
    assert first.problem is None and first.learned() and first.weights_changed
    assert training.losses_problem(first.losses, training.AE.epochs) is None
    assert first.mse * 1.3 <= training.AE.full_credit_mse, first.mse
    assert first.mse_before > 3 * training.AE.learns_mse, first.mse_before
    assert all(r.mse == first.mse and r.mse_before == first.mse_before for r in runs[1:])
    other = training.autoencoder_run(implementations.reference(), data_dir=DATA, cache=False, seed=12)
    assert other.mse != first.mse  # another run seed, other digits


@pytest.mark.parametrize("mutant_id", ["autoencoder_no_optimizer_step", "autoencoder_identity",
                                       "autoencoder_skip_path"])
def test_autoencoder_mistakes_score_nothing(one_thread, mutant_id):
    run = training.autoencoder_run(catalog.by_id(mutant_id).impl(), data_dir=DATA, seed=11)
    assert run.problem is None
    assert training.autoencoder_failure(run, training.AE.learns_mse) is not None
    assert run.mse > 2 * training.AE.learns_mse, run.mse
    if mutant_id != "autoencoder_skip_path":
        assert not run.learned() and training.autoencoder_mistake(run).id == mutant_id


def test_wide_latent_cannot_pass_the_bottleneck(one_thread):
    small = training.AutoencoderBudget(n_train=64, n_heldout=8, epochs=1)
    run = training.autoencoder_run(catalog.by_id("autoencoder_wide_latent").impl(), small, data_dir=DATA)
    assert run.problem is not None and "[8, 16]" in run.problem and "1568" in run.problem
    assert run.mse != run.mse  # NaN: nothing measured, no credit


CHEATER = '''
import torch
from torch import nn

_SEEN = {}


class ConvAutoEncoder(nn.Module):
    """Honest shapes, no learning: decode looks up the images encode saw."""

    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.fc = nn.Linear(784, latent_dim)

    def encode(self, x):
        z = self.fc(x.flatten(1))
        _SEEN[x.shape[0]] = x.clone()
        return z

    def decode(self, z):
        if z.shape[0] in _SEEN:
            return _SEEN[z.shape[0]]
        return torch.full((z.shape[0], 1, 28, 28), 0.5)

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    return [1.0 / (e + 1) for e in range(epochs)]
'''


def test_a_cache_around_the_bottleneck_cannot_score(tmp_path):
    (tmp_path / "autoencoder.py").write_text(CHEATER, encoding="utf-8")
    small = training.AutoencoderBudget(n_train=64, n_heldout=200, epochs=2)
    impl = RemoteImpl(tmp_path)
    try:
        run = training.autoencoder_run(impl, small, data_dir=DATA)
    finally:
        impl.close()
    assert run.problem is None
    # decode ran in a fresh process that never saw the held-out digits: a grey image
    assert run.mse > 2 * training.AE.learns_mse


def test_reference_transformer_passes_untrained_and_unmasked_fail(one_thread):
    reference = tt.transformer_run(implementations.reference(), cache=False, seed=11)
    assert reference.accuracy - 0.15 >= tt.TF.full_credit_acc, reference.accuracy
    assert reference.learned() and reference.loss < 0.2 * reference.loss_before
    again = tt.transformer_run(implementations.reference(), cache=False, seed=11)
    assert again.accuracy == reference.accuracy and again.loss == reference.loss
    untrained = tt.transformer_run(implementations.reference(), tt.TransformerBudget(steps=0), cache=False, seed=11)
    assert untrained.accuracy < tt.TF.partial_acc / 2 and not untrained.learned()
    unmasked = tt.transformer_run(catalog.by_id("transformer_no_causal_mask").impl(), cache=False, seed=11)
    assert unmasked.accuracy < tt.TF.partial_acc / 2, unmasked.accuracy


def test_a_hard_coded_reversal_scores_nothing_on_accuracy():
    """A 'Transformer' that reverses the source by index arithmetic (and lets the kit's optimizer
    scale one parameter) decodes plain reversal with its own code; its trained weights in the
    reference model decode nothing, and the lower figure is the grade."""
    folder = Path(__file__).resolve().parent / "attacks" / "hardcoded_reversal"
    small = tt.TransformerBudget(steps=20)
    impl = RemoteImpl(folder)
    try:
        run = tt.transformer_run(impl, small, cache=False, seed=11)
    finally:
        impl.close()
    assert run.accuracy == 0.0 and not run.learned(small)
    assert "contract's parameter names" in run.note


def test_the_zygote_imports_for_training_only_in_runs_that_train(tmp_path, monkeypatch):
    """The plugin asks for ``Limits.preload_training`` exactly when a selected test is marked
    ``training``: a run without training never makes the zygote import ``torch._dynamo``."""
    from autograder import paths
    from autograder.sandbox import zygote_parent

    asked = []
    spawn = zygote_parent.Zygote.spawn
    monkeypatch.setattr(zygote_parent.Zygote, "spawn",
                        lambda self, spec, *a, **k: asked.append(spec["preload"]) or spawn(self, spec, *a, **k))
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "exercises", sub, ignore=shutil.ignore_patterns("*.md", "__pycache__"))
    results = run_suites(sub, names=["masks"], seed=1)
    assert results["tests"] and asked and not any(asked)
    asked.clear()
    results = run_suites(sub, files=[paths.suites_dir() / "hidden" / "test_transformer__training.py"], seed=1)
    assert len(results["tests"]) == 2 and results["score"] == 0  # a stub trains nothing
    assert asked and all(asked)
