"""Reference components served to a composite's child (:mod:`autograder.sandbox.served`,
:mod:`autograder.child.proxies`, :mod:`autograder.child.components`): the proxies behave as the reference
would in one process (same parameters and random draws under the same seed, the same numbers, weight
tying, float64, train/eval, exceptions, gradients), a recording holds one node per call that the trusted
trainer computes, and nothing of the reference's source reaches the child.

A composite file here is the reference's own (``solutions/encoder.py`` ...), so each served call must
equal the reference computed in this process.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

from autograder import exercises
from autograder.checks import transformer_training
from autograder.sandbox.remote import RemoteImpl, SubmissionError
from autograder.sandbox.served import ComponentServer

REPO = Path(__file__).resolve().parent.parent


HELPERS = """
import torch
from torch import nn


def gradients(model, x):
    model.zero_grad()
    model(x).square().sum().backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


def tied_gradient_matches():
    from embedding import TokenEmbedding
    torch.manual_seed(0)
    embed = TokenEmbedding(7, 4)
    head = nn.Linear(4, 7, bias=False)
    head.weight = embed.embedding.weight
    ids = torch.tensor([[1, 2, 3]])
    head(embed(ids)).sum().backward()
    tied = embed.embedding.weight.grad.clone()
    plain = nn.Embedding(7, 4)
    with torch.no_grad():
        plain.weight.copy_(embed.embedding.weight)
    plain_head = nn.Linear(4, 7, bias=False)
    plain_head.weight = plain.weight
    plain_head(plain(ids) * 2.0).sum().backward()
    return bool(torch.allclose(tied, plain.weight.grad, atol=1e-5))


def sneak(component):
    from _tkit_child import components
    return components._invoke({"c": component}, (3,), {})
