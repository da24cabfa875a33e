"""Reference components served to a composite's child: proxy modules, one operator, one channel.

A composite exercise (``encoder.py``, ``transformer.py``...) earns its points from the student's
composite file running over the *reference* components, yet no reference code may sit where
student code runs. So the child never gets a solution file: for each component the parent lists
(``components`` request), :func:`install` puts a ``sys.meta_path`` finder that makes ``import
multi_head_attention`` give a *proxy module* made here, holding, for each public name of the
reference module, a proxy function or a proxy ``nn.Module`` class:

- a proxy function sends its arguments (plain data and plain tensors) to the parent in a
  *callback* message on the reply pipe, while the parent waits for the request that runs the
  student's code; the parent has a trusted process run the reference function and answers;
- a proxy class's constructor asks for the reference instance built from the same arguments and
  mirrors its structure (real ``nn.Parameter``s and buffers under the same names and shapes,
  ``torch.nn`` layers where the reference has them, plain attributes such as ``num_heads``), so
  ``state_dict``, weight tying, ``.to(torch.float64)``, ``train()``/``eval()`` and attribute
  access work on it; its ``forward`` sends the mirror's current parameters and buffers, the
  train/eval flags and the inputs, and the reference computes with them.

Every call goes through one operator, ``tkit::component`` (:data:`OP`): a ``torch.library``
custom operator whose kernel does the callback and whose backward asks for the vector-Jacobian
product (recomputed there with the same random numbers). The graph recorder of the training
checks (:mod:`.graphs`) sees it as one node (:func:`graph_node`), autograd as one function. The
child's CPU generator state travels with each call and comes back advanced, so initialisation
and dropout draw exactly what they would draw in one process. An exception of the reference
comes back as the same built-in exception type with its message (never a traceback).

The student's code can send callbacks itself: the parent treats each as data (the component must
be one it serves to this test, the values plain), so nothing here is trusted. Copied into the
sandbox; imports only the standard library, torch and :mod:`.wire`.
"""

from __future__ import annotations

import builtins
import itertools
import json

import torch

from . import wire

OP_NAME = "tkit::component"
MAX_DEPTH = 16           # nesting of a component call's arguments
MAX_PENDING = 64         # calls whose random-number state a later backward may still need
ERRORS = frozenset({"ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "AttributeError",
                    "ZeroDivisionError", "OverflowError", "AssertionError", "NotImplementedError"})


class _Channel:
    """The child's pipe pair (set by :func:`connect`; the request pipe's buffered bytes shared)."""

    in_fd: int | None = None
    out_fd: int | None = None
    inbox: bytearray = bytearray()


def connect(in_fd: int, out_fd: int, inbox: bytearray) -> None:
    """Called by :func:`.runner.serve`: the pipes a callback is written to and answered on."""
    _Channel.in_fd, _Channel.out_fd, _Channel.inbox = in_fd, out_fd, inbox


def callback(kind: str, fields: dict, tensors: dict):
    """Send a callback (``kind``: ``new``, ``call``, ``vjp``) and return the decoded answer; raise
    the reference's exception (same built-in type) when it raised."""
    if _Channel.out_fd is None:
        raise RuntimeError("reference components are served only inside the grader's child")
    wire.write_all(_Channel.out_fd, wire.pack({"op": "callback", "kind": kind, **fields}, tensors))
    reply, got = wire.read_message(_Channel.in_fd, _Channel.inbox)
    if not reply.get("cb"):
        raise RuntimeError("the grader answered a component call out of turn")
    if not reply.get("ok"):
        error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
        kind_name = str(error.get("type", "RuntimeError"))
        raise getattr(builtins, kind_name if kind_name in ERRORS else "RuntimeError")(str(error.get("message", ""))[:2000])
    return wire.decode(reply.get("value"), got)


# -- values <-> templates -------------------------------------------------------------------------


