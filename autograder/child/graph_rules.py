"""The rules a recorded graph (:mod:`.graphs`) must follow before the kit trains it, and how the
kit re-draws its parameters: the operator allow-list, the checks of :func:`check`, the cap on a
model's own constants (:func:`constant_numbers`) and :func:`initial_values`.

Copied into the child's sandbox with :mod:`.graphs`; imports only the standard library and torch.
"""

from __future__ import annotations

import hashlib
import math

import torch

from . import component_calls

aten = torch.ops.aten

MAX_NODES = 20_000


class GraphError(ValueError):
    """A recorded graph the kit cannot train: an operator outside the allow-list, a write into a
    parameter, too many nodes or constants, a malformed node (the message says which)."""


# -- the allow-list ---------------------------------------------------------------------------------
# ATen operator packets (``aten.<packet>.<overload>``, every overload) that a model of these
# exercises computes with: arithmetic, reductions, shape and view operators, linear algebra,
# convolutions, pooling, normalisation, activations, dropout, embedding, indexing, factories.
# Nothing here reads or writes anything but tensors (no I/O, no process state); random operators
# draw from the trusted process's generator, which the kit seeds.
ALLOWED_OPS = frozenset("""
abs acos acosh add addbmm addcdiv addcmul addmm addmv addr alias all amax amin any arange argmax
argmin as_strided asin asinh atan atan2 atanh avg_pool1d avg_pool2d avg_pool3d baddbmm bernoulli
bitwise_and bitwise_not bitwise_or bitwise_xor bmm cat ceil celu clamp clamp_max clamp_min clip
clone constant_pad_nd contiguous conv1d conv2d conv3d conv_transpose1d conv_transpose2d
conv_transpose3d convolution copy cos cosh cumprod cumsum deg2rad detach diag diag_embed diagonal
div dot dropout elu embedding empty empty_like empty_strided eq erf erfc exp exp2 expand expand_as
expm1 eye fill flatten flip floor floor_divide fmod frac full full_like gather ge gelu glu
group_norm gt hardsigmoid hardswish hardtanh index index_add index_copy index_fill index_put
index_select isfinite isinf isnan layer_norm le leaky_relu lerp lift_fresh lift_fresh_copy linear
linspace log log10 log1p log2 log_sigmoid_forward log_softmax logical_and logical_not logical_or
logical_xor logsumexp lt masked_fill masked_scatter masked_select matmul max max_pool1d
max_pool1d_with_indices max_pool2d max_pool2d_with_indices max_pool3d max_pool3d_with_indices
maximum mean min minimum mish mm mul nan_to_num narrow native_batch_norm native_dropout
native_group_norm native_layer_norm ne neg new_empty new_full new_ones new_zeros nonzero norm ones
ones_like permute pixel_shuffle pixel_unshuffle pow prelu prod rad2deg reciprocal relu relu6 remainder
repeat repeat_interleave reshape roll rot90 round rsqrt rsub scalar_tensor scaled_dot_product_attention
scatter scatter_add select select_scatter selu sigmoid sign silu sin sinh slice slice_scatter
softmax softplus split split_with_sizes sqrt square squeeze stack std sub sum t tanh threshold
tile topk transpose tril triu true_divide trunc unbind unflatten unfold unsqueeze upsample_bicubic2d
upsample_bilinear2d upsample_linear1d upsample_nearest1d upsample_nearest2d upsample_nearest3d
var var_mean view view_as where zero zeros zeros_like _adaptive_avg_pool2d adaptive_avg_pool2d
adaptive_max_pool2d _batch_norm_impl_index _native_batch_norm_legit
_native_batch_norm_legit_functional _native_batch_norm_legit_no_training _log_softmax _softmax
_to_copy _unsafe_view _reshape_alias _safe_softmax _scaled_dot_product_flash_attention_for_cpu
_scaled_dot_product_efficient_attention _scaled_dot_product_flash_attention
_scaled_dot_product_cudnn_attention _fused_sdp_choice _upsample_bilinear2d_aa
_upsample_nearest_exact1d _upsample_nearest_exact2d _unsafe_index _unsafe_index_put
_index_put_impl batch_norm instance_norm native_channel_shuffle channel_shuffle type_as
im2col col2im _conj _neg_view resolve_conj resolve_neg
real view_as_real view_as_complex complex polar sort argsort randn randn_like rand rand_like normal
uniform randint randint_like randperm one_hot aminmax linalg_vector_norm reflection_pad1d reflection_pad2d
replication_pad1d replication_pad2d logit tril_indices triu_indices _convolution lift
""".split())
# Packets that write into their running-statistics arguments (the only writes into a model's
# buffers the kit accepts).
NORM_WRITERS = frozenset({"native_batch_norm", "_native_batch_norm_legit", "batch_norm",
                          "_batch_norm_impl_index", "instance_norm"})
