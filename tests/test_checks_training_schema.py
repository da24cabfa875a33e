"""A recorded graph is data: the trusted trainer validates it against its operators' schemas and
interprets it (:mod:`autograder.child.graph_schema`, :func:`autograder.child.graphs.run`), never
turning any of it into code. Forged graphs that name code, read values before they exist, define
a name twice, write into a parameter, buffer, constant or input through any view or alias, or
carry numbers in their literals, are refused; honest forms keep running. Fast: no MNIST, no
training budget.
"""

import ast
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from autograder.child import graph_schema, graph_training, graphs
from autograder.child.graph_rules import literal_words, tensor_words

CHILD = Path(graph_schema.__file__).resolve().parent
TRUSTED = ["graphs.py", "graph_schema.py", "graph_rules.py", "graph_training.py"]


def _param(name, shape, owner="", local=None):
    return {"name": f"p:{name}", "shape": shape, "dtype": "float32", "owner": owner,
            "local": local or name.rpartition(".")[2], "std": 1.0, "constant": None}


def _stat(name, value):
    return {"name": f"b:bn.{name}", "owner": "BatchNorm1d", "local": name, "value": value}


SPECS = {"params": [_param("w", [3])],
         "buffers": [_stat("running_mean", torch.zeros(3)), _stat("running_var", torch.ones(3)),
                     _stat("num_batches_tracked", torch.tensor(0))]}


def node(op, *args, out, **kwargs):
    return {"op": op, "args": list(args), "kwargs": kwargs, "out": out}


def ref(name):
    return {"@": name}


def graph(*nodes, output=None, constants=None, inputs=1):
    return {"inputs": [f"x{i}" for i in range(inputs)], "nodes": list(nodes),
            "outputs": {"@": output or nodes[-1]["out"]}, "constants": constants or {}}


def values():
    return {"p:w": torch.tensor([1.0, 2.0, 3.0]), "b:bn.running_mean": torch.zeros(3),
            "b:bn.running_var": torch.ones(3), "b:bn.num_batches_tracked": torch.tensor(0)}


# -- no code from data -----------------------------------------------------------------------------


def test_a_keyword_name_of_python_code_is_refused_by_name_and_never_echoed():
    """The earlier trainer copied keyword names into generated source; now a keyword that is not
    the operator's argument name is refused before anything runs."""
    payload = "alpha=1) or __import__('os')._exit(3) or (1"
    forged = graph(node("aten.add.Tensor", ref("x0"), ref("p:w"), out="v0", **{payload: 1}))
    with pytest.raises(graphs.GraphError, match="keyword argument its schema does not have") as caught:
        graphs.check(forged, SPECS)
    assert "__import__" not in str(caught.value) and "self, other, alpha" in str(caught.value)


def test_the_trusted_graph_modules_generate_no_code():
    """No ``torch.fx``, no ``exec``/``eval``/``compile`` in the trusted trainer's modules (``re.compile``
    of the kit's own patterns aside)."""
    for name in TRUSTED:
        tree = ast.parse((CHILD / name).read_text(encoding="utf-8"))
        for item in ast.walk(tree):
            if isinstance(item, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in item.names] + [item.module or ""] if isinstance(item, ast.ImportFrom) \
                    else [a.name for a in item.names]
                assert not any("fx" in m.split(".") for m in modules), (name, modules)
            if isinstance(item, ast.Call) and isinstance(item.func, ast.Name):
                assert item.func.id not in ("exec", "eval", "compile", "__import__"), (name, item.func.id)
            if isinstance(item, ast.Attribute):
                assert item.attr != "fx", name


_EVENTS: list = []
_WATCHING = [False]


def _audit(event, args):
    if _WATCHING[0] and event in ("exec", "compile"):
        _EVENTS.append(event)


def test_interpreting_a_graph_compiles_and_executes_nothing():
    """Python's audit hooks see every ``compile`` and ``exec``: a call of the interpreter raises none."""
    model = nn.Sequential(nn.Linear(4, 3), nn.GELU(approximate="tanh"), nn.Dropout(0.2))
    x = torch.randn(2, 4)
    plan = graphs.check(graphs.capture(model, [x], model), graphs.param_specs(model))
    state = {f"p:{n}": p.detach() for n, p in model.named_parameters()}
    graphs.run(plan, state, [x])  # warm: anything torch loads lazily is loaded
    sys.addaudithook(_audit)
    _WATCHING[0] = True
    try:
        out = graphs.run(plan, state, [x])
    finally:
        _WATCHING[0] = False
    assert out.shape == (2, 3) and _EVENTS == []


