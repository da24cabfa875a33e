"""The recorded graphs of the training checks (:mod:`autograder.child.graphs`,
:mod:`autograder.child.graph_training`): what a recording holds, that replaying it computes what
the model computes (forward and gradients) for the forms legitimate models take, what the kit
refuses, and how parameters are re-drawn. Fast: no MNIST, no training budget.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.child import graph_training, graphs, tasks
from autograder.mistakes import implementations


def replay_matches(model: nn.Module, *inputs, train: bool = True, seed: int = 0):
    """Record ``model(*inputs)``, replay it with the model's own tensors and return the largest
    difference in the output and in every parameter's gradient."""
    model.train(train)
    graph = graphs.capture(model, list(inputs), model)
    specs = graphs.param_specs(model)
    plan = graphs.check(graph, specs)
    torch.manual_seed(seed)
    want = model(*inputs)
    want.float().square().mean().backward()
    want_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    values = {f"p:{n}": p.detach().clone().requires_grad_(True) for n, p in model.named_parameters()}
    values.update({f"b:{n}": b.detach().clone() for n, b in model.named_buffers()})
    torch.manual_seed(seed)
    got = graphs.run(plan, values, list(inputs))
    got.float().square().mean().backward()
    worst = float((got - want).detach().abs().max())
    for name, grad in want_grads.items():
        worst = max(worst, float((values[f"p:{name}"].grad - grad).abs().max()))
    return worst, plan


class HandLayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + 1e-5) + self.beta


class EinsumAttention(nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.qkv, self.out, self.heads = nn.ModuleList(nn.Linear(d, d) for _ in range(3)), nn.Linear(d, d), heads

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (proj(x).view(b, s, self.heads, d // self.heads) for proj in self.qkv)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d // self.heads)
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
        return self.out(torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, d))


class Sdpa(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.proj(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class TiedEmbedding(nn.Module):
    """The output projection shares the embedding's weight (weight tying)."""

    def __init__(self, vocab=11, d=8):
        super().__init__()
        self.embed, self.out = nn.Embedding(vocab, d), nn.Linear(d, vocab)
        self.out.weight = self.embed.weight

    def forward(self, ids):
        h = self.embed(ids) * math.sqrt(self.embed.embedding_dim)
        h += torch.ones_like(h)  # in place on a value it computed
        return self.out(torch.relu_(h))


VARIANTS = {
    "sequential_conv_batchnorm_maxpool_upsample": (lambda: nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Upsample(scale_factor=2), nn.Conv2d(4, 1, 3, padding=1), nn.Sigmoid()), (torch.rand(3, 1, 8, 8),)),
    "interpolate_bilinear_and_dropout_in_eval": (lambda: nn.Sequential(
        nn.Conv2d(1, 2, 3, stride=2, padding=1), nn.Dropout(0.3), nn.Tanh(),
        nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)), (torch.rand(2, 1, 8, 8),)),
    "modulelist_loop_with_hand_layernorm": (lambda: nn.Sequential(
        *[nn.Sequential(nn.Linear(6, 6), HandLayerNorm(6), nn.GELU()) for _ in range(3)]), (torch.randn(4, 6),)),
    "einsum_attention_with_causal_mask": (EinsumAttention, (torch.randn(2, 5, 8),)),
    "scaled_dot_product_attention": (Sdpa, (torch.randn(2, 5, 8),)),
    "tied_embedding_and_output_with_in_place_operators": (TiedEmbedding, (torch.randint(0, 11, (2, 5)),)),
    "embedding_and_transformer_encoder_layer": (lambda: nn.Sequential(
        nn.Embedding(11, 8), nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)),
        (torch.randint(0, 11, (2, 5)),)),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_replaying_a_recording_computes_what_the_model_computes(name):
    make, inputs = VARIANTS[name]
    torch.manual_seed(0)
    worst, plan = replay_matches(make(), *inputs, train=name != "interpolate_bilinear_and_dropout_in_eval")
    assert worst < 1e-5, (name, worst)
    assert plan.steps and not any(step.op == "aten.detach.default" and not step.no_grad for step in plan.steps[-1:])


def test_dropout_in_training_mode_replays_with_the_kits_generator():
    model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5))
    worst, plan = replay_matches(model, torch.randn(4, 6), train=True, seed=3)
    assert worst == 0.0 and any("dropout" in step.op or "bernoulli" in step.op for step in plan.steps)