"""


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    """A child holding the reference's ``encoder.py`` and ``transformer.py`` only: every component
    is served (the folder has none of them)."""
    folder = tmp_path_factory.mktemp("composite")
    for name in ("encoder", "transformer"):
        shutil.copyfile(REPO / "solutions" / f"{name}.py", folder / f"{name}.py")
    (folder / "helpers.py").write_text(HELPERS)
    server = ComponentServer()
    remote = RemoteImpl(folder)
    remote.server = server
    yield remote
    remote.close()
    server.close()


def _serve(remote, exercise, seed=0):
    remote.begin_test(exercise, exercises.get(exercise).depends)
    remote.reset(seed=seed)
    return remote


def test_a_served_module_has_the_reference_parameters_and_numbers(hybrid, ref):
    remote = _serve(hybrid, "encoder", seed=11)
    model = remote.encoder.Encoder(2, 16, 4, 24, dropout=0.1)
    torch.manual_seed(11)
    expected = ref.encoder.Encoder(2, 16, 4, 24, dropout=0.1)
    state = model.state_dict()
    assert list(state) == list(expected.state_dict())
    assert all(torch.equal(state[k], v) for k, v in expected.state_dict().items())
    x = torch.randn(3, 6, 16)
    kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5])
    model.eval()
    expected.eval()
    assert torch.allclose(model(x, key_padding_mask=kpm), expected(x, key_padding_mask=kpm), atol=1e-6)
    model.train()   # dropout: the child's generator state goes to the server and comes back advanced
    expected.train()
    remote.seed(5)
    torch.manual_seed(5)
    first, second = model(x), model(x)
    torch.manual_seed(5)
    assert torch.allclose(first, expected(x), atol=1e-6) and torch.allclose(second, expected(x), atol=1e-6)


def test_float64_attributes_and_errors(hybrid, ref):
    remote = _serve(hybrid, "encoder")
    attention = remote.multi_head_attention.MultiHeadAttention(12, 3)
    assert attention.num_heads == 3 and attention.head_dim == 4
    layer = remote.encoder.EncoderLayer(12, 3, 20, dropout=0.0)
    layer.double()
    layer.eval()
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    assert layer(x).dtype == torch.float64
    with pytest.raises(SubmissionError) as raised:
        remote.multi_head_attention.MultiHeadAttention(15, 4)
    assert raised.value.error_type == "ValueError" and "15" in raised.value.error_message
    assert 'File "' not in raised.value.error_message   # a type and a message, never the reference's frames


def test_gradients_flow_through_a_served_component(hybrid, ref):
    """The composite's child backpropagates through a served call (the vector-Jacobian product is
    recomputed by the server under the same random numbers: dropout's mask is the forward's)."""
    remote = _serve(hybrid, "encoder", seed=3)
    model = remote.encoder.Encoder(1, 8, 2, 12, dropout=0.2)
    torch.manual_seed(3)
    expected = ref.encoder.Encoder(1, 8, 2, 12, dropout=0.2)
    x = torch.randn(2, 4, 8)
    remote.seed(9)
    grads = remote.helpers.gradients(model, x)
    torch.manual_seed(9)
    expected(x).square().sum().backward()
    assert sorted(grads) == sorted(n for n, _ in expected.named_parameters())
    for name, param in expected.named_parameters():
        assert torch.allclose(grads[name], param.grad, atol=1e-5), name


def test_weight_tying_reaches_the_served_component(hybrid):
    """A composite that ties its generator to a served embedding trains one tensor: the gradient of
    the shared weight sums both uses, as in one process."""
    remote = _serve(hybrid, "transformer")
    assert remote.helpers.tied_gradient_matches() is True


def test_a_recording_holds_one_node_per_served_call_and_trains(hybrid, ref):
    """The Transformer's training check over served components: each call is one ``tkit.component``
    node; the trusted code computes it from the reference and the recording learns."""
    remote = _serve(hybrid, "transformer")
    budget = transformer_training.TransformerBudget(steps=30, warmup=5, n_heldout=20)
    captured = remote.task("capture_transformer", remote.transformer, budget.config(),
                           *transformer_training.capture_inputs(budget, 1), budget.seed, timeout=120)
    nodes = captured["train"]["nodes"]
    kinds = {n["component"] for n in nodes if n["op"] == "tkit.component"}
    assert {"encoder.Encoder", "decoder.Decoder", "embedding.TokenEmbedding",
            "positional_encoding.PositionalEncoding", "masks.make_padding_mask", "masks.make_causal_mask"} <= kinds
    assert all(n["op"].startswith("aten.") or n["op"] == "tkit.component" for n in nodes)
    sys.path.insert(0, str(REPO / "solutions"))   # this test's process plays the trusted trainer
    try:
        from autograder.child import graph_training

        src, tgt, held_src, _ = transformer_training.draw_task(budget, 1)
        out = graph_training.train_transformer(captured, src, tgt, held_src, budget.vocab, budget.steps,
                                               budget.batch_size, budget.lr, budget.warmup, 5, 0, 1, 2,
                                               budget.max_constants, tuple(exercises.get("transformer").depends))
    finally:
        sys.path.remove(str(REPO / "solutions"))
    assert out["losses"][-1] < 0.8 * out["losses"][0]
    with pytest.raises(Exception, match="not a component served here"):
        graph_training.train_transformer(captured, src, tgt, held_src, budget.vocab, 2, budget.batch_size,
                                         budget.lr, 0, 5, 0, 1, 2, budget.max_constants, ("masks",))


def test_callbacks_outside_what_is_served_are_refused(hybrid):
    """Code that writes on the channel itself gets only what its test serves: nothing in a test of a
    component's own exercise (a component's file cannot have the reference computed for it), and not
    the composite's own reference in a composite's test."""
    remote = hybrid
    remote.begin_test("masks", ())
    remote.reset()
    with pytest.raises(SubmissionError) as raised:
        remote.helpers.sneak("masks.make_causal_mask")
    assert raised.value.error_type == "RuntimeError" and "no reference component" in raised.value.error_message
    _serve(remote, "encoder")
    with pytest.raises(SubmissionError) as raised:
        remote.helpers.sneak("encoder.Encoder")
    assert "not a component served" in raised.value.error_message
    assert remote.helpers.sneak("masks.make_causal_mask").shape == (3, 3)   # served to this test: computed


# -- attacks (tests/attacks/composite_*) --------------------------------------------------------------

ATTACKS = REPO / "tests" / "attacks"


def _attack_folder(tmp: Path, attack: str) -> Path:
    """The reference's modules, each ``suffix_<module>.py`` of ``attack`` appended to its module."""
    folder = tmp / attack
    folder.mkdir()
    for name in exercises.NAMES:
        shutil.copyfile(REPO / "solutions" / f"{name}.py", folder / f"{name}.py")
    for suffix in (ATTACKS / attack).glob("suffix_*.py"):
        module = folder / suffix.name[len("suffix_"):]
        module.write_text(module.read_text() + "\n\n" + suffix.read_text())
    return folder


