"""The reference components' side of :mod:`.components`: run in a child that runs no student code.

Two trusted processes import this module with the reference solutions on their path (their
submission folder is ``solutions/``, and no student file is there):

- the *component server* of a submission (:mod:`autograder.sandbox.served`): the parent relays
  each callback of a composite's child to its ``component`` task (:func:`serve`), which builds
  reference instances (:func:`construct`), computes calls (:func:`compute`) and gradients
  (:func:`vjp`) on the tensors the child sent, under the child's random-number state;
- the trusted trainer of a composite's training check: a recorded graph's ``tkit.component``
  node (:func:`check_node`) runs the reference component on the graph's tensors
  (:func:`graph_call`).

A call is described by ``component`` (``"module.Name"``, a public function or ``nn.Module`` class
of a reference module), ``init`` (a class's constructor arguments, the wire's JSON form:
``{"a": args, "k": kwargs}``), ``path`` (the submodule of that instance), ``state`` (the names
of the parameters and buffers sent, in the order of the first tensors), ``args`` and ``kwargs``
(templates whose tensors are ``{"t": "tensor", "k": "t<i>"}``, see :func:`.components.template`)
and ``training`` (the train flag of each submodule by name). Instances are built once per
component and constructor arguments; every call computes with the tensors it was sent
(:func:`torch.func.functional_call`), never with the instance's own. Imports only the standard
library, torch and this package.
"""

from __future__ import annotations

import importlib
import json
import types
from collections import OrderedDict

import torch
from torch import nn

from . import wire
from .components import rebuild, template

MAX_INSTANCES = 64      # reference instances kept per process (rebuilt when needed again)
MAX_INIT_INT = 100_000  # largest integer a component's constructor may be given
MAX_INIT_ITEMS = 32     # values in one constructor call


class ComponentError(ValueError):
    """A component call the kit refuses (not a served component, constructor values out of bounds,
    a malformed description); the message says which."""


def listing(modules) -> dict:
    """``{module: {"functions": [...], "classes": [...], "aliases": {alias: class name}}}``: the
    public names of each reference module of ``modules`` (functions and ``nn.Module`` classes
    defined there; ``InputEmbeddings = TokenEmbedding`` is an alias)."""
    out = {}
    for name in modules:
        if not (isinstance(name, str) and name.isidentifier()):
            raise ComponentError(f"not a module name: {str(name)[:60]!r}")
        module = importlib.import_module(name)
        functions, classes, aliases = [], [], {}
        for key, value in vars(module).items():
            if key.startswith("_") or getattr(value, "__module__", None) != name:
                continue
            if isinstance(value, types.FunctionType):
                functions.append(key)
            elif isinstance(value, type) and issubclass(value, nn.Module):
                (classes.append(key) if value.__name__ == key else aliases.__setitem__(key, value.__name__))
        out[name] = {"functions": functions, "classes": classes, "aliases": aliases}
    return out


def resolve(component, allowed: dict):
    """The reference function or class ``component`` names, when ``allowed`` (a :func:`listing`)
    serves it; ComponentError otherwise."""
    module, _, name = str(component).partition(".")
    spec = allowed.get(module) if isinstance(allowed, dict) else None
    if not spec or name not in list(spec.get("functions", [])) + list(spec.get("classes", [])):
        raise ComponentError(f"{str(component)[:80]!r} is not a component served here")
    return getattr(importlib.import_module(module), name)


def plain_init(init) -> tuple[tuple, dict]:
    """A constructor's ``(args, kwargs)`` from ``init`` (``{"a": ..., "k": ...}``), checked: plain
    numbers, strings, None and tuples of them, at most :data:`MAX_INIT_ITEMS` values, integers
    within :data:`MAX_INIT_INT`. ComponentError otherwise."""
    try:
        args, kwargs = wire.decode(init["a"], {}), wire.decode(init["k"], {})
    except (wire.WireError, TypeError, KeyError):
        raise ComponentError("a component's constructor arguments must be plain values") from None
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        raise ComponentError("a component's constructor arguments must be plain values")
    leaves: list = []

    def walk(value, depth=0):
        if isinstance(value, (tuple, list)) and depth < 3:
            for item in value:
                walk(item, depth + 1)
        elif value is None or isinstance(value, (bool, float, str, int)):
            leaves.append(value)
        else:
            raise ComponentError("a component's constructor arguments must be plain values")

    walk(list(args) + list(kwargs.values()))
    if len(leaves) > MAX_INIT_ITEMS or any(isinstance(v, str) and len(v) > 100 for v in leaves) or \
            any(isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_INIT_INT for v in leaves):
        raise ComponentError(f"a component's constructor arguments are out of bounds (at most {MAX_INIT_ITEMS} "
                             f"values, integers up to {MAX_INIT_INT})")
    return args, kwargs


_INSTANCES: "OrderedDict[str, nn.Module]" = OrderedDict()


