"""A recorded graph (:mod:`.graphs`) checked against its operators' schemas before any of it runs,
and turned into the :class:`Plan` that :func:`.graphs.run` interprets.

:func:`validate` reads the graph as data and refuses (GraphError, naming the node) anything but:

- top-level keys ``inputs`` (``x0 .. x<n-1>``), ``nodes``, ``outputs`` (one ``{"@": name}``) and
  ``constants`` (``c<k>`` -> a plain tensor);
- nodes with the keys ``op``, ``args``, ``kwargs``, ``out`` and optionally ``ng`` (a bool) and
  ``at`` (``file:line``), at most :data:`.graph_rules.MAX_NODES`; ``op`` resolved by
  :func:`.graph_rules.resolve` (the allow-list, or the caller's trusted kit operators);
- arguments bound to the operator's schema (``op._schema.arguments``): at most its positional
  arguments, keyword names exactly its argument names, each once, every argument without a
  default given; every value of a plain type the argument's type admits (a tensor argument is a
  reference ``{"@": name}`` to a value defined earlier; ints, floats, bools, short lowercase
  words, dtypes, CPU devices, layouts and memory formats by name; no generator, no other type);
  lists of at most :data:`MAX_LIST` items;
- outputs named ``v<k>`` (``v<k>.<i>`` for an operator's several results), each defined once,
  shaped as the schema's returns;
- no write into a value that may share memory with a parameter, a buffer, a constant or an input:
  every value carries the set of those it may alias (through view operators, by the schema's
  alias annotations, and through any operator that may return its input as it is), and a write
  (an in-place or ``out=`` argument, or a batch-norm's running statistics in training mode) into
  a value whose set is not empty is refused. The one exception: a normalisation operator's own
  running statistics and its batch counter, which it updates in the call's copy of the buffer
  and the kit commits after a training step (:func:`.graphs.run`). At run time every write is
  checked again by storage (:data:`Step.writes`), so an alias the schema does not declare is
  refused there.

Nothing of the graph becomes code: the plan holds the resolved operators and the arguments as
values, with :class:`Ref` where a value is read. Every literal the kept steps pass counts against
the constants cap in 32-bit words (:func:`.graph_rules.literal_words`), with the tensors of the model's own
(:func:`.graph_rules.constant_numbers`).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import torch

from .graph_rules import (MAX_NODES, NORM_WRITERS, OP_NAME, UNINITIALISED, GraphError, KitOperator,
                          literal_words, packet_of, plain_tensor, resolve, value_text)

VALUE = re.compile(r"v\d{1,6}(?:\.\d{1,4}){0,2}\Z")
CONSTANT = re.compile(r"c\d{1,6}\Z")
WHERE = re.compile(r"[^\x00-\x1f\x7f]{1,60}:\d{1,7}\Z")
WORD = re.compile(r"[a-z_]{1,24}\Z")   # a string argument: gelu's approximate, a rounding mode, a padding
NODE_KEYS = frozenset({"op", "args", "kwargs", "out", "ng", "at"})
MAX_INPUTS = 8
MAX_LIST = 1024
MAX_INT = (1 << 63) - 1   # int64: an open slice's end is sys.maxsize
ENUMS = {"contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "strided"}
# operators that may return an input as it is (or share its memory) without the schema saying so
MAY_ALIAS = frozenset({"_unsafe_view", "lift", "type_as"})


class Ref(NamedTuple):
    """A reference to the value named ``name`` (a parameter, buffer, constant, input or output)."""

    name: str


class Step(NamedTuple):
    """One validated node: ``call(*args, **kwargs)`` with :class:`Ref` read from the call's values;
    ``out``: the names its results get (a str, a list, or None for a non-tensor result);
    ``no_grad``: recorded under ``torch.no_grad``; ``zero``: an uninitialised factory, zeroed;
    ``writes``: ``(position or keyword, the buffer it may write or None)`` for each argument it
    writes, checked by storage at run time; ``mutates``: it writes anything (kept by pruning);
    ``slots``: ``(position, name)`` of each argument that is a reference, when no reference sits
    deeper (in a list or a keyword), else None (the interpreter's fast path)."""

    op: str
    call: object
    args: tuple
    kwargs: dict
    out: object
    no_grad: bool
    zero: bool
    writes: tuple
    mutates: bool
    at: str
    words: int
    slots: tuple | None


class Plan(NamedTuple):
    """A validated graph: ``inputs`` (names, in order), the pruned ``steps``, the ``output`` value's
    name, the ``leaves`` the steps read (parameter, buffer and constant names), the
    ``constants``, the ``statistics`` buffers the steps update (committed after a training call)
    and the ``words`` its literals count."""

    inputs: tuple
    steps: tuple
    output: str
    leaves: tuple
    constants: dict
    statistics: tuple
    words: int


class _Node:
    """The state of one node's validation: its label for messages and the words it counts."""

    def __init__(self, node: dict, index: int):
        op = node.get("op")
        self.label = f"node {index} ({op})" if isinstance(op, str) and OP_NAME.match(op) else f"node {index}"
        where = node.get("at", "")
        if not isinstance(where, str) or where and not WHERE.match(where):
            raise GraphError(f"{self.label} has a malformed location")
        self.at = f" (at {where})" if where else ""
        self.words = 0

    def fail(self, text: str):
        raise GraphError(f"{self.label} {text}{self.at}")


def _ref(value, roots: dict, node: _Node, refs: list) -> Ref:
    name = value.get("@") if isinstance(value, dict) and len(value) == 1 else None
    if not isinstance(name, str) or name not in roots:
        node.fail("reads a value that is not defined before it" if isinstance(name, str) else
                  "passes something other than a reference where the schema asks for a tensor")
    refs.append(name)
    return Ref(name)


def _number(value, node: _Node, what: str, ints: bool = True, floats: bool = True, bools: bool = False):
    """``value`` when it is a literal of an admitted kind (a float argument takes an int too),
    counted in the node's words."""
    if isinstance(value, dict) and set(value) == {"#f"} and floats and value["#f"] in ("inf", "-inf", "nan"):
        node.words += 1
        return float(value["#f"])
    kind = type(value)
    if kind is bool and bools or kind is int and (ints or floats) and -MAX_INT - 1 <= value <= MAX_INT \
            or kind is float and floats and math.isfinite(value):
        node.words += literal_words(value)
        return value
    node.fail(f"passes a value of type {kind.__name__} for {what}")


def _typed(kind, value, roots: dict, node: _Node, what: str, refs: list):
    """``value`` checked against the schema type ``kind`` (its ``real_type``), as the step passes it."""
    name = kind.kind()
    if name == "OptionalType":
        return None if value is None else _typed(kind.getElementType(), value, roots, node, what, refs)
    if name == "TensorType":  # a Python number stands for a wrapped scalar tensor (``x * 2.0``)
        return _ref(value, roots, node, refs) if isinstance(value, dict) and "#f" not in value \
            else _number(value, node, what, bools=True)
    if name == "ListType":
        element = kind.getElementType()
        if type(value) is int and element.kind() in ("IntType", "SymIntType"):  # int[2] given as one int
            return _number(value, node, what, floats=False)
        if not isinstance(value, list) or len(value) > MAX_LIST:
            node.fail(f"passes a malformed list for {what}")
        return [_typed(element, v, roots, node, what, refs) for v in value]
    if name in ("IntType", "SymIntType"):
        return _number(value, node, what, floats=False)
    if name == "FloatType":
        return _number(value, node, what, ints=False)
    if name == "NumberType":
        return _number(value, node, what, bools=True)
    if name == "BoolType":
        return _number(value, node, what, ints=False, floats=False, bools=True)
    if name == "StringType" and isinstance(value, str) and WORD.match(value):
        node.words += literal_words(value)
        return value
    if name == "ScalarTypeType" and isinstance(value, torch.dtype):
        return value
    if name == "DeviceObjType" and isinstance(value, (torch.device, str)) and str(value) == "cpu":
        return torch.device("cpu")
    if name in ("LayoutType", "MemoryFormatType") and isinstance(value, dict) and set(value) == {"#"} \
            and value["#"] in ENUMS:
        return getattr(torch, value["#"])
    node.fail(f"passes a value the schema does not admit for {what} ({kind})")


def _bind(schema, node_data: dict, node: _Node) -> dict:
    """``{argument name: (argument, value, position or keyword)}`` by the schema's rules."""
    args, kwargs = node_data.get("args"), node_data.get("kwargs")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        node.fail("needs an argument list and a keyword dict")
    params = schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        node.fail(f"passes {len(args)} positional arguments; its schema takes {len(positional)}")
    given = {a.name: (a, v, i) for i, (a, v) in enumerate(zip(positional, args))}
    by_name = {a.name: a for a in params}
    for key, value in kwargs.items():
        if not isinstance(key, str) or key not in by_name or key in given:
            node.fail(f"passes a keyword argument its schema does not have, or an argument twice (its "
                      f"arguments: {', '.join(by_name)})")
        given[key] = (by_name[key], value, key)
    missing = [a.name for a in params if a.name not in given and not a.has_default_value()]
    if missing:
        node.fail(f"does not pass {missing[0]}")
    return given


def _written(op, packet: str, given: dict) -> list:
    """The bound arguments ``op`` writes into: the schema's ``(a!)`` arguments, and a normalisation
    operator's running statistics when its flag says it updates them."""
    out = [entry for entry in given.values() if entry[0].alias_info is not None and entry[0].alias_info.is_write]
    flag = NORM_WRITERS.get(packet)
    if flag and given.get(flag, (None, False))[1] is True:
        out += [given[n] for n in ("running_mean", "running_var") if n in given and given[n][1] is not None]
    return out


def _aliased(op, packet: str, given: dict, refs_of: dict, roots: dict) -> frozenset:
    """What an operator's results may alias: the arguments whose alias set a return shares (a view,
    the target of an in-place operator) or that carry a wildcard (``split``), and every tensor
    argument of an operator that may return an input undeclared."""
    may_all = packet in MAY_ALIAS or \
        torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")
    returned = set()
    for r in op._schema.returns:
        if r.alias_info is not None:
            returned |= set(r.alias_info.before_set)
    out = set()
    for name, (arg, _, _) in given.items():
        info = arg.alias_info
        if may_all or info is not None and (set(info.before_set) & returned or "*" in info.after_set):
            for ref in refs_of[name]:
                out |= roots[ref]
    return frozenset(out)


def _statistics_write(packet: str, op_name: str, arg, value, given: dict, stats: set) -> str | None:
    """The statistics buffer a normalisation operator may write through ``arg``, or None."""
    leaf = value.get("@") if isinstance(value, dict) else None
    if leaf not in stats:
        return None
    local = leaf.rpartition(".")[2]
    if packet in NORM_WRITERS and arg.name in ("running_mean", "running_var") and local == arg.name:
        return leaf
    other = given.get("other", (None, None))[1]
    alpha = given.get("alpha", (None, 1))[1]
    if op_name in ("aten.add_.Tensor", "aten.add_.Scalar") and arg.name == "self" and \
            local == "num_batches_tracked" and type(other) is int and other == 1 and alpha == 1:
        return leaf
    return None


def _aten_step(op, data: dict, node: _Node, roots: dict, stats: set):
    given = _bind(op._schema, data, node)
    refs_of, args, kwargs = {}, [None] * len(data["args"]), {}
    for name, (arg, value, where) in given.items():
        refs_of[name] = []
        typed = _typed(arg.real_type, value, roots, node, name, refs_of[name])
        if isinstance(where, int):
            args[where] = typed
        else:
            kwargs[where] = typed
    packet = packet_of(data["op"])
    writes = []
    for arg, value, where in _written(op, packet, given):
        targets = set().union(*[roots[r] for r in refs_of[arg.name]])
        if not targets:
            writes.append((where, None))
            continue
        allowed = _statistics_write(packet, data["op"], arg, value, given, stats)
        if allowed is None:
            node.fail(f"writes into {value_text(sorted(targets)[0])} (also through a view or an alias); the "
                      f"graph may not change its parameters, buffers, constants or inputs")
        writes.append((where, allowed))
    returns = [r.type.kind() for r in op._schema.returns]
    return tuple(args), kwargs, tuple(writes), _aliased(op, packet, given, refs_of, roots), returns, \
        packet in UNINITIALISED


def _kit_step(kit: KitOperator, data: dict, node: _Node, roots: dict):
    args, kwargs = data.get("args"), data.get("kwargs")
    if not isinstance(args, list) or not isinstance(kwargs, dict) or not all(WORD.match(str(k)) for k in kwargs):
        node.fail("needs an argument list and a keyword dict of plain names")
    refs: list = []

    def plain(value):
        if isinstance(value, dict):
            return _ref(value, roots, node, refs)
        if isinstance(value, list) and len(value) <= MAX_LIST:
            return [plain(v) for v in value]
        if value is None or isinstance(value, str) and WORD.match(value):
            node.words += literal_words(value or "")
            return value
        return _number(value, node, "a kit operator's argument", bools=True)

    typed_args, typed_kwargs = tuple(plain(v) for v in args), {k: plain(v) for k, v in kwargs.items()}
    kit.validate(args, kwargs)
    aliased = frozenset() if kit.fresh else frozenset().union(*[roots[r] for r in refs])
    return typed_args, typed_kwargs, (), aliased, None, False


def _bind_out(out, returns, node: _Node, roots: dict, aliased: frozenset):
    """Define the node's output names, shaped as the schema's ``returns`` (kinds; None for a kit
    operator: a name or a list of names), refusing a malformed name or one defined before.
    Returns the names as the step binds them (None for a result that is not a tensor)."""
    def define(name):
        if not isinstance(name, str) or not VALUE.match(name) or name in roots:
            node.fail("defines an output with a malformed name or a name defined before")
        roots[name] = aliased
        return name

    def plain_result(item):
        return isinstance(item, dict) and set(item) == {"#v"} and \
            (item["#v"] is None or type(item["#v"]) in (bool, int, float))

    if returns is None or returns == ["TensorType"]:
        if isinstance(out, str):
            return define(out)
        if returns is None and isinstance(out, list) and len(out) <= MAX_LIST:
            return [define(item) for item in out]
    elif returns == ["ListType"] and isinstance(out, list) and len(out) <= MAX_LIST:
        return [define(item) for item in out]
    elif len(returns) > 1 and isinstance(out, list) and len(out) == len(returns):
        return [define(item) if kind == "TensorType" else None if plain_result(item) else
                node.fail("names a result that is not a tensor") for kind, item in zip(returns, out)]
    elif "TensorType" not in returns and "ListType" not in returns and plain_result(out):
        return None
    node.fail("names its outputs in a shape its schema does not return")


def _step(data, index: int, roots: dict, stats: set, operators) -> Step:
    if not isinstance(data, dict) or not {"op", "args", "kwargs", "out"} <= set(data) <= NODE_KEYS:
        raise GraphError(f"node {index} is not a node (keys {sorted(NODE_KEYS)})")
    node = _Node(data, index)
    if not isinstance(data.get("ng", False), bool):
        node.fail("has a malformed no-grad flag")
    try:
        op = resolve(data["op"], operators)
    except GraphError as exc:
        raise GraphError(f"{exc}{node.at}") from None
    if isinstance(op, KitOperator):
        args, kwargs, writes, aliased, returns, zero = _kit_step(op, data, node, roots)
        mutates = False
    else:
        args, kwargs, writes, aliased, returns, zero = _aten_step(op, data, node, roots, stats)
        mutates = bool(writes)
    out = _bind_out(data["out"], returns, node, roots, aliased)
    call = op.call if isinstance(op, KitOperator) else op
    deep = _refs([[a for a in args if not isinstance(a, Ref)], kwargs], set())
    slots = None if deep else tuple((i, a.name) for i, a in enumerate(args) if isinstance(a, Ref))
    return Step(data["op"], call, args, kwargs, out, bool(data.get("ng", False)), zero, writes, mutates,
                node.at, node.words, slots)


def _refs(value, out: set) -> set:
    """The names ``value`` (a step's arguments) reads."""
    if isinstance(value, Ref):
        out.add(value.name)
    elif isinstance(value, (list, tuple, dict)):
        for v in value.values() if isinstance(value, dict) else value:
            _refs(v, out)
    return out


def _pruned(steps: list, output: str) -> list:
    """``steps`` without those whose outputs nothing uses and that write nothing (autograd's own
    ``detach`` of saved outputs, dead code); their order is kept."""
    needed, kept = {output}, []
    for step in reversed(steps):
        defined = {step.out} if isinstance(step.out, str) else set(step.out or ())
        if defined & needed or step.mutates:
            kept.append(step)
            needed |= _refs([step.args, step.kwargs], set())
    return kept[::-1]


def validate(graph, specs_names: tuple[set, set, set], operators=None) -> Plan:
    """``graph`` checked as the module docstring says, as a :class:`Plan`; ``specs_names``: the
    parameter, buffer and statistics names (:func:`.graph_rules.check_specs`); ``operators``:
    the caller's trusted kit operators by name (:class:`.graph_rules.KitOperator`). GraphError
    names the first thing refused."""
    params, buffers, stats = specs_names
    if not isinstance(graph, dict) or set(graph) != {"inputs", "nodes", "outputs", "constants"}:
        raise GraphError("a graph needs exactly the keys inputs, nodes, outputs and constants")
    inputs, nodes, constants = graph["inputs"], graph["nodes"], graph["constants"]
    if not isinstance(inputs, list) or not 0 < len(inputs) <= MAX_INPUTS or inputs != [f"x{i}" for i in
                                                                                          range(len(inputs))]:
        raise GraphError("a graph's inputs must be named x0, x1, ...")
    if not isinstance(nodes, list) or not 0 < len(nodes) <= MAX_NODES:
        raise GraphError(f"a graph needs a list of 1 to {MAX_NODES} nodes")
    if not isinstance(constants, dict) or not all(isinstance(k, str) and CONSTANT.match(k) for k in constants):
        raise GraphError("a graph's constants must be named c0, c1, ...")
    constants = {k: plain_tensor(v, f"the constant {k}") for k, v in constants.items()}
    roots = {name: frozenset({name}) for name in [*params, *buffers, *constants, *inputs]}
    steps = [_step(node, i, roots, stats, operators) for i, node in enumerate(nodes)]
    output = graph["outputs"].get("@") if isinstance(graph["outputs"], dict) and len(graph["outputs"]) == 1 else None
    if not isinstance(output, str) or not VALUE.match(output) or output not in roots:
        raise GraphError("the graph's output is not a value an operator computed")
    steps = _pruned(steps, output)
    read = _refs([[s.args, s.kwargs] for s in steps], set())
    leaves = tuple(sorted(read & (params | buffers | set(constants))))
    statistics = tuple(sorted({leaf for s in steps for _, leaf in s.writes if leaf}))
    return Plan(tuple(inputs), tuple(steps), output, leaves, {k: v for k, v in constants.items() if k in read},
                statistics, sum(s.words for s in steps))
