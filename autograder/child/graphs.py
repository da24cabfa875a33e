"""A model's computation as data: recorded where the student's code runs, trained where none does.

The training checks (:mod:`autograder.checks.training`) never let the student's Python train or
measure the graded model. Instead:

1. in the student's child, :func:`capture` runs one call of the model (``encode``, ``decode``,
   ``forward``) on an input the grader chose and records every ATen operator it executes, with
   its arguments, as plain data (a *graph*: a node list, the model's parameter specs and the
   tensors that are neither parameters nor inputs, its *constants*). Python control flow is
   evaluated while recording (a range check on token ids raises or not, a loop unrolls; a
   scalar read off a tensor or a shape becomes a literal), so the graph is the computation for
   inputs of that shape: fixed before any training data exists;
2. in a child that imports no student file (:func:`autograder.checks.training.trusted_process`),
   :func:`check` validates the whole graph as data against each operator's schema before any
   of it runs (:mod:`.graph_schema`: the allow-list, argument names and value types, references
   only to values defined before, no write into anything that may alias a parameter, buffer,
   constant or input) and returns a :class:`Plan`; :func:`initial_values` re-draws every
   parameter from the grader's seed by the rule of the layer type that owns it (the student's
   initial values are never used, so nothing prepared offline survives), and the kit's own
   loop trains and evaluates the plan with :func:`run`: a fixed loop that calls each resolved
   operator on the values it names (autograd differentiates them as it does any eager code).
   Nothing of a graph is turned into code: no source is generated, compiled or executed.

Every call of :func:`run` starts from fresh copies of the parameters, buffers, constants and
inputs; writes into them are refused by storage as well. The one state a call leaves is what the
kit commits: the normalisation statistics the operators update in the call's copies, after a
training step only. What a graph can carry is only what it computes: its constants and every
literal of its arguments count against a cap (in 32-bit words), its parameters start from the
grader's draw, and every figure that earns points is computed from it by the kit.

**Trusted extra operators.** A caller may let graphs name operators of its own, implemented in
the trusted process (a reference component's forward, say): pass ``operators={"tkit.<name>":
KitOperator(call, validate)}`` to :func:`check` (or to :func:`.graph_training.prepare` and the
``train_*`` functions). A node ``{"op": "tkit.<name>", "args": [...], "kwargs": {...}, "out":
name}`` is then validated generically (plain values, references defined before, lowercase
keyword names; every literal counted) and by ``validate(args, kwargs)``, and run as
``call(*args, **kwargs)`` with its references resolved; its results are treated as aliasing the
tensors it received. The loop itself does not change.

This file is copied into the child's sandbox, so it imports only the standard library and torch.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Mapping

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import components
from .graph_rules import (ALLOWED_OPS, MAX_NODES, SKIPPED, GraphError, KitOperator, check_specs, constant_numbers,
                          describe, initial_values, resolve, statistic_buffers, value_text)
from .graph_schema import Plan, Ref, Step, validate

# the rules are re-exported: callers use one module for graphs
__all__ = ["ALLOWED_OPS", "GraphError", "KitOperator", "Plan", "capture", "check", "constant_numbers", "describe",
           "initial_values", "param_specs", "plain", "resolve", "run", "statistic_buffers"]

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
        if func is components.OP:   # a served reference component: one node (component_calls.kit_operators)
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


def check(graph: dict, specs: dict, operators: Mapping[str, KitOperator] | None = None) -> Plan:
    """``graph`` validated against ``specs`` (:func:`.graph_rules.check_specs`,
    :func:`.graph_schema.validate`) as the :class:`Plan` :func:`run` interprets; GraphError names
    what is refused. ``operators``: trusted extra operators by name (see the module docstring)."""
    return validate(graph, check_specs(specs), operators)


def _fill(value, env: dict):
    if type(value) is Ref:
        return env[value.name]
    if type(value) is list:
        return [_fill(v, env) for v in value]
    return value


def _bind(names, out, env: dict, step: Step) -> None:
    if isinstance(names, str):
        if not isinstance(out, torch.Tensor):
            raise GraphError(f"{step.op} gave {type(out).__name__} where the graph names a tensor{step.at}")
        env[names] = out
    elif isinstance(names, list):
        if not isinstance(out, (list, tuple)) or len(out) != len(names):
            raise GraphError(f"{step.op} gave another number of results than the graph names{step.at}")
        for name, item in zip(names, out):
            if name is not None:
                _bind(name, item, env, step)


def _storages(tensors) -> list[int]:
    return [t.untyped_storage().data_ptr() for t in (tensors if isinstance(tensors, list) else [tensors])
            if isinstance(t, torch.Tensor)]


def _guard(step: Step, args: list, kwargs: dict, owners: dict) -> None:
    """Refuse a write into memory of a parameter, buffer, constant or input of this call (other
    than the one statistics buffer the step may update), by storage: whatever view or alias
    reached it."""
    for where, allowed in step.writes:
        target = args[where] if isinstance(where, int) else kwargs.get(where)
        for ptr in _storages(target):
            owner = owners.get(ptr)
            if owner is not None and owner != allowed:
                raise GraphError(f"{step.op} writes into the memory of {value_text(owner)} (through an alias); "
                                 f"the graph may not change its parameters, buffers, constants or inputs{step.at}")


def run(plan: Plan, values: dict, inputs: list, commit: dict | None = None):
    """Interpret ``plan`` (from :func:`check`) once: a fixed loop calls each step's resolved
    operator on the values it names and binds its results; returns the output tensor.

    Every call starts from fresh copies of the parameters, buffers and constants it reads (from
    ``values``, by name) and of ``inputs``: nothing a call does reaches another call, except the
    normalisation statistics its steps update, which are copied into ``commit`` (the kit's
    state) when given (the training loop's calls; evaluation passes none). Differentiable with
    respect to the tensors of ``values`` that require grad. Raises GraphError for a write into
    the memory of any of those copies (:func:`_guard`), or results the graph names wrongly;
    whatever an operator raises on the values propagates."""
    if len(inputs) != len(plan.inputs):
        raise GraphError(f"the graph takes {len(plan.inputs)} inputs, the kit passes {len(inputs)}")
    env = {name: (plan.constants[name] if name in plan.constants else values[name]).clone() for name in plan.leaves}
    env.update((name, x.clone()) for name, x in zip(plan.inputs, inputs))
    owners = {ptr: name for name, t in env.items() for ptr in _storages(t) if ptr}
    for step in plan.steps:
        _, call, args, kwargs, out_name, no_grad, zero, writes, _, _, _, slots = step
        if slots is not None:  # references at the top level only: no walk through the arguments
            args = list(args)
            for i, name in slots:
                args[i] = env[name]
        else:
            args, kwargs = [_fill(v, env) for v in args], {k: _fill(v, env) for k, v in kwargs.items()}
        if writes:
            _guard(step, args, kwargs, owners)
        if no_grad:
            with torch.no_grad():
                out = call(*args, **kwargs)
        else:
            out = call(*args, **kwargs)
        if zero:
            with torch.no_grad():
                out.zero_()
        if type(out_name) is str and type(out) is torch.Tensor:
            env[out_name] = out
        else:
            _bind(out_name, out, env, step)
    if commit is not None:
        with torch.no_grad():
            for name in plan.statistics:
                commit[name].copy_(env[name])
    return env[plan.output]


def plain(graph: dict) -> dict:
    """``graph`` without the kit's caches (what travels on the wire)."""
    return {k: v for k, v in graph.items() if not k.startswith("_")}
