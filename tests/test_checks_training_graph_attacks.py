"""Attacks on the trusted trainer of the training checks, written against its defence
(:mod:`autograder.child.graph_schema`, :func:`autograder.child.graphs.run`): each scores nothing
above its honest twin, the same model without the attack.

The attacks' sources are in ``tests/attacks/training_graphs`` (graded here, not by the sandbox's
batch: their names are not exercise names): keyword names carrying code and weights written
into every parameter through views (Transformer, suffixes of a context-free twin), digits carried
past the bottleneck in a statistics buffer, and a decoder written as 600 Python numbers
(AutoEncoder). Forged recordings are graded in this process, through the trusted trainer's own
entry (:func:`autograder.child.tasks.train_transformer_graph`): a node reading a value defined
after it, an output defined twice, a buffer in a parameter's place, every parameter's numbers
as constants.
"""

import shutil
from pathlib import Path

import pytest
import torch

from autograder import paths
from autograder.checks import training
from autograder.checks import transformer_training as tt
from autograder.child import tasks
from autograder.mistakes import implementations
from autograder.sandbox.remote import RemoteImpl
from grading_runs import instructor_outputs, run_suites

REPO = Path(__file__).resolve().parent.parent
ATTACKS = REPO / "tests" / "attacks" / "training_graphs"
TF_TRAINING = [paths.suites_dir() / "hidden" / "test_transformer__training.py"]
SMALL_AE = training.AutoencoderBudget(n_train=256, n_heldout=100, epochs=1)
SMALL_TF = tt.TransformerBudget(steps=10)
SEED = 11


def transformer_submission(folder: Path, *suffixes: str) -> Path:
    """The reference solutions with ``suffixes`` (files of :data:`ATTACKS`) appended to transformer.py."""
    shutil.copytree(REPO / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "transformer.py").open("a", encoding="utf-8") as f:
        for suffix in suffixes:
            f.write("\n\n" + (ATTACKS / f"{suffix}.py").read_text(encoding="utf-8"))
    return folder


def outputs(results: dict) -> str:
    return "\n".join(t["output"] for t in results["tests"])


@pytest.mark.slow
def test_transformer_graph_attacks_score_nothing_above_their_twin(tmp_path):
    """The context-free twin learns nothing of the task (0); a keyword name of Python code and
    offline weights written through views are refused before anything runs, and say why."""
    twin = run_suites(transformer_submission(tmp_path / "twin", "transformer_bigram"), files=TF_TRAINING, seed=SEED)
    assert len(twin["tests"]) == 2 and twin["score"] == 0, outputs(twin)
    # the first node of the recording is a served component's call (masks.make_padding_mask) when the
    # composite is graded over the reference components, an ATen operator otherwise: both refuse
    for attack, words in (("transformer_keyword_code", ("keyword argument its schema does not have",
                                                        "kwargs are not a plain argument template")),
                          ("transformer_weights_through_views", ("writes into the parameter",))):
        results, full = instructor_outputs(transformer_submission(tmp_path / attack, "transformer_bigram", attack),
                                           files=TF_TRAINING, seed=SEED)
        said = "\n".join(full.values())   # the training checks are hidden: their own text is the instructor's
        assert len(results["tests"]) == 2 and results["score"] <= twin["score"], (attack, said)
        assert any(w in said for w in words) and "owned" not in said + outputs(results), (attack, said)