# Factories whose memory is not initialised: replayed as zeros (:func:`.graphs.run`), so a graph
# cannot read what the trusted process freed before (the held-out digits' intermediates).
UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
SKIPPED = frozenset({"_local_scalar_dense", "sym_size", "sym_stride", "sym_numel", "is_same_size",
                     "is_nonzero", "equal", "_assert_async", "_assert_scalar", "_functional_assert_async",
                     "sym_constrain_range", "sym_constrain_range_for_size", "item", "_print"})


def packet_of(op_name: str) -> str:
    """``"aten.addmm.default"`` -> ``"addmm"``; an in-place ``"aten.relu_.default"`` -> ``"relu"``."""
    parts = op_name.split(".")
    if len(parts) != 3 or parts[0] != "aten":
        raise GraphError(f"not an ATen operator: {op_name[:80]!r}")
    packet = parts[1]
    if packet.endswith("_") and not packet.startswith("_") or packet.startswith("_") and packet.endswith("_") \
            and packet[:-1] in ALLOWED_OPS:
        packet = packet[:-1]
    return packet


def resolve(op_name: str):
    """The ``torch.ops.aten`` overload named ``op_name`` when its packet is allowed; GraphError otherwise."""
    packet = packet_of(op_name)
    if packet not in ALLOWED_OPS:
        raise GraphError(f"the model computes with {op_name}, an operator the training check does not run "
                         f"(allowed: arithmetic, linear algebra, convolution, pooling, normalisation, "
                         f"activations, dropout, embedding, indexing and shape operators)")
    raw = op_name.split(".")[1]
    overload = op_name.split(".")[2]
    try:
        return getattr(getattr(aten, raw), overload)
    except AttributeError:
        raise GraphError(f"unknown ATen operator {op_name[:80]!r}") from None


# -- checking and re-drawing ------------------------------------------------------------------------

NORM_OWNERS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
                         "InstanceNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d"})
STAT_BUFFERS = {"running_mean": 0.0, "running_var": 1.0, "num_batches_tracked": 0}


def _refs(value, out: list):
    if isinstance(value, dict):
        if "@" in value and len(value) == 1:
            out.append(value["@"])
        else:
            for v in value.values():
                _refs(v, out)
    elif isinstance(value, list):
        for v in value:
            _refs(v, out)
    return out


def _out_names(value, out: list):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _out_names(v, out)
    return out


def statistic_buffers(specs: dict) -> set[str]:
    """The buffers of ``specs`` that are normalisation statistics (re-set by the kit, not constants)."""
    return {b["name"] for b in specs["buffers"] if b["owner"] in NORM_OWNERS and b["local"] in STAT_BUFFERS}


def constant_numbers(graphs: list[dict], specs: dict) -> int:
    """How many numbers the model brings of its own: its buffers that are not normalisation
    statistics and the constants of ``graphs`` (each counted once)."""
    stats = statistic_buffers(specs)
    tensors = [b["value"] for b in specs["buffers"] if b["name"] not in stats]
    tensors += [t for g in graphs for t in g["constants"].values()]
    seen = {}
    for t in tensors:  # the same tensor recorded by several calls counts once
        data = t.detach().contiguous().view(-1)
        key = (tuple(t.shape), str(t.dtype), hashlib.blake2b(data.view(torch.uint8).numpy().tobytes()
                                                              if data.numel() else b"", digest_size=16).hexdigest())
        seen[key] = int(t.numel())
    return sum(seen.values())


