"""A model's computation as data: recorded where the student's code runs, trained where none does.

The training checks (:mod:`autograder.checks.training`) never let the student's Python train or
measure the graded model. Instead:

1. in the student's child, :func:`capture` runs one call of the model (``encode``, ``decode``,
   ``forward``) on an input the grader chose and records every ATen operator it executes, with
   its arguments, as plain data (a *graph*: a node list, the model's parameter specs and the
   tensors that are neither parameters nor inputs, its *constants*). Python control flow is
   evaluated while recording (a range check on token ids raises or not, a loop unrolls), so the
   graph is the computation for inputs of that shape: fixed before any training data exists;
2. in a child that imports no student file (:func:`autograder.checks.training.trusted_process`),
   :func:`check` refuses operators outside :data:`ALLOWED_OPS`, writes into parameters, and
   constants above a size cap; :func:`initial_values` re-draws every parameter from the grader's
   seed by the rule of the layer type that owns it (the student's initial values are never
   used, so nothing prepared offline survives), and the kit's own loop trains and evaluates
   the graph by calling the recorded operators eagerly (:func:`run`; autograd differentiates
   them as it does any eager code).

What a graph can carry is only what it computes: its constants are bounded (a codec's basis, or
weights trained offline, do not fit), its parameters start from the grader's draw, and every
figure that earns points is computed from it by the kit. This file is copied into the child's
sandbox, so it imports only the standard library and torch.
"""

from __future__ import annotations

import math
import operator
import os
import sys

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode

from . import component_calls, components
from .graph_rules import (ALLOWED_OPS, MAX_NODES, SKIPPED, UNINITIALISED, GraphError, check, constant_numbers,
                          describe, initial_values, prune, resolve, statistic_buffers)

# the rules are re-exported: callers use one module for graphs
__all__ = ["ALLOWED_OPS", "GraphError", "capture", "check", "constant_numbers", "describe", "initial_values",
           "param_specs", "plain", "prune", "resolve", "run", "statistic_buffers"]

aten = torch.ops.aten
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_KIT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# -- recording --------------------------------------------------------------------------------------


def _tag(value):
    """A value that is not a tensor, as plain data (memory formats and layouts by name)."""
    if value is None or isinstance(value, (bool, int, float, str, torch.dtype, torch.device)):
        if isinstance(value, float) and not math.isfinite(value):
            return {"#f": repr(value)}
        return value
    if isinstance(value, (torch.memory_format, torch.layout)):
        return {"#": str(value).replace("torch.", "")}
    if isinstance(value, torch.Generator):
        raise GraphError("the model passes its own torch.Generator to a random operator")
    raise GraphError(f"an operator argument of type {type(value).__name__} cannot be recorded")


class _Recorder(TorchDispatchMode):
    """Records each ATen call that reaches the dispatcher below autograd, on real tensors."""

    def __init__(self, names: dict[int, str], max_nodes: int):
        super().__init__()
        self.names = dict(names)            # id(tensor) -> value name
        self.keep: list[torch.Tensor] = []  # keeps ids unique while recording
        self.nodes: list[dict] = []
        self.constants: dict[str, torch.Tensor] = {}
        self.max_nodes = max_nodes

    def _encode(self, value):
        if isinstance(value, torch.Tensor):
            key = self.names.get(id(value))
            if key is None:  # made outside the recording: a constant of the model
                key = f"c{len(self.constants)}"
                self.constants[key] = value.detach().clone()
                self.names[id(value)] = key
                self.keep.append(value)
            return {"@": key}
        if isinstance(value, (list, tuple)):
            return [self._encode(v) for v in value]
        if isinstance(value, dict):
            return {str(k): self._encode(v) for k, v in value.items()}
        return _tag(value)

    def _bind(self, value, prefix: str):
        if isinstance(value, torch.Tensor):
            self.names[id(value)] = prefix
            self.keep.append(value)
            return prefix
        if isinstance(value, (list, tuple)):
            return [self._bind(v, f"{prefix}.{i}") for i, v in enumerate(value)]
        return {"#v": _tag(value)}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = str(func.overloadpacket.__name__)
        if name in SKIPPED and func is not components.OP:
            return out
        if len(self.nodes) >= self.max_nodes:
            raise GraphError(f"the model runs more than {self.max_nodes} operators in one call")
        if func is components.OP:   # a served reference component: one node (component_calls.graph_call)
            node = components.graph_node(args, self._encode)
        else:
            node = {"op": f"aten.{name}.{func._overloadname}", "args": self._encode(list(args)),
                    "kwargs": self._encode(kwargs)}
        if not torch.is_grad_enabled() and func is not components.OP:   # a component's node says it itself
            node["ng"] = True
        where = _caller()
        if where:
            node["at"] = where
        node["out"] = self._bind(out, f"v{len(self.nodes)}")
        self.nodes.append(node)
        return out