def autoencoder_impl(tmp_path: Path, name: str, twin: bool):
    source = (ATTACKS / f"{name}.py").read_text(encoding="utf-8")
    if twin:
        source = source.replace("CHANNEL = True", "CHANNEL = False").replace("SCALARS = 600", "SCALARS = 0")
    folder = tmp_path / f"{name}-{'twin' if twin else 'attack'}"
    folder.mkdir()
    (folder / "autoencoder.py").write_text(source, encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("name, words", [("autoencoder_statistics_channel", "writes into the buffer store.running_mean"),
                                         ("autoencoder_scalar_weights", "numbers of its own")])
def test_autoencoder_graph_attacks_learn_nothing_above_their_twin(tmp_path, name, words):
    """Graded in real children (the student's and the trusted one) with a small budget: the twin
    does not learn (no training point), the attack is refused with the reason."""
    runs = {}
    for twin in (True, False):
        impl = RemoteImpl(autoencoder_impl(tmp_path, name, twin))
        try:
            runs[twin] = training.autoencoder_run(impl, SMALL_AE, seed=SEED, cache=False)
        finally:
            impl.close()
    assert training.autoencoder_failure(runs[True], training.AE.learns_mse) is not None
    attack = runs[False]
    assert attack.problem and words in attack.problem, attack.problem
    assert training.autoencoder_failure(attack, training.AE.learns_mse) == attack.problem


# -- forged recordings, through the trusted trainer's entry ----------------------------------------


@pytest.fixture(scope="module")
def recorded():
    """The reference Transformer's recording (what a forging module starts from)."""
    ref = implementations.reference().transformer
    return tasks.run("capture_transformer", ref, SMALL_TF.config(), *tt.capture_inputs(SMALL_TF, 0), 0)


def train(captured: dict) -> dict:
    src, tgt, held_src, _ = tt.draw_task(SMALL_TF, SEED)
    return tasks.run("train_transformer_graph", captured, src, tgt, held_src, SMALL_TF.vocab, SMALL_TF.steps,
                     SMALL_TF.batch_size, SMALL_TF.lr, SMALL_TF.warmup, 1, tt.PAD, tt.BOS, tt.EOS,
                     SMALL_TF.max_constants)


def forged(recorded: dict, change) -> dict:
    copy = {"specs": {"params": [dict(p) for p in recorded["specs"]["params"]],
                      "buffers": [dict(b) for b in recorded["specs"]["buffers"]]}}
    for name in ("train", "eval"):
        graph = recorded[name]
        copy[name] = {**graph, "nodes": [dict(n) for n in graph["nodes"]], "constants": dict(graph["constants"])}
    change(copy)
    return copy


def _read_ahead(captured):
    """The first node that reads an operator's output moved to the front."""
    nodes = captured["train"]["nodes"]
    reader = next(i for i, n in enumerate(nodes) if '"@": "v' in repr(n["args"]).replace("'", '"'))
    nodes.insert(0, nodes.pop(reader))


def _defined_twice(captured):
    nodes = captured["train"]["nodes"]
    nodes.append({**nodes[-1], "out": nodes[0]["out"]})


def _buffer_as_parameter(captured):
    weight = next(p for p in captured["specs"]["params"] if p["name"] == "p:generator.weight")
    captured["specs"]["buffers"].append({"name": "b:generator.weight", "owner": "", "local": "weight",
                                         "value": torch.randn(weight["shape"])})  # "weights trained offline"


def _parameters_as_constants(captured):
    """Every parameter's numbers as constants the output reads (a sum added to every logit)."""
    for name in ("train", "eval"):
        graph, total = captured[name], captured[name]["outputs"]["@"]
        for i, p in enumerate(captured["specs"]["params"]):
            graph["constants"][f"c{900 + i}"] = torch.randn(p["shape"])
            graph["nodes"] += [
                {"op": "aten.sum.default", "args": [{"@": f"c{900 + i}"}], "kwargs": {}, "out": f"v{800000 + 2 * i}"},
                {"op": "aten.add.Tensor", "args": [{"@": total}, {"@": f"v{800000 + 2 * i}"}], "kwargs": {},
                 "out": f"v{800001 + 2 * i}"}]
            total = f"v{800001 + 2 * i}"
        graph["outputs"] = {"@": total}


@pytest.mark.parametrize("change, words", [
    (_read_ahead, "not defined before"),
    (_defined_twice, "a name defined before"),
    (_buffer_as_parameter, "malformed or repeated name"),
    (_parameters_as_constants, "numbers of its own"),
])
def test_a_forged_recording_is_refused_by_the_trusted_trainer(recorded, change, words):
    out = train(forged(recorded, change))
    assert isinstance(out, dict) and words in out.get("problem", ""), out


def test_the_honest_recording_still_trains(recorded):
    out = train(forged(recorded, lambda captured: None))
    assert "problem" not in out and len(out["losses"]) == SMALL_TF.steps and out["losses"][-1] < out["losses"][0]