def instance(component: str, init, allowed: dict) -> nn.Module:
    """The reference instance of ``component`` built from ``init`` (kept, see :data:`MAX_INSTANCES`;
    built with the random-number state left as it was)."""
    key = json.dumps([component, init], sort_keys=True)
    if key in _INSTANCES:
        _INSTANCES.move_to_end(key)
        return _INSTANCES[key]
    cls = resolve(component, allowed)
    if not isinstance(cls, type):
        raise ComponentError(f"{component} is a function, not a class")
    args, kwargs = plain_init(init)
    with torch.random.fork_rng(devices=[]):
        return _keep(key, cls(*args, **kwargs))


def _keep(key: str, built: nn.Module) -> nn.Module:
    _INSTANCES[key] = built
    _INSTANCES.move_to_end(key)
    while len(_INSTANCES) > MAX_INSTANCES:
        _INSTANCES.popitem(last=False)
    return built


def construct(component: str, init, allowed: dict) -> dict:
    """Build ``component`` from ``init`` with the current random-number state (so the child's
    generator advances as it would have) and describe it: ``{"tree": describe(instance)}``."""
    cls = resolve(component, allowed)
    if not isinstance(cls, type):
        raise ComponentError(f"{component} is a function, not a class")
    args, kwargs = plain_init(init)
    built = _keep(json.dumps([component, init], sort_keys=True), cls(*args, **kwargs))
    return {"tree": describe(built)}


def describe(module: nn.Module) -> dict:
    """What a proxy mirrors (:func:`.proxies._mirror`): ``kind`` (``torch`` for a layer of
    ``torch.nn``, else ``proxy``), ``cls``, the plain public ``attrs``, ``params`` and ``buffers``
    (name, value copy[, persistent]) in registration order, ``children`` and ``training``."""
    cls = type(module)
    torch_layer = cls.__module__.startswith("torch.nn.modules") and getattr(nn, cls.__name__, None) is cls
    attrs = {}
    for key, value in vars(module).items():
        if key.startswith("_") or key == "training":
            continue
        try:
            wire.Encoder().encode(value)
        except wire.EncodeError:
            continue
        if not isinstance(value, torch.Tensor):
            attrs[key] = value
    return {"kind": "torch" if torch_layer else "proxy",
            "cls": cls.__name__ if torch_layer else f"{cls.__module__}.{cls.__qualname__}",
            "attrs": attrs,
            "params": [[k, None if v is None else v.detach().clone()] for k, v in module._parameters.items()],
            "buffers": [[k, None if v is None else v.detach().clone(), k not in module._non_persistent_buffers_set]
                        for k, v in module._buffers.items()],
            "children": [[k, None if c is None else describe(c)] for k, c in module._modules.items()],
            "training": module.training}


def compute(call: dict, tensors: list, allowed: dict):
    """The value of the component call ``call`` (see the module docstring) on ``tensors``."""
    target = resolve(call.get("c"), allowed)
    names = [str(n) for n in call.get("s") or []]
    args, kwargs = rebuild(call.get("a"), tensors), rebuild(call.get("k"), tensors)
    if not isinstance(args, tuple) or not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise ComponentError("malformed component call")
    if not isinstance(target, type):
        if names or call.get("p"):
            raise ComponentError(f"{call.get('c')} is a function: it has no state or submodules")
        return target(*args, **kwargs)
    if call.get("m") != "forward":
        raise ComponentError("a served component's forward is the only method called")
    root = instance(call["c"], call.get("i"), allowed)
    path = str(call.get("p") or "")
    try:
        module = root.get_submodule(path) if path else root
    except AttributeError:
        raise ComponentError(f"{call['c']} has no submodule {path[:80]!r}") from None
    given = dict(zip(names, tensors[:len(names)]))
    wanted = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
        [n for n, _ in module.named_buffers(remove_duplicate=False)]
    missing = [n for n in wanted if n not in given]
    if missing:
        raise ComponentError(f"the state of {call['c']} lacks {missing[0]!r}")
    flags = call.get("t") if isinstance(call.get("t"), dict) else {}
    for name, sub in module.named_modules(remove_duplicate=False):
        if name in flags:
            sub.training = bool(flags[name])
    return torch.func.functional_call(module, {n: given[n] for n in wanted}, args, kwargs, tie_weights=False)


def vjp(call: dict, tensors: list, needs: list, grads: list, allowed: dict) -> list:
    """The gradients of the call's tensors where ``needs`` says (None elsewhere): the call
    recomputed with autograd and the output gradients ``grads`` (one per output tensor, in the
    order of :func:`.components.template`; None for none)."""
    inputs = [t.detach().clone().requires_grad_(bool(need) and t.is_floating_point())
              for t, need in zip(tensors, list(needs) + [False] * len(tensors))]
    with torch.enable_grad():
        outputs: list = []
        template(compute(call, inputs, allowed), outputs)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(g, torch.Tensor) and o.requires_grad]
        wanted = [t for t in inputs if t.requires_grad]
        if not pairs or not wanted:
            return [None] * len(tensors)
        found = iter(torch.autograd.grad([o for o, _ in pairs], wanted, [g.to(o.dtype) for o, g in pairs],
                                         allow_unused=True))
    return [next(found) if t.requires_grad else None for t in inputs]