def check(graph: dict, specs: dict) -> None:
    """Refuse what the kit will not run (GraphError naming it): an operator outside
    :data:`ALLOWED_OPS`, a reference to a value not defined before, a write into a parameter or an
    input, a write into a buffer other than a normalisation operator's statistics, too many nodes."""
    nodes = graph.get("nodes")
    if not isinstance(nodes, list) or len(nodes) > MAX_NODES:
        raise GraphError(f"a graph needs a list of at most {MAX_NODES} nodes")
    params = {p["name"] for p in specs["params"]}
    buffers = {b["name"] for b in specs["buffers"]}
    stats = statistic_buffers(specs)
    defined = params | buffers | set(graph["inputs"]) | set(graph["constants"])
    for node in nodes:
        try:
            op = _component_node(node, graph) or resolve(node["op"])
        except (GraphError, component_calls.ComponentError) as exc:
            raise GraphError(f"{exc}{_at(node)}") from None
        used = _refs([node["args"], node["kwargs"], node.get("state", {})], [])
        missing = [u for u in used if u not in defined]
        if missing:
            raise GraphError(f"{node['op']} uses {missing[0]!r}, which is not defined before it{_at(node)}")
        written = _written(op, node)
        for name in written:
            if name in params or name in graph["inputs"]:
                raise GraphError(f"{node['op']} writes into {name[2:] if name[:2] == 'p:' else 'its input'} "
                                 f"during the call (parameters change only through the optimizer){_at(node)}")
            if name in buffers and not (name in stats and packet_of(node["op"]) in NORM_WRITERS
                                        or packet_of(node["op"]) == "add" and name in stats):
                raise GraphError(f"{node['op']} writes into the buffer {name[2:]} during the call{_at(node)}")
        defined.update(_out_names(node["out"], []))
    if not set(_refs(graph["outputs"], [])) <= defined:
        raise GraphError("the graph's output is not defined")


def _component_node(node: dict, graph: dict):
    """For a served component's node (``tkit.component``): check it against the components served
    to the graph's exercise (``graph["_components"]``, set by the trainer) and return
    :data:`COMPONENT`; None for an ATen node."""
    if not isinstance(node, dict) or node.get("op") != component_calls.COMPONENT_OP:
        return None
    component_calls.check_node(node, graph.get("_components", {}))
    return COMPONENT


COMPONENT = object()   # stands for a component node's operator: it writes into nothing


