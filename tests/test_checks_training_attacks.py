"""Attacks on the training checks, fairness to correct models, feedback.

Since the training checks record the model as a graph and train it where no student code runs
(:mod:`autograder.child.graphs`), every attack below is graded in real children: a module that
replaces the kit's capture routine with a forged graph carrying weights trained offline; a
Transformer that is context-free while recorded for training and installs relabelled pretrained
weights on ``eval()``; AutoEncoders with a codec in a buffer, a picture packed into the digits of
``z`` behind one learned gain, weights prepared in the constructor, fabricated losses, and a lookup
table of the digits the public code would pick. Fairness: the six correct architectures of
``tests/data/autoencoders`` each earn full credit once (fixed seed; the seeds x transforms table
is ``benchmarks/bench_training.py --table``).
"""

import base64
import io
import os
import re
import shutil
import zlib
from pathlib import Path

import pytest
import torch

from autograder import mnist, paths
from autograder.checks import draws, training, training_loop
from autograder.checks import transformer_training as tt
from autograder.child import graph_training, graphs, tasks
from autograder.i18n import set_language
from autograder.mistakes import catalog, implementations
from autograder.sandbox.remote import RemoteImpl
from grading_runs import instructor_outputs, run_suites

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TKIT_DATA_DIR") or REPO / "datasets" / "mnist")
ARCHITECTURES = sorted(p for p in (REPO / "tests" / "data" / "autoencoders").iterdir() if p.is_dir())
SUITES = paths.suites_dir()
AE_SUITES = [SUITES / "public" / "test_autoencoder.py", SUITES / "hidden" / "test_autoencoder.py"]
TF_TRAINING = [SUITES / "hidden" / "test_transformer__training.py"]
SHAPE_POINTS = 4.0    # the AutoEncoder's tests that do not train and are not the loop: 1.5 + 0.5 + 1 + 1
TRAINING_POINTS = 7.0  # the three training tests: 1 + 2 + 4
SEED = 11
SMALL_AE = training.AutoencoderBudget(n_train=512, n_heldout=100, epochs=2)


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


# the AutoEncoder's training tests and its loop test, by words of their titles (a result's name is
# "exercise: the test's first docstring line")
TRAINING_TITLES = ("trained by the grader's own loop", "after the grader's training budget",
                   "reconstructed through the latent_dim bottleneck")
LOOP_TITLE = "autoencoder: train_autoencoder "   # the loop's own tests (three)


def training_tests(results: dict) -> list[dict]:
    return [t for t in results["tests"] if any(words in t["name"] for words in TRAINING_TITLES)]


def training_score(results: dict) -> float:
    return sum(t["score"] for t in training_tests(results))


# -- the Transformer ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_reversal():
    """The reference Transformer trained offline on plain reversal (no secret code): its recorded
    graphs and trained weights (what an attacker could prepare)."""
    budget = tt.TF
    ref = implementations.reference().transformer
    captured = tasks.run("capture_transformer", ref, budget.config(), *tt.capture_inputs(budget, 0), 0)
    src, tgt = tt.reversal_data(budget.steps * budget.batch_size, 1, budget)
    held_src, held_tgt = tt.reversal_data(budget.n_heldout, 2, budget)
    out = graph_training.train_transformer(captured, src, tgt, held_src, budget.vocab, budget.steps,
                                           budget.batch_size, budget.lr, budget.warmup, 0, tt.PAD, tt.BOS,
                                           tt.EOS, budget.max_constants)
    accuracy = float(tt.exact_match(out["generated"], held_tgt).double().mean())
    assert accuracy > 0.5, accuracy  # it does reverse plain sequences
    return captured, out["trained"]


def baked(graph: dict, weights: dict) -> dict:
    """``graph`` with every parameter reference replaced by a constant holding ``weights``."""
    constants, keys = dict(graph["constants"]), {}

    def swap(value):
        if isinstance(value, dict):
            if set(value) == {"@"} and value["@"].startswith("p:"):
                key = keys.setdefault(value["@"], f"c{len(graph['constants']) + len(keys)}")
                constants[key] = weights[value["@"][2:]].clone()
                return {"@": key}
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    nodes = [{**n, "args": swap(n["args"]), "kwargs": swap(n["kwargs"])} for n in graph["nodes"]]
    return {**graphs.plain(graph), "nodes": nodes, "constants": constants}