def test_batchnorm_statistics_update_in_the_kits_buffers_only_when_committed():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    model.train()
    x = torch.randn(4, 1, 6, 6)
    specs = graphs.param_specs(model)  # before the recording's call moves the layer's statistics
    plan = graphs.check(graphs.capture(model, [x], model), specs)
    assert graphs.statistic_buffers(specs) == {"b:1.running_mean", "b:1.running_var", "b:1.num_batches_tracked"}
    assert plan.statistics == ("b:1.num_batches_tracked", "b:1.running_mean", "b:1.running_var")
    values = graphs.initial_values(specs, 0)
    values.update({f"p:{n}": p.detach() for n, p in model.named_parameters()})
    graphs.run(plan, values, [x])  # an evaluation call: nothing of it stays
    assert values["b:1.running_var"].tolist() == [1.0, 1.0] and values["b:1.running_mean"].tolist() == [0.0, 0.0]
    graphs.run(plan, values, [x], commit=values)  # a training call: the layer's own momentum rule
    assert torch.allclose(values["b:1.running_mean"], model[1].running_mean, atol=1e-6)
    assert torch.allclose(values["b:1.running_var"], model[1].running_var, atol=1e-6)
    assert int(values["b:1.num_batches_tracked"]) == 1


def test_the_reference_models_record_and_replay_exactly():
    ref = implementations.reference()
    ae = ref.autoencoder.ConvAutoEncoder(16)
    x = torch.rand(4, 1, 28, 28)
    worst, _ = replay_matches(ae, x)
    assert worst < 1e-6
    model = ref.transformer.Transformer(10, 10, d_model=16, num_heads=2, num_encoder_layers=1,
                                        num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
    src = torch.tensor([[3, 4, 5, 0], [6, 7, 0, 0]])
    tgt = torch.tensor([[1, 5, 4, 3, 2], [1, 7, 6, 2, 0]])
    worst, graph = replay_matches(model, src, tgt)  # its range check on the ids is Python: evaluated once
    assert worst < 1e-5 and not graph.constants


def test_recording_holds_plain_data_only():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    graph = graphs.capture(model, [torch.randn(2, 4)], model)

    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        else:
            assert value is None or isinstance(value, (bool, int, float, str, torch.dtype, torch.device,
                                                       torch.Tensor)), type(value)

    walk({k: v for k, v in graph.items()})
    assert graph["outputs"]["@"] in [node["out"] for node in graph["nodes"]]


def _graph(nodes, constants=None):
    return {"inputs": ["x0"], "nodes": nodes, "outputs": {"@": nodes[-1]["out"]}, "constants": constants or {}}


SPECS = {"params": [{"name": "p:w", "shape": [3], "dtype": "float32", "owner": "", "local": "w", "std": 1.0,
                     "constant": None}], "buffers": []}


@pytest.mark.parametrize("op, words", [
    ("aten._foreach_add.List", "does not run"),
    ("aten.nonexistent_op.default", "does not run"),
    ("torch.ops.mylib.exfiltrate", "not an ATen operator"),
    ("builtins.open", "not an ATen operator"),
])
def test_an_operator_outside_the_allow_list_is_refused_by_name(op, words):
    graph = _graph([{"op": op, "args": [{"@": "x0"}], "kwargs": {}, "out": "v0"}])
    with pytest.raises(graphs.GraphError, match=words):
        graphs.check(graph, SPECS)


def test_a_write_into_a_parameter_or_an_undefined_value_is_refused():
    write = _graph([{"op": "aten.add_.Tensor", "args": [{"@": "p:w"}, {"@": "x0"}], "kwargs": {}, "out": "v0"}])
    with pytest.raises(graphs.GraphError, match="writes into the parameter w"):
        graphs.check(write, SPECS)
    ahead = _graph([{"op": "aten.add.Tensor", "args": [{"@": "v1"}, {"@": "x0"}], "kwargs": {}, "out": "v0"}])
    with pytest.raises(graphs.GraphError, match="not defined before"):
        graphs.check(ahead, SPECS)


def test_constants_above_the_cap_are_refused_with_the_count():
    class Codec(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(1))
            self.register_buffer("basis", torch.randn(784, 16))

        def forward(self, x):
            return (x.flatten(1) @ self.basis) * self.scale

    model = Codec()
    captured = {"specs": graphs.param_specs(model), "train": graphs.capture(model, [torch.rand(2, 1, 28, 28)], model)}
    with pytest.raises(graphs.GraphError, match="12546 numbers of its own"):  # the basis, and flatten's [2, 784]
        graph_training.prepare(captured, ("train",), 1024)
    assert graph_training.prepare(captured, ("train",), 20_000)[0]["train"].steps


def test_tensors_made_outside_the_recording_are_constants():
    table = torch.randn(5, 4)

    class Lookup(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(4))

        def forward(self, x):
            return table[x] * self.w

    model = Lookup()
    graph = graphs.capture(model, [torch.tensor([0, 3])], model)
    assert list(graph["constants"]) == ["c0"] and torch.equal(graph["constants"]["c0"], table)
    specs = graphs.param_specs(model)
    assert graphs.constant_numbers([graphs.check(graph, specs)], specs) == 20  # index and mul pass no literal


def test_a_call_that_returns_what_no_operator_computed_is_refused():
    class Cache(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(1))
            self.seen = torch.zeros(2, 3)

        def forward(self, x):
            return self.seen

    model = Cache()
    with pytest.raises(graphs.GraphError, match="no operator computed"):
        graphs.capture(model, [torch.zeros(2, 3)], model)


def test_parameters_are_redrawn_whatever_the_student_initialised():
    ref = implementations.reference()
    torch.manual_seed(1)
    plain = ref.autoencoder.ConvAutoEncoder(16)
    prepared = ref.autoencoder.ConvAutoEncoder(16)
    with torch.no_grad():
        for p in prepared.parameters():
            p.copy_(torch.randn_like(p) * 3)  # "weights trained offline"
    a = graphs.initial_values(graphs.param_specs(plain), 7)
    b = graphs.initial_values(graphs.param_specs(prepared), 7)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    c = graphs.initial_values(graphs.param_specs(plain), 8)
    assert not torch.equal(a["p:conv1.weight"], c["p:conv1.weight"])
    bound = 1 / math.sqrt(1 * 3 * 3)  # Conv2d(1, 16, 3): PyTorch's U(+-1/sqrt(fan_in))
    assert a["p:conv1.weight"].abs().max() <= bound and a["p:conv1.weight"].abs().max() > 0.8 * bound
    assert a["p:conv1.bias"].abs().max() <= bound


def test_a_custom_parameter_gets_a_scale_never_values():
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.flag = nn.Parameter(torch.full((1,), 0.7))       # a "flag": becomes 1
            self.table = nn.Parameter(torch.arange(64.0).view(8, 8) / 100)  # prepared values: redrawn
            self.gain = nn.Parameter(torch.ones(8))

    specs = graphs.param_specs(Custom())
    values = graphs.initial_values(specs, 0)
    assert values["p:flag"].tolist() == [1.0] and values["p:gain"].tolist() == [1.0] * 8
    assert not torch.allclose(values["p:table"], torch.arange(64.0).view(8, 8) / 100)
    assert 0.05 < float(values["p:table"].std()) < 0.4  # the student's spread (0.19), not their numbers


def test_the_kits_greedy_loop_over_a_causal_graph_equals_growing_the_target():
    ref = implementations.reference()
    torch.manual_seed(0)
    model = ref.transformer.Transformer(10, 10, d_model=16, num_heads=2, num_encoder_layers=1,
                                        num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
    model.eval()
    src = torch.randint(3, 10, (6, 4))
    graph = graphs.check(graphs.capture(model, [src, torch.ones(6, 5, dtype=torch.long)], model),
                         graphs.param_specs(model))
    values = {f"p:{n}": p.detach() for n, p in model.named_parameters()}
    values.update({f"b:{n}": b for n, b in model.named_buffers()})
    ours = graph_training.greedy(graph, values, src, 5, 10, 0, 1, 2)
    theirs = model.greedy_decode(src, 1, 2, 6)
    width = theirs.shape[1]
    assert torch.equal(ours[:, :width], theirs)


def test_the_probe_model_and_the_kits_adam_loop_agree_with_the_reference_loop():
    from autograder.checks import training_loop

    initial, batches = training_loop.loop_probe(5)
    out = tasks.run("run_train_autoencoder", implementations.reference().autoencoder, initial, batches,
                    training_loop.LOOP.epochs, training_loop.LOOP.lr)
    assert training_loop.loop_verdict(out["state"], out["losses"], initial, batches) == (None, None)
    assert len(out["losses"]) == training_loop.LOOP.epochs and out["losses"][1] < out["losses"][0]


def test_a_refused_operator_is_named_with_the_models_line():
    class Sorter(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return torch.special.zeta(x * self.w, 2.0)   # not on the allow-list

    model = Sorter()
    graph = graphs.capture(model, [torch.randn(2, 3)], model)
    line = Sorter.forward.__code__.co_firstlineno + 1
    with pytest.raises(graphs.GraphError, match=rf"aten\.special_zeta\..*test_checks_training_graphs\.py:{line}"):
        graphs.check(graph, graphs.param_specs(model))


def test_weights_hidden_from_named_parameters_become_constants_and_count():
    """A model that hides its (prepared) weights from ``named_parameters`` gets them recorded as
    constants of its own: they count against the cap instead of being re-drawn."""
    class Hiding(nn.Module):
        def __init__(self):
            super().__init__()
            self.gain = nn.Parameter(torch.ones(1))
            self.secret = nn.Linear(784, 16)

        def named_parameters(self, *args, **kwargs):
            yield "gain", self.gain

        def forward(self, x):
            return self.secret(x.flatten(1)) * self.gain

    model = Hiding()
    captured = {"specs": graphs.param_specs(model), "train": graphs.capture(model, [torch.rand(2, 1, 28, 28)], model)}
    assert [p["name"] for p in captured["specs"]["params"]] == ["p:gain"]
    with pytest.raises(graphs.GraphError, match="12562 numbers of its own"):  # weight, bias, flatten's [2, 784]
        graph_training.prepare(captured, ("train",), 1024)


def test_uninitialised_memory_replays_as_zeros():
    """``torch.empty`` could hand a graph what the trusted process freed just before (the
    held-out digits' intermediates); the kit replays it as zeros."""
    class Peek(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(1))

        def forward(self, z):
            return torch.empty(z.shape[0], 4096) * self.w

    model = Peek()
    graph = graphs.check(graphs.capture(model, [torch.zeros(3, 2)], model), graphs.param_specs(model))
    secret = torch.full((3, 4096), 0.123)
    del secret  # its memory is free for the allocator to hand out again
    out = graphs.run(graph, {"p:w": torch.ones(1)}, [torch.zeros(3, 2)])
    assert torch.equal(out, torch.zeros(3, 4096))
