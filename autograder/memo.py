"""Trusted computations done once per grading process: a cache keyed by what they read.

A worker grades many submissions with the same run seed, so every test draws the same inputs
for every student and the parent computes the same expected values again and again: the
reference's output in :func:`autograder.checks.expectations.expect_reference`, the PyTorch
oracles and the drawn state dicts of the suites' set-up helpers. This module computes each of them once per process.

The key is the *content* of everything the computation can read, never a test's name: a
:func:`fingerprint` of the function (its code, the values of its closure cells and defaults,
the module globals its code names, recursively for the functions among them), of its
arguments (tensors by dtype, shape, strides and bytes; generators by their state; numbers,
strings and containers by value), and of torch's global settings that change results (the
default dtype, grad mode, the intra-op thread count). A value it cannot fingerprint (a handle
to the student's child, an ``nn.Module``, a generator captured by a closure...) makes the
computation run uncached, as before. Modules are keyed by name, classes by qualified name:
module attributes are treated as constants, as the suites use them.

Two uses:

- :func:`cached` ``(compute, *key)``: ``compute()`` once per key
  (:func:`autograder.checks.expectations.expect_reference` passes the test's ``run`` and seed; ``compute`` runs the reference under that seed);
- :func:`once`: a decorator for a set-up helper that is a function of its arguments and of the
  ``torch.Generator`` arguments it draws from (their state is part of the key; on a hit each is
  moved to the state the computation left it in). It runs with torch's global CPU generator
  set to a fixed state and puts the caller's back afterwards, so its result cannot depend on
  whatever the global generator held, and the caller's draws are the same on a hit and a miss.

Only plain results are kept (tensors, numbers, strings, ``None``, ``torch.dtype``/``torch.Size``
and tuples, lists and dicts of them); every hit returns fresh copies, so a caller that changes
what it got (``state["bias"] += 1``) changes nothing for the next one. The cache holds at most
:data:`MAX_ENTRIES` results and :data:`MAX_BYTES` of tensor data (least recently used go
first). ``TKIT_MEMO=0`` turns it off (every computation runs, as before).
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import struct
import types
from collections import OrderedDict
from typing import Any, Callable

import torch

MAX_ENTRIES = 4096
MAX_BYTES = 256 * 2**20
MAX_ITEMS = 100_000  # values visited for one key; past it the computation runs uncached
MAX_DEPTH = 48


class Unmemoizable(Exception):
    """A value that has no content fingerprint (the computation then runs uncached)."""


class Digest(bytes):
    """A :func:`fingerprint` computed once and used as a part of several keys (the mistake search
    keys every mutant's output by the same test and inputs): hashed as its bytes."""


class _Cache:
    def __init__(self):
        self.entries: OrderedDict[bytes, tuple[Any, tuple, int]] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.uncached = 0

    def get(self, key: bytes):
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key: bytes, value: Any, states: tuple, size: int) -> None:
        if size > MAX_BYTES:
            return
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= old[2]
        self.entries[key] = (value, states, size)
        self.bytes += size
        while self.entries and (len(self.entries) > MAX_ENTRIES or self.bytes > MAX_BYTES):
            _, (_, _, dropped) = self.entries.popitem(last=False)
            self.bytes -= dropped

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0
        self.hits = self.misses = self.uncached = 0


CACHE = _Cache()
_CODE_DIGESTS: dict[types.CodeType, bytes] = {}


def enabled() -> bool:
    """Whether results are kept (``TKIT_MEMO=0`` turns the cache off)."""
    return os.environ.get("TKIT_MEMO", "1") != "0"


def clear() -> None:
    """Forget every kept result (and the hit counts)."""
    CACHE.clear()


def stats() -> dict:
    """``{"hits", "misses", "uncached", "entries", "bytes"}`` of this process's cache."""
    return {"hits": CACHE.hits, "misses": CACHE.misses, "uncached": CACHE.uncached,
            "entries": len(CACHE.entries), "bytes": CACHE.bytes}


# -- fingerprints -----------------------------------------------------------------------------
_LENGTH = struct.Struct("<I")