# -- the schema ------------------------------------------------------------------------------------


@pytest.mark.parametrize("forged, words", [
    (graph(node("aten.add.Tensor", ref("v1"), ref("x0"), out="v0"), node("aten.neg.default", ref("x0"), out="v1")),
     "not defined before"),
    (graph(node("aten.neg.default", ref("x0"), out="v0"), node("aten.neg.default", ref("p:w"), out="v0")),
     "a name defined before"),
    (graph(node("aten.neg.default", ref("x0"), out="p:w")), "malformed name"),
    (graph(node("aten.max.dim", ref("x0"), 0, out="v0")), "shape its schema does not return"),
    (graph(node("aten.add.Tensor", ref("x0"), ref("p:w"), 1, 2, out="v0")), "positional arguments"),
    (graph(node("aten.add.Tensor", ref("x0"), out="v0")), "does not pass other"),
    (graph(node("aten.add.Tensor", ref("x0"), ref("p:w"), out="v0", other=ref("x0"))), "an argument twice"),
    (graph(node("aten.sum.dim_IntList", ref("x0"), ["0"], out="v0")), "type str"),
    (graph(node("aten.mul.Tensor", ref("x0"), {"#f": "__import__('os')"}, out="v0")), "type dict"),
    (graph(node("aten.gelu.default", ref("x0"), out="v0", approximate="tanh; import os")), "does not admit"),
    (graph(node("aten.rand.default", [3], out="v0", device="cuda"), node("aten.add.Tensor", ref("v0"), ref("x0"),
                                                                       out="v1")), "does not admit"),
    (graph(node("aten.rand.generator", [3], generator=1, out="v0")), "does not admit"),
    (graph(node("aten.add.int", 1, 2, out={"#v": 3})), "unknown ATen operator"),
    (graph(node("aten.set_.source_Tensor", ref("x0"), ref("p:w"), out="v0")), "does not run"),
    (graph({**node("aten.neg.default", ref("x0"), out="v0"), "code": "print(1)"}), "is not a node"),
    (graph(node("aten.neg.default", ref("x0"), out="v0"), inputs=1) | {"inputs": ["input"]}, "named x0"),
    (graph(node("aten.add.Tensor", ref("x0"), ref("k0"), out="v0"), constants={"k0": torch.ones(3)}),
     "named c0"),
    (graph(node("aten.neg.default", ref("x0"), out="v0")) | {"outputs": {"@": "x0"}}, "output is not"),
])
def test_a_graph_outside_its_operators_schemas_is_refused(forged, words):
    with pytest.raises(graphs.GraphError, match=words):
        graphs.check(forged, SPECS)


def test_honest_argument_forms_pass():
    """Keywords by their schema names, an ``int[2]`` given as one int, a wrapped scalar where the
    schema says Tensor, non-finite floats, dtypes, layouts and the CPU device by name."""
    honest = graph(
        node("aten.full.default", [2, 3], {"#f": "-inf"}, out="v0", dtype=torch.float32, layout={"#": "strided"},
             device=torch.device("cpu")),
        node("aten.mul.Tensor", ref("x0"), 2.0, out="v1"),
        node("aten.max_pool2d.default", ref("v1"), 1, out="v2"),
        node("aten.slice.Tensor", ref("v2"), 2, 0, sys.maxsize, out="v5"),  # x[..., 0:]
        node("aten.add.Tensor", ref("v5"), ref("p:w"), out="v3", alpha=0.5),
        node("aten.maximum.default", ref("v3"), ref("v0"), out="v4"))
    plan = graphs.check(honest, SPECS)
    x = torch.randn(1, 2, 3)
    assert torch.equal(graphs.run(plan, values(), [x]), x * 2 + 0.5 * torch.tensor([1.0, 2.0, 3.0]))


# -- writes ----------------------------------------------------------------------------------------