def serve(kind: str, call: dict, tensors: list, rng, allowed: dict, needs=(), grads=()) -> dict:
    """One callback, under the child's random-number state ``rng``: ``new`` -> ``{"tree", "rng"}``,
    ``call`` -> ``{"value", "rng"}``, ``vjp`` -> ``{"grads"}``; an exception of the reference or a
    refused call -> ``{"error": {"type", "message"}}`` (no traceback: its frames are the reference's)."""
    saved = torch.get_rng_state()
    try:
        torch.set_rng_state(rng)
        if kind == "new":
            return {**construct(call.get("c"), call.get("i"), allowed), "rng": torch.get_rng_state()}
        if kind == "call":
            value = compute(call, tensors, allowed)
            outputs: list = []
            template(value, outputs)   # plain data and tensors only (a non-plain value raises TypeError)
            return {"value": value, "rng": torch.get_rng_state()}
        if kind == "vjp":
            return {"grads": vjp(call, tensors, needs, grads, allowed)}
        raise ComponentError(f"unknown component request {str(kind)[:20]!r}")
    except Exception as exc:  # noqa: BLE001 - the reference's (or torch's) exception goes back as data
        return {"error": {"type": type(exc).__name__, "message": str(exc)[:2000]}}
    finally:
        torch.set_rng_state(saved)


# -- a recorded graph's component nodes (the trusted trainer) -------------------------------------

COMPONENT_OP = "tkit.component"   # the ``op`` of a recorded call of a served component (.components.graph_node)
NODE_FIELDS = frozenset({"op", "component", "init", "path", "method", "args", "kwargs", "state", "training",
                         "out", "ng", "at"})


def check_node(node: dict, allowed: dict) -> None:
    """Refuse a ``tkit.component`` node the trainer will not run (ComponentError naming why): a
    component not served to this exercise (``allowed``, a :func:`listing`), constructor values that
    are not plain or out of bounds, a method other than ``forward``, malformed fields. Which values
    it reads is checked by the graph's own rules (every ``{"@": name}`` defined before)."""
    if not isinstance(node, dict) or set(node) - NODE_FIELDS:
        raise ComponentError("a malformed component node")
    target = resolve(node.get("component"), allowed)
    if isinstance(target, type):
        plain_init(node.get("init") if isinstance(node.get("init"), dict) else {})
        if node.get("method") != "forward":
            raise ComponentError("a served component's forward is the only method a graph may call")
    elif node.get("state") or node.get("path"):
        raise ComponentError(f"{node.get('component')} is a function: it has no state or submodules")
    if not isinstance(node.get("path", ""), str) or len(node.get("path", "")) > 200:
        raise ComponentError("a malformed component path")
    state, training = node.get("state", {}), node.get("training")
    if not isinstance(state, dict) or not all(isinstance(k, str) and _is_ref(v) for k, v in state.items()):
        raise ComponentError("a malformed component state")
    if training is not None and not (isinstance(training, dict) and all(isinstance(v, bool) for v in training.values())):
        raise ComponentError("malformed train/eval flags")
    if not isinstance(node.get("out"), list):
        raise ComponentError("a component node's outputs must be a list")


def _is_ref(value) -> bool:
    return isinstance(value, dict) and set(value) == {"@"} and isinstance(value["@"], str)


def graph_call(node: dict, allowed: dict, no_grad: bool = False):
    """``(fn, names)`` for a checked component node: ``fn(tensors)`` (the values of ``names``, in
    order) computes the reference component (under ``torch.no_grad()`` with ``no_grad``) and
    returns its output tensors as a list, in the order the child's operator returned them."""
    names: list[str] = []

    def indexed(value):
        if _is_ref(value):
            names.append(value["@"])
            return {"t": "tensor", "k": f"t{len(names) - 1}"}
        if isinstance(value, dict):
            return {k: indexed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [indexed(v) for v in value]
        return value

    state = dict(node.get("state") or {})
    for ref in state.values():
        names.append(ref["@"])
    call = {"c": node["component"], "i": node.get("init"), "p": node.get("path", ""), "m": node.get("method"),
            "s": list(state), "t": node.get("training"), "a": indexed(node.get("args")),
            "k": indexed(node.get("kwargs"))}
    count = len(node["out"])

    def component_call(tensors):
        outputs: list = []
        with torch.set_grad_enabled(torch.is_grad_enabled() and not no_grad):
            template(compute(call, list(tensors), allowed), outputs)
        if len(outputs) != count:
            raise ComponentError(f"{call['c']} gave {len(outputs)} tensors where the recording had {count}")
        return outputs

    return component_call, names
