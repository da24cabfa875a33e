"""The contract's return types, checked where a test receives a value from the child.

A test's trusted code operates on what the student's functions return (``out, weights =
sdpa(q, k, v)``; ``mha(x)[0]``; ``model.encode(src).shape``). A value of the wrong kind (``None``
from a function that forgot ``return``, a tensor where a pair is due, a tuple of three, a
list or an object of the student's own) would make that trusted code raise, and the failure
would read as the grader's. So every call of a contract function or method is checked here, in
the parent, as its value arrives (:func:`check`, called by
:meth:`autograder.sandbox.remote.RemoteImpl._request`): a value of the wrong kind becomes the
student's failed test (:class:`~autograder.sandbox.errors.SubmissionError` of kind
``bad_return``) naming the function, what it returned and what the contract asks.

The source of truth is the return annotations of the stubs in ``exercises/`` (generated from the
reference solutions, so the same signatures; the student edition ships them too), read with
:mod:`ast` (never imported): ``torch.Tensor``, ``tuple[A, B]``, ``A | None``; other annotations
(``list[float]``, ``None`` of ``__init__``) are not checked here. A tuple is also accepted as a
list of the same length (the test only unpacks or indexes it; its own comparison decides
whether the contract's form matters), a tensor of any dtype, shape or device (the tests compare
those). Calling a contract class (its constructor) must give an object of the child (a handle),
not plain data.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

import torch

from autograder import exercises, paths
from autograder.i18n import _
from autograder.sandbox.errors import SubmissionError


@dataclass(frozen=True)
class Kind:
    """A return type the contract names: ``"tensor"``, ``"tuple"`` (of ``items``), ``"object"``
    (a handle: an instance a constructor made), ``"any"`` (not checked); ``optional``: None too."""

    name: str
    items: tuple["Kind", ...] = ()
    optional: bool = False


ANY = Kind("any")
OBJECT = Kind("object")


def _kind(node: ast.expr | None) -> Kind:
    """The :class:`Kind` of a return annotation (``ANY`` for what is not checked)."""
    if node is None:
        return ANY
    text = ast.unparse(node)
    if text in ("torch.Tensor", "Tensor"):
        return Kind("tensor")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = node.left, node.right
        if ast.unparse(right) == "None":
            inner = _kind(left)
            return Kind(inner.name, inner.items, True) if inner is not ANY else ANY
        return ANY
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("tuple", "Tuple", "typing.Tuple"):
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements):
            return ANY
        return Kind("tuple", tuple(_kind(e) for e in elements))
    return ANY


def _read(source: str, module: str) -> dict[tuple[str, str], Kind]:
    """``{(owner, function): Kind}`` of one stub: ``owner`` is ``module`` for a module-level
    function, ``"module.Class"`` for a method; a class itself is ``(module, Class)``, its
    constructor's value an :data:`OBJECT`."""
    out: dict[tuple[str, str], Kind] = {}
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[(module, node.name)] = _kind(node.returns)
        elif isinstance(node, ast.ClassDef):
            out[(module, node.name)] = OBJECT
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("__"):
                    out[(f"{module}.{node.name}", item.name)] = _kind(item.returns)
    return {key: kind for key, kind in out.items() if kind is not ANY}


@lru_cache(maxsize=1)
def contract() -> dict[tuple[str, str], Kind]:
    """Every checked return type of the exercises' stubs (read once per process)."""
    folder = paths.exercises_dir()
    out: dict[tuple[str, str], Kind] = {}
    for name in exercises.NAMES:
        path = folder / f"{name}.py"
        if path.is_file():
            out.update(_read(path.read_text(encoding="utf-8"), name))
    return out


def expected_kind(op: str, target, name: str | None) -> tuple[str, Kind] | None:
    """``(the function's name as the message shows it, its Kind)`` for a ``call`` of ``target``
    or a ``callmethod`` of ``name`` on it, or None when the contract says nothing about it.
    ``target`` is a :class:`~autograder.sandbox.handles.RemoteObject` (a module, a class, an
    instance, a function the test fetched)."""
    table = contract()
    ck = str(getattr(target, "tkit_ck", ""))
    if ck.startswith("module "):   # a module's function (or class) called in one round trip
        module = ck[len("module "):]
        return (f"{name}", table[(module, name)]) if op == "callmethod" and (module, name) in table else None
    for owner in getattr(target, "tkit_mro", []):   # an instance: its first class the contract names
        if table.get(tuple(owner.split(".", 1))) is OBJECT:
            method = "forward" if op == "call" else name
            found = table.get((owner, method))
            return (f"{owner.split('.')[1]}.{method}", found) if found is not None else None
    if op == "call":   # a function or class the test fetched first: its label is "module.name"
        module, _dot, attr = str(getattr(target, "tkit_label", "")).partition(".")
        if (module, attr) in table:
            return attr, table[(module, attr)]
    return None


def problem(value, kind: Kind) -> str | None:
    """Why ``value`` is not of ``kind`` (a translated phrase), or None when it is."""
    if value is None:
        return None if kind.optional else _("it returned None")
    if kind.name == "tensor":
        return None if isinstance(value, torch.Tensor) else _("it returned {got}").format(got=describe(value))
    if kind.name == "object":
        return None if _is_handle(value) else _("it returned {got}").format(got=describe(value))
    if kind.name == "tuple":
        if not isinstance(value, (tuple, list)) or len(value) != len(kind.items):
            return _("it returned {got}").format(got=describe(value))
        for index, (item, item_kind) in enumerate(zip(value, kind.items)):
            inner = problem(item, item_kind)
            if inner:
                return _("item {index} of what it returned is wrong: {problem}").format(index=index, problem=inner)
    return None


def _is_handle(value) -> bool:
    return hasattr(value, "tkit_mro")


def describe(value) -> str:
    """What a value is, for a student (``a tuple of 3 items``, ``a tensor``, ``an int``)."""
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return _("a tensor")
    if isinstance(value, (tuple, list)):
        return _("a {kind} of {n} items").format(kind=type(value).__name__, n=len(value))
    if _is_handle(value):
        return _("an object of class {cls}").format(cls=str(getattr(value, "tkit_type", "?")).rpartition(".")[2])
    return _("a value of type {type}").format(type=type(value).__name__)


def wanted(kind: Kind) -> str:
    """The contract's return type in words (``a tuple of 2 items (a tensor, a tensor or None)``)."""
    if kind.name == "tensor":
        text = _("a tensor")
    elif kind.name == "object":
        text = _("an object of the class")
    else:
        text = _("a tuple of {n} items ({items})").format(n=len(kind.items),
                                                        items=", ".join(wanted(k) for k in kind.items))
    return _("{kind} or None").format(kind=text) if kind.optional else text


def check(op: str, target, name: str | None, value):
    """``value`` when it is of the kind the contract gives the call (see :func:`expected_kind`),
    else :class:`~autograder.sandbox.errors.SubmissionError` of kind ``bad_return``."""
    if op not in ("call", "callmethod") or target is None:
        return value
    found = expected_kind(op, target, name)
    if found is None:
        return value
    function, kind = found
    why = problem(value, kind)
    if why is None:
        return value
    raise SubmissionError("bad_return", _("{function} must return {wanted}, but {problem}.").format(
        function=function, wanted=wanted(kind), problem=why))
