"""Proxy modules of the reference components, made in a composite's child (see :mod:`.components`).

:func:`install` (the ``components`` request) puts a ``sys.meta_path`` finder in front of the
submission folder for exactly the component modules the parent lists, with the public names of
each reference module (``{"functions": [...], "classes": [...], "aliases": {alias: name}}``):
``from multi_head_attention import MultiHeadAttention`` then gives a proxy class, whatever the
submission folder holds. :func:`uninstall` (the ``fresh`` request) removes the finder and the
proxy modules. A proxy module has no ``__file__`` and its functions and classes are this file's
code: nothing of the reference's source is in the child.

A proxy class's instance mirrors the reference instance (:func:`_mirror`): ``torch.nn`` layers
(``nn.Linear``, ``nn.LayerNorm``, ``nn.ModuleList``...) are real ones, rebuilt from their plain
attributes; the reference's own classes (an ``EncoderLayer`` inside an ``Encoder``) become
sub-proxies whose ``forward`` calls the reference submodule at their path. Copied into the
sandbox; imports only the standard library, torch and this package.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types

import torch
from torch import nn

from . import components

MAX_TREE = 4096   # modules in one mirrored instance


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the proxy modules of :attr:`listing` (module name -> public names)."""

    def __init__(self, listing: dict):
        self.listing = listing

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.listing:
            return importlib.util.spec_from_loader(fullname, self, origin="served by the grader")
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _fill(module, self.listing[module.__name__])


_INSTALLED: list = []


def install(listing: dict) -> list[str]:
    """Serve the modules of ``listing`` (``{module: {"functions", "classes", "aliases"}}``) as
    proxies from now on (a module of that name imported before keeps its binding in modules that
    imported it; the child is fresh when this is asked). Returns the module names served."""
    uninstall()
    from . import tasks

    tasks.preload()   # the operator's first differentiable call imports torch._dynamo: here, not in a student's call
    plain = {str(m): {"functions": [str(n) for n in spec.get("functions", [])],
                      "classes": [str(n) for n in spec.get("classes", [])],
                      "aliases": {str(a): str(n) for a, n in dict(spec.get("aliases", {})).items()}}
             for m, spec in dict(listing).items() if str(m).isidentifier()}
    finder = _Finder(plain)
    sys.meta_path.insert(0, finder)
    _INSTALLED.append(finder)
    for name in plain:
        sys.modules.pop(name, None)
    return sorted(plain)


def uninstall() -> None:
    """Stop serving proxies and forget the proxy modules imported."""
    for finder in _INSTALLED:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in finder.listing:
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__spec__", None) is not None \
                    and module.__spec__.loader is finder:
                del sys.modules[name]
    _INSTALLED.clear()


def _fill(module: types.ModuleType, spec: dict) -> None:
    name = module.__name__
    module.__doc__ = f"{name}: served by the grader (the reference implementation runs outside this process)"
    for fn in spec["functions"]:
        setattr(module, fn, _function(name, fn))
    for cls in spec["classes"]:
        setattr(module, cls, _proxy_class(name, cls))
    for alias, target in spec["aliases"].items():
        if hasattr(module, target):
            setattr(module, alias, getattr(module, target))


def _function(module: str, name: str):
    def proxy(*args, **kwargs):
        return components._invoke({"c": f"{module}.{name}"}, args, kwargs)

    proxy.__name__ = proxy.__qualname__ = name
    proxy.__module__ = module
    proxy.__doc__ = f"{module}.{name}, computed by the grader's reference implementation"
    return proxy


def _proxy_class(module: str, name: str) -> type:
    return type(name, (ProxyModule,), {"__module__": module, "__qualname__": name, "_tkit_component": f"{module}.{name}",
                                       "__doc__": f"{module}.{name}, computed by the grader's reference implementation"})


class ProxyModule(nn.Module):
    """The mirror of a reference ``nn.Module`` (see the module docstring); ``forward`` computes
    with the reference. Subclasses are made by :func:`_proxy_class`."""

    _tkit_component = ""

    def __init__(self, *args, **kwargs):
        super().__init__()
        tensors: list = []
        init = {"a": components.template(tuple(args), tensors), "k": components.template(dict(kwargs), tensors)}
        if tensors:
            raise TypeError(f"{type(self).__name__}() takes plain arguments (numbers, strings, None), not tensors")
        answer = components.callback("new", {"c": self._tkit_component, "i": init, "rng": {"t": "tensor", "k": "rng"}},
                                     {"rng": torch.get_rng_state()})
        if not isinstance(answer, dict) or not isinstance(answer.get("rng"), torch.Tensor) \
                or not isinstance(answer.get("tree"), dict):
            raise RuntimeError("the grader sent a malformed component")
        torch.set_rng_state(answer["rng"])
        self._tkit_call = {"c": self._tkit_component, "i": init, "p": ""}
        _mirror(self, answer["tree"], self._tkit_call, [0])

    def forward(self, *args, **kwargs):
        call = self.__dict__.get("_tkit_call")
        if call is None:
            raise RuntimeError(f"{type(self).__name__} was not built by its constructor")
        state = list(self.named_parameters(remove_duplicate=False)) + list(self.named_buffers(remove_duplicate=False))
        training = {name: module.training for name, module in self.named_modules(remove_duplicate=False)}
        return components._invoke({**call, "m": "forward"}, args, kwargs, state, training)


def _mirror(module: nn.Module, tree: dict, root: dict, count: list) -> None:
    """Give ``module`` the attributes, parameters, buffers and children of ``tree`` (the server's
    description of a reference instance, see ``component_calls.describe``)."""
    count[0] += 1
    if count[0] > MAX_TREE:
        raise RuntimeError("a reference component has too many submodules")
    for key, value in dict(tree.get("attrs", {})).items():
        if str(key).isidentifier() and not str(key).startswith("_") and key != "training":
            setattr(module, str(key), value)
    for key, value in list(tree.get("params", [])):
        module.register_parameter(str(key), None if value is None else nn.Parameter(value, requires_grad=value.is_floating_point()))
    for key, value, persistent in list(tree.get("buffers", [])):
        module.register_buffer(str(key), value, persistent=bool(persistent))
    for key, child in list(tree.get("children", [])):
        module.add_module(str(key), None if child is None else _child(child, root, f"{root['p']}{key}" if not root["p"] else f"{root['p']}.{key}", count))
    module.training = bool(tree.get("training", True))


def _child(tree: dict, root: dict, path: str, count: list) -> nn.Module:
    kind, cls = tree.get("kind"), str(tree.get("cls", ""))
    if kind == "torch":
        layer = getattr(nn, cls, None)
        if not (isinstance(layer, type) and issubclass(layer, nn.Module) and layer.__module__.startswith("torch.nn.modules")):
            raise RuntimeError(f"the grader sent an unknown layer {cls[:60]!r}")
        module = layer.__new__(layer)
        nn.Module.__init__(module)
    else:
        owner, _, name = cls.rpartition(".")
        served = sys.modules.get(owner)
        proxy = getattr(served, name, None) if served is not None else None
        if not (isinstance(proxy, type) and issubclass(proxy, ProxyModule)):
            proxy = _proxy_class(owner or "components", name or "Component")
        module = proxy.__new__(proxy)
        nn.Module.__init__(module)
        module._tkit_call = {**root, "p": path}
    sub = {**root, "p": path}
    _mirror(module, tree, sub, count)
    return module