WRITES = {
    "view_copy_into_a_parameter": [node("aten.view.default", ref("p:w"), [-1], out="v0"),
                                   node("aten.copy_.default", ref("v0"), ref("x0"), out="v1")],
    "as_strided_into_a_parameter": [node("aten.as_strided.default", ref("p:w"), [3], [1], out="v0"),
                                    node("aten.mul_.Scalar", ref("v0"), 0.0, out="v1")],
    "detach_then_zero": [node("aten.detach.default", ref("p:w"), out="v0"), node("aten.zero_.default", ref("v0"),
                                                                               out="v1")],
    "unsafe_view_undeclared_alias": [node("aten._unsafe_view.default", ref("p:w"), [3], out="v0"),
                                     node("aten.add_.Tensor", ref("v0"), ref("x0"), out="v1")],
    "dropout_returns_its_input": [node("aten.dropout.default", ref("p:w"), 0.0, False, out="v0"),
                                  node("aten.mul_.Scalar", ref("v0"), 0.0, out="v1")],
    "out_argument": [{"op": "aten.add.out", "args": [ref("x0"), ref("x0")], "kwargs": {"out": ref("p:w")},
                      "out": "v0"}],
    "split_then_fill": [node("aten.split.Tensor", ref("p:w"), 1, out=["v0.0", "v0.1", "v0.2"]),
                        node("aten.fill_.Scalar", ref("v0.1"), 7.0, out="v1")],
    "batch_norm_statistics_into_a_parameter": [
        node("aten.native_batch_norm.default", ref("x0"), None, None, ref("p:w"), ref("b:bn.running_var"), True,
             1.0, 1e-5, out=["v0.0", "v0.1", "v0.2"])],
    "add_into_a_statistics_buffer": [node("aten.add_.Tensor", ref("b:bn.running_mean"), ref("x0"), out="v0")],
    "counter_by_two": [node("aten.add_.Tensor", ref("b:bn.num_batches_tracked"), 2, out="v0")],
    "slice_of_the_input": [node("aten.slice.Tensor", ref("x0"), 0, 0, 1, out="v0"),
                           node("aten.fill_.Scalar", ref("v0"), 1.0, out="v1")],
}


@pytest.mark.parametrize("name", list(WRITES))
def test_a_write_into_the_models_state_is_refused_through_any_alias(name):
    forged = graph(*WRITES[name], node("aten.neg.default", ref("x0"), out="v9"))
    with pytest.raises(graphs.GraphError, match="writes into (the parameter w|the buffer bn|its input)"):
        graphs.check(forged, SPECS)


def test_an_alias_the_schema_does_not_declare_is_caught_by_storage_at_run_time(monkeypatch):
    """Were ``_unsafe_view`` not known to alias, the write would pass validation; the interpreter's
    storage check refuses it when it runs, before it happens."""
    monkeypatch.setattr(graph_schema, "MAY_ALIAS", frozenset())
    forged = graph(*WRITES["unsafe_view_undeclared_alias"], node("aten.neg.default", ref("x0"), out="v9"))
    plan = graphs.check(forged, SPECS)
    state = values()
    with pytest.raises(graphs.GraphError, match="memory of the parameter w"):
        graphs.run(plan, state, [torch.ones(3)])
    assert state["p:w"].tolist() == [1.0, 2.0, 3.0]


def test_in_place_operators_on_intermediates_run_and_every_call_starts_afresh():
    honest = graph(node("aten.mul.Tensor", ref("x0"), ref("p:w"), out="v0"),
                   node("aten.relu_.default", ref("v0"), out="v1"),
                   node("aten.slice.Tensor", ref("v1"), 0, 0, 1, out="v2"),
                   node("aten.fill_.Scalar", ref("v2"), 5.0, out="v3"),
                   output="v1")
    plan = graphs.check(honest, SPECS)
    state, x = values(), torch.tensor([-1.0, 1.0, 1.0])
    assert graphs.run(plan, state, [x]).tolist() == [5.0, 2.0, 3.0]
    assert graphs.run(plan, state, [x]).tolist() == [5.0, 2.0, 3.0]
    assert x.tolist() == [-1.0, 1.0, 1.0] and state["p:w"].tolist() == [1.0, 2.0, 3.0]


def test_decode_runs_on_the_state_before_encode_and_its_own_random_draws():
    """Only z crosses from encode to decode: decode's output is the same whatever encode drew or
    computed (here decode adds noise from the kit-seeded generator to z)."""
    def pair(extra_draws: int):
        encode = [node("aten.rand.default", [extra_draws], out="v0"),
                  node("aten.mean.dim", ref("x0"), [1], out="v1"),
                  node("aten.unsqueeze.default", ref("v1"), 1, out="v2"),
                  node("aten.mul.Tensor", ref("v2"), ref("p:w"), out="v3")]
        decode = [node("aten.randn_like.default", ref("x0"), out="v0"),
                  node("aten.add.Tensor", ref("x0"), ref("v0"), out="v1"),
                  node("aten.view.default", ref("v1"), [4, 3], out="v2")]
        return {"encode": graphs.check(graph(*encode), SPECS), "decode": graphs.check(graph(*decode), SPECS)}

    x = torch.rand(4, 3)
    a = graph_training.reconstruct(pair(1), values(), x, latent_dim=3, seed=5)
    b = graph_training.reconstruct(pair(1000), values(), x, latent_dim=3, seed=5)
    assert torch.equal(a, b)