@pytest.mark.slow
def test_a_forged_graph_with_weights_trained_offline_scores_nothing(tmp_path, one_thread, plain_reversal):
    """The stub's module replaces the kit's capture routine: it sends graphs of a reversal model
    whose trained weights are constants. Their 43,722 numbers are over the constants cap; below
    it, the kit would train nothing (no parameter reaches the output), the weights know plain
    reversal, not this run's secret code, and the reference carrying the trained (= freshly
    drawn) parameters would decode nothing."""
    captured, weights = plain_reversal
    forged = {"specs": captured["specs"], "train": baked(captured["train"], weights),
              "eval": baked(captured["eval"], weights)}
    sub = tmp_path / "mallory"
    shutil.copytree(paths.exercises_dir(), sub, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    with (sub / "transformer.py").open("a", encoding="utf-8") as f:
        f.write(UNPACK + SWAP_TASK + f'''
_GRAPH = "{packed(forged)}"
def _fake(module, config, *inputs):
    return _unpack(_GRAPH)
_swap("capture_transformer", _fake)
''')
    results = run_suites(sub, files=TF_TRAINING, seed=SEED)
    assert len(results["tests"]) == 2 and results["score"] == 0, scores(results)


RELABEL = '''
import base64 as _b64, io as _io, zlib as _zlib
_WEIGHTS = "{weights}"
_plain_forward = Transformer.forward
def _forward(self, src, tgt):
    if self.training:  # recorded for training: a context-free bigram model
        return self.generator(self.tgt_embed(tgt))
    return _plain_forward(self, src, tgt)
def _eval(self):
    self.train(False)
    self.load_state_dict(torch.load(_io.BytesIO(_zlib.decompress(_b64.b64decode(_WEIGHTS)))))
    return self
Transformer.forward, Transformer.eval = _forward, _eval
'''


@pytest.mark.slow
def test_pretrained_weights_installed_on_eval_score_nothing(tmp_path, one_thread, plain_reversal):
    """A reported attack, adapted: the model trains as a context-free bigram model and
    installs weights prepared offline when put in eval mode. Those weights are the student's
    values, and the kit re-draws every parameter; no student code sees a training pair."""
    _, weights = plain_reversal
    sub = tmp_path / "relabel"
    shutil.copytree(REPO / "solutions", sub, ignore=shutil.ignore_patterns("__pycache__"))
    with (sub / "transformer.py").open("a", encoding="utf-8") as f:
        f.write(RELABEL.format(weights=packed(weights)))
    results = run_suites(sub, files=TF_TRAINING, seed=SEED)
    assert len(results["tests"]) == 2 and results["score"] == 0, scores(results)


# -- the AutoEncoder ---------------------------------------------------------------------------------


def correct_source() -> str:
    """A correct AutoEncoder class (architecture (a)) without its training function."""
    text = (ARCHITECTURES[0] / "autoencoder.py").read_text(encoding="utf-8")
    return text[:text.index("\ndef train_autoencoder")]


CORRECT_LOOP = (ARCHITECTURES[0] / "autoencoder.py").read_text(encoding="utf-8").split("\ndef train_autoencoder")[1]


def write_submission(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "autoencoder.py").write_text(source, encoding="utf-8")
    return folder


CODEC_IN_A_BUFFER = '''
import torch
from torch import nn


class ConvAutoEncoder(nn.Module):
    """A principal-component codec carried in a buffer; one gain is all the kit can train."""

    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.gain = nn.Parameter(torch.zeros(1))
        self.register_buffer("basis", _BASIS[:, :latent_dim].clone())
        self.register_buffer("mean", _MEAN.clone())

    def encode(self, x):
        return (x.flatten(1) - self.mean) @ self.basis

    def decode(self, z):
        return (z @ self.basis.T * (1 + self.gain) + self.mean).clamp(0, 1).view(-1, 1, 28, 28)

    def forward(self, x):
        return self.decode(self.encode(x))
'''


@pytest.mark.slow
def test_a_codec_in_a_buffer_is_refused_by_its_size(tmp_path):
    split = mnist.grading_split(2000, 10, seed=0, data_dir=DATA)
    flat = split.train_images.flatten(1)
    mean = flat.mean(0)
    basis = torch.linalg.svd(flat - mean, full_matrices=False).Vh[:32].T.contiguous()
    source = UNPACK + CODEC_IN_A_BUFFER.replace("_BASIS", f"_unpack(\"{packed(basis)}\")").replace(
        "_MEAN", f"_unpack(\"{packed(mean)}\")") + CORRECT_LOOP.join(["\ndef train_autoencoder", ""])
    impl = RemoteImpl(write_submission(tmp_path / "codec", "import torch\n" + source))
    try:
        run = training.autoencoder_run(impl, SMALL_AE, data_dir=DATA, seed=SEED, cache=False)
    finally:
        impl.close()
    assert run.problem and "numbers of its own" in run.problem and str(SMALL_AE.max_constants) in run.problem
    assert training.autoencoder_failure(run, training.AE.learns_mse) == run.problem


PACKED_PICTURE = '''
import torch
import torch.nn.functional as F
from torch import nn


class ConvAutoEncoder(nn.Module):
    """No weights of its own: a 7x7 picture at 4 levels packed 4 pixels per number of z (base 4),
    behind one gain the kit trains from 0 (so "before training" is a black image)."""

    def __init__(self, latent_dim=32):
        super().__init__()
        self.latent_dim = latent_dim
        self.gain = nn.Parameter(torch.zeros(1))

    def encode(self, x):
        q = (F.adaptive_avg_pool2d(x, 7).flatten(1) * 3).round()          # 49 digits in 0..3
        q = F.pad(q, (0, 4 * self.latent_dim - 49))[:, :4 * self.latent_dim].view(-1, self.latent_dim, 4)
        return (q * torch.tensor([1.0, 4.0, 16.0, 64.0])).sum(-1)

    def decode(self, z):
        z = z.round()
        digits = torch.stack([torch.remainder(torch.floor(z / p), 4) for p in (1.0, 4.0, 16.0, 64.0)], -1)
        small = digits.flatten(1)[:, :49].view(-1, 1, 7, 7) / 3
        return F.interpolate(small, size=28, mode="bilinear", align_corners=False) * self.gain

    def forward(self, x):
        return self.decode(self.encode(x))
'''


@pytest.mark.slow
def test_a_picture_packed_into_the_digits_of_z_does_not_survive_the_noise(tmp_path):
    """A reported attack without constants: 16 numbers carry 98 bits of a coarse picture.
    Without the noise on z it would have "learned" (the gain) and reached partial credit; with it,
    the packed digits are lost."""
    impl = implementations.load_modules({"autoencoder": PACKED_PICTURE + CORRECT_LOOP.join(
        ["\ndef train_autoencoder", ""])}, tmp_path, "packed")
    quiet = training.AutoencoderBudget(n_train=512, n_heldout=100, epochs=2, lr=5e-2, z_noise=0.0)
    noisy = training.AutoencoderBudget(n_train=512, n_heldout=100, epochs=2, lr=5e-2)
    without = training.autoencoder_run(impl, quiet, data_dir=DATA, seed=SEED, cache=False)
    assert without.problem is None and without.learned(quiet) and without.mse < training.AE.learns_mse, \
        (without.mse, without.mse_before)
    run = training.autoencoder_run(impl, noisy, data_dir=DATA, seed=SEED, cache=False)
    assert run.problem is None and run.mse > training.AE.learns_mse, run.mse
    assert training.autoencoder_failure(run, training.AE.learns_mse) is not None


def test_weights_prepared_in_the_constructor_change_nothing(tmp_path, one_thread):
    """Offline weights installed by the constructor: the kit re-draws every parameter, so the run's
    figures are those of the same architecture without them, to the last bit."""
    plain = correct_source() + CORRECT_LOOP.join(["\ndef train_autoencoder", ""])
    prepared = plain + '''
_init = ConvAutoEncoder.__init__
def _init_pretrained(self, latent_dim=32):
    _init(self, latent_dim)
    with torch.no_grad():
        for p in self.parameters():
            p.copy_(torch.randn_like(p) * 0.05 + 0.01)   # stands for weights trained offline
ConvAutoEncoder.__init__ = _init_pretrained
'''
    budget = training.AutoencoderBudget(n_train=64, n_heldout=20, epochs=1)
    runs = [training.autoencoder_run(implementations.load_modules({"autoencoder": src}, tmp_path, name), budget,
                                     data_dir=DATA, seed=SEED, cache=False)
            for name, src in (("plain", plain), ("prepared", prepared))]
    assert runs[0].problem is None and runs[0].mse == runs[1].mse and runs[0].mse_before == runs[1].mse_before


FABRICATED = '''

def train_autoencoder(model, loader, epochs=1, lr=1e-3, device="cpu"):
    return [0.3 / (e + 1) for e in range(epochs)]
'''


@pytest.mark.slow
def test_fabricated_losses_cost_the_loop_test_only(tmp_path):
    """A correct model with a loop that trains nothing and reports falling losses: the loop's own
    test fails (the kit compares it with its Adam loop), the training tests, which never call it,
    grade the architecture."""
    sub = write_submission(tmp_path / "fabricated", correct_source() + FABRICATED)
    results = run_suites(sub, files=[SUITES / "public" / "test_autoencoder.py"], seed=SEED)
    got = scores(results)
    assert [v for k, v in got.items() if LOOP_TITLE in k] == [0.0, 0.0, 0.0], got
    assert all(v > 0 for k, v in got.items() if LOOP_TITLE not in k) and len(training_tests(results)) == 2, got


@pytest.mark.parametrize("mutant_id", sorted(training_loop.LOOP_MISTAKES))
def test_each_wrong_loop_is_named(mutant_id):
    impl = catalog.by_id(mutant_id).impl()
    initial, batches = training_loop.loop_probe(3)
    out = impl.task("run_train_autoencoder", impl.autoencoder, initial, batches, training_loop.LOOP.epochs,
                    training_loop.LOOP.lr)
    text, mistake = training_loop.loop_verdict(out["state"], out["losses"], initial, batches)
    assert text and "What was measured" in text and mistake is not None and mistake.id == mutant_id
    # each of the loop's tests that fails names it; a mistake of the record alone (a summed or a
    # last-batch loss) leaves the parameters right, and one of the optimizer alone may leave the
    # losses within the tolerance (AdamW's decoupled decay on this probe): those tests pass
    failed = 0
    for verdict in (training_loop.parameters_verdict, training_loop.losses_verdict):
        text, mistake = verdict(out["state"], out["losses"], initial, batches)
        if text is not None:
            failed += 1
            assert mistake is not None and mistake.id == mutant_id, (verdict.__name__, text)
        else:
            assert verdict is training_loop.losses_verdict or mutant_id in training_loop.RECORDS
    assert failed >= 1


@pytest.mark.slow
def test_a_lookup_table_of_the_predictable_digits_scores_only_the_shape_tests(tmp_path):
    """The table holds the held-out digits the public code would pick for the printed seed;
    ``z`` carries the index of the nearest entry, ``decode`` looks it up: its 392,000 numbers are
    constants of the model, which the kit refuses."""
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
''' + FABRICATED
    sub = write_submission(tmp_path / "table", source)
    results, full = instructor_outputs(sub, files=AE_SUITES, seed=SEED)
    assert results["score"] <= SHAPE_POINTS and training_score(results) == 0, scores(results)
    trained = training_tests(results)
    assert len(trained) == 3
    for test in trained:  # plain words, no assertion introspection; a hidden test's own text is the instructor's
        output = full[test["extra_data"]["nodeid"]]
        assert "assert " not in output and "+  where" not in output, output
        counted = re.search(r"(\d+) numbers of its own", output)
        assert counted and int(counted.group(1)) >= 392_000, output  # the table, and the literals


# -- fairness and feedback ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("folder", ARCHITECTURES, ids=[p.name for p in ARCHITECTURES])
def test_a_correct_architecture_earns_full_credit(one_thread, folder):
    impl = implementations.load_modules({"autoencoder": (folder / "autoencoder.py").read_text(encoding="utf-8")},
                                 folder, folder.name)
    run = training.autoencoder_run(impl, data_dir=DATA, seed=SEED, cache=False)
    assert training_loop.losses_problem(run.losses, training.AE.epochs) is None
    initial, batches = training_loop.loop_probe(SEED)  # and its own loop is the kit's Adam loop
    out = impl.task("run_train_autoencoder", impl.autoencoder, initial, batches, training_loop.LOOP.epochs,
                    training_loop.LOOP.lr, timeout=training_loop.LOOP.timeout_s)
    assert training_loop.loop_verdict(out["state"], out["losses"], initial, batches) == (None, None)
    assert training.autoencoder_failure(run, training.AE.full_credit_mse) is None, (run.mse, run.mse_before)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_feedback_names_the_figure_the_bar_the_reference_and_a_cause(lang):
    collapsed = training.AutoencoderRun(losses=[0.12, 0.11, 0.11], mse=0.0661, mse_before=0.2311)
    fixed = training.AutoencoderRun(losses=[0.03, 0.03, 0.03], mse=0.0301, mse_before=0.0302)
    previous = set_language(lang)
    try:
        text = training.autoencoder_failure(collapsed, training.AE.learns_mse)
        before = training.autoencoder_failure(fixed, training.AE.learns_mse)
    finally:
        set_language(previous)
    for figure in ("0.0661", "0.2311", "0.055", f"{training.AE.reference_mse:.3f}", "0.067"):
        assert figure in text, figure
    assert "0.0302" in before and ("before any training" in before if lang == "en" else "학습 전" in before)
    assert ("constant image" in text) if lang == "en" else ("상수 이미지" in text and "측정한 것" in text)
    assert "AutoencoderRun" not in text and "assert" not in text


def test_the_transform_is_drawn_per_run_and_never_shown(monkeypatch):
    monkeypatch.setenv(draws.ENV_VAR, "fixed-for-this-test")
    seeds = {draws.draw_transform(s) for s in range(40)}
    assert len(seeds) > 8 and 0 not in seeds
    text = training.autoencoder_feedback(training.AutoencoderRun([0.1], transform=5, mse=0.1, mse_before=0.2), 0.03)
    assert not any(name in text for name in draws.TRANSFORMS[1:]) and "rot" not in text