def template(value, tensors: list, depth: int = 0):
    """``value`` in the wire's JSON form with each tensor replaced by ``{"t": "tensor", "k": "t<i>"}``
    (its index in ``tensors``, where it is appended as it is, autograd history included)."""
    if depth > MAX_DEPTH:
        raise TypeError("a component's argument is nested too deeply")
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return {"t": "tensor", "k": f"t{len(tensors) - 1}"}
    if isinstance(value, (tuple, list)):
        return {"t": "list" if isinstance(value, list) else "tuple", "v": [template(v, tensors, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"t": "dict", "v": [[wire.Encoder().encode(k), template(v, tensors, depth + 1)] for k, v in value.items()]}
    try:
        return wire.Encoder().encode(value)
    except wire.EncodeError:
        raise TypeError(f"a reference component cannot take a {type(value).__name__} as an argument") from None


def rebuild(tmpl, tensors: list):
    """The value :func:`template` described, with ``tensors`` in place of its tensor records."""
    if isinstance(tmpl, dict) and tmpl.get("t") == "tensor":
        return tensors[int(str(tmpl["k"])[1:])]
    if isinstance(tmpl, dict) and tmpl.get("t") in ("tuple", "list"):
        items = [rebuild(v, tensors) for v in tmpl["v"]]
        return tuple(items) if tmpl["t"] == "tuple" else items
    if isinstance(tmpl, dict) and tmpl.get("t") == "dict":
        return {wire.decode(k, {}): rebuild(v, tensors) for k, v in tmpl["v"]}
    return wire.decode(tmpl, {})


def _wired(tensors: list) -> dict:
    return {f"t{i}": t.detach() for i, t in enumerate(tensors)}


# -- the operator -----------------------------------------------------------------------------------

_CALLS = itertools.count()
_OUTPUTS: dict[int, object] = {}   # call number -> the output's template, read back by _invoke
_RNG_BEFORE: dict[int, torch.Tensor] = {}   # call number -> the generator state before it (for backward)


def _kernel(spec: str, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    request = json.loads(spec)
    before = torch.get_rng_state()
    fields = {k: request[k] for k in ("c", "i", "p", "m", "a", "k", "s", "t") if k in request}
    answer = callback("call", {**fields, "rng": {"t": "tensor", "k": "rng"}}, {**_wired(tensors), "rng": before})
    if not isinstance(answer, dict) or not isinstance(answer.get("rng"), torch.Tensor):
        raise RuntimeError("the grader sent a malformed component answer")
    torch.set_rng_state(answer["rng"])
    outputs: list = []
    _OUTPUTS[request["n"]] = template(answer.get("value"), outputs)
    _RNG_BEFORE[request["n"]] = before
    while len(_RNG_BEFORE) > MAX_PENDING:
        del _RNG_BEFORE[next(iter(_RNG_BEFORE))]
    return [t.clone() for t in outputs]   # an operator's outputs may not alias anything


def _setup_context(ctx, inputs, output) -> None:
    spec, tensors = inputs
    ctx.spec = spec
    ctx.needs = [t.requires_grad for t in tensors]
    ctx.rng = _RNG_BEFORE.get(json.loads(spec)["n"])
    ctx.save_for_backward(*tensors)


def _backward(ctx, grads):
    tensors = list(ctx.saved_tensors)
    if ctx.rng is None:
        raise RuntimeError("a reference component's gradient was asked for too late (after 64 later calls)")
    request = json.loads(ctx.spec)
    fields = {k: request[k] for k in ("c", "i", "p", "m", "a", "k", "s", "t") if k in request}
    sent = {**_wired(tensors), "rng": ctx.rng}
    grad_records = []
    for i, g in enumerate(grads):
        if g is None or not g.is_floating_point():
            grad_records.append(None)
        else:
            sent[f"g{i}"] = g.detach()
            grad_records.append({"t": "tensor", "k": f"g{i}"})
    answer = callback("vjp", {**fields, "rng": {"t": "tensor", "k": "rng"}, "needs": ctx.needs, "grads": grad_records},
                      sent)
    found = answer.get("grads") if isinstance(answer, dict) else None
    if not isinstance(found, list) or len(found) != len(tensors):
        raise RuntimeError("the grader sent a malformed component gradient")
    return None, [g if isinstance(g, torch.Tensor) and need else None for g, need in zip(found, ctx.needs)]


def _define():
    """``tkit::component(str spec, Tensor[] tensors) -> Tensor[]`` (once per process)."""
    try:
        op = torch.library.custom_op(OP_NAME, mutates_args=())(_kernel)
    except RuntimeError:   # defined already in this process (a test of the kit importing both copies)
        return torch.ops.tkit.component.default
    op.register_autograd(_backward, setup_context=_setup_context)
    return torch.ops.tkit.component.default


OP = _define()


def _invoke(call: dict, args: tuple, kwargs: dict, state: list | None = None, training: dict | None = None):
    """One call of a served component through :data:`OP`: ``call`` names it (``c`` component,
    ``i`` its instance's constructor arguments, ``p`` the submodule path, ``m`` the method);
    ``state``: the ``(name, tensor)`` pairs of the instance's parameters and buffers."""
    tensors: list = []
    names = []
    for name, tensor in state or ():
        names.append(name)
        tensors.append(tensor)
    spec = {**call, "a": template(tuple(args), tensors), "k": template(dict(kwargs), tensors), "s": names,
            "n": next(_CALLS), "g": torch.is_grad_enabled()}   # grad mode is off inside the operator
    if training is not None:
        spec["t"] = training
    outputs = OP(json.dumps(spec), tensors)
    return rebuild(_OUTPUTS.pop(spec["n"]), list(outputs))


def graph_node(args: tuple, encode) -> dict:
    """The recorder's node for a call of :data:`OP` (``args``: its spec string and tensors;
    ``encode(tensor)``: the recorder's reference to a tensor): ``{"op": "tkit.component",
    "component", "init", "path", "method", "args", "kwargs", "state": {name: ref}, "training"}``
    with every tensor as the recorder's ``{"@": name}``."""
    spec, tensors = args
    request = json.loads(spec)

    def refs(tmpl):
        if isinstance(tmpl, dict) and tmpl.get("t") == "tensor":
            return encode(tensors[int(str(tmpl["k"])[1:])])
        if isinstance(tmpl, dict):
            return {k: refs(v) for k, v in tmpl.items()}
        if isinstance(tmpl, list):
            return [refs(v) for v in tmpl]
        return tmpl

    names = request.get("s", [])
    node = {"op": "tkit.component", "component": request["c"], "init": request.get("i"),
            "path": request.get("p", ""), "method": request.get("m"), "args": refs(request["a"]),
            "kwargs": refs(request["k"]), "state": {name: encode(tensors[i]) for i, name in enumerate(names)},
            "training": request.get("t")}
    if not request.get("g", True):
        node["ng"] = True
    return node
