"""The rules a recorded graph (:mod:`.graphs`) must follow before the kit trains it, and how the
kit re-draws its parameters: the operator allow-list and the one function that resolves an
operator's name (:func:`resolve`, with a caller's table of trusted :class:`KitOperator`), the
schema of a model's parameter specs (:func:`check_specs`), how a tensor counts against the
constants cap (:func:`tensor_words`) and :func:`initial_values`. The graph's own schema and its
writes are checked in :mod:`.graph_schema`.

Copied into the child's sandbox with :mod:`.graphs`; imports only the standard library and torch.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from typing import Any, Callable, Mapping, NamedTuple

import torch

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
# Packets that write into their running-statistics arguments, and the argument that says whether
# they do (``native_batch_norm``'s schema does not mark those writes); the only writes into a
# model's buffers the kit accepts, into the call's own copies (:mod:`.graph_schema`).
NORM_WRITERS = {"native_batch_norm": "training", "_native_batch_norm_legit": "training",
                "batch_norm": "training", "_batch_norm_impl_index": "training", "instance_norm": "use_input_stats"}
# Factories whose memory is not initialised: replayed as zeros (:func:`.graphs.run`), so a graph
# cannot read what the trusted process freed before (the held-out digits' intermediates).
UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
# What the recorder leaves out: a scalar read off a tensor, or a shape, becomes a literal of the
# nodes that use it (and counts against the constants cap); none of these may be named by a graph.
SKIPPED = frozenset({"_local_scalar_dense", "sym_size", "sym_stride", "sym_numel", "is_same_size",
                     "is_nonzero", "equal", "_assert_async", "_assert_scalar", "_functional_assert_async",
                     "sym_constrain_range", "sym_constrain_range_for_size", "item", "_print"})
OP_NAME = re.compile(r"[a-z]{1,8}(?:\.[A-Za-z0-9_]{1,64}){1,2}\Z")


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


class KitOperator(NamedTuple):
    """A trusted operator a caller adds to the operators a graph may name (``"tkit.<name>"``):
    ``call(*args, **kwargs)`` runs it, with the node's references resolved to the call's tensors;
    ``validate(args, kwargs)`` checks the node's plain arguments first (references as ``{"@":
    name}``, already known to be defined) and raises GraphError for anything it refuses. Its
    outputs are taken to alias every tensor it receives (a write into them is refused as a write
    into those tensors) unless ``fresh`` says its outputs are always new memory (the operator
    copies any output that would share memory with an argument); it must not write into its
    arguments."""

    call: Callable[..., Any]
    validate: Callable[[list, dict], None]
    fresh: bool = False


def resolve(op_name, operators: Mapping[str, KitOperator] | None = None):
    """What a node's ``op`` names: the :class:`KitOperator` of ``operators`` (the caller's table of
    trusted extra operators) under that name, or the ``torch.ops.aten`` overload when its packet
    is on :data:`ALLOWED_OPS` and the dispatcher has a kernel for it (not a TorchScript-only
    overload on lists, strings or dicts). GraphError otherwise. The one place an operator is
    looked up."""
    if not isinstance(op_name, str) or not OP_NAME.match(op_name):
        raise GraphError(f"not an ATen operator: {str(op_name)[:80]!r}")
    if operators and op_name in operators:
        return operators[op_name]
    packet = packet_of(op_name)
    if packet not in ALLOWED_OPS:
        raise GraphError(f"the model computes with {op_name}, an operator the training check does not run "
                         f"(allowed: arithmetic, linear algebra, convolution, pooling, normalisation, "
                         f"activations, dropout, embedding, indexing and shape operators)")
    _, raw, overload = op_name.split(".")
    op = getattr(getattr(aten, raw, None), overload, None) if hasattr(aten, raw) else None
    if not isinstance(op, torch._ops.OpOverload) or not torch._C._dispatch_has_kernel(op.name()):
        raise GraphError(f"unknown ATen operator {op_name[:80]!r}")
    return op


# -- the parameter specs, the constants and re-drawing ------------------------------------------------

NORM_OWNERS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
                         "InstanceNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d"})
STAT_BUFFERS = {"running_mean": 0.0, "running_var": 1.0, "num_batches_tracked": 0}
FQN = re.compile(r"[pb]:[A-Za-z0-9_]{1,64}(?:\.[A-Za-z0-9_]{1,64}){0,31}\Z")
PARAM_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
MAX_ENTRIES = 4096              # parameters or buffers of a model
MAX_PARAM_NUMBERS = 1 << 24     # numbers in all parameters together (64 MB of float32)
PARAM_KEYS = frozenset({"name", "shape", "dtype", "owner", "local", "std", "constant"})
BUFFER_KEYS = frozenset({"name", "owner", "local", "value"})


def statistic_buffers(specs: dict) -> set[str]:
    """The buffers of ``specs`` that are normalisation statistics (re-set by the kit, not constants)."""
    return {b["name"] for b in specs["buffers"] if b["owner"] in NORM_OWNERS and b["local"] in STAT_BUFFERS}


def value_text(name: str) -> str:
    """A graph's value ``name`` in a sentence: "the parameter enc.weight", "a constant of the model"."""
    if name[:2] in ("p:", "b:"):
        return f"{'the parameter' if name[0] == 'p' else 'the buffer'} {name[2:]}"
    return "a constant of the model" if name.startswith("c") else "its input" if name.startswith("x") else name


def plain_tensor(value, what: str) -> torch.Tensor:
    """``value`` when it is a plain dense CPU tensor (what the wire delivers); GraphError otherwise."""
    if type(value) is not torch.Tensor or value.layout != torch.strided or value.device.type != "cpu" \
            or value.is_complex() or value.is_quantized:
        raise GraphError(f"{what} is not a plain tensor")
    return value