def _written(op, node: dict) -> list[str]:
    """The value names ``op`` writes into (its schema's mutable arguments)."""
    if op is COMPONENT or node.get("op") == component_calls.COMPONENT_OP:
        return []
    names = []
    args = node["args"]
    for i, arg in enumerate(op._schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = args[i] if i < len(args) else node["kwargs"].get(arg.name)
        names.extend(_refs(value, []))
    return names


def _uniform_fan_in(shape: list[int], generator: torch.Generator, fan_shape: list[int] | None = None):
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for Linear and Conv weights
    (``kaiming_uniform_(a=sqrt(5))``) and biases; ``fan_shape``: the weight it is computed from."""
    ref = fan_shape or shape
    fan_in = ref[1] * math.prod(ref[2:]) if len(ref) >= 2 else ref[0]
    bound = 1.0 / math.sqrt(max(1, fan_in))
    return (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound


LINEAR_LIKE = frozenset({"Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                         "ConvTranspose3d", "NonDynamicallyQuantizableLinear", "LazyLinear", "Bilinear"})
ONES_ZEROS = frozenset({"LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"}) | NORM_OWNERS


def initial_values(specs: dict, seed: int) -> dict[str, torch.Tensor]:
    """Fresh parameters for ``specs`` from ``seed`` and the buffers as the kit starts them.

    A parameter of a torch.nn layer gets that layer's default initialisation, computed from its
    shape (Linear/Conv/ConvTranspose: U(+-1/sqrt(fan_in)), with a bias's fan-in taken from its
    layer's weight; Embedding: N(0, 1); LayerNorm/BatchNorm/GroupNorm: ones and zeros;
    MultiheadAttention's in-projection: Xavier-uniform, its biases zero). A parameter of any
    other class gets N(0, s) with ``s`` the spread of the student's initial values (clipped to
    [1e-3, 1]), or, where those were all equal, 0 or 1 (whichever is nearer): the student chooses
    a scale, never values. Normalisation statistics start at 0 (mean), 1 (variance), 0 (count);
    other buffers keep the values the student gave (they are constants, bounded by the caller).
    """
    g = torch.Generator().manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
    shapes = {p["name"]: p["shape"] for p in specs["params"]}
    values: dict[str, torch.Tensor] = {}
    for p in specs["params"]:
        shape, owner, local = [int(s) for s in p["shape"]], p["owner"], p["local"]
        dtype = getattr(torch, p.get("dtype", "float32"), torch.float32)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise GraphError(f"the parameter {p['name'][2:]} is not a floating-point tensor")
        if owner in LINEAR_LIKE:
            weight = shapes.get(p["name"].rpartition(".")[0] + ".weight", shape)
            value = _uniform_fan_in(shape, g, weight if local == "bias" else None)
            if owner == "NonDynamicallyQuantizableLinear" and local == "bias":
                value = torch.zeros(shape, dtype=torch.float64)
        elif owner == "Embedding":
            value = torch.randn(shape, generator=g, dtype=torch.float64)
        elif owner in ONES_ZEROS:
            value = torch.full(shape, 1.0 if local == "weight" else 0.0, dtype=torch.float64)
        elif owner == "MultiheadAttention" and local == "in_proj_weight" and len(shape) == 2:
            bound = math.sqrt(6.0 / (shape[0] / 3 + shape[1]))
            value = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * bound
        elif owner == "MultiheadAttention" and local.endswith("bias"):
            value = torch.zeros(shape, dtype=torch.float64)
        elif p.get("constant") is not None or len(shape) == 0 or math.prod(shape) <= 1:
            const = p.get("constant")
            value = torch.full(shape, 1.0 if const is not None and abs(const - 1.0) < abs(const) else 0.0,
                               dtype=torch.float64)
        else:
            std = min(1.0, max(1e-3, float(p.get("std") or 0.0)))
            value = torch.randn(shape, generator=g, dtype=torch.float64) * std
        values[p["name"]] = value.to(dtype)
    for b in specs["buffers"]:
        value = b["value"]
        if b["owner"] in NORM_OWNERS and b["local"] in STAT_BUFFERS:
            value = torch.full_like(value, STAT_BUFFERS[b["local"]])
        values[b["name"]] = value.clone()
    return values


def _at(node: dict) -> str:
    where = node.get("at")
    return f" (at {str(where)[:80]})" if where else ""


def prune(graph: dict) -> dict:
    """``graph`` without the nodes whose outputs nothing uses and that write nothing (autograd's
    own ``detach`` of saved outputs, dead code); the nodes' order is kept."""
    needed = set(_refs(graph["outputs"], []))
    kept = []
    for node in reversed(graph["nodes"]):
        outs = set(_out_names(node["out"], []))
        writes = node["op"] != component_calls.COMPONENT_OP and bool(_written(resolve(node["op"]), node))
        if outs & needed or writes:
            kept.append(node)
            needed.update(_refs([node["args"], node["kwargs"]], []))
    return {**graph, "nodes": kept[::-1]}


def describe(exc: BaseException) -> str:
    """A one-line account of an exception raised while running a graph."""
    text = str(exc).strip().splitlines()
    first = text[0][:300] if text else ""
    return first if isinstance(exc, GraphError) else f"{type(exc).__name__}: {first}"