def test_a_composite_that_looks_for_the_solutions_finds_none(tmp_path):
    """attacks/composite_reads_solutions: over the served components, imports, stats, walks and
    inspects find no solution's text (its Encoder would return garbage): every encoder test passes."""
    from grading_runs import run_suites

    results = run_suites(_attack_folder(tmp_path, "composite_reads_solutions"), names=("encoder",), seed=3,
                         training=False)
    failed = [(t["name"], t.get("output", "")[:300]) for t in results["tests"] if t["status"] != "passed"]
    assert failed == [] and results["score"] == exercises.get("encoder").points


def test_the_attacks_search_finds_the_solutions_where_they_are_readable(ref):
    """The same search run here, beside the repository's ``solutions/``, finds them: the attack above
    holds because the child has nothing to find, not because the search is blind."""
    source = (ATTACKS / "composite_reads_solutions" / "suffix_encoder.py").read_text()
    namespace = {"__name__": "attack", "__file__": str(ATTACKS / "composite_reads_solutions" / "encoder.py"),
                 "ATTACK_ROOTS": (), "Encoder": ref.encoder.Encoder,
                 "MultiHeadAttention": ref.multi_head_attention.MultiHeadAttention}
    exec(compile(source, "suffix_encoder.py", "exec"), namespace)
    assert any("solutions" in found for found in namespace["_FOUND"])


@pytest.mark.slow
def test_a_sleeping_composite_stops_at_the_submission_deadline(tmp_path):
    """attacks/composite_sleeps (~30 s): every call of the three composites sleeps just under the
    2 s per-request timeout. Their tests over served components, the integration tests' hybrids
    and the component server all draw on the submission's shares of its 20 s, and the grading
    stops at its wall-clock deadline with the cause in the feedback, below its honest twin."""
    import time

    from grading_runs import run_suites

    options = dict(names=("encoder", "decoder", "transformer"), seed=3, training=False, call_timeout=2.0,
                   time_limit=20.0)
    started = time.monotonic()
    attacked = run_suites(_attack_folder(tmp_path, "composite_sleeps"), **options)
    elapsed = time.monotonic() - started
    assert elapsed < options["time_limit"] + 15.0, elapsed
    failures = {t["extra_data"].get("failure") for t in attacked["tests"] if t["status"] != "passed"}
    assert "time_limit" in failures
    stopped = [t for t in attacked["tests"] if t["extra_data"].get("failure") == "time_limit"]
    assert all("time limit" in t["output"] for t in stopped)
    honest = run_suites(_reference_folder(tmp_path / "honest"), **options)
    assert all(t["status"] == "passed" for t in honest["tests"]) and attacked["score"] < honest["score"]


def _reference_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in exercises.NAMES:
        shutil.copyfile(REPO / "solutions" / f"{name}.py", folder / f"{name}.py")
    return folder
