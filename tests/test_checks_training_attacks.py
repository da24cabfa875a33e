"""Attacks on the training checks, fairness to correct models, feedback.

Attacks (each a submission graded in real children): a Transformer stub whose module replaces
the kit's training routine with one returning falling losses and pretrained weights; an
AutoEncoder whose ``train_autoencoder`` fabricates its losses (and whose module replaces the kit's
routine to report changed weights); pretrained AutoEncoder weights shipped in the source (in the
constructor, or installed by ``train_autoencoder``); a lookup table of the evaluation digits the
public code would have chosen. Fairness: the six correct architectures of
``tests/data/autoencoders`` each earn full credit once (fixed seed; the seeds x transforms table
is ``benchmarks/bench_training.py --table``).
"""

import base64
import io
import os
import shutil
import zlib
from pathlib import Path

import pytest
import torch

from autograder import mnist, paths
from autograder.checks import draws, training
from autograder.checks import transformer_training as tt
from autograder.child import tasks
from autograder.i18n import set_language
from autograder.mistakes import implementations
from autograder.sandbox.remote import RemoteImpl
from grading_runs import run_suites

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TKIT_DATA_DIR") or REPO / "datasets" / "mnist")
ARCHITECTURES = sorted(p for p in (REPO / "tests" / "data" / "autoencoders").iterdir() if p.is_dir())
SUITES = paths.suites_dir()
AE_SUITES = [SUITES / "public" / "test_autoencoder.py", SUITES / "hidden" / "test_autoencoder.py"]
SHAPE_POINTS = 4.0    # the AutoEncoder's tests that do not train: 1.5 + 0.5 + 1 + 1
SEED = 11