def _caller() -> str:
    """``file.py:line`` of the innermost frame outside torch and the kit (the model's line that
    called the operator), or ``""``."""
    frame = sys._getframe(2)
    for _ in range(40):
        if frame is None:
            return ""
        name = frame.f_code.co_filename
        if not name.startswith(_TORCH_DIR) and not name.startswith(_KIT_DIR) and not name.startswith("<"):
            return f"{os.path.basename(name)[:60]}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def capture(call, inputs: list, model: torch.nn.Module, max_nodes: int = MAX_NODES) -> dict:
    """Record ``call(*inputs)`` (a bound method of ``model``) as a graph.

    Returns ``{"inputs": ["x0", ...], "nodes": [...], "outputs": <names>, "constants":
    {name: Tensor}}``; a node is ``{"op": "aten.<packet>.<overload>", "args": [...], "kwargs":
    {...}, "out": name or [names], "ng": True when recorded under no_grad}``, where a tensor
    argument is ``{"@": name}``: ``p:<fqn>`` a parameter, ``b:<fqn>`` a buffer, ``x<i>`` an
    input, ``v<k>`` (``v<k>.<i>``) an operator's output, ``c<k>`` a constant. Raises GraphError
    when the call's output is not a tensor made by a recorded operator, or for an argument that
    cannot be recorded; whatever the student's code raises propagates.
    """
    names = {}
    for fqn, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), f"p:{fqn}")
    for fqn, b in model.named_buffers(remove_duplicate=False):
        names.setdefault(id(b), f"b:{fqn}")
    inputs = [x.clone() for x in inputs]
    for i, x in enumerate(inputs):
        names[id(x)] = f"x{i}"
    recorder = _Recorder(names, max_nodes)
    with recorder:
        out = call(*inputs)
    if not isinstance(out, torch.Tensor):
        raise GraphError(f"the call returned {type(out).__name__}, not a tensor")
    key = recorder.names.get(id(out))
    if key is None or not key.startswith("v"):
        raise GraphError("the call returned a tensor that no operator computed (an input, a parameter "
                         "or a constant as it is)")
    return {"inputs": [f"x{i}" for i in range(len(inputs))], "nodes": recorder.nodes,
            "outputs": {"@": key}, "constants": recorder.constants}


def param_specs(model: torch.nn.Module) -> dict:
    """What :func:`initial_values` needs to re-draw ``model``'s parameters and buffers:
    ``{"params": [{"name", "shape", "owner", "local", "std", "constant"}], "buffers": [...]}``
    (``owner``: the torch.nn layer class that registers it, or ``""`` for any other class;
    ``std``: the spread of the student's initial values, ``constant``: their value when they are
    all equal). Buffer entries carry their values (``value``): a buffer that is not a
    normalisation statistic is a constant of the model."""
    def owner_of(fqn: str) -> tuple[str, str]:
        path, _, local = fqn.rpartition(".")
        try:
            module = model.get_submodule(path) if path else model
        except AttributeError:
            return "", local
        cls = type(module)
        return (cls.__name__ if cls.__module__.startswith("torch.nn.modules") else ""), local

    params, buffers, seen = [], [], set()
    for fqn, p in model.named_parameters():
        owner, local = owner_of(fqn)
        data = p.detach().double().flatten()
        constant = float(data[0]) if data.numel() and bool((data == data[0]).all()) else None
        params.append({"name": f"p:{fqn}", "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                       "owner": owner, "local": local,
                       "std": float(data.std()) if data.numel() > 1 else 0.0, "constant": constant})
        seen.add(id(p))
    for fqn, b in model.named_buffers():
        owner, local = owner_of(fqn)
        buffers.append({"name": f"b:{fqn}", "owner": owner, "local": local, "value": b.detach().clone()})
    return {"params": params, "buffers": buffers}