def tensor_words(value: torch.Tensor) -> int:
    """What a tensor counts against the constants cap: its size in 32-bit words (a float32 or int32
    number 1, a float64 or int64 number 2, four bools or bytes 1), so packing numbers into wider
    dtypes does not carry more for free."""
    return -(-value.numel() * value.element_size() // 4)


def literal_words(value) -> int:
    """What a literal counts against the constants cap, in 32-bit words: an int in int32's range or
    a float that float32 holds exactly 1, a wider one 2, a bool 1, a word one per 4 letters."""
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return 1 if -(1 << 31) <= value < (1 << 31) else 2
    if isinstance(value, float):
        return 1 if not math.isfinite(value) or struct.unpack("f", struct.pack("f", value))[0] == value else 2
    if isinstance(value, str):
        return -(-len(value) // 4)
    return 0


def constant_numbers(plans: list, specs: dict) -> int:
    """How many numbers (32-bit words, :func:`tensor_words`) the model brings of its
    own: its buffers that are not normalisation statistics and the constants of ``plans`` (:class:`.graph_schema.Plan`) (each
    tensor counted once, however many graphs hold it), and every literal of the plans' steps."""
    stats = statistic_buffers(specs)
    tensors = [b["value"] for b in specs["buffers"] if b["name"] not in stats]
    tensors += [t for plan in plans for t in plan.constants.values()]
    seen = {}
    for t in tensors:  # the same tensor recorded by several calls counts once
        data = t.detach().contiguous().view(-1)
        key = (tuple(t.shape), str(t.dtype), hashlib.blake2b(data.view(torch.uint8).numpy().tobytes()
                                                              if data.numel() else b"", digest_size=16).hexdigest())
        seen[key] = tensor_words(t)
    return sum(seen.values()) + sum(plan.words for plan in plans)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_param(entry) -> None:
    if not isinstance(entry, dict) or set(entry) != PARAM_KEYS:
        raise GraphError(f"a parameter spec needs exactly the keys {sorted(PARAM_KEYS)}")
    shape = entry["shape"]
    if not isinstance(shape, list) or len(shape) > 8 or not all(type(s) is int and 0 <= s <= 1 << 24 for s in shape):
        raise GraphError(f"the parameter {entry['name'][2:]} has a malformed shape")
    if entry["dtype"] not in PARAM_DTYPES:
        raise GraphError(f"the parameter {entry['name'][2:]} is not a floating-point tensor")
    if not _finite(entry["std"]) or entry["std"] < 0 or not (entry["constant"] is None or _finite(entry["constant"])):
        raise GraphError(f"the parameter {entry['name'][2:]} has a malformed spread or constant")


def check_specs(specs) -> tuple[set[str], set[str], set[str]]:
    """Check the parameter specs a capture sent (:func:`.graphs.param_specs`) and return ``(the
    parameter names, the buffer names, the statistics buffers)``. GraphError for anything else
    than that schema: unknown or missing keys, a name that is not ``p:``/``b:`` and a dotted path,
    a path twice (a buffer named as a parameter included), a ``local`` that is not the name's last
    part, a shape that is not a list of non-negative ints, a dtype that is not floating point, a
    spread or constant that is not a finite number, a buffer value that is not a plain tensor,
    more than :data:`MAX_ENTRIES` entries or :data:`MAX_PARAM_NUMBERS` parameter numbers."""
    if not isinstance(specs, dict) or set(specs) != {"params", "buffers"} or not isinstance(specs["params"], list) \
            or not isinstance(specs["buffers"], list):
        raise GraphError("the parameter specs are not {'params': [...], 'buffers': [...]}")
    if not specs["params"]:
        raise GraphError("the model has no parameters to train")
    if len(specs["params"]) > MAX_ENTRIES or len(specs["buffers"]) > MAX_ENTRIES:
        raise GraphError(f"the model has more than {MAX_ENTRIES} parameters or buffers")
    names: set[str] = set()
    for entry, prefix, keys in [(e, "p:", PARAM_KEYS) for e in specs["params"]] + \
                               [(e, "b:", BUFFER_KEYS) for e in specs["buffers"]]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not FQN.match(name) or not name.startswith(prefix) or name[2:] in names:
            raise GraphError(f"a parameter or buffer spec has a malformed or repeated name: {str(name)[:80]!r}")
        if set(entry) != keys or entry["local"] != name.rpartition(".")[2].removeprefix(prefix) \
                or not isinstance(entry["owner"], str) or not re.fullmatch(r"[A-Za-z0-9_]{0,64}", entry["owner"]):
            raise GraphError(f"the spec of {name[2:]} is malformed")
        names.add(name[2:])  # a buffer may not take a parameter's place (the trained state is by path)
        if prefix == "p:":
            _check_param(entry)
        else:
            plain_tensor(entry["value"], f"the buffer {name[2:]}")
    if sum(math.prod(p["shape"]) for p in specs["params"]) > MAX_PARAM_NUMBERS:
        raise GraphError(f"the model's parameters hold more than {MAX_PARAM_NUMBERS} numbers")
    params = {p["name"] for p in specs["params"]}
    return params, {b["name"] for b in specs["buffers"]}, statistic_buffers(specs)


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


def describe(exc: BaseException) -> str:
    """A one-line account of an exception raised while running a graph."""
    text = str(exc).strip().splitlines()
    first = text[0][:300] if text else ""
    return first if isinstance(exc, GraphError) else f"{type(exc).__name__}: {first}"