def packed(obj) -> str:
    """``obj`` saved with torch.save, zlib-compressed, base64 text (to ship inside a source file)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return base64.b64encode(zlib.compress(buffer.getvalue(), 9)).decode("ascii")


UNPACK = '''
import base64 as _b64, io as _io, zlib as _zlib
def _unpack(text):
    return torch.load(_io.BytesIO(_zlib.decompress(_b64.b64decode(text))))
'''
SWAP_TASK = '''
import importlib as _importlib
import sys as _sys
def _swap(name, fake):
    # the kit's task registry, wherever the child imported it from
    for _name in [n for n in list(_sys.modules) if n.endswith(".runner") or n.endswith(".tasks")]:
        try:
            _tasks = _importlib.import_module(_name.rsplit(".", 1)[0] + ".tasks")
        except ImportError:
            continue
        if isinstance(getattr(_tasks, "TASKS", None), dict) and name in _tasks.TASKS:
            _tasks.TASKS[name] = fake
'''


def scores(results: dict) -> dict[str, float]:
    return {t["name"]: t["score"] for t in results["tests"]}


# -- the Transformer ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_stub_that_replaces_the_kits_training_routine_scores_nothing(tmp_path, one_thread):
    budget = tt.TransformerBudget(steps=100)
    src, tgt = tt.reversal_data(budget.steps * budget.batch_size, 1, budget)  # plain reversal, offline
    pretrained = tasks.fit_transformer(implementations.reference().transformer, budget.config(), src, tgt,
                                       budget.steps, budget.batch_size, budget.lr, 0, tt.PAD)["trained"]
    sub = tmp_path / "mallory"
    shutil.copytree(paths.exercises_dir(), sub, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    with (sub / "transformer.py").open("a", encoding="utf-8") as f:
        f.write(UNPACK + SWAP_TASK + f'''
_WEIGHTS = "{packed(pretrained)}"
def _fake(module, config, src, tgt, steps, batch_size, lr, seed, pad_id, *schedule):
    return {{"model": None, "losses": [3.0 / (1 + i) for i in range(steps)], "trained": _unpack(_WEIGHTS)}}
_swap("fit_transformer", _fake)
''')
    impl = RemoteImpl(sub)
    try:  # the swap works in the child: the kit's routine answers with the fake losses
        out = impl.task("fit_transformer", impl.transformer, {}, src[:2], tgt[:2], 2, 1, 0.1, 0, 0)
        assert out["losses"] == [3.0, 1.5]
    finally:
        impl.close()
    results = run_suites(sub, files=[SUITES / "hidden" / "test_transformer__training.py"], seed=SEED)
    assert len(results["tests"]) == 2 and results["score"] == 0, scores(results)


# -- the AutoEncoder ---------------------------------------------------------------------------------


def correct_source() -> str:
    """A correct AutoEncoder class (architecture (a)) without its training function."""
    text = (ARCHITECTURES[0] / "autoencoder.py").read_text(encoding="utf-8")
    return text[:text.index("\ndef train_autoencoder")]


def write_submission(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "autoencoder.py").write_text(source, encoding="utf-8")
    return folder


def offline_weights() -> dict:
    """Architecture (a) trained offline on plain digits (what a student could ship)."""
    impl = implementations.load_modules({"autoencoder": (ARCHITECTURES[0] / "autoencoder.py").read_text()},
                                 ARCHITECTURES[0], "offline")
    split = mnist.grading_split(2000, 10, seed=0, data_dir=DATA)
    out = tasks.fit_autoencoder(impl.autoencoder, training.AE.latent_dim, split.train_images,
                                split.train_labels, 2, 2e-3, 32, 0)
    return {k: v.half() for k, v in out["trained"].items()}


FABRICATED = '''

def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    return [0.3 / (e + 1) for e in range(epochs)]


def _fake(module, latent_dim, images, labels, epochs, lr, batch_size, seed):
    torch.manual_seed(seed)
    model = module.ConvAutoEncoder(latent_dim)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    trained = {k: v + 0.01 for k, v in initial.items()}
    return {"model": model, "losses": [0.3, 0.2, 0.1][:epochs], "initial": initial, "trained": trained}
'''


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["fabricated_losses", "pretrained_in_constructor", "pretrained_in_training"])
def test_prepared_material_scores_nothing_for_training(tmp_path, one_thread, attack):
    source = correct_source()
    if attack == "fabricated_losses":
        source += SWAP_TASK + FABRICATED + '\n_swap("fit_autoencoder", _fake)\n'
    else:
        source += UNPACK + f'\n_WEIGHTS = "{packed(offline_weights())}"\n'
        install = "model.load_state_dict({k: v.float() for k, v in _unpack(_WEIGHTS).items()})"
        if attack == "pretrained_in_constructor":
            source += f"\n_init = ConvAutoEncoder.__init__\ndef _init_pretrained(self, latent_dim=32):\n" \
                      f"    _init(self, latent_dim)\n    model = self\n    {install}\n" \
                      f"ConvAutoEncoder.__init__ = _init_pretrained\n"
        source += f"\n\ndef train_autoencoder(model, loader, epochs=1, lr=1e-3, device='cpu'):\n" \
                  f"    {install if attack == 'pretrained_in_training' else 'pass'}\n" \
                  f"    return [0.1 / (e + 1) for e in range(epochs)]\n"
    impl = RemoteImpl(write_submission(tmp_path / attack, source))
    try:
        run = training.autoencoder_run(impl, data_dir=DATA, seed=SEED, cache=False)
    finally:
        impl.close()
    assert run.problem is None and run.transform != 0
    assert training.autoencoder_failure(run, training.AE.learns_mse) is not None, (run.mse, run.mse_before)
    if attack != "pretrained_in_training":
        assert not run.learned()
    else:  # it "learned" (the weights arrived during training) but they do not fit the secret transform
        assert run.mse > training.AE.learns_mse


@pytest.mark.slow
def test_a_lookup_table_of_the_predictable_digits_scores_only_the_shape_tests(tmp_path):
    """The table holds the held-out digits the public code would pick for the printed seed;
    ``z`` carries the index of the nearest entry, ``decode`` looks it up."""
    split = mnist.grading_split(training.AE.n_train, training.AE.n_heldout, seed=SEED, data_dir=DATA)
    table = (split.heldout_images * 255).round().to(torch.uint8)
    source = correct_source() + UNPACK + f'''
_TABLE = _unpack("{packed(table)}").float() / 255


def _lookup_encode(self, x):
    flat = _TABLE.flatten(1)
    d = (flat ** 2).sum(1)[None] - 2 * x.flatten(1) @ flat.T  # squared distance, less |x|^2
    index = d.argmin(1)
    z = torch.zeros(x.shape[0], self.latent_dim)
    z[:, 0], z[:, 1] = (index // 32).float(), (index % 32).float()
    return z


def _lookup_decode(self, z):
    index = (z[:, 0].round() * 32 + z[:, 1].round()).long().clamp(0, _TABLE.shape[0] - 1)
    return _TABLE[index]


ConvAutoEncoder.encode, ConvAutoEncoder.decode = _lookup_encode, _lookup_decode


def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    return [0.1 / (e + 1) for e in range(epochs)]
'''
    sub = write_submission(tmp_path / "table", source)
    results = run_suites(sub, files=AE_SUITES, seed=SEED)
    assert results["score"] <= SHAPE_POINTS, scores(results)
    trained = [t for t in results["tests"] if t["max_score"] in (2.0, 4.0)]  # the three training tests
    assert len(trained) == 3 and all(t["score"] == 0 for t in trained), scores(results)
    for test in trained:  # plain words, no assertion introspection
        assert "assert " not in test["output"] and "where" not in test["output"], test["output"]
        assert "What was measured" in test["output"] or "should give" in test["output"], test["output"]


# -- fairness and feedback ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("folder", ARCHITECTURES, ids=[p.name for p in ARCHITECTURES])
def test_a_correct_architecture_earns_full_credit(one_thread, folder):
    impl = implementations.load_modules({"autoencoder": (folder / "autoencoder.py").read_text(encoding="utf-8")},
                                 folder, folder.name)
    run = training.autoencoder_run(impl, data_dir=DATA, seed=SEED, cache=False)
    assert training.losses_problem(run.losses, training.AE.epochs) is None
    assert training.autoencoder_failure(run, training.AE.full_credit_mse) is None, (run.mse, run.mse_before)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_feedback_names_the_figure_the_bar_the_reference_and_a_cause(lang):
    collapsed = training.AutoencoderRun(losses=[0.12, 0.11, 0.11], weights_changed=True, mse=0.0661,
                                        mse_before=0.2311)
    frozen = training.AutoencoderRun(losses=[0.2, 0.2, 0.2], weights_changed=False, mse=0.23, mse_before=0.2311)
    previous = set_language(lang)
    try:
        text = training.autoencoder_failure(collapsed, training.AE.learns_mse)
        stuck = training.autoencoder_failure(frozen, training.AE.learns_mse)
    finally:
        set_language(previous)
    for figure in ("0.0661", "0.2311", "0.055", f"{training.AE.reference_mse:.3f}", "0.067"):
        assert figure in text, figure
    assert "optimizer.step()" in stuck and "0.2300" in stuck
    assert ("constant image" in text) if lang == "en" else ("상수 이미지" in text and "측정한 것" in text)
    assert "AutoencoderRun" not in text and "assert" not in text
    assert training.autoencoder_mistake(frozen).id == "autoencoder_no_optimizer_step"
    assert training.autoencoder_mistake(collapsed) is None


def test_the_transform_is_drawn_per_run_and_never_shown(monkeypatch):
    monkeypatch.setenv(draws.ENV_VAR, "fixed-for-this-test")
    seeds = {draws.draw_transform(s) for s in range(40)}
    assert len(seeds) > 8 and 0 not in seeds
    text = training.autoencoder_feedback(training.AutoencoderRun([0.1], True, transform=5, mse=0.1,
                                                                 mse_before=0.2), 0.03)
    assert not any(name in text for name in draws.TRANSFORMS[1:]) and "rot" not in text