# -- running ----------------------------------------------------------------------------------------


def _enum(value: dict):
    name = str(value["#"])
    member = getattr(torch, name, None)
    if not isinstance(member, (torch.memory_format, torch.layout)):
        raise GraphError(f"unknown enum {name[:40]!r}")
    return member


def _no_grad_call(op, args, kwargs):
    with torch.no_grad():
        return op(*args, **kwargs)


def _zeroed(tensor):
    with torch.no_grad():
        return tensor.zero_()


def _compile(graph: dict) -> tuple:
    """``graph`` as a ``torch.fx.GraphModule`` (generated Python calling the recorded ATen
    overloads in order) and the names of the values it takes, in its argument order."""
    fx = torch.fx.Graph()
    values: dict[str, torch.fx.Node] = {}
    leaves: list[str] = []

    def node_of(name: str) -> torch.fx.Node:
        if name not in values:  # a parameter, buffer, constant or input: an argument of the module
            leaves.append(name)
            values[name] = fx.placeholder(f"a{len(leaves)}")
        return values[name]

    def convert(value):
        if isinstance(value, dict):
            if set(value) == {"@"}:
                return node_of(str(value["@"]))
            if set(value) == {"#"}:
                return _enum(value)
            if set(value) == {"#f"}:
                return float(value["#f"])
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    def bind(names, out):
        if isinstance(names, str):
            values[names] = out
        elif isinstance(names, list):
            for i, name in enumerate(names):
                bind(name, fx.call_function(operator.getitem, (out, i)))

    for name in graph["inputs"]:
        node_of(name)
    for node in graph["nodes"]:
        if node["op"] == component_calls.COMPONENT_OP:   # checked by graph_rules.check with graph["_components"]
            fn, names = component_calls.graph_call(node, graph.get("_components", {}), no_grad=bool(node.get("ng")))
            bind(node["out"], fx.call_function(fn, ([node_of(n) for n in names],)))   # fn: a kit name in the code
            continue
        op = resolve(node["op"])
        args, kwargs = tuple(convert(node["args"])), convert(node["kwargs"])
        if node.get("ng"):
            out = fx.call_function(_no_grad_call, (op, args, kwargs))
        else:
            out = fx.call_function(op, args, kwargs)
        if op.overloadpacket.__name__ in UNINITIALISED:
            out = fx.call_function(_zeroed, (out,))
        bind(node["out"], out)
    fx.output(convert(graph["outputs"]))
    return torch.fx.GraphModule(torch.nn.Module(), fx), leaves


def run(graph: dict, env: dict, inputs: list):
    """Evaluate ``graph`` eagerly: ``env`` maps parameter/buffer/constant names to tensors (the
    buffers are updated in place by normalisation operators in training mode); returns the
    output tensor. Differentiable with respect to the tensors of ``env`` that require grad.
    The graph is compiled once (:func:`_compile`, kept in ``graph["_fx"]``): the same operators
    in the same order, without re-reading the node list at every call."""
    if "_fx" not in graph:
        graph["_fx"] = _compile(graph)
    module, leaves = graph["_fx"]
    local = dict(env)
    local.update(graph["constants"])
    local.update(zip(graph["inputs"], inputs))
    return module(*[local[name] for name in leaves])


def plain(graph: dict) -> dict:
    """``graph`` without the kit's caches (what travels on the wire)."""
    return {k: v for k, v in graph.items() if not k.startswith("_")}