# -- what a graph brings ---------------------------------------------------------------------------


def test_every_literal_counts_against_the_constants_cap():
    """5,000 ``full([1], scalar)`` nodes (weights trained offline, one number each) count their
    5,000 values and their 5,000 sizes; a float only float64 holds, or a wide int, counts two."""
    nodes = [node("aten.full.default", [1], i / 8, out=f"v{i}") for i in range(5000)]
    nodes += [node("aten.cat.default", [ref(f"v{i}") for i in range(k, k + 1000)], out=f"v{5000 + k // 1000}")
              for k in range(0, 5000, 1000)]
    nodes.append(node("aten.cat.default", [ref(f"v{5000 + k}") for k in range(5)], out="v5005"))
    plan = graphs.check(graph(*nodes), SPECS)
    assert plan.words == 10_000 and graphs.constant_numbers([plan], SPECS) == 10_000  # statistics: not constants
    with pytest.raises(graphs.GraphError, match="10000 numbers of its own"):
        graph_training.prepare({"specs": SPECS, "train": graph(*nodes)}, ("train",), 1024)
    assert [literal_words(v) for v in (3, 1 << 40, 0.5, 0.1, True, "tanh")] == [1, 2, 1, 2, 1, 1]


def test_wide_dtypes_count_their_bits():
    assert [tensor_words(torch.zeros(10, dtype=d)) for d in (torch.float32, torch.int64, torch.bool)] == [10, 20, 3]


# -- specs and kit operators -----------------------------------------------------------------------


@pytest.mark.parametrize("change, words", [
    (lambda s: s["params"][0].update(extra=1), "malformed"),
    (lambda s: s["params"].append(dict(s["params"][0])), "repeated name"),
    (lambda s: s["params"][0].update(local="bias"), "malformed"),
    (lambda s: s["params"][0].update(shape=[-3]), "malformed shape"),
    (lambda s: s["params"][0].update(dtype="int64"), "not a floating-point"),
    (lambda s: s["params"][0].update(std=float("nan")), "spread or constant"),
    (lambda s: s["params"][0].update(name="x0"), "malformed or repeated name"),
    (lambda s: s["buffers"].append({"name": "b:w", "owner": "", "local": "w", "value": torch.ones(3)}),
     "malformed or repeated name"),  # a buffer in a parameter's place: its values would be the "trained" ones
    (lambda s: s["buffers"][0].update(value=[0.0, 0.0, 0.0]), "not a plain tensor"),
    (lambda s: s["params"][0].update(shape=[1 << 24, 2]), "more than"),
])
def test_parameter_specs_outside_their_schema_are_refused(change, words):
    specs = {"params": [dict(p) for p in SPECS["params"]], "buffers": [dict(b) for b in SPECS["buffers"]]}
    change(specs)
    with pytest.raises(graphs.GraphError, match=words):
        graphs.check(graph(node("aten.neg.default", ref("x0"), out="v0")), specs)


def _scale_validate(args, kwargs):
    if len(args) != 1 or set(kwargs) != {"factor"} or not isinstance(kwargs["factor"], float):
        raise graphs.GraphError("tkit.scale takes one tensor and a float factor")


SCALE = {"tkit.scale": graphs.KitOperator(lambda x, factor: x * factor, _scale_validate)}


def test_trusted_extra_operators_run_in_the_same_loop():
    plan = graphs.check(graph(node("tkit.scale", ref("x0"), out="v0", factor=3.0),
                              node("aten.add.Tensor", ref("v0"), ref("p:w"), out="v1")), SPECS, SCALE)
    assert graphs.run(plan, values(), [torch.ones(3)]).tolist() == [4.0, 5.0, 6.0]
    with pytest.raises(graphs.GraphError, match="one tensor and a float"):
        graphs.check(graph(node("tkit.scale", ref("x0"), out="v0", factor=3)), SPECS, SCALE)
    with pytest.raises(graphs.GraphError, match="not an ATen operator"):
        graphs.check(graph(node("tkit.scale", ref("x0"), out="v0", factor=3.0)), SPECS)  # not in the table
    with pytest.raises(graphs.GraphError, match="writes into the parameter w"):  # its result may alias w
        graphs.check(graph(node("tkit.scale", ref("p:w"), out="v0", factor=1.0),
                           node("aten.zero_.default", ref("v0"), out="v1")), SPECS, SCALE)