class _Hasher:
    """Feeds a canonical, tagged serialisation of a value into a BLAKE2b digest."""

    def __init__(self):
        self.h = hashlib.blake2b(digest_size=20)
        self.items = 0
        self.functions: dict[int, int] = {}  # id -> index, so recursion and sharing terminate

    def tag(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        self.h.update(_LENGTH.pack(len(data)) + data)  # one update: the same bytes as two

    def value(self, v: Any, depth: int = 0) -> None:
        self.items += 1
        if self.items > MAX_ITEMS or depth > MAX_DEPTH:
            raise Unmemoizable("too large or too deep")
        kind = type(v)
        if kind is Digest:
            self.tag("digest")
            self.h.update(v)
        elif v is None or v is Ellipsis or kind in (bool, int, float, complex, str, bytes):
            self.tag(kind.__name__)
            self.tag(repr(v))
        elif isinstance(v, torch.Tensor):
            self.tensor(v)
        elif isinstance(v, torch.Generator):
            self.tag("generator")
            self.tag(str(v.device))
            self.h.update(v.get_state().numpy().tobytes())
        elif kind in (torch.dtype, torch.device, torch.layout, torch.memory_format):
            self.tag(kind.__name__)
            self.tag(str(v))
        elif kind in (tuple, list, torch.Size, frozenset, set):
            items = sorted(v, key=repr) if kind in (set, frozenset) else v
            self.tag(f"{kind.__name__}:{len(v)}")
            for item in items:
                self.value(item, depth + 1)
        elif kind is dict or kind is OrderedDict:
            self.tag(f"{kind.__name__}:{len(v)}")
            for key, item in v.items():
                self.value(key, depth + 1)
                self.value(item, depth + 1)
        elif kind is slice or kind is range:
            self.tag(kind.__name__)
            for part in (v.start, v.stop, v.step):
                self.value(part, depth + 1)
        elif kind is types.FunctionType:
            self.function(v, depth)
        elif kind is functools.partial:
            self.tag("partial")
            self.value(v.func, depth + 1)
            self.value(v.args, depth + 1)
            self.value(v.keywords, depth + 1)
        elif kind is types.ModuleType:
            self.tag("module")
            self.tag(v.__name__)
        elif isinstance(v, type) or kind is types.BuiltinFunctionType:
            self.tag("type" if isinstance(v, type) else "builtin")
            self.tag(f"{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', repr(v))}")
        else:
            marker = getattr(v, "tkit_memo_key", None)  # a trusted object that names its content
            if callable(marker):
                self.tag(f"object:{kind.__module__}.{kind.__qualname__}")
                self.value(marker(), depth + 1)
            else:
                raise Unmemoizable(f"no fingerprint for a {kind.__module__}.{kind.__qualname__}")

    def tensor(self, t: torch.Tensor) -> None:
        if t.layout != torch.strided or t.device.type == "meta" or t.is_quantized:
            raise Unmemoizable(f"a {t.layout} tensor")
        self.tag(f"tensor:{type(t).__name__}:{t.dtype}:{t.device}:{tuple(t.shape)}:{t.stride()}:"
                 f"{t.storage_offset()}:{t.requires_grad}:{t.is_conj()}:{t.is_neg()}")
        data = t.detach().resolve_conj().resolve_neg().to("cpu").contiguous().reshape(-1)
        self.h.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")

    def function(self, f: types.FunctionType, depth: int) -> None:
        if id(f) in self.functions:  # a function seen earlier in this key: its index
            self.tag(f"function-ref:{self.functions[id(f)]}")
            return
        self.functions[id(f)] = len(self.functions)
        code = f.__code__
        self.tag("function")
        self.h.update(_code_digest(code))
        for cell in f.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                self.tag("empty-cell")
                continue
            if isinstance(contents, torch.Generator):
                raise Unmemoizable("a closure draws from a generator")
            self.value(contents, depth + 1)
        self.value(f.__defaults__, depth + 1)
        self.value(f.__kwdefaults__, depth + 1)
        names = sorted(n for n in _global_names(code) if n in f.__globals__)
        for name in names:
            value = f.__globals__[name]
            if isinstance(value, torch.Generator):
                raise Unmemoizable(f"global generator {name}")
            self.tag(name)
            self.value(value, depth + 1)


def _code_digest(code: types.CodeType) -> bytes:
    digest = _CODE_DIGESTS.get(code)
    if digest is None:
        digest = hashlib.blake2b(marshal.dumps(code), digest_size=20).digest()
        _CODE_DIGESTS[code] = digest
    return digest


@functools.lru_cache(maxsize=4096)
def _global_names(code: types.CodeType) -> frozenset[str]:
    """The names a code object (and the code nested in it) may look up as globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return frozenset(names)


def _torch_settings() -> tuple:
    return (str(torch.get_default_dtype()), torch.is_grad_enabled(), torch.get_num_threads(),
            torch.are_deterministic_algorithms_enabled())


def digest(*parts: Any) -> Digest | None:
    """:func:`fingerprint` of ``parts`` as a :class:`Digest` to key several computations by, or
    None when a part has no fingerprint (or the cache is off)."""
    if not enabled():
        return None
    try:
        return Digest(fingerprint(*parts))
    except Unmemoizable:
        return None


def fingerprint(*parts: Any) -> bytes:
    """The content digest of ``parts`` and of torch's global settings that change results.

    Raises:
        Unmemoizable: a part holds a value without a fingerprint (see the module docstring).
    """
    hasher = _Hasher()
    hasher.value(_torch_settings())
    for part in parts:
        hasher.value(part)
    return hasher.h.digest()


# -- results ----------------------------------------------------------------------------------
def _copy(value: Any) -> tuple[Any, int]:
    """A fresh copy of a plain result and its tensor bytes; Unmemoizable when not plain."""
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes, torch.dtype, torch.device):
        return value, 0
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor and not isinstance(value, torch.nn.Parameter):
            raise Unmemoizable("a tensor subclass")
        copy = value.detach().clone()
        if isinstance(value, torch.nn.Parameter):
            copy = torch.nn.Parameter(copy, requires_grad=value.requires_grad)
        elif value.requires_grad:
            copy.requires_grad_(True)
        return copy, copy.numel() * copy.element_size()
    if kind in (tuple, list, torch.Size):
        copies = [_copy(v) for v in value]
        items = [c for c, _ in copies]
        return (kind(items) if kind is not tuple else tuple(items)), sum(n for _, n in copies)
    if kind is dict or kind is OrderedDict:
        out, size = kind(), 0
        for key, item in value.items():
            copy, n = _copy(item)
            out[key] = copy
            size += n
        return out, size
    raise Unmemoizable(f"a result of type {kind.__name__}")


def cached(compute: Callable[[], Any], *key: Any) -> Any:
    """``compute()``, or a copy of what it returned the first time for the same ``key`` content
    (see :func:`fingerprint`). ``compute`` must be a function of ``key`` alone (the caller says
    so by its choice of ``key``). Runs uncached when a part of ``key`` or the result is not
    plain content; exceptions are never kept."""
    if not enabled():
        return compute()
    try:
        digest = fingerprint(*key)
    except Unmemoizable:
        CACHE.uncached += 1
        return compute()
    entry = CACHE.get(digest)
    if entry is not None:
        CACHE.hits += 1
        return _copy(entry[0])[0]
    CACHE.misses += 1
    result = compute()
    try:
        kept, size = _copy(result)
    except Unmemoizable:
        return result
    CACHE.put(digest, kept, (), size)
    return result


_FIXED_GLOBAL_SEED = 0x7E57  # the global CPU generator's state while a @once helper runs


def once(func: Callable) -> Callable:
    """Decorate a set-up helper that computes plain data (tensors, numbers, containers) from its
    arguments and the ``torch.Generator`` arguments it draws from, so that it runs once per
    process for the same argument contents (generator states included); see the module
    docstring. On a hit, each generator argument is moved to the state the first computation
    left it in, so the caller's later draws are the same as without the cache.

    The helper runs with torch's global CPU generator at a fixed state (the caller's is put
    back afterwards): what it builds with the global generator (an ``nn.Module``'s initial
    weights, before it redraws them from its own generator) is the same on every call."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        generators = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Generator)]
        if not enabled():
            return _isolated(func, args, kwargs)
        try:
            digest = fingerprint(func, args, kwargs)
        except Unmemoizable:
            CACHE.uncached += 1
            return _isolated(func, args, kwargs)
        entry = CACHE.get(digest)
        if entry is not None:
            CACHE.hits += 1
            value, states, _ = entry
            for gen, state in zip(generators, states):
                gen.set_state(state)
            return _copy(value)[0]
        CACHE.misses += 1
        result = _isolated(func, args, kwargs)
        try:
            kept, size = _copy(result)
        except Unmemoizable:
            return result
        CACHE.put(digest, kept, tuple(g.get_state() for g in generators), size)
        return result

    return wrapper


def _isolated(func: Callable, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` with the global CPU generator at a fixed state, restored after."""
    state = torch.get_rng_state()
    torch.default_generator.manual_seed(_FIXED_GLOBAL_SEED)
    try:
        return func(*args, **kwargs)
    finally:
        torch.set_rng_state(state)
